// Qwen 3 (dense): Llama's layer with an RMS norm on each query and key head before the rotation,
// NeoX-layout rotary positions, no biases.
#include "model/architecture.h"
#include "model/hparams.h"

namespace brisk {

namespace {

class Qwen3 final : public PreNormDecoder {
 public:
  std::vector<std::string_view> names() const override { return {"qwen3"}; }
  void read(const ModelFile&, HParams& h) const override {
    h.rope_type = RopeType::Neox;
    h.qk_norm = true;
  }
};

}  // namespace

namespace archs {
const Architecture& qwen3() {
  static const Qwen3 a;
  return a;
}
}  // namespace archs

}  // namespace brisk
