// Qwen 2 and 2.5: Llama's layer with biases on q, k and v, and rotary positions in the NeoX
// (split-half) layout.
#include "model/architecture.h"
#include "model/hparams.h"

namespace brisk {

namespace {

class Qwen2 final : public PreNormDecoder {
 public:
  std::vector<std::string_view> names() const override { return {"qwen2"}; }
  void read(const ModelFile&, HParams& h) const override {
    h.rope_type = RopeType::Neox;
    h.qkv_bias = true;
  }
};

}  // namespace

namespace archs {
const Architecture& qwen2() {
  static const Qwen2 a;
  return a;
}
}  // namespace archs

}  // namespace brisk
