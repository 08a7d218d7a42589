// Reading the JSON files of Hugging Face model directories, with errors that name the file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace brisk {

nlohmann::json read_json_file(const std::string& path);

}  // namespace brisk
