#include "server/web_assets.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/hash.h"
#include "server/http.h"

namespace brisk::server {

// style-src-attr: KaTeX positions glyphs with style attributes; the sanitizer strips them from
// model output before KaTeX runs.
const char kPageSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; "
    "font-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";

const WebAsset* find_web_asset(std::string_view target) {
  if (target == "/" || target == "/index.html") target = "/static/chat.html";
  if (target == "/dashboard") target = "/static/dashboard.html";
  for (size_t i = 0; i < kWebAssetCount; ++i)
    if (kWebAssets[i].path == target) return &kWebAssets[i];
  return nullptr;
}

namespace {

// FNV-1a over each asset's bytes, all computed once: they are fixed for the life of the binary.
const std::string& etag(const WebAsset& a) {
  static const std::vector<std::string> tags = [] {
    std::vector<std::string> t;
    for (size_t i = 0; i < kWebAssetCount; ++i) {
      const uint64_t h = fnv1a(kWebAssets[i].body.data(), kWebAssets[i].body.size());
      char buf[24];
      std::snprintf(buf, sizeof buf, "\"%016llx\"", static_cast<unsigned long long>(h));
      t.emplace_back(buf);
    }
    return t;
  }();
  return tags[static_cast<size_t>(&a - kWebAssets)];
}

}  // namespace

void send_web_asset(Exchange& ex, const WebAsset& a) {
  const std::string& tag = etag(a);
  const Headers h = {{"ETag", tag},
                     {"Cache-Control", "no-cache"},
                     {"Content-Security-Policy", kPageSecurityPolicy},
                     {"X-Content-Type-Options", "nosniff"},
                     {"Referrer-Policy", "no-referrer"}};
  if (ex.request()[http::field::if_none_match] == tag)
    return ex.respond(http::status::not_modified, "", "", h);
  ex.respond(http::status::ok, std::string(a.content_type), std::string(a.body), h);
}

}  // namespace brisk::server
