#include "tokenizer/jinja/value.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tokenizer/jinja/strings.h"
#include "tokenizer/unicode.h"

namespace brisk::jinja {

const Value* Object::find(const std::string& key) const {
  for (const auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void Object::set(const std::string& key, Value v) {
  for (auto& [k, old] : items)
    if (k == key) {
      old = std::move(v);
      return;
    }
  items.emplace_back(key, std::move(v));
}

const Value* Args::get(size_t i, const char* name) const {
  if (i < pos.size()) return &pos[i];
  if (name)
    for (const auto& [k, v] : kw)
      if (k == name) return &v;
  return nullptr;
}

Value Value::array(std::vector<Value> v) {
  Value x = with(Kind::Array);
  x.arr = std::make_shared<std::vector<Value>>(std::move(v));
  return x;
}

Value Value::object(Object o, Kind k) {
  Value x = with(k);
  x.obj = std::make_shared<Object>(std::move(o));
  return x;
}

Value Value::function(Function f) {
  Value x = with(Kind::Callable);
  x.fn = std::make_shared<Function>(std::move(f));
  return x;
}

Value Value::from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return none();
    case nlohmann::ordered_json::value_t::boolean:
      return boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return integer(static_cast<int64_t>(j.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: {
      // JavaScript has one number type: an integral value is an integer there.
      const double d = j.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15)
        return integer(static_cast<int64_t>(d));
      return number(d);
    }
    case nlohmann::ordered_json::value_t::string:
      return string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> v;
      for (const auto& e : j) v.push_back(from_json(e));
      return array(std::move(v));
    }
    case nlohmann::ordered_json::value_t::object: {
      Object o;
      for (auto it = j.begin(); it != j.end(); ++it) o.items.emplace_back(it.key(), from_json(*it));
      return object(std::move(o));
    }
    default:
      return Value();
  }
}

bool Value::truthy() const {
  switch (kind) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
      return b;
    case Kind::Int:
      return i != 0;
    case Kind::Float:
      return f != 0 && !std::isnan(f);
    case Kind::String:
      return !s.empty();
    case Kind::Array:
      return !arr->empty();
    case Kind::Object:
      return !obj->items.empty();
    case Kind::Namespace:
    case Kind::Callable:
      return true;
  }
  return false;
}

std::string Value::type_name() const {
  switch (kind) {
    case Kind::Undefined:
      return "UndefinedValue";
    case Kind::None:
      return "NullValue";
    case Kind::Bool:
      return "BooleanValue";
    case Kind::Int:
      return "IntegerValue";
    case Kind::Float:
      return "FloatValue";
    case Kind::String:
      return "StringValue";
    case Kind::Array:
      return "ArrayValue";
    case Kind::Object:
      return "ObjectValue";
    case Kind::Namespace:
      return "NamespaceValue";
    case Kind::Callable:
      return "FunctionValue";
  }
  return "?";
}

namespace {

// JavaScript's Number.prototype.toString for finite doubles: the shortest text that reads back.
std::string js_number(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == std::floor(d) && std::fabs(d) < 1e21) return fmt::format("{:.0f}", d);
  std::string s = fmt::format("{}", d);
  // fmt writes 1e-07 where JavaScript writes 1e-7.
  const size_t e = s.find('e');
  if (e != std::string::npos) {
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    const char sign = exp[0] == '-' ? '-' : '+';
    if (exp[0] == '-' || exp[0] == '+') exp.erase(0, 1);
    while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
    s = mant + "e" + sign + exp;
  }
  return s;
}

std::string json_string(const std::string& s, bool ensure_ascii) {
  std::string out = "\"";
  for (uint32_t cp : utf8_to_cpts(s)) {
    switch (cp) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (cp < 0x20) {
          out += fmt::format("\\u{:04x}", cp);
        } else if (ensure_ascii && cp >= 0x7f) {
          if (cp >= 0x10000) {  // UTF-16 surrogate pair, as JavaScript strings hold it
            const uint32_t v = cp - 0x10000;
            out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
          } else {
            out += fmt::format("\\u{:04x}", cp);
          }
        } else {
          append_utf8(out, cp);
        }
    }
  }
  return out + "\"";
}

}  // namespace

std::string Value::to_string() const {
  switch (kind) {
    case Kind::Undefined:
      return "undefined";
    case Kind::None:
      return "null";
    case Kind::Bool:
      return b ? "true" : "false";
    case Kind::Int:
      return std::to_string(i);
    case Kind::Float:
      if (f == 0 && std::signbit(f)) return "-0.0";
      if (std::isfinite(f) && f == std::floor(f)) return fmt::format("{:.1f}", f);
      return js_number(f);
    case Kind::String:
      return s;
    case Kind::Array:
    case Kind::Object:
    case Kind::Namespace:
      return to_json(*this, {}, 0, false);
    case Kind::Callable:
      return "[function]";
  }
  return "";
}

