// Structured output's costs on a real 128K vocabulary (Llama 3's), one thread: compiling each
// schema of bench/schemas, and the full mask before every token of random generations under it
// (walks that pick among the allowed tokens, ending where the schema may), against the baseline
// measured in the same run at the same positions: checking every token of the vocabulary one by
// one. Prints a row per schema and the summary the docs quote.
//   brisk_grammar_bench [TOKENIZER_JSON] [SCHEMA_DIR] [WALKS_PER_SCHEMA]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "formats/hf_tokenizer.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace brisk;

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

struct Walked {
  std::vector<double> mask_us, naive_us, masked_at_naive_us;
  int ended = 0;
};

// One random generation of at most `budget` tokens, the mask timed before each token; every
// 16th position also the per-token baseline.
void walk(const std::shared_ptr<const grammar::CompiledGrammar>& cg, uint64_t seed, int budget,
          Walked& out) {
  grammar::Matcher m(cg);
  const auto& trie = cg->trie();
  std::vector<uint64_t> mask(trie.n_words());
  std::mt19937_64 rng(seed);
  for (int step = 0; step < budget && !m.done(); ++step) {
    const double t0 = now_seconds();
    m.fill_mask(mask.data());
    const double us = (now_seconds() - t0) * 1e6;
    out.mask_us.push_back(us);
    if (step % 16 == 0) {
      const double t1 = now_seconds();
      int n = 0;
      for (int32_t t = 0; t < trie.n_vocab(); ++t) n += m.allows(t);
      out.naive_us.push_back((now_seconds() - t1) * 1e6);
      out.masked_at_naive_us.push_back(us);
      if (n == 0) std::abort();
    }
    std::vector<int32_t> allowed;
    for (int32_t t = 0; t < trie.n_vocab(); ++t)
      if ((mask[size_t(t) >> 6] >> (t & 63)) & 1) allowed.push_back(t);
    if (allowed.empty()) break;
    // End where allowed, half the time; else any allowed token, short ones favoured (a model's
    // tokens inside JSON are mostly short) by drawing twice and keeping the shorter.
    if (m.can_end() && rng() % 2 == 0) {
      ++out.ended;
      return;
    }
    int32_t t = allowed[rng() % allowed.size()];
    const int32_t u = allowed[rng() % allowed.size()];
    if (trie.bytes(u).size() < trie.bytes(t).size()) t = u;
    if (!m.accept(t)) std::abort();
  }
  if (m.can_end() || m.done()) ++out.ended;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string tok_path = argc > 1 ? argv[1] : "../shared/tokenizers/llama3-hf/tokenizer.json";
  const std::string dir = argc > 2 ? argv[2] : "bench/schemas";
  const int walks = argc > 3 ? std::atoi(argv[3]) : 6;
  const auto tok = Tokenizer::create(load_hf_tokenizer_file(tok_path));
  const double tt = now_seconds();
  const auto trie = std::make_shared<grammar::TokenTrie>(grammar::TokenTrie::from_tokenizer(*tok));
  std::printf("vocabulary: %s, %d tokens, trie built in %.0f ms\n", tok_path.c_str(),
              trie->n_vocab(), (now_seconds() - tt) * 1e3);

  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<double> compile_ms, all_mask, all_naive, all_masked_at_naive;
  int compiled = 0;
  std::printf("%-22s %10s %8s %10s %10s %10s\n", "schema", "compile_ms", "tokens", "mask_p50",
              "mask_p99", "mask_max");
  for (const std::string& f : files) {
    const std::string name = std::filesystem::path(f).stem().string();
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    std::shared_ptr<const grammar::CompiledGrammar> cg;
    const double t0 = now_seconds();
    try {
      const auto schema = nlohmann::ordered_json::parse(ss.str());
      cg = std::make_shared<grammar::CompiledGrammar>(grammar::json_schema_grammar(schema), trie);
    } catch (const std::exception& e) {
      std::printf("%-22s refused: %s\n", name.c_str(), e.what());
      continue;
    }
    compile_ms.push_back((now_seconds() - t0) * 1e3);
    ++compiled;
    Walked w;
    for (int i = 0; i < walks; ++i) walk(cg, 1000 + static_cast<uint64_t>(i), 256, w);
    std::printf("%-22s %10.2f %8zu %10.1f %10.1f %10.1f\n", name.c_str(), compile_ms.back(),
                w.mask_us.size(), pct(w.mask_us, 0.5), pct(w.mask_us, 0.99), pct(w.mask_us, 1.0));
    all_mask.insert(all_mask.end(), w.mask_us.begin(), w.mask_us.end());
    all_naive.insert(all_naive.end(), w.naive_us.begin(), w.naive_us.end());
    all_masked_at_naive.insert(all_masked_at_naive.end(), w.masked_at_naive_us.begin(),
                               w.masked_at_naive_us.end());
  }
  std::printf(
      "summary: %d of %zu schemas compiled; compile p50 %.2f ms, p99 %.2f ms; mask over %zu "
      "tokens p50 %.1f us, p99 %.1f us, max %.1f us; checking each token instead: p50 %.0f us "
      "(%.0fx the mask's p50 at the same positions)\n",
      compiled, files.size(), pct(compile_ms, 0.5), pct(compile_ms, 0.99), all_mask.size(),
      pct(all_mask, 0.5), pct(all_mask, 0.99), pct(all_mask, 1.0), pct(all_naive, 0.5),
      pct(all_masked_at_naive, 0.5) > 0 ? pct(all_naive, 0.5) / pct(all_masked_at_naive, 0.5)
                                        : 0.0);
  return 0;
}
