// IBM Granite 3: <|tool_call|>[{"name": "f", "arguments": {...}}, ...].
#include "chat/families/json_call_list.h"

namespace brisk {

namespace {

class Granite final : public JsonCallList {
 public:
  Granite() : JsonCallList("<|tool_call|>") {}
  std::string_view name() const override { return "granite"; }
};

}  // namespace

namespace families {
const ToolFamily& granite() {
  static const Granite f;
  return f;
}
}  // namespace families

}  // namespace brisk
