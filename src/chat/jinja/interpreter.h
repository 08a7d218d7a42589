// Runs a parsed template. Untrusted templates are bounded: loop iterations, call depth and output
// size have limits, and nothing outside the given context is reachable (no files, no system).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "chat/jinja/parser.h"
#include "chat/jinja/value.h"

namespace brisk::jinja {

struct Env {
  std::map<std::string, Value> vars;
  std::shared_ptr<Env> parent;
  explicit Env(std::shared_ptr<Env> p = nullptr) : parent(std::move(p)) {}
  Value lookup(const std::string& name) const;
};

// What one render may use. The defaults hold every real chat template with room to spare, and stop
// a hostile one within a fraction of a second and well under 100 MiB.
struct Limits {
  int64_t max_steps = 4'000'000;  // evaluated expressions and statements, loop items, list items
  int max_depth = 256;            // nested evaluation: expressions, blocks and macro calls
  size_t max_output = 64u << 20;  // bytes of rendered text
  // Bytes of strings, lists and dicts made, all together (not only those alive at once); a long
  // conversation raises it by context_factor times its own size.
  int64_t max_bytes = 64 << 20;
  int64_t context_factor = 16;
};

// Renders `program` with `context` (an object: messages, tools, add_generation_prompt, ...).
// Errors throw brisk::Error with the line and column of the failing construct.
std::string render(const Program& program, const Value& context, const Limits& limits = {});

}  // namespace brisk::jinja
