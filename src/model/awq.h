// Activation-aware weight quantization (Lin et al. 2023, "AWQ"). The model runs over calibration
// text; for each group of linear layers that read the same input (q/k/v, gate/up, o, down), the
// mean magnitude of every input channel is collected, and the per-channel scale s = mean|x|^α is
// searched over α in [0, 1]: weights are multiplied by s before quantization and the inputs
// divided by s, so salient channels keep more precision; the α whose quantized layers best
// reproduce the original outputs on calibration activations wins. 1/s is folded into the operator
// before (the RMSNorm weight, or the rows of v / up for o / down), so the model computes the same
// function before quantization. The result is a set of replacement f32 tensors for the quantizer.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/model.h"
#include "model/quantize.h"

namespace brisk {

struct AwqOptions {
  int64_t n_ctx = 512;          // calibration window
  int64_t max_tokens = 16384;   // calibration tokens used for the channel statistics
  int64_t sample_tokens = 512;  // tokens whose activations the error search uses
  int grid = 20;                // α steps over [0, 1]
  bool progress = true;
};

struct AwqGroupReport {
  std::string name;  // e.g. "blk.3 q/k/v"
  double alpha;
  double err_plain, err_awq;  // output squared error without scaling and with the chosen scale
};

struct AwqResult {
  std::map<std::string, std::vector<float>> overrides;
  // Per input channel of each linear layer: the mean square of its (scaled) activation, which the
  // quantizer uses to weigh rounding errors.
  std::map<std::string, std::vector<float>> importance;
  std::vector<AwqGroupReport> groups;
};

AwqResult awq_search(const Model& m, ThreadPool& pool, const std::vector<int32_t>& calib_tokens,
                     const QuantTarget& target, const AwqOptions& opt = {});

}  // namespace brisk
