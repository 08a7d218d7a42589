#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex_split.h"

#include <pcre2.h>

#include "core/error.h"
#include "core/utf8.h"

namespace brisk {

struct RegexSplitter::Impl {
  std::vector<pcre2_code*> codes;
  std::vector<bool> jit;  // compiled to machine code: matched through the faster JIT entry
  ~Impl() {
    for (auto* c : codes) pcre2_code_free(c);
  }
};

RegexSplitter::RegexSplitter(const std::vector<std::string>& patterns)
    : impl_(std::make_unique<Impl>()) {
  for (const std::string& p : patterns) {
    int err = 0;
    PCRE2_SIZE off = 0;
    // MATCH_INVALID_UTF: untrusted text may hold invalid UTF-8; such bytes simply match nothing.
    pcre2_code* code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.data()), p.size(),
                      PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &off, nullptr);
    if (!code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      fail("pre-tokenizer regex '{}': {} at offset {}", p, reinterpret_cast<const char*>(msg), off);
    }
    // Falls back to the interpreter where JIT is unavailable.
    impl_->jit.push_back(pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0);
    impl_->codes.push_back(code);
  }
}

RegexSplitter::~RegexSplitter() = default;
RegexSplitter::RegexSplitter(RegexSplitter&&) noexcept = default;
RegexSplitter& RegexSplitter::operator=(RegexSplitter&&) noexcept = default;

bool RegexSplitter::empty() const {
  return impl_->codes.empty();
}

void RegexSplitter::split(std::string_view text, std::vector<std::string_view>& out) const {
  std::vector<std::string_view> cur{text}, next;
  if (text.empty()) return;
  pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
  if (!md) fail("out of memory for regex match data");
  for (size_t k = 0; k < impl_->codes.size(); ++k) {
    pcre2_code* code = impl_->codes[k];
    const bool jit = impl_->jit[k];
    next.clear();
    for (std::string_view piece : cur) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      size_t pos = 0, last = 0;
      while (pos < piece.size()) {
        const int rc = jit ? pcre2_jit_match(code, subject, piece.size(), pos, 0, md, nullptr)
                           : pcre2_match(code, subject, piece.size(), pos, 0, md, nullptr);
        if (rc < 0) break;  // no further match (or a match-limit error: the rest stays whole)
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const size_t b = ov[0], e = ov[1];
        if (e <= b) {  // an empty match cuts nothing; step over one character
          pos = b + std::min(utf8_len(static_cast<unsigned char>(piece[b < piece.size() ? b : 0])),
                             piece.size() - b);
          if (b >= piece.size()) break;
          continue;
        }
        if (b > last) next.push_back(piece.substr(last, b - last));
        next.push_back(piece.substr(b, e - b));
        last = pos = e;
      }
      if (last < piece.size()) next.push_back(piece.substr(last));
    }
    cur.swap(next);
  }
  pcre2_match_data_free(md);
  out.insert(out.end(), cur.begin(), cur.end());
}

}  // namespace brisk
