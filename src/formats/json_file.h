// Reading the JSON files of Hugging Face model directories, with errors that name the file.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace brisk {

nlohmann::json read_json_file(const std::string& path);

// Numbers from an untrusted file, checked before conversion (nlohmann's get<>() converts a float
// such as 1e30 to an integer, or 1e300 to float, with undefined behaviour). `what` names the file
// and field in the error.
// An integer in [lo, hi]; a float, a string or anything else is an error.
int64_t json_int(const nlohmann::json& v, const std::string& what, int64_t lo, int64_t hi);
// A finite number within float's range.
float json_float(const nlohmann::json& v, const std::string& what);

}  // namespace brisk
