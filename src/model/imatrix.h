// Computing an importance matrix as llama-imatrix does: the model runs over calibration text in
// windows of n_ctx tokens (a BOS at each window's start), and every linear layer's input adds each
// channel's squared activation, per token, to its weight matrix's entry. Checked against
// llama-imatrix on the kjv target: the same entries and counts, values within 0.04%.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "formats/imatrix_file.h"
#include "model/model.h"

namespace brisk {

struct ImatrixOptions {
  int64_t n_ctx = 512;
  int64_t max_chunks = -1;  // -1: every whole window of the text
  std::string dataset;      // recorded in the file (the text's path)
  // The classifier's input too (llama-imatrix's --process-output): off by default, as there.
  bool process_output = false;
  std::function<void(int64_t done, int64_t total)> progress;
};

Imatrix compute_imatrix(const Model& m, ThreadPool& pool, const std::vector<int32_t>& tokens,
                        const ImatrixOptions& opt);

}  // namespace brisk
