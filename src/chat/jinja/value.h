// Values of the Jinja interpreter. Semantics follow the reference renderer for chat templates,
// @huggingface/jinja (what transformers.js runs): integers and floats are distinct, arrays and
// objects are shared by reference, objects keep insertion order, and values print the way that
// renderer prints them (true/false, JSON for containers, "2.0" for integral floats).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace brisk::jinja {

struct Value;
class Interpreter;
struct Env;

struct Object {
  std::vector<std::pair<std::string, Value>> items;
  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value v);
};

// Positional arguments, then keyword arguments (empty when none were given).
struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  const Value* get(size_t i, const char* name) const;  // positional i, else keyword `name`
};
using Function = std::function<Value(const Args&, const std::shared_ptr<Env>&)>;

// Deepest nesting of lists and dicts that is printed or read from a context (a namespace that holds
// itself would otherwise print forever).
inline constexpr int kMaxValueDepth = 256;

struct Value {
  enum class Kind { Undefined, None, Bool, Int, Float, String, Array, Object, Namespace, Callable };
  Kind kind = Kind::Undefined;
  bool b = false;
  bool tuple =
      false;  // an Array that Python holds as a tuple (a literal, an item pair): prints ( )
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::shared_ptr<std::vector<Value>> arr;
  std::shared_ptr<Object> obj;  // Object and Namespace
  std::shared_ptr<Function> fn;

  Value() = default;
  Value(const Value&) = default;
  Value(Value&&) = default;
  Value& operator=(const Value&) = default;
  Value& operator=(Value&&) = default;
  // A list nested ten thousand deep (built in a loop) is freed by a loop, not by recursion.
  ~Value() {
    if ((arr && !arr->empty() && arr.use_count() == 1) ||
        (obj && !obj->items.empty() && obj.use_count() == 1))
      release_nested();
  }

  static Value none() { return with(Kind::None); }
  static Value boolean(bool v) {
    Value x = with(Kind::Bool);
    x.b = v;
    return x;
  }
  static Value integer(int64_t v) {
    Value x = with(Kind::Int);
    x.i = v;
    return x;
  }
  static Value number(double v) {
    Value x = with(Kind::Float);
    x.f = v;
    return x;
  }
  static Value string(std::string v) {
    Value x = with(Kind::String);
    x.s = std::move(v);
    return x;
  }
  static Value array(std::vector<Value> v = {});
  static Value object(Object o = {}, Kind k = Kind::Object);
  static Value function(Function f);
  // Keeps key order; integers beyond 64 bits become floats, as in JavaScript.
  static Value from_json(const nlohmann::ordered_json& j, int depth = 0);

  bool is_undefined() const { return kind == Kind::Undefined; }
  bool is_none() const { return kind == Kind::None; }
  bool is_string() const { return kind == Kind::String; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float; }
  bool is_array() const { return kind == Kind::Array; }
  bool is_object() const { return kind == Kind::Object; }
  bool is_mapping() const { return kind == Kind::Object || kind == Kind::Namespace; }
  double as_double() const { return kind == Kind::Float ? f : kind == Kind::Bool ? b : double(i); }
  bool truthy() const;
  std::string type_name() const;
  // As printed in template output (py_string); throws past max_bytes.
  std::string to_string(size_t max_bytes = SIZE_MAX) const;

 private:
  void release_nested();
  static Value with(Kind k) {
    Value x;
    x.kind = k;
    return x;
  }
};

struct JsonOptions {
  int indent = 0;  // 0: one line
  bool ensure_ascii = false, sort_keys = false;
  const std::pair<std::string, std::string>* separators = nullptr;
  size_t max_bytes = SIZE_MAX;  // longer text throws
};
// JSON text as transformers' tojson (Python's json.dumps) writes it: ", " and ": " on one line,
// floats in Python's form (1.0), NaN and Infinity as json.dumps writes them.
std::string to_json(const Value& v, const JsonOptions& o, int depth = 0,
                    bool undefined_as_null = true);

// Python's str(value) as Jinja2 prints it (repr: Python's repr(), what a list or dict shows of
// its items): True, False, None, floats in Python's shortest form, lists and dicts in Python's
// notation with quoted strings; an undefined value prints as nothing.
std::string py_string(const Value& v, size_t max_bytes = SIZE_MAX, bool repr = false,
                      int depth = 0);

// About how many bytes a value holds (strings and slots), for budgets that grow with the input.
int64_t approx_bytes(const Value& v);

// Loose equality (==) and strict equality (in, unique) as the reference applies them.
bool loose_equal(const Value& a, const Value& b);
bool strict_equal(const Value& a, const Value& b);
// Ordering for sort and dictsort; throws for incomparable kinds.
int compare_values(const Value& a, const Value& b, bool case_sensitive);

}  // namespace brisk::jinja
