// Importance matrices in llama.cpp's file formats: for each weight matrix, the sum over calibration
// tokens of each input channel's squared activation, and the number of tokens. Quantizers weight
// each weight's rounding error by its channel's mean square. Read: GGUF files (general.type
// "imatrix": tensors NAME.in_sum2 and NAME.counts, keys imatrix.datasets, imatrix.chunk_count,
// imatrix.chunk_size) and the legacy .dat layout; written: GGUF, which llama-quantize reads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace brisk {

struct ImatrixEntry {
  std::vector<float> sum_sq;  // per input channel
  float count = 0;            // tokens accumulated
};

struct Imatrix {
  std::map<std::string, ImatrixEntry> entries;  // by weight tensor name, e.g. blk.0.attn_q.weight
  std::vector<std::string> datasets;
  uint32_t chunk_count = 0, chunk_size = 0;

  // Each matrix's per-channel mean square (sum / count), what the quantizer weighs errors by.
  std::map<std::string, std::vector<float>> importance() const;
};

// Throws an Error naming the file and the problem.
Imatrix read_imatrix(const std::string& path);
void write_imatrix(const std::string& path, const Imatrix& m);

}  // namespace brisk
