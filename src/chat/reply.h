// A model's reply split the way OpenAI's API returns it: reasoning, content and tool calls.
#pragma once

#include <cstddef>
#include <cstdint>
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

// A point of a reply's parse from which the rest of the text can be read without what came
// before, so that a stream reads each byte about once: the part of the reply and the position,
// what its reader needs to know there, and how much of the reply had been read by then (all of it
// final). Reading on from it gives what a parse from the start gives after those sizes.
struct ReplyResume {
  enum class Part : uint8_t { Start, Reasoning, Body };
  Part part = Part::Start;
  size_t pos = 0;
  bool after_marker = false;  // whitespace at pos belongs to the layout (a marker or call before)
  int state = 0;              // the reader's own (0: at the start of its part, or between items)
  size_t reasoning = 0, content = 0, calls = 0;
};

}  // namespace brisk
