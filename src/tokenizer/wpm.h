// WordPiece (BERT and the embedding models built on it): BERT's normalizer (clean control
// characters, isolate CJK ideographs, strip accents, lowercase), split on whitespace and
// punctuation, then the longest vocabulary prefix first. GGUF spells word starts with a leading
// U+2581 and continuations bare (Hugging Face's "##" prefix removed).
#pragma once

#include "tokenizer/tokenizer.h"

namespace brisk {

class WpmTokenizer : public Tokenizer {
 public:
  explicit WpmTokenizer(Vocab v);
  std::string token_bytes(int32_t id, bool show_special = false) const override;
  bool strips_leading_space() const override { return true; }
  bool strips_leading_space_always() const override { return true; }

  // BERT's normalization and pre-tokenization: the words, lowercased and without accents.
  static std::vector<std::string> split_words(std::string_view text, bool lowercase);

 protected:
  void encode_text(std::string_view text, bool at_start, std::vector<int32_t>& out) const override;

 private:
  size_t max_token_bytes_ = 0;
};

}  // namespace brisk
