// A tokenizer vocabulary as GGUF describes it (tokenizer.ggml.*), whatever file it came from.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/metadata.h"

namespace brisk {

enum class TokenType : int32_t {
  Undefined = 0,
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

struct Vocab {
  std::string model;  // tokenizer.ggml.model: "llama", "gpt2", "bert", ...
  std::string pre;    // tokenizer.ggml.pre
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<TokenType> types;
  // Looked up by string_view without building a string (the tokenizers' inner loops do this).
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, TextHash, std::equal_to<>> index;
  int32_t bos = -1, eos = -1, unk = -1, pad = -1, eot = -1;
  bool add_bos = true, add_eos = false, add_space_prefix = true;
  std::string chat_template;
  // Byte-level BPE: merges as "left right", in rank order.
  std::vector<std::string> merges;
  // Pre-tokenizer split expressions stated by the file itself (tokenizer.json); when empty, the
  // family named by `pre` decides. The same holds for ignore_merges and the normalization form.
  std::vector<std::string> pre_regex;
  std::optional<bool> ignore_merges;
  std::string normalizer;  // "nfc", "nfkc", ... or "" for the family's default

  int32_t size() const { return static_cast<int32_t>(tokens.size()); }
  int32_t find(std::string_view s) const {
    auto it = index.find(s);
    return it == index.end() ? -1 : it->second;
  }
  // End-of-generation: EOS, EOT, and the end-of-turn tokens chat templates write (<|im_end|>,
  // <|eot_id|>, <end_of_turn>, ...), so a chat reply stops where its turn ends.
  std::vector<int32_t> eog;
  bool is_eog(int32_t id) const {
    return id == eos || id == eot || std::find(eog.begin(), eog.end(), id) != eog.end();
  }

  static Vocab from_model(const ModelFile& mf);
};

}  // namespace brisk
