// Tokenizer speed: about 1 MB of mixed text (prose, code, CJK, emoji) encoded by each family's
// tokenizer on one thread; median MB/s over several runs. Run from the repository root (it reads
// ../shared/tokenizers and bench/text).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/loader.h"
#include "tokenizer/tokenizer.h"

namespace {

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "error: %s is missing (run from the repository root)\n", path.c_str());
    std::exit(1);
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Prose, code, CJK and emoji interleaved in chunks until `bytes` is reached.
std::string mixed_text(size_t bytes) {
  const std::string prose = read("bench/text/stories.txt");
  const std::string code = read("bench/text/code.txt");  // a snapshot of brisk's own C++
  const std::string cjk = read("bench/text/mixed-cjk.txt");
  const std::string emoji = read("bench/text/emoji.txt");
  // Shares by bytes: about 50% prose, 30% code, 15% CJK, 5% emoji.
  struct Part {
    const std::string* text;
    size_t chunk, pos = 0;
  } parts[] = {{&prose, 5000}, {&code, 3000}, {&cjk, 1500}, {&emoji, 500}};
  std::string out;
  while (out.size() < bytes)
    for (Part& p : parts) {
      size_t n = std::min(p.chunk, p.text->size() - p.pos);
      out.append(*p.text, p.pos, n);
      p.pos = (p.pos + n) % p.text->size();
      while (n < p.chunk) {  // wrap around
        const size_t m = std::min(p.chunk - n, p.text->size());
        out.append(*p.text, 0, m);
        p.pos = m % p.text->size();
        n += m;
      }
    }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const std::string text = mixed_text(1 << 20);
  struct Family {
    const char* name;
    const char* path;
  } families[] = {
      {"llama-spm (SentencePiece)",
       "../shared/tokenizers/llama.cpp-vocab/ggml-vocab-llama-spm.gguf"},
      {"gpt-2 (byte-level BPE)", "../shared/tokenizers/llama.cpp-vocab/ggml-vocab-gpt-2.gguf"},
      {"llama-3 (byte-level BPE)", "../shared/tokenizers/llama3-hf/tokenizer.json"},
      {"qwen2/3 (byte-level BPE, NFC)", "../shared/tokenizers/qwen3-hf/tokenizer.json"},
      {"deepseek-llm (byte-level BPE)",
       "../shared/tokenizers/llama.cpp-vocab/ggml-vocab-deepseek-llm.gguf"},
      {"falcon (byte-level BPE)", "../shared/tokenizers/llama.cpp-vocab/ggml-vocab-falcon.gguf"},
      {"starcoder (byte-level BPE)",
       "../shared/tokenizers/llama.cpp-vocab/ggml-vocab-starcoder.gguf"},
      {"bert-bge (WordPiece)", "../shared/tokenizers/llama.cpp-vocab/ggml-vocab-bert-bge.gguf"},
  };
  std::printf("text: %.2f MB mixed (prose, code, CJK, emoji); %d runs each, one thread\n",
              text.size() / 1e6, runs);
  std::printf("%-32s %10s %10s %12s\n", "tokenizer", "tokens", "MB/s", "bytes/token");
  for (const Family& f : families) {
    const auto tok = brisk::Tokenizer::create(brisk::load_model_file(f.path));
    std::vector<double> secs;
    size_t n = 0;
    for (int r = 0; r < runs; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      n = tok->encode(text, false).size();
      secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(secs.begin(), secs.end());
    const double med = secs[secs.size() / 2];
    std::printf("%-32s %10zu %10.1f %12.2f\n", f.name, n, text.size() / 1e6 / med,
                static_cast<double>(text.size()) / static_cast<double>(n));
  }
  return 0;
}
