#include "support/test_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace brisk::test {
namespace fs = std::filesystem;

std::string shared(const std::string& rel) {
  const fs::path p = fs::path("..") / "shared" / rel;
  if (!fs::exists(p)) {
    ADD_FAILURE() << "required fixture " << p
                  << " is missing (tests run from the repository root and read "
                  << "../shared; see README)";
    throw std::runtime_error("missing fixture " + p.string());
  }
  return p.string();
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "brisk-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
}

std::vector<float> random_floats(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (auto& x : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x = static_cast<float>(static_cast<int64_t>(s >> 40) - (int64_t{1} << 23)) /
        static_cast<float>(1 << 23);
  }
  return v;
}

std::vector<Isa> available_isas() {
  std::vector<Isa> v;
  for (Isa i : {Isa::Generic, Isa::Avx2, Isa::Avx2Vnni, Isa::Avx512, Isa::Avx512Bf16})
    if (isa_available(i)) v.push_back(i);
  return v;
}

}  // namespace brisk::test
