// Prometheus metrics with vLLM's names, so dashboards made for vLLM work unchanged. Counters and
// histograms are fed by the server's I/O thread; engine gauges come from a snapshot of the
// engine's statistics taken on its own thread after each step.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace brisk::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  // The _bucket, _sum and _count lines of metric `name` with the given labels.
  std::string render(const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; one more for +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

struct Metrics {
  Metrics();
  Histogram ttft, itl, e2e, queue, prompt_len, generation_len;
  std::map<std::string, uint64_t> finished;  // requests by finish reason
  uint64_t prompt_tokens = 0, generation_tokens = 0;

  std::string render(const std::string& model, const EngineStats& st) const;
};

}  // namespace brisk::server
