// Speculative decoding's settings: a proposer guesses tokens that one forward pass then verifies
// together with the sequence's next token; the output is distributed exactly as without it (greedy
// output is the same, token for token).
#pragma once

#include <string>

#include "engine/spec/ngram_proposer.h"

namespace brisk {

struct Model;

enum class SpecMethod { None, Ngram, LayerSkip, DraftModel };

struct SpecConfig {
  SpecMethod method = SpecMethod::None;
  // DraftModel: a smaller model with the target's vocabulary (outlives the engine). Its KV lives
  // in a second paged cache over the same block tables, taking its share of the KV memory.
  const Model* draft_model = nullptr;
  int draft_max = 8;  // tokens proposed per step at most (γ; per request: Request::draft_max)
  // Draft lengths chosen per sequence and step from measured costs and acceptance (see
  // engine/spec/draft_policy.h); false: always draft_max (reproducible, for tests and comparisons).
  bool adaptive = true;
  int draft_min = 1;  // fewer proposed tokens than this are not worth verifying
  NgramConfig ngram;
  // Layer skipping: the draft is the model's own first draft_layers blocks plus its final norm and
  // classifier (0: half the blocks), drafting greedily.
  int draft_layers = 0;
  // No drafts in a step that decodes more sequences than this (0: no limit). Without a limit the
  // draft policy still switches speculation off where a step is compute-bound (see
  // engine/spec/draft_policy.h); this is a hard cap beside it.
  int disable_batch_size = 0;
};

SpecMethod parse_spec_method(const std::string& name);  // none | ngram | layer-skip | draft
const char* spec_method_name(SpecMethod m);             // as --spec spells it
// Throws unless the draft's token ids mean what the target's do: the same tokenizer family, the
// same text for every id both hold (their sizes may differ by padding of up to 128 ids), the same
// BOS and EOS.
void check_draft_vocab(const Model& target, const Model& draft);

}  // namespace brisk
