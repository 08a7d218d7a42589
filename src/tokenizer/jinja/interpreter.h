// Runs a parsed template. Untrusted templates are bounded: loop iterations, call depth and output
// size have limits, and nothing outside the given context is reachable (no files, no system).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "tokenizer/jinja/parser.h"
#include "tokenizer/jinja/value.h"

namespace brisk::jinja {

struct Env {
  std::map<std::string, Value> vars;
  std::shared_ptr<Env> parent;
  explicit Env(std::shared_ptr<Env> p = nullptr) : parent(std::move(p)) {}
  Value lookup(const std::string& name) const;
};

struct Limits {
  int64_t max_steps = 10'000'000;  // loop iterations and calls, all together
  int max_depth = 256;             // nested calls and blocks
  size_t max_output = 64u << 20;   // bytes
};

// Renders `program` with `context` (an object: messages, tools, add_generation_prompt, ...).
// Errors throw brisk::Error with the line and column of the failing construct.
std::string render(const Program& program, const Value& context, const Limits& limits = {});

}  // namespace brisk::jinja
