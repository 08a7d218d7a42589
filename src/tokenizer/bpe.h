// Byte-level BPE (GPT-2, Llama 3, Qwen, DeepSeek, Falcon, StarCoder, ...): the text is normalized
// if the family asks, cut into words by the family's expressions, each word's bytes are spelled
// with GPT-2's printable byte alphabet, and adjacent symbols are merged lowest rank first.
#pragma once

#include "tokenizer/regex_split.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace brisk {

class BpeTokenizer : public Tokenizer {
 public:
  explicit BpeTokenizer(Vocab v);
  std::string token_bytes(int32_t id, bool show_special = false) const override;

  // GPT-2's alphabet: the code point standing for each byte value, and back.
  static uint32_t byte_to_cpt(uint8_t b);
  static int byte_of_cpt(uint32_t cp);  // -1 if cp stands for no byte

 protected:
  void encode_text(std::string_view text, bool at_start, std::vector<int32_t>& out) const override;

 private:
  struct Scratch;
  void encode_word(std::string_view word, Scratch& s, std::vector<int32_t>& out) const;

  RegexSplitter splitter_;
  NormForm norm_ = NormForm::None;
  bool ignore_merges_ = false;
  // Open-addressing table: (left id << 32 | right id) -> (rank, merged id). The merge lookup is
  // the hot loop of encoding, where std::unordered_map's node chasing cost half the time.
  struct MergeSlot {
    uint64_t key = ~uint64_t{0};
    int32_t rank = 0, merged = 0;
  };
  std::vector<MergeSlot> merge_table_;
  uint64_t merge_mask_ = 0;
  const MergeSlot* find_merge(int32_t l, int32_t r) const;
  uint64_t slot_of(uint64_t key) const;
  int32_t byte_id_[256];
  std::vector<std::string> decoded_;  // each token's bytes (normal tokens), computed once
};

}  // namespace brisk
