// Model metadata in GGUF's vocabulary: every loader (GGUF, llama2.c, safetensors) produces the same
// key/value set and GGUF-named tensors, so binding hyper-parameters, vocab and weights is written
// once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace brisk {

enum class GgufType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
const char* gguf_type_name(GgufType t);

struct Value {
  GgufType type = GgufType::U32;
  GgufType elem_type = GgufType::U32;  // arrays only
  uint64_t u = 0;                      // unsigned integers and bool
  int64_t i = 0;                       // signed integers
  double f = 0;                        // floats
  std::string s;
  std::vector<Value> arr;

  static Value of_u32(uint32_t v) {
    Value x;
    x.type = GgufType::U32;
    x.u = v;
    return x;
  }
  static Value of_i32(int32_t v) {
    Value x;
    x.type = GgufType::I32;
    x.i = v;
    return x;
  }
  static Value of_u64(uint64_t v) {
    Value x;
    x.type = GgufType::U64;
    x.u = v;
    return x;
  }
  static Value of_f32(float v) {
    Value x;
    x.type = GgufType::F32;
    x.f = v;
    return x;
  }
  static Value of_bool(bool v) {
    Value x;
    x.type = GgufType::BOOL;
    x.u = v;
    return x;
  }
  static Value of_str(std::string v) {
    Value x;
    x.type = GgufType::STRING;
    x.s = std::move(v);
    return x;
  }
  static Value of_array(GgufType elem, std::vector<Value> v) {
    Value x;
    x.type = GgufType::ARRAY;
    x.elem_type = elem;
    x.arr = std::move(v);
    return x;
  }

  bool is_integer() const;
  bool is_float() const { return type == GgufType::F32 || type == GgufType::F64; }
  // Numeric value as the requested kind; nullopt if not numeric or out of range.
  std::optional<int64_t> as_int() const;
  std::optional<double> as_float() const;
  std::string to_display(size_t max_items = 8) const;
};

// A loaded model file of any format: metadata, tensors, and what keeps the tensor data alive.
struct ModelFile {
  std::string path;
  std::string format;  // "GGUF v3", "llama2.c", "safetensors", ...
  std::map<std::string, Value> meta;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<const void>> storage;
  uint64_t file_bytes = 0;

  const Value* find(const std::string& key) const;
  const Tensor* tensor(const std::string& name) const;
  std::string arch() const;  // general.architecture, or "" if absent

  // Typed access; errors name the file and key.
  std::optional<int64_t> get_int(const std::string& key) const;
  std::optional<double> get_float(const std::string& key) const;
  std::optional<std::string> get_str(const std::string& key) const;
  std::optional<bool> get_bool(const std::string& key) const;
  int64_t require_int(const std::string& key) const;
};

}  // namespace brisk
