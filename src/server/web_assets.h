// The files behind the chat page (/) and the dashboard (/dashboard): brisk's own from
// src/server/web and the packaged browser libraries, embedded at build time
// (cmake/web_assets.cmake).
#pragma once

#include <cstddef>
#include <string_view>

namespace brisk::server {

class Exchange;

struct WebAsset {
  std::string_view path;  // where it is served, e.g. /static/chat.js
  std::string_view content_type;
  std::string_view body;
};

extern const WebAsset kWebAssets[];
extern const size_t kWebAssetCount;

// The asset a GET of `target` (without its query) answers: / is the chat page, /dashboard the
// dashboard; null when there is none.
const WebAsset* find_web_asset(std::string_view target);

// Every page and asset is sent with a validator for revalidation and a Content-Security-Policy that
// allows scripts, styles and connections from this server only (no inline script, no remote load),
// so whatever a model writes cannot run or call out.
extern const char kPageSecurityPolicy[];

// Answers a GET of the asset: 304 when the client's If-None-Match holds its validator.
void send_web_asset(Exchange& ex, const WebAsset& a);

}  // namespace brisk::server
