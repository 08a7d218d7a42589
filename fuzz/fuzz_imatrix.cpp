// An importance matrix from anywhere (llama.cpp's GGUF or legacy .dat layout): the reader and the
// importance it gives.
#include <cmath>
#include <cstdlib>
#include <exception>

#include "formats/imatrix_file.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace brisk;
  const std::string path =
      fuzz::write_file("imatrix.dat", {reinterpret_cast<const char*>(data), size});
  try {
    const Imatrix m = read_imatrix(path);
    for (const auto& [name, v] : m.importance())
      for (float x : v)
        if (!std::isfinite(x) || x < 0) std::abort();  // the reader lets no such value through
  } catch (const std::exception&) {
  }
  return 0;
}
