// What a request constrains its output to, from whichever field names it: OpenAI's
// response_format (json_object, json_schema), vLLM's structured_outputs and its older guided_*
// fields, llama.cpp's json_schema and grammar. At most one may be given; the field it came from
// is the `param` of any error about it (a schema keyword that cannot be enforced included).
#pragma once

#include <optional>
#include <string>

#include "grammar/constraint.h"
#include "server/openai.h"

namespace brisk::server {

struct RequestedConstraint {
  grammar::Constraint constraint;
  std::string param;  // the body's field, e.g. "response_format"
};

// Throws ApiError 400 for a malformed or unsupported field, or two fields that both constrain.
std::optional<RequestedConstraint> parse_constraint(const json& body);

}  // namespace brisk::server
