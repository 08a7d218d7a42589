// Unicode facts the tokenizers need (code points, categories, case, normalization forms), on top
// of utf8proc so that no table of ours can drift from the standard.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace brisk {

// Code points of s; a byte that does not start a valid sequence becomes U+FFFD.
std::vector<uint32_t> utf8_to_cpts(std::string_view s);
void append_utf8(std::string& out, uint32_t cp);
std::string cpts_to_utf8(const std::vector<uint32_t>& cps);
// s with each ill-formed sequence replaced by U+FFFD, one per maximal subpart (as the WHATWG
// decoder, and so JavaScript, reads bytes); valid input comes back unchanged.
std::string utf8_sanitize(std::string_view s);

enum class NormForm { None, NFC, NFD, NFKC, NFKD };
NormForm parse_norm_form(std::string_view name);  // "nfc", "NFKC", ... ("" and unknown: None)
// Normalizes valid UTF-8; invalid input is returned unchanged (there is nothing to normalize).
std::string normalize(std::string_view s, NormForm form);

bool cpt_is_whitespace(uint32_t cp);   // the White_Space property
bool cpt_is_punctuation(uint32_t cp);  // general category P*
bool cpt_is_control(uint32_t cp);      // Cc, Cf, Cn, Co (tab, newline and return are whitespace)
bool cpt_is_mark_nonspacing(uint32_t cp);  // Mn
bool cpt_is_cjk_ideograph(uint32_t cp);    // the CJK blocks BERT isolates
// Full lowercase mapping where it is one code point, as the BERT normalizer applies it.
uint32_t cpt_to_lower(uint32_t cp);

}  // namespace brisk
