// A model architecture in one place: the GGUF names it reads, its hyper-parameters beyond the
// shared ones, its tensors, and its layer as a sequence of shared blocks (model/blocks.h). Each
// architecture is a class in model/archs/, listed in the registry (architecture.cpp); the forward
// pass and the scalar reference both run a layer by calling its blocks, so an architecture is
// written once for both.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/metadata.h"

namespace brisk {

struct HParams;
struct LayerWeights;
class LayerBlocks;

class Architecture {
 public:
  virtual ~Architecture() = default;

  // The general.architecture values it reads (llama.cpp's names): the first is its own name.
  virtual std::vector<std::string_view> names() const = 0;
  std::string_view name() const { return names().front(); }
  // Its hyper-parameters beyond the shared ones HParams::from_model read (`h.arch` is one of
  // names()); throws naming the key that is wrong.
  virtual void read(const ModelFile& mf, HParams& h) const = 0;
  // Layer l's tensors, checked against the hyper-parameters.
  virtual void bind(const ModelFile& mf, const HParams& h, int layer, LayerWeights& L) const = 0;
  // Layer l over the batch (or the reference's one token), block by block.
  virtual void layer(const HParams& h, LayerBlocks& blocks, int layer) const = 0;

  // The architecture named by a file's general.architecture (nullptr: none reads it).
  static const Architecture* find(std::string_view gguf_name);
  // Every name an architecture reads, for messages ("llama, mistral, qwen2, ...").
  static std::string supported_names();
};

// The Llama-shaped layer most architectures share: pre-norm attention, then a SwiGLU
// feed-forward, or a mixture of experts where the hyper-parameters have experts. Such an
// architecture says only its names and its own hyper-parameters.
class PreNormDecoder : public Architecture {
 public:
  void bind(const ModelFile& mf, const HParams& h, int layer, LayerWeights& L) const override;
  void layer(const HParams& h, LayerBlocks& blocks, int layer) const override;
};

}  // namespace brisk
