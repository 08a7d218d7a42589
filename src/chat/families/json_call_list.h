// The layout several families share: after a marker, a JSON list of
// {"name": "f", "arguments": {...}} objects. A family names itself and its marker.
#pragma once

#include <string>
#include <string_view>

#include "chat/tool_grammar_builder.h"

namespace brisk {

class JsonCallList : public ToolFamily {
 public:
  explicit JsonCallList(std::string_view marker) : marker_(marker) {}
  bool taught_by(std::string_view t) const override { return tool_layouts::contains(t, marker_); }
  std::string trigger() const override { return std::string(marker_); }
  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    return {trigger(), b.call_array(b.call_object("", "name", "arguments"), "")};
  }

 protected:
  tool_layouts::Section read_section(std::string_view s, size_t pos, bool partial, const json&,
                                     std::vector<ToolCallText>& calls) const override {
    return tool_layouts::read_call_array(s, pos, partial, {}, calls);
  }

 private:
  std::string_view marker_;
};

}  // namespace brisk
