#include "chat/jinja/value.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "chat/jinja/strings.h"
#include "core/error.h"
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

void Value::release_nested() {
  std::vector<Value> pending;
  // Moves out the items of a list or dict no one else holds; each value freed below has already
  // given its own items to `pending`, so its destructor has nothing left to recurse into.
  auto take = [&pending](Value& v) {
    if (v.arr && v.arr.use_count() == 1) {
      for (Value& e : *v.arr) pending.push_back(std::move(e));
      v.arr->clear();
    }
    if (v.obj && v.obj.use_count() == 1) {
      for (auto& kv : v.obj->items) pending.push_back(std::move(kv.second));
      v.obj->items.clear();
    }
  };
  take(*this);
  while (!pending.empty()) {
    Value x = std::move(pending.back());
    pending.pop_back();
    take(x);
  }
}

Value Value::from_json(const nlohmann::ordered_json& j, int depth) {
  if (depth > kMaxValueDepth)
    fail("template context: values nest more than {} levels deep", kMaxValueDepth);
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return none();
    case nlohmann::ordered_json::value_t::boolean:
      return boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      if (j.get<uint64_t>() > uint64_t(INT64_MAX)) return number(double(j.get<uint64_t>()));
      return integer(static_cast<int64_t>(j.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: {
      // JavaScript has one number type: an integral value is an integer there.
      const double d = j.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15)
        return integer(static_cast<int64_t>(d));
      return number(d);
    }
    case nlohmann::ordered_json::value_t::string:
      return string(utf8_sanitize(j.get_ref<const std::string&>()));
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> v;
      for (const auto& e : j) v.push_back(from_json(e, depth + 1));
      return array(std::move(v));
    }
    case nlohmann::ordered_json::value_t::object: {
      Object o;
      for (auto it = j.begin(); it != j.end(); ++it)
        o.items.emplace_back(it.key(), from_json(*it, depth + 1));
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

// Python's repr(float): the shortest digits that read back, positional from 1e-4 up to 1e16
// ("1.0", "0.0001", "1e+16", "1.5e-05").
std::string py_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  const std::string sign = d < 0 ? "-" : "";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), std::fabs(d), std::chars_format::scientific);
  const std::string sci(buf, r.ptr);  // "d.ddde[+-]xx"
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int k = static_cast<int>(digits.size());
  const int x = std::stoi(sci.substr(e + 1));  // d.ddd times ten to the x
  if (x >= -4 && x < 16) {
    const int n = x + 1;  // digits before the point
    if (n <= 0) return sign + "0." + std::string(static_cast<size_t>(-n), '0') + digits;
    if (k <= n) return sign + digits + std::string(static_cast<size_t>(n - k), '0') + ".0";
    return sign + digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(size_t(n));
  }
  return sign + digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "") + "e" +
         (x >= 0 ? "+" : "-") + (std::abs(x) < 10 ? "0" : "") + std::to_string(std::abs(x));
}

// Python's repr(str): single quotes unless the text has one and no double quote; backslash,
// the quote and controls escaped (non-printable characters as \xNN or \uNNNN).
std::string py_quoted(const std::string& s) {
  const bool dq = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (uint32_t cp : utf8_to_cpts(s)) {
    if (cp == '\\' || cp == static_cast<uint32_t>(q)) {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) {
      out += fmt::format("\\x{:02x}", cp);
    } else if ((cp >= 0x200B && cp <= 0x200F) || cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF) {
      out += fmt::format("\\u{:04x}", cp);
    } else {
      append_utf8(out, cp);
    }
  }
  return out + q;
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

std::string Value::to_string(size_t max_bytes) const {
  return py_string(*this, max_bytes, false);
}

std::string py_string(const Value& v, size_t max_bytes, bool repr, int depth) {
  if (depth > kMaxValueDepth)
    throw std::runtime_error(
        fmt::format("a value nests more than {} levels deep (or holds itself)", kMaxValueDepth));
  auto bounded = [&](std::string& out) {
    if (out.size() > max_bytes) throw std::runtime_error("a string in the template is too large");
  };
  switch (v.kind) {
    case Value::Kind::Undefined:
      return repr ? "Undefined" : "";
    case Value::Kind::None:
      return "None";
    case Value::Kind::Bool:
      return v.b ? "True" : "False";
    case Value::Kind::Int:
      return std::to_string(v.i);
    case Value::Kind::Float:
      return py_float(v.f);
    case Value::Kind::String:
      return repr ? py_quoted(v.s) : v.s;
    case Value::Kind::Array: {
      std::string out = v.tuple ? "(" : "[";
      for (size_t k = 0; k < v.arr->size(); ++k) {
        if (k) out += ", ";
        out += py_string((*v.arr)[k], max_bytes, true, depth + 1);
        bounded(out);
      }
      if (v.tuple && v.arr->size() == 1) out += ",";
      return out + (v.tuple ? ")" : "]");
    }
    case Value::Kind::Object:
    case Value::Kind::Namespace: {
      std::string out = v.kind == Value::Kind::Namespace ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [k, e] : v.obj->items) {
        if (!first) out += ", ";
        first = false;
        out += py_quoted(k) + ": " + py_string(e, max_bytes, true, depth + 1);
        bounded(out);
      }
      return out + (v.kind == Value::Kind::Namespace ? "}>" : "}");
    }
    case Value::Kind::Callable:
      return "<function>";
  }
  return "";
}

