#include "formats/json_file.h"

#include <fstream>

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

}  // namespace brisk
