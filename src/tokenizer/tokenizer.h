// Text to token ids and back. One implementation per algorithm; the model's vocabulary picks it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace brisk {

class Tokenizer {
 public:
  explicit Tokenizer(Vocab v);
  virtual ~Tokenizer() = default;

  // Creates the tokenizer the model's vocabulary calls for; unknown kinds are refused by name.
  static std::unique_ptr<Tokenizer> create(const ModelFile& mf);

  // add_special adds BOS/EOS as the vocabulary asks; parse_special matches control and
  // user-defined token texts in `text` (off: such text is tokenized as plain characters).
  std::vector<int32_t> encode(std::string_view text, bool add_special,
                              bool parse_special = false) const;
  // Text that continues what a model already produced (its output, as it would emit it): no
  // BOS and no SentencePiece space prefix; control tokens' texts stay plain characters.
  std::vector<int32_t> encode_continuation(std::string_view text) const;

  // The bytes a token stands for (control tokens give "" unless show_special).
  virtual std::string token_bytes(int32_t id, bool show_special = false) const = 0;

  const Vocab& vocab() const { return vocab_; }
  // True if decoding should drop the space that starts the first word after BOS.
  virtual bool strips_leading_space() const { return false; }
  // True if that space is dropped at the start of any decoding, BOS or not (WordPiece spells
  // every word start with it).
  virtual bool strips_leading_space_always() const { return false; }

 protected:
  // Encodes a run of ordinary text (no special tokens); at_start: the run begins the text or
  // follows a special token (where SentencePiece adds its space prefix).
  virtual void encode_text(std::string_view text, bool at_start,
                           std::vector<int32_t>& out) const = 0;
  Vocab vocab_;

 private:
  std::vector<int32_t> encode_runs(std::string_view text, bool parse_special, bool at_start,
                                   std::vector<int32_t> out) const;
  // Control and user-defined tokens by text, and for each first byte the lengths such texts
  // have (longest first): matching at a position costs a few hash lookups, however many
  // special tokens there are (DeepSeek has thousands).
  std::unordered_map<std::string_view, int32_t> special_ids_;
  std::vector<size_t> special_lengths_[256];
};

// Turns a stream of token ids into text, never splitting a UTF-8 character across pushes.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok, bool show_special = false)
      : tok_(tok), show_special_(show_special) {}
  std::string push(int32_t id);
  std::string flush();  // whatever is held back (an incomplete character at the end)

 private:
  const Tokenizer& tok_;
  bool show_special_;
  bool after_bos_ = false;
  bool started_ = false;
  std::string pending_;
};

}  // namespace brisk
