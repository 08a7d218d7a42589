// The pre-tokenizer of each byte-level BPE family, by the name GGUF files carry in
// tokenizer.ggml.pre: the split expressions the family's tokenizer.json applies, whether whole
// words found in the vocabulary skip the merges, and the Unicode normalization it asks for.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tokenizer/unicode.h"

namespace brisk {

struct PreTokenizer {
  std::vector<std::string> regexes;
  bool ignore_merges = false;
  NormForm norm = NormForm::None;
};

// nullopt for a name brisk does not know.
std::optional<PreTokenizer> find_pretokenizer(const std::string& name);
// The family name whose expressions equal `regexes`, or "" (used to name what tokenizer.json
// holds).
std::string pretokenizer_name_for(const std::vector<std::string>& regexes);
// GPT-2's expression, which Hugging Face's ByteLevel(use_regex = true) applies.
extern const char* const kGpt2Regex;

}  // namespace brisk
