// The fuzz targets without libFuzzer (any compiler; CI runs them in the sanitizer build): every
// input of the given corpus folders once, then, for --seconds, random mutations of them (bit
// flips, byte runs, dictionary words, splices of two inputs, and the target's own structure-aware
// mutator where it has one, whose outputs join the corpus now and then so edits build on edits). No
// coverage guidance: the long coverage-guided runs are scripts/fuzz.sh with clang. Each input is
// saved to --last before it runs, so a crash leaves its reproducer behind.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// A target's own structure-aware mutator, where it defines one (libFuzzer's hook).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) __attribute__((weak));

namespace {

std::mt19937_64 g_rng(1);
size_t pick(size_t n) {
  return n ? static_cast<size_t>(g_rng() % n) : 0;
}

// The byte-level mutations: bit flips, random bytes, erased and inserted runs.
void mutate_bytes(std::string& in) {
  const size_t at = pick(in.size() + 1);
  switch (pick(4)) {
    case 0:
      if (!in.empty()) in[pick(in.size())] ^= static_cast<char>(1u << pick(8));
      break;
    case 1:
      if (!in.empty()) in[pick(in.size())] = static_cast<char>(g_rng());
      break;
    case 2:
      in.erase(at, pick(16) + 1);
      break;
    default:
      in.insert(at, pick(32) + 1, static_cast<char>(g_rng()));
  }
}

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// libFuzzer's dictionary format: one "quoted" word per line, with \\, \" and \xNN escapes.
std::vector<std::string> read_dict(const std::string& path) {
  std::vector<std::string> words;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) {
    const size_t a = line.find('"'), b = line.rfind('"');
    if (a == std::string::npos || b <= a) continue;
    std::string w;
    for (size_t i = a + 1; i < b; ++i) {
      if (line[i] == '\\' && i + 1 < b) {
        if (line[i + 1] == 'x' && i + 3 < b) {
          w += static_cast<char>(std::stoi(line.substr(i + 2, 2), nullptr, 16));
          i += 3;
        } else {
          w += line[++i];
        }
      } else {
        w += line[i];
      }
    }
    words.push_back(w);
  }
  return words;
}

}  // namespace

// libFuzzer's LLVMFuzzerMutate for the targets' custom mutators to fall back on.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  mutate_bytes(in);
  if (in.size() > max_size) in.resize(max_size);
  std::memcpy(data, in.data(), in.size());
  return in.size();
}

int main(int argc, char** argv) {
  double seconds = 0;
  std::string dict, last = "fuzz-last-input";
  uint64_t seed = 1;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (a == "--dict" && i + 1 < argc)
      dict = argv[++i];
    else if (a == "--last" && i + 1 < argc)
      last = argv[++i];
    else if (a == "--seed" && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (std::filesystem::is_directory(a)) {
      for (const auto& e : std::filesystem::directory_iterator(a))
        if (e.is_regular_file()) inputs.push_back(e.path().string());
    } else {
      inputs.push_back(a);
    }
  }
  std::sort(inputs.begin(), inputs.end());
  std::vector<std::string> corpus;
  auto run = [&](const std::string& in) {
    std::ofstream(last, std::ios::binary | std::ios::trunc)
        .write(in.data(), static_cast<std::streamsize>(in.size()));
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(in.data()), in.size());
  };
  for (const auto& p : inputs) {
    corpus.push_back(read(p));
    run(corpus.back());
  }
  const auto words = dict.empty() ? std::vector<std::string>{} : read_dict(dict);
  g_rng.seed(seed);
  const size_t seeds = corpus.size();
  uint64_t execs = seeds;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!corpus.empty() && std::chrono::steady_clock::now() < end) {
    std::string in = corpus[pick(corpus.size())];
    if (LLVMFuzzerCustomMutator && pick(4) != 0) {
      // Room for the mutator to grow the input (64 KiB, or twice the input).
      std::vector<uint8_t> buf(std::max<size_t>(in.size() * 2, 1 << 16));
      std::memcpy(buf.data(), in.data(), in.size());
      const size_t n = LLVMFuzzerCustomMutator(buf.data(), in.size(), buf.size(),
                                               static_cast<unsigned>(g_rng()));
      in.assign(reinterpret_cast<const char*>(buf.data()), n);
    } else {
      for (int m = 1 + static_cast<int>(pick(4)); m > 0; --m) {
        const size_t at = pick(in.size() + 1);
        switch (pick(6)) {
          case 4:
            if (!words.empty()) in.insert(at, words[pick(words.size())]);
            break;
          case 5: {
            const std::string& other = corpus[pick(corpus.size())];
            const size_t from = pick(other.size() + 1);
            in = in.substr(0, at) + other.substr(from, pick(other.size() - from + 1));
            break;
          }
          default:
            mutate_bytes(in);
        }
      }
    }
    if (LLVMFuzzerCustomMutator && pick(16) == 0 && corpus.size() < 4 * seeds + 1000)
      corpus.push_back(in);  // mutations build on mutations
    run(in);
    ++execs;
  }
  std::printf("%s: %llu executions (%zu corpus inputs, %.0f s of mutations, seed %llu)\n", argv[0],
              static_cast<unsigned long long>(execs), seeds, seconds,
              static_cast<unsigned long long>(seed));
  return 0;
}
