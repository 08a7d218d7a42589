#include "tokenizer/wpm.h"

#include "tokenizer/unicode.h"

namespace brisk {
namespace {

const std::string kWordStart = "\xe2\x96\x81";  // U+2581
// Hugging Face sends words longer than this to [UNK] whole.
constexpr size_t kMaxWordChars = 100;

bool is_bert_punctuation(uint32_t cp) {
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
         (cp >= 123 && cp <= 126) || cpt_is_punctuation(cp);
}

}  // namespace

WpmTokenizer::WpmTokenizer(Vocab v) : Tokenizer(std::move(v)) {
  for (const auto& t : vocab_.tokens) max_token_bytes_ = std::max(max_token_bytes_, t.size());
}

std::vector<std::string> WpmTokenizer::split_words(std::string_view text, bool lowercase) {
  // Clean (drop NUL, U+FFFD and control characters; whitespace becomes a space) and put spaces
  // around CJK ideographs, then decompose and drop the combining marks, then lowercase.
  std::string cleaned;
  cleaned.reserve(text.size());
  for (uint32_t cp : utf8_to_cpts(text)) {
    if (cp == 0 || cp == 0xFFFD || cpt_is_control(cp)) continue;
    if (cpt_is_whitespace(cp)) {
      cleaned += ' ';
    } else if (cpt_is_cjk_ideograph(cp)) {
      cleaned += ' ';
      append_utf8(cleaned, cp);
      cleaned += ' ';
    } else {
      append_utf8(cleaned, cp);
    }
  }
  std::vector<uint32_t> cps;
  if (lowercase) {
    for (uint32_t cp : utf8_to_cpts(normalize(cleaned, NormForm::NFD)))
      if (!cpt_is_mark_nonspacing(cp)) cps.push_back(cpt_to_lower(cp));
  } else {
    cps = utf8_to_cpts(cleaned);
  }
  std::vector<std::string> words;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) words.push_back(std::move(cur));
    cur.clear();
  };
  for (uint32_t cp : cps) {
    if (cpt_is_whitespace(cp)) {
      flush();
    } else if (is_bert_punctuation(cp)) {
      flush();
      append_utf8(cur, cp);
      flush();
    } else {
      append_utf8(cur, cp);
    }
  }
  flush();
  return words;
}

void WpmTokenizer::encode_text(std::string_view text, bool, std::vector<int32_t>& out) const {
  for (const std::string& word : split_words(text, true)) {
    const size_t before = out.size();
    bool ok = utf8_to_cpts(word).size() <= kMaxWordChars;
    const std::string w = kWordStart + word;
    // Greedy longest match; the first piece carries the word-start marker, the rest are bare.
    for (size_t i = 0; ok && i < w.size();) {
      const size_t start = i == 0 ? 0 : i;
      size_t len = std::min(max_token_bytes_, w.size() - start);
      int32_t id = -1;
      for (; len > 0; --len) {
        if (i == 0 && len <= kWordStart.size()) break;  // the marker alone is not a piece
        id = vocab_.find(std::string_view(w).substr(start, len));
        if (id >= 0) break;
      }
      if (id < 0) {
        ok = false;
        break;
      }
      out.push_back(id);
      i = start + len;
    }
    if (!ok) {
      out.resize(before);
      if (vocab_.unk >= 0) out.push_back(vocab_.unk);
    }
  }
}

std::string WpmTokenizer::token_bytes(int32_t id, bool show_special) const {
  if (id < 0 || id >= vocab_.size()) return "";
  const std::string& t = vocab_.tokens[id];
  if (vocab_.types[id] == TokenType::Control) return show_special ? t : "";
  if (t.compare(0, kWordStart.size(), kWordStart) == 0) return " " + t.substr(kWordStart.size());
  return t;
}

}  // namespace brisk
