// Running requests through an engine to the end and collecting each completion, for the engine
// suites: block accounting is checked after every step and nothing may be left in use.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace brisk {

struct Result {
  std::vector<int32_t> tokens;
  std::string text;
  FinishReason finish = FinishReason::None;
};
using Results = std::map<std::pair<RequestId, int>, Result>;

// A greedy request for `max_tokens` tokens (n completions of the prompt).
inline Request greedy(std::vector<int32_t> prompt, int64_t max_tokens, int n = 1) {
  Request r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  r.n = n;
  return r;
}

// Submits every request, runs the engine until idle and returns each completion, checking the
// block accounting after every step and that nothing is left in use at the end.
inline std::vector<std::vector<Result>> run_all(Engine& e, const std::vector<Request>& reqs) {
  Results res;
  std::vector<RequestId> ids;
  for (const auto& r : reqs)
    ids.push_back(e.submit(r, [&res](const Output& o) {
      auto& x = res[{o.id, o.index}];
      EXPECT_EQ(x.finish, FinishReason::None) << "event after the finish";
      if (o.token >= 0) x.tokens.push_back(o.token);
      x.text += o.text;
      x.finish = o.finish;
    }));
  while (e.step()) e.check();
  e.check();
  EXPECT_EQ(e.stats().blocks_in_use, 0);
  std::vector<std::vector<Result>> out;
  for (size_t i = 0; i < reqs.size(); ++i) {
    out.emplace_back();
    for (int j = 0; j < reqs[i].n; ++j) {
      auto it = res.find({ids[i], j});
      EXPECT_NE(it, res.end());
      if (it != res.end()) {
        EXPECT_NE(it->second.finish, FinishReason::None);
        out.back().push_back(it->second);
      }
    }
  }
  return out;
}

}  // namespace brisk
