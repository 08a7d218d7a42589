// SentencePiece-style BPE: merges the adjacent pair whose union is the highest-scoring vocabulary
// entry until none is left; characters outside the vocabulary fall back to <0xXX> byte tokens.
#pragma once

#include "tokenizer/tokenizer.h"

namespace brisk {

class SpmTokenizer : public Tokenizer {
 public:
  explicit SpmTokenizer(Vocab v);
  std::string token_bytes(int32_t id, bool show_special = false) const override;
  bool strips_leading_space() const override { return vocab_.add_space_prefix; }

 protected:
  void encode_text(std::string_view text, bool at_start, std::vector<int32_t>& out) const override;

 private:
  void emit(std::string_view piece, std::vector<int32_t>& out) const;
  void encode_chunk(std::string_view text, std::vector<int32_t>& out) const;
  bool word_safe_ = false;
  int32_t byte_token_[256];
};

}  // namespace brisk