int64_t approx_bytes(const Value& v) {
  int64_t total = 0;
  std::vector<const Value*> stack{&v};
  // Shared containers may be counted more than once; the walk stops at a bound all the same.
  for (int64_t visits = 0; !stack.empty() && visits < (1 << 22); ++visits) {
    const Value* x = stack.back();
    stack.pop_back();
    total += static_cast<int64_t>(sizeof(Value) + x->s.size());
    if (x->arr)
      for (const Value& e : *x->arr) stack.push_back(&e);
    if (x->obj)
      for (const auto& [k, e] : x->obj->items) {
        total += static_cast<int64_t>(k.size());
        stack.push_back(&e);
      }
  }
  return total;
}

std::string to_json(const Value& v, const JsonOptions& o, int depth, bool undefined_as_null) {
  if (depth > kMaxValueDepth)
    throw std::runtime_error(
        fmt::format("a value nests more than {} levels deep (or holds itself)", kMaxValueDepth));
  auto bounded = [&o](std::string s) {
    if (s.size() > o.max_bytes) throw std::runtime_error("a string in the template is too large");
    return s;
  };
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
      if (std::isnan(v.f)) return "NaN";  // json.dumps's words for them
      if (std::isinf(v.f)) return v.f > 0 ? "Infinity" : "-Infinity";
      return py_float(v.f);
    case Value::Kind::String:
      return bounded(json_string(v.s, o.ensure_ascii));
    case Value::Kind::Array:
    case Value::Kind::Object:
    case Value::Kind::Namespace: {
      const std::string ind(static_cast<size_t>(std::max(0, o.indent)), ' ');
      std::string base = "\n", child;
      for (int d = 0; d < depth; ++d) base += ind;
      child = base + ind;
      std::vector<std::string> core;
      if (v.kind == Value::Kind::Array) {
        size_t total = 0;
        for (const Value& e : *v.arr) {
          core.push_back(to_json(e, o, depth + 1, undefined_as_null));
          total += core.back().size() + item_sep.size() + child.size();
          if (total > o.max_bytes)
            throw std::runtime_error("a string in the template is too large");
        }
        if (o.indent && !core.empty()) {
          std::string s = "[" + child;
          for (size_t k = 0; k < core.size(); ++k) s += (k ? item_sep + child : "") + core[k];
          return bounded(s + base + "]");
        }
        std::string s = "[";
        for (size_t k = 0; k < core.size(); ++k) s += (k ? item_sep : "") + core[k];
        return bounded(s + "]");
      }
      auto entries = v.obj->items;
      if (o.sort_keys)
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      size_t total = 0;
      for (const auto& [k, e] : entries) {
        std::string s =
            json_string(k, o.ensure_ascii) + key_sep + to_json(e, o, depth + 1, undefined_as_null);
        core.push_back(o.indent ? child + s : s);
        total += core.back().size() + item_sep.size();
        if (total > o.max_bytes) throw std::runtime_error("a string in the template is too large");
      }
      std::string s = "{";
      for (size_t k = 0; k < core.size(); ++k) s += (k ? item_sep : "") + core[k];
      return bounded(s + (o.indent && !core.empty() ? base : "") + "}");
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
