// A model's reply split the way OpenAI's API returns it: reasoning, content and tool calls.
#pragma once

#include <string>
#include <vector>

namespace brisk {

struct ToolCallText {
  std::string name;
  // The arguments as JSON text: what the model wrote, or for layouts that are not JSON
  // (pythonic, XML parameters) the JSON built from them, a parameter at a time.
  std::string arguments;
  bool complete = false;  // the call's syntax closed
};

struct Reply {
  std::string reasoning, content;
  std::vector<ToolCallText> calls;
};

}  // namespace brisk