std::string to_json(const Value& v, const JsonOptions& o, int depth, bool undefined_as_null) {
  std::string item_sep = ", ", key_sep = ": ";
  if (o.separators) {
    item_sep = o.separators->first;
    key_sep = o.separators->second;
  } else if (o.indent) {
    item_sep = ",";
  }
  switch (v.kind) {
    case Value::Kind::None:
      return "null";
    case Value::Kind::Undefined:
      return undefined_as_null ? "null" : "undefined";
    case Value::Kind::Bool:
      return v.b ? "true" : "false";
    case Value::Kind::Int:
      return std::to_string(v.i);
    case Value::Kind::Float:
      return std::isfinite(v.f) ? js_number(v.f) : "null";
    case Value::Kind::String:
      return json_string(v.s, o.ensure_ascii);
    case Value::Kind::Array:
    case Value::Kind::Object:
    case Value::Kind::Namespace: {
      const std::string ind(static_cast<size_t>(std::max(0, o.indent)), ' ');
      std::string base = "\n", child;
      for (int d = 0; d < depth; ++d) base += ind;
      child = base + ind;
      std::vector<std::string> core;
      if (v.kind == Value::Kind::Array) {
        for (const Value& e : *v.arr) core.push_back(to_json(e, o, depth + 1, undefined_as_null));
        if (o.indent && !core.empty()) {
          std::string s = "[" + child;
          for (size_t k = 0; k < core.size(); ++k) s += (k ? item_sep + child : "") + core[k];
          return s + base + "]";
        }
        std::string s = "[";
        for (size_t k = 0; k < core.size(); ++k) s += (k ? item_sep : "") + core[k];
        return s + "]";
      }
      auto entries = v.obj->items;
      if (o.sort_keys)
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [k, e] : entries) {
        std::string s =
            json_string(k, o.ensure_ascii) + key_sep + to_json(e, o, depth + 1, undefined_as_null);
        core.push_back(o.indent ? child + s : s);
      }
      std::string s = "{";
      for (size_t k = 0; k < core.size(); ++k) s += (k ? item_sep : "") + core[k];
      return s + (o.indent && !core.empty() ? base : "") + "}";
    }
    case Value::Kind::Callable:
      throw std::runtime_error("Cannot convert to JSON: FunctionValue");
  }
  return "";
}

bool strict_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return a.as_double() == b.as_double();
  if (a.kind != b.kind) {
    // Undefined and none both hold JavaScript's undefined in the reference.
    return (a.is_none() || a.is_undefined()) && (b.is_none() || b.is_undefined());
  }
  switch (a.kind) {
    case Value::Kind::Undefined:
    case Value::Kind::None:
      return true;
    case Value::Kind::Bool:
      return a.b == b.b;
    case Value::Kind::String:
      return a.s == b.s;
    case Value::Kind::Array:
      return a.arr == b.arr;
    case Value::Kind::Object:
    case Value::Kind::Namespace:
      return a.obj == b.obj;
    case Value::Kind::Callable:
      return a.fn == b.fn;
    default:
      return false;
  }
}

bool loose_equal(const Value& a, const Value& b) {
  const bool an = a.is_none() || a.is_undefined(), bn = b.is_none() || b.is_undefined();
  if (an || bn) return an && bn;
  auto numeric = [](const Value& v) { return v.is_number() || v.kind == Value::Kind::Bool; };
  if (numeric(a) && numeric(b)) return a.as_double() == b.as_double();
  if ((numeric(a) && b.is_string()) || (a.is_string() && numeric(b))) {
    const Value& str = a.is_string() ? a : b;
    const Value& num = a.is_string() ? b : a;
    const std::string t = js_trim(str.s);
    if (t.empty()) return num.as_double() == 0;
    char* end = nullptr;
    const double d = std::strtod(t.c_str(), &end);
    return end && *end == '\0' && d == num.as_double();
  }
  return strict_equal(a, b);
}

int compare_values(const Value& a, const Value& b, bool case_sensitive) {
  if (a.is_none() && b.is_none()) return 0;
  if (a.is_none() || b.is_none() || a.is_undefined() || b.is_undefined()) {
    if (a.is_undefined() && b.is_undefined()) return 0;
    throw std::runtime_error("Cannot compare " + a.type_name() + " with " + b.type_name());
  }
  auto numeric = [](const Value& v) { return v.is_number() || v.kind == Value::Kind::Bool; };
  if (numeric(a) && numeric(b)) {
    const double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.kind != b.kind)
    throw std::runtime_error("Cannot compare different types: " + a.type_name() + " and " +
                             b.type_name());
  if (!a.is_string()) throw std::runtime_error("Cannot compare type: " + a.type_name());
  const std::string x = case_sensitive ? a.s : js_lower(a.s);
  const std::string y = case_sensitive ? b.s : js_lower(b.s);
  return x < y ? -1 : x > y ? 1 : 0;
}

}  // namespace brisk::jinja
