// Mistral's v3 layout (Mistral 7B v0.3, Nemo): [TOOL_CALLS][{"name": "f", "arguments": {...}},
// ...], call ids of nine letters and digits.
#include "chat/families/json_call_list.h"

namespace brisk {

namespace {

class MistralV3 final : public JsonCallList {
 public:
  MistralV3() : JsonCallList("[TOOL_CALLS]") {}
  std::string_view name() const override { return "mistral"; }
  std::string new_call_id(std::mt19937_64& rng) const override { return random_id(rng, "", 9); }
};

}  // namespace

namespace families {
const ToolFamily& mistral_v3() {
  static const MistralV3 f;
  return f;
}
}  // namespace families

}  // namespace brisk
