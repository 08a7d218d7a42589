// Template text to syntax tree. Whitespace handling is the one chat templates are written for
// (transformers and @huggingface/jinja both enable trim_blocks and lstrip_blocks). Errors carry
// the line and column.
#pragma once

#include <string>

#include "tokenizer/jinja/ast.h"

namespace brisk::jinja {

struct Program {
  Block body;
  std::string source;  // the preprocessed text positions refer to
};

Program parse(const std::string& template_text);

// "line L, column C" of an offset in `source`.
std::string location(const std::string& source, size_t pos);

}  // namespace brisk::jinja
