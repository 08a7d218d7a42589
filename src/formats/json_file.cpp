#include "formats/json_file.h"

#include <cmath>
#include <fstream>
#include <limits>

#include "core/error.h"

namespace brisk {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) fail("{}: cannot open", path);
  try {
    return nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: invalid JSON: {}", path, e.what());
  }
}

int64_t json_int(const nlohmann::json& v, const std::string& what, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) fail("{}: {} is not an integer", what, v.dump());
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    fail("{}: {} is out of range ({} to {})", what, v.dump(), lo, hi);
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) fail("{}: {} is out of range ({} to {})", what, x, lo, hi);
  return x;
}

float json_float(const nlohmann::json& v, const std::string& what) {
  if (!v.is_number()) fail("{}: {} is not a number", what, v.dump());
  const double d = v.get<double>();
  if (!std::isfinite(d) || std::abs(d) > std::numeric_limits<float>::max())
    fail("{}: {} is out of range for a float", what, v.dump());
  return static_cast<float>(d);
}

}  // namespace brisk
