// Template text to syntax tree. Whitespace handling is the one chat templates are written for
// (transformers and @huggingface/jinja both enable trim_blocks and lstrip_blocks). Errors carry
// the line and column.
#pragma once

#include <string>
#include <vector>

#include "chat/jinja/ast.h"

namespace brisk::jinja {

struct Program {
  Block body;
  std::string source;          // the template as written
  std::vector<size_t> origin;  // node positions (in the preprocessed text) -> offsets in source
};

Program parse(const std::string& template_text);

// "line L, column C" in the template as written, for a node position.
std::string location(const Program& p, size_t pos);

}  // namespace brisk::jinja
