#include "core/metadata.h"

#include <fmt/format.h>

#include <limits>

#include "core/error.h"

namespace brisk {

const char* gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::U8:
      return "u8";
    case GgufType::I8:
      return "i8";
    case GgufType::U16:
      return "u16";
    case GgufType::I16:
      return "i16";
    case GgufType::U32:
      return "u32";
    case GgufType::I32:
      return "i32";
    case GgufType::F32:
      return "f32";
    case GgufType::BOOL:
      return "bool";
    case GgufType::STRING:
      return "string";
    case GgufType::ARRAY:
      return "array";
    case GgufType::U64:
      return "u64";
    case GgufType::I64:
      return "i64";
    case GgufType::F64:
      return "f64";
  }
  return "?";
}

bool Value::is_integer() const {
  switch (type) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::U16:
    case GgufType::I16:
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::U64:
    case GgufType::I64:
      return true;
    default:
      return false;
  }
}

static bool is_unsigned(GgufType t) {
  return t == GgufType::U8 || t == GgufType::U16 || t == GgufType::U32 || t == GgufType::U64 ||
         t == GgufType::BOOL;
}

std::optional<int64_t> Value::as_int() const {
  if (is_unsigned(type)) {
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (is_integer()) return i;
  return std::nullopt;
}

std::optional<double> Value::as_float() const {
  if (is_float()) return f;
  if (is_unsigned(type)) return static_cast<double>(u);
  if (is_integer()) return static_cast<double>(i);
  return std::nullopt;
}

std::string Value::to_display(size_t max_items) const {
  switch (type) {
    case GgufType::STRING: {
      std::string out = "\"";
      for (char c : s.substr(0, 200)) {
        if (c == '\n')
          out += "\\n";
        else if (c == '"')
          out += "\\\"";
        else
          out += c;
      }
      return out + (s.size() > 200 ? "...\"" : "\"");
    }
    case GgufType::BOOL:
      return u ? "true" : "false";
    case GgufType::F32:
    case GgufType::F64:
      return fmt::format("{}", f);
    case GgufType::ARRAY: {
      std::string out = fmt::format("[{} x {}] [", arr.size(), gguf_type_name(elem_type));
      for (size_t k = 0; k < arr.size() && k < max_items; ++k)
        out += (k ? ", " : "") + arr[k].to_display(max_items);
      return out + (arr.size() > max_items ? ", ...]" : "]");
    }
    default:
      return is_unsigned(type) ? fmt::format("{}", u) : fmt::format("{}", i);
  }
}

const Value* ModelFile::find(const std::string& key) const {
  auto it = meta.find(key);
  return it == meta.end() ? nullptr : &it->second;
}

const Tensor* ModelFile::tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::string ModelFile::arch() const {
  return get_str("general.architecture").value_or("");
}

std::optional<int64_t> ModelFile::get_int(const std::string& key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  auto r = v->as_int();
  if (!r)
    fail("{}: metadata key '{}' should be an integer, found {}", path, key,
         gguf_type_name(v->type));
  return r;
}

std::optional<double> ModelFile::get_float(const std::string& key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  auto r = v->as_float();
  if (!r)
    fail("{}: metadata key '{}' should be a number, found {}", path, key, gguf_type_name(v->type));
  return r;
}

std::optional<std::string> ModelFile::get_str(const std::string& key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::STRING)
    fail("{}: metadata key '{}' should be a string, found {}", path, key, gguf_type_name(v->type));
  return v->s;
}

std::optional<bool> ModelFile::get_bool(const std::string& key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  if (v->type == GgufType::BOOL) return v->u != 0;
  if (auto i = v->as_int()) return *i != 0;
  fail("{}: metadata key '{}' should be a bool, found {}", path, key, gguf_type_name(v->type));
}

int64_t ModelFile::require_int(const std::string& key) const {
  auto v = get_int(key);
  if (!v) fail("{}: missing required metadata key '{}'", path, key);
  return *v;
}

}  // namespace brisk
