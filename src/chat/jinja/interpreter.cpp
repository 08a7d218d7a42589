#include "chat/jinja/interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>

#include "chat/jinja/strings.h"
#include "core/error.h"
#include "tokenizer/unicode.h"

namespace brisk::jinja {

Value Env::lookup(const std::string& name) const {
  for (const Env* e = this; e; e = e->parent.get()) {
    auto it = e->vars.find(name);
    if (it != e->vars.end()) return it->second;
  }
  return Value();
}

namespace {

using EnvP = std::shared_ptr<Env>;
using K = Value::Kind;

struct BreakSignal {};
struct ContinueSignal {};
// An error already tied to the template position where it happened.
struct Located {
  size_t pos;
  std::string msg;
};

[[noreturn]] void err(const std::string& m) {
  throw std::runtime_error(m);
}

const Value* kwarg(const Args& a, const char* name) {
  for (const auto& [k, v] : a.kw)
    if (k == name) return &v;
  return nullptr;
}

std::string strftime_now(const std::string& fmt_s) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  static const char* kShort[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  static const char* kLong[] = {"January",   "February", "March",    "April",
                                "May",       "June",     "July",     "August",
                                "September", "October",  "November", "December"};
  std::string out;
  for (size_t i = 0; i < fmt_s.size(); ++i) {
    if (fmt_s[i] != '%' || i + 1 >= fmt_s.size()) {
      out += fmt_s[i];
      continue;
    }
    const char c = fmt_s[++i];
    switch (c) {
      case 'Y':
        out += std::to_string(tm.tm_year + 1900);
        break;
      case 'm':
        out += fmt::format("{:02}", tm.tm_mon + 1);
        break;
      case 'd':
        out += fmt::format("{:02}", tm.tm_mday);
        break;
      case 'b':
        out += kShort[tm.tm_mon];
        break;
      case 'B':
        out += kLong[tm.tm_mon];
        break;
      case 'H':
        out += fmt::format("{:02}", tm.tm_hour);
        break;
      case 'M':
        out += fmt::format("{:02}", tm.tm_min);
        break;
      case '%':
        out += '%';
        break;
      default:
        out += '%';
        out += c;
    }
  }
  return out;
}

// The tests that take no argument.
std::optional<bool> plain_test(const std::string& name, const Value& v) {
  if (name == "boolean") return v.kind == K::Bool;
  if (name == "callable") return v.kind == K::Callable;
  if (name == "odd" || name == "even") {
    if (v.kind != K::Int) err("cannot " + name + " on " + v.type_name());
    return (v.i % 2 != 0) == (name == "odd");
  }
  if (name == "false") return v.kind == K::Bool && !v.b;
  if (name == "true") return v.kind == K::Bool && v.b;
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.kind == K::Int;
  if (name == "iterable") return v.is_array() || v.is_string();
  if (name == "mapping") return v.is_object();
  if (name == "sequence") return v.is_array() || v.is_object() || v.is_string();
  if (name == "lower") return v.is_string() && v.s == js_lower(v.s);
  if (name == "upper") return v.is_string() && v.s == js_upper(v.s);
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "float") return v.kind == K::Float;
  // Only markup strings (which a chat template never has) are escaped.
  if (name == "escaped") return false;
  return std::nullopt;
}

// Python Jinja2's tests with one argument, each as the operator it names.
const char* test_operator(const std::string& name) {
  static const std::pair<const char*, const char*> kOps[] = {
      {"eq", "=="}, {"equalto", "=="},    {"==", "=="},      {"ne", "!="},
      {"!=", "!="}, {"lt", "<"},          {"lessthan", "<"}, {"<", "<"},
      {"le", "<="}, {"<=", "<="},         {"gt", ">"},       {">", ">"},
      {"ge", ">="}, {"greaterthan", ">"}, {">=", ">="},      {"in", "in"}};
  for (const auto& [n, op] : kOps)
    if (name == n) return op;
  return nullptr;
}

Value attribute_path(const Value& item, const std::string& path) {
  Value v = item;
  size_t p = 0;
  while (true) {
    const size_t q = path.find('.', p);
    const std::string part = path.substr(p, q == std::string::npos ? std::string::npos : q - p);
    if (v.is_mapping()) {
      const Value* f = v.obj->find(part);
      v = f ? *f : Value();
    } else if (v.is_array()) {
      char* end = nullptr;
      const long long k = std::strtoll(part.c_str(), &end, 10);
      if (end == part.c_str() || k < 0 || k >= static_cast<long long>(v.arr->size()))
        return Value();
      v = (*v.arr)[static_cast<size_t>(k)];
    } else {
      return Value();
    }
    if (q == std::string::npos) return v;
    p = q + 1;
  }
}

// Python's slice of a sequence of n items, as the positions it takes.
std::vector<size_t> slice_positions(int64_t n, const Value& start_v, const Value& stop_v,
                                    const Value& step_v) {
  const int64_t step = step_v.is_undefined() ? 1 : step_v.i;
  if (step == 0) err("slice step cannot be zero");
  int64_t start, stop;
  if (step > 0) {
    start = start_v.is_undefined() ? 0 : start_v.i;
    stop = stop_v.is_undefined() ? n : stop_v.i;
    start = start < 0 ? std::max<int64_t>(n + start, 0) : std::min(start, n);
    stop = stop < 0 ? std::max<int64_t>(n + stop, 0) : std::min(stop, n);
  } else {
    start = start_v.is_undefined() ? n - 1 : start_v.i;
    stop = stop_v.is_undefined() ? -1 : stop_v.i;
    start = start < 0 ? std::max<int64_t>(n + start, -1) : std::min(start, n - 1);
    stop = stop < -1 ? std::max<int64_t>(n + stop, -1) : std::min(stop, n - 1);
  }
  std::vector<size_t> out;
  // Steps of any size: stop once past the end instead of adding past INT64_MAX.
  for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
    out.push_back(static_cast<size_t>(i));
    if (step > 0 ? stop - i <= step : i - stop <= -step) break;
    i += step;
  }
  return out;
}

// The reference indexes strings by UTF-16 code units (as JavaScript does). Either half of a
// character beyond U+FFFF has no UTF-8 form: it becomes U+FFFD, which is also what the reference's
// lone surrogate turns into when its output is encoded.
Value string_at(const std::string& s, int64_t k) {
  const auto cps = utf8_to_cpts(s);
  int64_t n = 0;
  for (uint32_t cp : cps) n += cp >= 0x10000 ? 2 : 1;
  if (k < 0) k += n;
  if (k < 0 || k >= n) return Value();
  int64_t unit = 0;
  for (uint32_t cp : cps) {
    const int64_t w = cp >= 0x10000 ? 2 : 1;
    if (k < unit + w) {
      std::string out;
      append_utf8(out, w == 2 ? 0xFFFD : cp);
      return Value::string(out);
    }
    unit += w;
  }
  return Value();
}

bool contains(const std::string& hay, const std::string& needle) {
  return find_in(hay, needle) != std::string::npos;
}

class Interp {
 public:
  Interp(const Program& p, const Limits& l) : prog_(p), lim_(l) {}

  ~Interp() {
    // Empty every namespace before any is freed: cycles through them are cut, and freeing one
    // never cascades down a chain of others.
    for (auto& ns : namespaces_) {
      auto items = std::move(ns->items);
      ns->items.clear();
    }
  }

  std::string run(const Value& context) {
    budget_ = lim_.max_bytes + lim_.context_factor * approx_bytes(context);
    auto global = std::make_shared<Env>();
    setup_globals(*global);
    if (context.is_mapping())
      for (const auto& [k, v] : context.obj->items) global->vars[k] = v;
    try {
      return block(prog_.body, global).s;
    } catch (const Located& e) {
      fail("template error at {}: {}", location(prog_, e.pos), e.msg);
    } catch (const BreakSignal&) {
      fail("template error: 'break' outside a loop");
    } catch (const ContinueSignal&) {
      fail("template error: 'continue' outside a loop");
    }
  }

 private:
  const Program& prog_;
  Limits lim_;
  int64_t steps_ = 0;
  int depth_ = 0;

  int64_t budget_ = 0;  // bytes of values the render may still make
  // Namespaces are the only values a template can change after making them, so the only way to a
  // cycle (`{% set ns.me = ns %}`): they are kept here and emptied when the render ends.
  std::vector<std::shared_ptr<Object>> namespaces_;

  void step(int64_t n = 1) {
    steps_ += n;
    if (steps_ > lim_.max_steps) err("the template ran too long (step limit reached)");
  }

  // Every string, list and dict a template makes is paid for from one budget, before it is made
  // where its size is known in advance (range, replace, join, indent, split), else when it is.
  void charge(int64_t bytes) {
    budget_ -= bytes;
    if (budget_ < 0)
      err(fmt::format("the template makes too much data (over {} MiB of values)",
                      lim_.max_bytes >> 20));
  }
  void charge(const Value& v) {
    if (v.is_string())
      charge(static_cast<int64_t>(v.s.size()));
    else if (v.is_array() && v.arr.use_count() == 1)
      charge(static_cast<int64_t>(v.arr->size() * sizeof(Value)));
    else if (v.is_mapping() && v.obj.use_count() == 1)
      charge(static_cast<int64_t>(v.obj->items.size() * sizeof(std::pair<std::string, Value>)));
  }

  size_t room() const { return budget_ > 0 ? static_cast<size_t>(budget_) : 0; }

  struct DepthGuard {
    Interp& in;
    explicit DepthGuard(Interp& i) : in(i) {
      if (++in.depth_ > in.lim_.max_depth) {
        --in.depth_;
        err("the template nests too deeply (recursion limit reached)");
      }
    }
    ~DepthGuard() { --in.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
  };

  void setup_globals(Env& g) {
    g.vars["true"] = g.vars["True"] = Value::boolean(true);
    g.vars["false"] = g.vars["False"] = Value::boolean(false);
    g.vars["none"] = g.vars["None"] = Value::none();
    g.vars["raise_exception"] = Value::function([](const Args& a, const EnvP&) -> Value {
      err("raise_exception: " +
          (a.pos.empty() ? std::string() : a.pos[0].to_string(size_t{1} << 16)));
    });
    g.vars["strftime_now"] = Value::function([](const Args& a, const EnvP&) {
      const Value* f = a.get(0, "format");
      if (!f || !f->is_string()) err("strftime_now() needs a format string");
      return Value::string(strftime_now(f->s));
    });
    g.vars["range"] = Value::function([this](const Args& a, const EnvP&) {
      auto num = [](const Value* v, int64_t def) {
        if (!v) return def;
        if (v->kind != K::Int) err("range() arguments must be integers");
        return v->i;
      };
      int64_t start = num(a.get(0, nullptr), 0), stop = num(a.get(1, nullptr), 0);
      const int64_t stp = num(a.get(2, nullptr), 1);
      if (a.pos.size() == 1) {
        stop = start;
        start = 0;
      }
      if (stp == 0) err("range() step must not be zero");
      // The length first (unsigned: the ends may be far apart), paid for before the list is.
      const bool up = stp > 0;
      const uint64_t span =
          up ? uint64_t(stop) - uint64_t(start) : uint64_t(start) - uint64_t(stop);
      const uint64_t mag = up ? uint64_t(stp) : uint64_t(0) - uint64_t(stp);
      const uint64_t n = (up ? stop <= start : stop >= start) ? 0 : (span - 1) / mag + 1;
      if (n > uint64_t(lim_.max_steps)) err("range() is too long for a template");
      step(static_cast<int64_t>(n));
      charge(static_cast<int64_t>(n) * static_cast<int64_t>(sizeof(Value)));
      std::vector<Value> out;
      out.reserve(static_cast<size_t>(n));
      for (int64_t k = 0; k < static_cast<int64_t>(n); ++k)
        out.push_back(Value::integer(start + k * stp));
      return Value::array(std::move(out));
    });
    g.vars["namespace"] = Value::function([this](const Args& a, const EnvP&) {
      if (a.pos.size() > 1) err("namespace expected at most 1 argument");
      Object o;
      if (!a.pos.empty()) {
        const Value& src = a.pos[0];
        if (src.is_object()) {
          o = *src.obj;
        } else if (src.is_array()) {
          for (const Value& pair : *src.arr) {
            if (!pair.is_array() || pair.arr->size() != 2 || !(*pair.arr)[0].is_string())
              err("namespace expected an object or an iterable of [key, value] pairs");
            o.set((*pair.arr)[0].s, (*pair.arr)[1]);
          }
        } else {
          err("'" + src.type_name() + "' object is not iterable");
        }
      }
      for (const auto& [k, v] : a.kw) o.set(k, v);
      Value ns = Value::object(std::move(o), K::Namespace);
      namespaces_.push_back(ns.obj);
      return ns;
    });
  }

  Value block(const Block& b, const EnvP& env) {
    std::string out;
    for (const NodeP& n : b) {
      const Value v = eval(n, env);
      // A statement's none is no output; an expression's prints as None, as in Jinja2.
      if (v.is_undefined() || (v.is_none() && n->kind < Node::Kind::Int)) continue;
      try {
        if (v.is_string())
          out += v.s;
        else
          out += v.to_string(room());
        if (out.size() > lim_.max_output) err("the template output is too large");
      } catch (const std::runtime_error& e) {
        throw Located{n->pos, e.what()};
      }
    }
    return Value::string(std::move(out));
  }

  Value eval(const NodeP& n, const EnvP& env) {
    if (!n) return Value();
    try {
      DepthGuard g(*this);
      step();
      Value v = eval_inner(*n, env);
      charge(v);
      return v;
    } catch (const std::runtime_error& e) {  // brisk::Error included
      throw Located{n->pos, e.what()};
    }
  }

  std::pair<std::vector<Value>, std::vector<std::pair<std::string, Value>>> arguments(
      const Block& list, const EnvP& env) {
    std::vector<Value> pos;
    std::vector<std::pair<std::string, Value>> kw;
    auto add_kw = [&](const std::string& k, Value v) {
      for (const auto& [name, _] : kw)
        if (name == k) err("Got multiple values for keyword argument '" + k + "'");
      kw.emplace_back(k, std::move(v));
    };
    for (const NodeP& a : list) {
      if (a->kind == Node::Kind::Spread) {
        const Value v = eval(a->a, env);
        if (!v.is_array()) err("Cannot unpack non-iterable type: " + v.type_name());
        for (const Value& x : *v.arr) pos.push_back(x);
      } else if (a->kind != Node::Kind::KwArg && a->kind != Node::Kind::KwSpread) {
        pos.push_back(eval(a, env));
      }
    }
    for (const NodeP& a : list) {
      if (a->kind == Node::Kind::KwArg) {
        add_kw(a->s, eval(a->a, env));
      } else if (a->kind == Node::Kind::KwSpread) {
        const Value v = eval(a->a, env);
        if (!v.is_object()) err("Argument after ** must be a mapping, not " + v.type_name());
        for (const auto& [k, x] : v.obj->items) add_kw(k, x);
      }
    }
    return {std::move(pos), std::move(kw)};
  }

  Value call(const Value& fn, const Args& args, const EnvP& env) {
    if (fn.kind != K::Callable)
      err("Cannot call something that is not a function: got " + fn.type_name());
    return (*fn.fn)(args, env);
  }

  Value eval_inner(const Node& n, const EnvP& env) {
    switch (n.kind) {
      case Node::Kind::Text:
        return Value::string(n.s);
      case Node::Kind::Comment:
        return Value::none();
      case Node::Kind::Int:
        return Value::integer(n.i);
      case Node::Kind::Float:
        return Value::number(n.f);
      case Node::Kind::Str:
        return Value::string(n.s);
      case Node::Kind::Ident:
        return env->lookup(n.s);
      case Node::Kind::ArrayLit:
      case Node::Kind::TupleLit: {
        std::vector<Value> v;
        for (const NodeP& e : n.list) v.push_back(eval(e, env));
        Value out = Value::array(std::move(v));
        out.tuple = n.kind == Node::Kind::TupleLit;
        return out;
      }
      case Node::Kind::ObjectLit: {
        Object o;
        for (const auto& [k, v] : n.pairs) {
          const Value key = eval(k, env);
          if (!key.is_string()) err("Object keys must be strings: got " + key.type_name());
          o.set(key.s, eval(v, env));
        }
        return Value::object(std::move(o));
      }
      case Node::Kind::Set:
        return eval_set(n, env);
      case Node::Kind::If:
        return block(eval(n.a, env).truthy() ? n.body : n.alt, env);
      case Node::Kind::For:
        return eval_for(n, env);
      case Node::Kind::Macro: {
        env->vars[n.a->s] = make_macro("'" + n.a->s + "'", n.list, n.body, nullptr);
        return Value::none();
      }
      case Node::Kind::CallBlock: {
        const Value caller = make_macro("None", n.list, n.body, env);
        auto [pos, kw] = arguments(n.a->list, env);
        Args args{std::move(pos), std::move(kw)};
        const Value fn = eval(n.a->a, env);
        auto inner = std::make_shared<Env>(env);
        inner->vars["caller"] = caller;
        return call(fn, args, inner);
      }
      case Node::Kind::Break:
        throw BreakSignal{};
      case Node::Kind::Continue:
        throw ContinueSignal{};
      case Node::Kind::FilterBlock:
        return apply_filter(block(n.body, env), *n.a, env);
      case Node::Kind::Call: {
        auto [pos, kw] = arguments(n.list, env);
        Args args{std::move(pos), std::move(kw)};
        return call(eval(n.a, env), args, env);
      }
      case Node::Kind::Member:
        return eval_member(n, env);
      case Node::Kind::Unary: {
        const Value v = eval(n.a, env);
        if (n.s == "not") return Value::boolean(!v.truthy());
        const int sign = n.s == "-" ? -1 : 1;
        if (v.kind == K::Float) return Value::number(sign * v.f);
        if (v.kind == K::Int) return Value::integer(sign * v.i);
        if (v.kind == K::Bool) return Value::integer(sign * (v.b ? 1 : 0));
        err("Unknown operator \"" + n.s + "\" for " + v.type_name());
      }
      case Node::Kind::Binary:
        return eval_binary(n, env);
      case Node::Kind::Filter:
        return apply_filter(eval(n.a, env), *n.b, env);
      case Node::Kind::Test: {
        const Value v = eval(n.a, env);
        std::vector<Value> args;
        for (const NodeP& a : n.list) args.push_back(eval(a, env));
        const bool r = run_test(n.s, v, args);
        return Value::boolean(n.flag ? !r : r);
      }
      case Node::Kind::Select: {
        if (!eval(n.b, env).truthy()) return Value();
        return eval(n.a, env);
      }
      case Node::Kind::Ternary:
        return eval(n.a, env).truthy() ? eval(n.b, env) : eval(n.c, env);
      default:
        err("unexpected construct");
    }
  }

  Value eval_set(const Node& n, const EnvP& env) {
    const Value rhs = n.b ? eval(n.b, env) : block(n.body, env);
    const Node& lhs = *n.a;
    if (lhs.kind == Node::Kind::Ident) {
      env->vars[lhs.s] = rhs;
    } else if (lhs.kind == Node::Kind::TupleLit) {
      if (!rhs.is_array()) err("Cannot unpack non-iterable type in set: " + rhs.type_name());
      if (rhs.arr->size() != lhs.list.size())
        err(std::string("Too ") + (lhs.list.size() > rhs.arr->size() ? "few" : "many") +
            " items to unpack in set");
      for (size_t k = 0; k < lhs.list.size(); ++k) {
        if (lhs.list[k]->kind != Node::Kind::Ident) err("Cannot unpack to non-identifier in set");
        env->vars[lhs.list[k]->s] = (*rhs.arr)[k];
      }
    } else if (lhs.kind == Node::Kind::Member) {
      const Value obj = eval(lhs.a, env);
      if (obj.kind != K::Namespace) err("cannot assign attribute on non-namespace object");
      if (lhs.b->kind != Node::Kind::Ident)
        err("Cannot assign to member with non-identifier property");
      obj.obj->set(lhs.b->s, rhs);
    } else {
      err("Invalid left-hand side in assignment");
    }
    return Value::none();
  }

  Value eval_for(const Node& n, const EnvP& env) {
    auto scope = std::make_shared<Env>(env);
    NodeP test;
    Value iterable;
    if (n.b->kind == Node::Kind::Select) {
      iterable = eval(n.b->a, scope);
      test = n.b->b;
    } else {
      iterable = eval(n.b, scope);
    }
    if (iterable.is_object()) {
      std::vector<Value> keys;
      for (const auto& [k, _] : iterable.obj->items) keys.push_back(Value::string(k));
      iterable = Value::array(std::move(keys));
    }
    // As Python's Jinja2 does: a string iterates over its characters (Llama 3.2 Vision's
    // templates loop over a content that may be text), an undefined value over nothing.
    if (iterable.is_string()) iterable = string_chars(iterable.s);
    if (iterable.is_undefined()) iterable = Value::array();
    if (!iterable.is_array())
      err("Expected iterable or object type in for loop: got " + iterable.type_name());
    const Node& var = *n.a;
    auto bind = [&](Env& e, const Value& cur) {
      if (var.kind == Node::Kind::Ident) {
        e.vars[var.s] = cur;
        return;
      }
      if (!cur.is_array()) err("Cannot unpack non-iterable type: " + cur.type_name());
      if (cur.arr->size() != var.list.size())
        err(std::string("Too ") + (var.list.size() > cur.arr->size() ? "few" : "many") +
            " items to unpack");
      for (size_t k = 0; k < var.list.size(); ++k) {
        if (var.list[k]->kind != Node::Kind::Ident) err("Cannot unpack non-identifier type");
        e.vars[var.list[k]->s] = (*cur.arr)[k];
      }
    };
    std::vector<Value> items;
    for (const Value& cur : *iterable.arr) {
      step();
      if (test) {
        auto ls = std::make_shared<Env>(scope);
        bind(*ls, cur);
        if (!eval(test, ls).truthy()) continue;
      }
      items.push_back(cur);
    }
    std::string out;
    bool none = true;
    const int64_t len = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < len; ++i) {
      step();
      Object loop;
      loop.set("index", Value::integer(i + 1));
      loop.set("index0", Value::integer(i));
      loop.set("revindex", Value::integer(len - i));
      loop.set("revindex0", Value::integer(len - i - 1));
      loop.set("first", Value::boolean(i == 0));
      loop.set("last", Value::boolean(i == len - 1));
      loop.set("length", Value::integer(len));
      loop.set("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value());
      loop.set("nextitem", i < len - 1 ? items[static_cast<size_t>(i + 1)] : Value());
      scope->vars["loop"] = Value::object(std::move(loop));
      bind(*scope, items[static_cast<size_t>(i)]);
      try {
        out += block(n.body, scope).s;
      } catch (const ContinueSignal&) {
        continue;
      } catch (const BreakSignal&) {
        break;
      }
      if (out.size() > lim_.max_output) err("the template output is too large");
      none = false;
    }
    if (none) out += block(n.alt, scope).s;
    return Value::string(std::move(out));
  }

  // Names a body reads as `kwargs` / `varargs` without declaring them.
  static void special_args(const Node& node, std::set<std::string>& used) {
    if (node.kind == Node::Kind::Ident && (node.s == "kwargs" || node.s == "varargs"))
      used.insert(node.s);
    for (const NodeP* c : {&node.a, &node.b, &node.c})
      if (*c) special_args(**c, used);
    for (const Block* b : {&node.list, &node.body, &node.alt})
      for (const NodeP& x : *b)
        if (x) special_args(*x, used);
    for (const auto& [k, v] : node.pairs) {
      if (k) special_args(*k, used);
      if (v) special_args(*v, used);
    }
  }

  Value make_macro(const std::string& name, const Block& params, const Block& body,
                   EnvP defining_env) {
    std::set<std::string> used;
    for (const NodeP& b : body) special_args(*b, used);
    for (const NodeP& p : params) used.erase(p->s);
    return Value::function(
        [this, name, &params, &body, used, defining_env](const Args& args, const EnvP& scope) {
          auto env = std::make_shared<Env>(defining_env ? defining_env : scope);
          std::vector<std::pair<std::string, Value>> kw = args.kw;
          std::vector<std::pair<std::string, NodeP>> pending;
          for (size_t k = 0; k < params.size(); ++k) {
            const std::string& pname = params[k]->s;
            Value v;
            bool have = false;
            if (k < args.pos.size()) {
              v = args.pos[k];
              have = true;
            } else {
              for (auto it = kw.begin(); it != kw.end(); ++it)
                if (it->first == pname) {
                  v = it->second;
                  kw.erase(it);
                  have = true;
                  break;
                }
            }
            if (!have && params[k]->kind == Node::Kind::KwArg)
              pending.emplace_back(pname, params[k]->a);
            env->vars[pname] = v;
          }
          if (used.count("kwargs")) {
            Object o;
            for (auto& [k, v] : kw) o.set(k, v);
            env->vars["kwargs"] = Value::object(std::move(o));
          } else if (!kw.empty()) {
            err("macro " + name + " takes no keyword argument '" + kw[0].first + "'");
          }
          if (used.count("varargs")) {
            std::vector<Value> rest;
            for (size_t k = params.size(); k < args.pos.size(); ++k) rest.push_back(args.pos[k]);
            env->vars["varargs"] = Value::array(std::move(rest));
          } else if (args.pos.size() > params.size()) {
            err("macro " + name + " takes not more than " + std::to_string(params.size()) +
                " argument(s)");
          }
          for (const auto& [pname, def] : pending) env->vars[pname] = eval(def, env);
          return block(body, env);
        });
  }

  Value eval_member(const Node& n, const EnvP& env) {
    const Value obj = eval(n.a, env);
    Value prop;
    if (n.flag) {
      if (n.b->kind == Node::Kind::Slice) {
        const Node& s = *n.b;
        const Value a = eval(s.a, env), b = eval(s.b, env), c = eval(s.c, env);
        for (const Value* v : {&a, &b, &c})
          if (!v->is_undefined() && v->kind != K::Int) err("Slice indices must be integers");
        if (obj.is_array()) {
          const auto at = slice_positions(static_cast<int64_t>(obj.arr->size()), a, b, c);
          step(static_cast<int64_t>(at.size()));
          charge(static_cast<int64_t>(at.size() * sizeof(Value)));
          std::vector<Value> out;
          out.reserve(at.size());
          for (size_t k : at) out.push_back((*obj.arr)[k]);
          return Value::array(std::move(out));
        }
        if (obj.is_string()) {  // by characters, as the reference slices strings
          const auto cps = utf8_to_cpts(obj.s);
          step(static_cast<int64_t>(cps.size()));
          std::string out;
          for (size_t k : slice_positions(static_cast<int64_t>(cps.size()), a, b, c))
            append_utf8(out, cps[k]);
          return Value::string(out);
        }
        err("Slice object must be an array or string");
      }
      prop = eval(n.b, env);
    } else if (n.b->kind == Node::Kind::Int) {
      prop = Value::integer(n.b->i);
    } else {
      prop = Value::string(n.b->s);
    }
    if (obj.is_mapping()) {
      if (!prop.is_string()) err("Cannot access property with non-string: got " + prop.type_name());
      if (const Value* v = obj.obj->find(prop.s)) return *v;
      return obj.is_object() ? builtin(obj, prop.s) : Value();
    }
    if (obj.is_array() || obj.is_string()) {
      if (prop.kind == K::Int) {
        if (obj.is_string()) return string_at(obj.s, prop.i);
        int64_t k = prop.i;
        const auto len = static_cast<int64_t>(obj.arr->size());
        if (k < 0) k += len;
        if (k < 0 || k >= len) return Value();
        return (*obj.arr)[static_cast<size_t>(k)];
      }
      if (prop.is_string()) return builtin(obj, prop.s);
      err("Cannot access property with non-string/non-number: got " + prop.type_name());
    }
    if (!prop.is_string()) err("Cannot access property with non-string: got " + prop.type_name());
    return Value();
  }

  // Methods of strings, arrays and objects (s.strip(), d.items(), ...).
  Value builtin(const Value& obj, const std::string& name) {
    if (obj.is_array()) {
      if (name == "length") return Value::integer(static_cast<int64_t>(obj.arr->size()));
      return Value();
    }
    if (obj.is_string()) {
      const std::string s = obj.s;
      if (name == "length") return Value::integer(char_length(s));
      auto fn0 = [&](auto f) {
        return Value::function([s, f](const Args&, const EnvP&) { return Value::string(f(s)); });
      };
      if (name == "upper") return fn0([](const std::string& x) { return js_upper(x); });
      if (name == "lower") return fn0([](const std::string& x) { return js_lower(x); });
      if (name == "strip") return fn0([](const std::string& x) { return js_trim(x); });
      if (name == "lstrip")
        return fn0([](const std::string& x) { return js_trim(x, true, false); });
      if (name == "rstrip")
        return fn0([](const std::string& x) { return js_trim(x, false, true); });
      if (name == "title") return fn0([](const std::string& x) { return py_title(x); });
      if (name == "capitalize") return fn0([](const std::string& x) { return py_capitalize(x); });
      if (name == "startswith" || name == "endswith") {
        const bool starts = name == "startswith";
        return Value::function([s, starts, name](const Args& a, const EnvP&) {
          if (a.pos.empty()) err(name + "() requires at least one argument");
          auto check = [&](const std::string& p) {
            return p.size() <= s.size() &&
                   (starts ? s.compare(0, p.size(), p) == 0
                           : s.compare(s.size() - p.size(), p.size(), p) == 0);
          };
          const Value& p = a.pos[0];
          if (p.is_string()) return Value::boolean(check(p.s));
          if (p.is_array()) {
            for (const Value& x : *p.arr) {
              if (!x.is_string()) err(name + "() tuple elements must be strings");
              if (check(x.s)) return Value::boolean(true);
            }
            return Value::boolean(false);
          }
          err(name + "() argument must be a string or tuple of strings");
        });
      }
      if (name == "split")
        return Value::function([this, s](const Args& a, const EnvP&) {
          const Value* sep = a.get(0, "sep");
          const Value* maxs = a.get(1, "maxsplit");
          if (sep && !sep->is_string() && !sep->is_none())
            err("sep argument must be a string or null");
          if (maxs && maxs->kind != K::Int) err("maxsplit argument must be a number");
          std::vector<Value> out;
          for (auto& part : py_split(s, sep && sep->is_string() ? &sep->s : nullptr,
                                     maxs ? maxs->i : -1, room() / sizeof(Value)))
            out.push_back(Value::string(std::move(part)));
          return Value::array(std::move(out));
        });
      if (name == "replace")
        return Value::function(
            [this, s](const Args& a, const EnvP&) { return str_replace(s, a, room()); });
      return Value();
    }
    if (obj.is_object()) {
      auto o = obj.obj;
      if (name == "get")
        return Value::function([o](const Args& a, const EnvP&) {
          const Value* key = a.get(0, nullptr);
          if (!key || !key->is_string())
            err("Object key must be a string: got " + (key ? key->type_name() : "nothing"));
          if (const Value* v = o->find(key->s)) return *v;
          const Value* def = a.get(1, nullptr);
          return def ? *def : Value::none();
        });
      if (name == "items")
        return Value::function([o](const Args&, const EnvP&) { return items_of(*o); });
      if (name == "keys")
        return Value::function([o](const Args&, const EnvP&) {
          std::vector<Value> v;
          for (const auto& [k, _] : o->items) v.push_back(Value::string(k));
          return Value::array(std::move(v));
        });
      if (name == "values")
        return Value::function([o](const Args&, const EnvP&) {
          std::vector<Value> v;
          for (const auto& [_, x] : o->items) v.push_back(x);
          return Value::array(std::move(v));
        });
      if (name == "dictsort")
        return Value::function([o](const Args& a, const EnvP&) {
          const Value* cs = a.get(0, "case_sensitive");
          const Value* by = a.get(1, "by");
          const Value* rev = a.get(2, "reverse");
          const bool case_sensitive = cs && cs->truthy();
          const bool by_value = by && by->is_string() && by->s == "value";
          if (by && (!by->is_string() || (by->s != "key" && by->s != "value")))
            err("by must be either 'key' or 'value'");
          std::vector<Value> items = items_of(*o).arr ? *items_of(*o).arr : std::vector<Value>{};
          std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
            const int r = compare_values((*x.arr)[by_value], (*y.arr)[by_value], case_sensitive);
            return rev && rev->truthy() ? r > 0 : r < 0;
          });
          return Value::array(std::move(items));
        });
    }
    return Value();
  }

  static Value items_of(const Object& o) {
    std::vector<Value> v;
    for (const auto& [k, x] : o.items) {
      v.push_back(Value::array({Value::string(k), x}));
      v.back().tuple = true;
    }
    return Value::array(std::move(v));
  }

  static Value str_replace(const std::string& s, const Args& a, size_t max_bytes) {
    if (a.pos.size() < 2) err("replace() requires at least two arguments");
    if (!a.pos[0].is_string() || !a.pos[1].is_string()) err("replace() arguments must be strings");
    const Value* count = a.get(2, "count");
    if (count && count->kind != K::Int && !count->is_none())
      err("replace() count argument must be a number or null");
    const int64_t c = count && count->kind == K::Int ? count->i : -1;
    return Value::string(replace_all(s, a.pos[0].s, a.pos[1].s, c, max_bytes));
  }

  // `~`, and `+` with a string: the other side as Python's str() gives it (Jinja2 raises for `+`
  // of a string and a number; the text is kept, as llama.cpp's and the JavaScript renderers do).
  Value concat(const Value& l, const Value& r) {
    std::string a = py_string(l, room()), b = py_string(r, room());
    charge(static_cast<int64_t>(a.size() + b.size()));
    return Value::string(a + b);
  }

  // Exact, as Python computes it (a double would round beyond 2^53); overflow is an error.
  static int64_t int_pow(int64_t base, int64_t e) {
    int64_t result = 1;
    while (e > 0) {
      if ((e & 1) && __builtin_mul_overflow(result, base, &result))
        err("integer overflow in ** (integers are 64-bit)");
      e >>= 1;
      if (e > 0 && __builtin_mul_overflow(base, base, &base))
        err("integer overflow in ** (integers are 64-bit)");
    }
    return result;
  }

  Value eval_binary(const Node& n, const EnvP& env) {
    const std::string& op = n.s;
    const Value l = eval(n.a, env);
    if (op == "and") return l.truthy() ? eval(n.b, env) : l;
    if (op == "or") return l.truthy() ? l : eval(n.b, env);
    return operate(op, l, eval(n.b, env));
  }

  // `v is name(args)`: Python Jinja2's tests.
  bool run_test(const std::string& name, const Value& v, std::span<const Value> args) {
    if (std::optional<bool> r = plain_test(name, v)) return *r;
    auto arg = [&]() -> const Value& {
      if (args.empty()) err("the test '" + name + "' needs an argument");
      return args[0];
    };
    if (const char* op = test_operator(name)) {
      if (std::string(op) == "==") return strict_equal(v, arg());
      if (std::string(op) == "!=") return !strict_equal(v, arg());
      return operate(op, v, arg()).truthy();
    }
    if (name == "divisibleby") {
      const Value& d = arg();
      if (!v.is_number() || !d.is_number()) err("divisibleby needs numbers");
      if (v.kind == K::Int && d.kind == K::Int) {
        if (d.i == 0) err("divisibleby 0");
        return d.i == -1 || v.i % d.i == 0;
      }
      if (d.as_double() == 0) err("divisibleby 0");
      return std::fmod(v.as_double(), d.as_double()) == 0;
    }
    if (name == "sameas") {
      const Value& o = arg();
      if (v.kind != o.kind) return false;
      if (v.is_array()) return v.arr == o.arr;
      if (v.is_mapping()) return v.obj == o.obj;
      if (v.kind == K::Callable) return v.fn == o.fn;
      return strict_equal(v, o);
    }
    // `'trim' is filter`, `'odd' is test`: whether a filter or test of that name exists.
    if (name == "test") {
      static const std::set<std::string, std::less<>> kNames = {
          "boolean", "callable", "defined", "divisibleby", "escaped",  "even",
          "false",   "filter",   "float",   "integer",     "iterable", "lower",
          "mapping", "none",     "number",  "odd",         "sameas",   "sequence",
          "string",  "test",     "true",    "undefined",   "upper"};
      return v.is_string() && (kNames.count(v.s) > 0 || test_operator(v.s));
    }
    if (name == "filter") return v.is_string() && filter_exists(v.s);
    err("Unknown test: " + name);
  }

  // A binary operator on evaluated operands (the tests `in`, `lt`, ... apply these too).
  Value operate(const std::string& op, const Value& l, const Value& r) {
    if (op == "==") return Value::boolean(loose_equal(l, r));
    if (op == "!=") return Value::boolean(!loose_equal(l, r));
    if (l.is_undefined() || r.is_undefined()) {
      if (r.is_undefined() && (op == "in" || op == "not in")) return Value::boolean(op == "not in");
      err("Cannot perform operation " + op + " on undefined values");
    }
    if (l.is_none() || r.is_none()) err("Cannot perform operation on null values");
    if (op == "~") return concat(l, r);
    auto numeric = [](const Value& v) { return v.is_number() || v.kind == K::Bool; };
    if (op == "**" && numeric(l) && numeric(r)) {
      const double a = l.as_double(), b = r.as_double();
      if (a == 0 && b < 0) err("0.0 cannot be raised to a negative power");
      const double res = std::pow(a, b);
      if (!std::isfinite(res)) err("Exponentiation result is not a finite real number");
      if (l.kind == K::Float || r.kind == K::Float || b < 0) return Value::number(res);
      return Value::integer(int_pow(l.kind == K::Bool ? l.b : l.i, r.kind == K::Bool ? r.b : r.i));
    }
    if (l.is_number() && r.is_number()) {
      const bool fl = l.kind == K::Float || r.kind == K::Float;
      if (op == "+" || op == "-" || op == "*") {
        if (!fl) {
          int64_t res = 0;
          const bool over = op == "+"   ? __builtin_add_overflow(l.i, r.i, &res)
                            : op == "-" ? __builtin_sub_overflow(l.i, r.i, &res)
                                        : __builtin_mul_overflow(l.i, r.i, &res);
          if (over) err("integer overflow in " + op + " (integers are 64-bit)");
          return Value::integer(res);
        }
        const double a = l.as_double(), b = r.as_double();
        return Value::number(op == "+" ? a + b : op == "-" ? a - b : a * b);
      }
      const double a = l.as_double(), b = r.as_double();
      // As in Python, dividing by zero raises: a template that does has a bug worth naming.
      if ((op == "/" || op == "//" || op == "%") && (fl ? b == 0 : r.i == 0))
        err(std::string(op == "%" ? "modulo" : "division") + " by zero");
      if (op == "/") return Value::number(a / b);
      if (op == "//") {
        if (!fl) {
          if (l.i == INT64_MIN && r.i == -1) err("integer overflow in // (integers are 64-bit)");
          const int64_t q = l.i / r.i;
          return Value::integer(q - ((l.i % r.i != 0) && ((l.i < 0) != (r.i < 0))));
        }
        return Value::number(std::floor(a / b));
      }
      if (op == "%") {
        if (!fl) {
          if (r.i == -1) return Value::integer(0);
          // Python's %: the result takes the divisor's sign (-7 % 3 is 2).
          const int64_t m = l.i % r.i;
          return Value::integer(m != 0 && (m < 0) != (r.i < 0) ? m + r.i : m);
        }
        const double m = std::fmod(a, b);
        return Value::number(m != 0 && (m < 0) != (b < 0) ? m + b : m);
      }
      if (op == "<") return Value::boolean(a < b);
      if (op == ">") return Value::boolean(a > b);
      if (op == "<=") return Value::boolean(a <= b);
      if (op == ">=") return Value::boolean(a >= b);
    } else if (l.is_array() && r.is_array()) {
      if (op == "+") {
        // Refused before it is built: a list doubled in a loop would otherwise reach twice the
        // budget before eval() charges it.
        const auto bytes = static_cast<int64_t>((l.arr->size() + r.arr->size()) * sizeof(Value));
        if (bytes > budget_) charge(bytes);
        std::vector<Value> v = *l.arr;
        v.insert(v.end(), r.arr->begin(), r.arr->end());
        return Value::array(std::move(v));
      }
    } else if (r.is_array()) {
      step(static_cast<int64_t>(r.arr->size()));
      bool member = false;
      for (const Value& x : *r.arr) member |= strict_equal(x, l);
      if (op == "in") return Value::boolean(member);
      if (op == "not in") return Value::boolean(!member);
    }
    if ((l.is_string() || r.is_string()) && op == "+") return concat(l, r);
    if (l.is_string() && r.is_string()) {
      if (op == "in") return Value::boolean(contains(r.s, l.s));
      if (op == "not in") return Value::boolean(!contains(r.s, l.s));
      // Comparisons of strings are not in the reference's list either; keep its error.
    }
    if (l.is_string() && r.is_object()) {
      if (op == "in") return Value::boolean(r.obj->find(l.s) != nullptr);
      if (op == "not in") return Value::boolean(r.obj->find(l.s) == nullptr);
    }
    err("Unknown operator \"" + op + "\" between " + l.type_name() + " and " + r.type_name());
  }

  Value apply_filter(const Value& v, const Node& f, const EnvP& env) {
    if (f.kind == Node::Kind::Ident) {
      Args none;
      return filter(v, f.s, none, env);
    }
    if (f.kind != Node::Kind::Call || f.a->kind != Node::Kind::Ident) err("Unknown filter");
    if (f.a->s == "selectattr" || f.a->s == "rejectattr") {
      for (const NodeP& a : f.list)
        if (a->kind != Node::Kind::Str) err("arguments of `" + f.a->s + "` must be strings");
    }
    auto [pos, kw] = arguments(f.list, env);
    Args args{std::move(pos), std::move(kw)};
    return filter(v, f.a->s, args, env);
  }

  // Filters are looked up in tables: those that take any value, then those of the value's kind
  // (the reference renderer's errors name the kind: "Unknown ArrayValue filter: ...").
  struct FilterCall {
    const std::string& name;
    const Args& a;
    const EnvP& env;
  };
  using FilterFn = Value (*)(Interp&, const Value&, const FilterCall&);
  struct FilterEntry {
    std::string_view name;
    FilterFn fn;
  };
  static FilterFn find_filter(std::span<const FilterEntry> table, const std::string& name) {
    for (const FilterEntry& e : table)
      if (e.name == name) return e.fn;
    return nullptr;
  }

  // The filters that take any value.
  static std::span<const FilterEntry> any_filters() {
    static constexpr FilterEntry kAny[] = {
        {"safe", [](Interp&, const Value& x, const FilterCall&) { return x; }},
        {"tojson", &Interp::filter_tojson},
        {"default", &Interp::filter_default},
        {"d", &Interp::filter_default},
        {"join", &Interp::filter_join},
        {"int", &Interp::filter_number},
        {"float", &Interp::filter_number},
    };
    return kAny;
  }

  static bool filter_exists(const std::string& name) {
    static const std::set<std::string, std::less<>> kOthers = {"abs",   "string", "items",
                                                               "count", "bool",   "dictsort"};
    return find_filter(any_filters(), name) || find_filter(array_filters(), name) ||
           find_filter(string_filters(), name) || kOthers.count(name) > 0;
  }

  Value filter(const Value& v, const std::string& name, const Args& a, const EnvP& env) {
    step();
    const FilterCall c{name, a, env};
    if (FilterFn f = find_filter(any_filters(), name)) return f(*this, v, c);
    // Python's Undefined prints as "" and iterates as nothing: a string filter reads it as "",
    // a list filter as [] (`tool.description | trim` on a tool without one renders "").
    if (v.is_undefined()) {
      if (name == "items") return Value::array();
      if (FilterFn f = find_filter(string_filters(), name)) return f(*this, Value::string(""), c);
      if (FilterFn f = find_filter(array_filters(), name)) return f(*this, Value::array(), c);
    }
    if (v.is_array()) {
      if (FilterFn f = find_filter(array_filters(), name)) return f(*this, v, c);
      err("Unknown ArrayValue filter: " + name);
    }
    if (v.is_string()) {
      if (FilterFn f = find_filter(string_filters(), name)) return f(*this, v, c);
      err("Unknown StringValue filter: " + name);
    }
    if (v.is_number()) {
      if (name == "abs")
        return v.kind == K::Int ? Value::integer(v.i < 0 ? -v.i : v.i)
                                : Value::number(std::fabs(v.f));
      if (name == "string") return Value::string(v.to_string(room()));
      err("Unknown NumericValue filter: " + name);
    }
    if (v.is_object()) {
      if (name == "items") return items_of(*v.obj);
      if (name == "length" || name == "count")
        return Value::integer(static_cast<int64_t>(v.obj->items.size()));
      if (name == "string") return Value::string(v.to_string(room()));
      const Value fn = builtin(v, name);
      if (fn.kind == K::Callable) return call(fn, a, env);
      // A dict iterates over its keys in Python: `params | reject("in", handled) | list`.
      if (FilterFn f = find_filter(array_filters(), name)) {
        std::vector<Value> keys;
        for (const auto& [k, _] : v.obj->items) keys.push_back(Value::string(k));
        return f(*this, Value::array(std::move(keys)), c);
      }
      err("Unknown ObjectValue filter: " + name);
    }
    if (v.kind == K::Bool) {
      if (name == "bool") return v;
      if (name == "string") return Value::string(v.b ? "True" : "False");
      err("Unknown BooleanValue filter: " + name);
    }
    err("Cannot apply filter \"" + name + "\" to type: " + v.type_name());
  }

  static Value filter_tojson(Interp&, const Value& v, const FilterCall& c) {
    JsonOptions o;
    const Value* ind = kwarg(c.a, "indent");
    if (ind && ind->kind != K::Int && !ind->is_none()) err("If set, indent must be a number");
    o.indent =
        ind && ind->kind == K::Int ? static_cast<int>(std::clamp<int64_t>(ind->i, 0, 64)) : 0;
    const Value* ea = kwarg(c.a, "ensure_ascii");
    o.ensure_ascii = ea && ea->truthy();
    const Value* sk = kwarg(c.a, "sort_keys");
    o.sort_keys = sk && sk->truthy();
    std::pair<std::string, std::string> seps;
    if (const Value* s = kwarg(c.a, "separators"); s && !s->is_none()) {
      if (!s->is_array() || s->arr->size() != 2 || !(*s->arr)[0].is_string() ||
          !(*s->arr)[1].is_string())
        err("separators must be a tuple of two strings");
      seps = {(*s->arr)[0].s, (*s->arr)[1].s};
      o.separators = &seps;
    }
    return Value::string(to_json(v, o));
  }

  static Value filter_default(Interp&, const Value& v, const FilterCall& c) {
    const Value* def = c.a.get(0, "default_value");
    const Value* boolean = c.a.get(1, "boolean");
    if (v.is_undefined() || (boolean && boolean->truthy() && !v.truthy()))
      return def ? *def : Value::string("");
    return v;
  }

  static Value filter_join(Interp& in, const Value& v, const FilterCall& c) {
    std::vector<std::string> parts;
    if (v.is_string()) {
      in.step(static_cast<int64_t>(v.s.size()));
      in.charge(static_cast<int64_t>(v.s.size() * sizeof(std::string)));
      parts = utf8_chars(v.s);
    } else if (v.is_array()) {
      in.step(static_cast<int64_t>(v.arr->size()));
      for (const Value& x : *v.arr) parts.push_back(py_string(x, in.room()));
    } else if (!v.is_undefined()) {  // an undefined value joins as nothing, as in Jinja2
      err("Cannot apply filter \"join\" to type: " + v.type_name());
    }
    const Value* sep = c.a.get(0, "separator");
    if (sep && !sep->is_string()) err("separator must be a string");
    size_t total = 0;
    for (const std::string& p : parts) total += p.size() + (sep ? sep->s.size() : 0);
    in.charge(static_cast<int64_t>(total));
    std::string out;
    out.reserve(total);
    for (size_t k = 0; k < parts.size(); ++k) out += (k && sep ? sep->s : "") + parts[k];
    return Value::string(out);
  }

  // int and float.
  static Value filter_number(Interp&, const Value& v, const FilterCall& c) {
    const bool is_int = c.name == "int";
    const Value* def = c.a.get(0, "default");
    if (v.is_string()) {
      const std::string t = js_trim(v.s);
      char* end = nullptr;
      if (is_int) {
        const long long x = std::strtoll(t.c_str(), &end, 10);
        if (end == t.c_str()) return def ? *def : Value::integer(0);
        return Value::integer(x);
      }
      const double x = std::strtod(t.c_str(), &end);
      if (end == t.c_str()) return def ? *def : Value::number(0);
      return Value::number(x);
    }
    if (v.kind == K::Bool) return is_int ? Value::integer(v.b) : Value::number(v.b);
    if (v.is_number()) {
      if (!c.a.pos.empty() || !c.a.kw.empty()) return v;  // the call form leaves numbers alone
      return is_int ? Value::integer(static_cast<int64_t>(std::floor(v.as_double())))
                    : Value::number(v.as_double());
    }
    err("Cannot apply filter \"" + c.name + "\" to type: " + v.type_name());
  }

  static Value filter_unique(Interp&, const Value& v, const FilterCall&) {
    std::vector<Value> out;
    for (const Value& x : *v.arr) {
      bool seen = false;
      for (const Value& y : out) seen |= strict_equal(x, y);
      if (!seen) out.push_back(x);
    }
    return Value::array(std::move(out));
  }

  static Value filter_sort(Interp&, const Value& v, const FilterCall& c) {
    const Value* rev = c.a.get(0, "reverse");
    const Value* cs = c.a.get(1, "case_sensitive");
    const Value* attr = c.a.get(2, "attribute");
    std::vector<Value> out = *v.arr;
    auto key = [&](const Value& x) {
      if (!attr || attr->is_none()) return x;
      return attribute_path(x, attr->kind == K::Int ? std::to_string(attr->i) : attr->s);
    };
    std::stable_sort(out.begin(), out.end(), [&](const Value& x, const Value& y) {
      const int r = compare_values(key(x), key(y), cs && cs->truthy());
      return rev && rev->truthy() ? r > 0 : r < 0;
    });
    return Value::array(std::move(out));
  }

  static std::span<const Value> test_args(const Value* arg) {
    return arg ? std::span<const Value>(arg, 1) : std::span<const Value>();
  }

  // selectattr and rejectattr.
  static Value filter_selectattr(Interp& in, const Value& v, const FilterCall& c) {
    const bool select = c.name == "selectattr";
    for (const Value& x : *v.arr)
      if (!x.is_mapping()) err("`" + c.name + "` can only be applied to array of objects");
    const Value* attr = c.a.get(0, nullptr);
    const Value* test = c.a.get(1, nullptr);
    const Value* arg = c.a.get(2, nullptr);
    if (!attr) err("`" + c.name + "` needs an attribute name");
    std::vector<Value> out;
    for (const Value& x : *v.arr) {
      const Value* field = x.obj->find(attr->s);
      bool r = false;
      if (field && !field->is_undefined())
        r = test ? in.run_test(test->s, *field, test_args(arg)) : field->truthy();
      if (r == select) out.push_back(x);
    }
    return Value::array(std::move(out));
  }

  // select and reject.
  static Value filter_select(Interp& in, const Value& v, const FilterCall& c) {
    const bool select = c.name == "select";
    const Value* test = c.a.get(0, nullptr);
    const Value* arg = c.a.get(1, nullptr);
    std::vector<Value> out;
    for (const Value& x : *v.arr) {
      const bool r = test ? in.run_test(test->s, x, test_args(arg)) : x.truthy();
      if (r == select) out.push_back(x);
    }
    return Value::array(std::move(out));
  }

  static Value filter_map(Interp& in, const Value& v, const FilterCall& c) {
    const Value* attr = kwarg(c.a, "attribute");
    if (!attr) {
      // map('filter_name') applies a filter to each item.
      const Value* fname = c.a.get(0, nullptr);
      if (!fname || !fname->is_string()) err("`map` needs attribute= or a filter name");
      Args rest;
      rest.pos.assign(c.a.pos.begin() + 1, c.a.pos.end());
      std::vector<Value> out;
      for (const Value& x : *v.arr) out.push_back(in.filter(x, fname->s, rest, c.env));
      return Value::array(std::move(out));
    }
    if (!attr->is_string()) err("attribute must be a string");
    const Value* def = kwarg(c.a, "default");
    std::vector<Value> out;
    for (const Value& x : *v.arr) {
      if (!x.is_mapping()) err("items in map must be an object");
      Value y = attribute_path(x, attr->s);
      out.push_back(y.is_undefined() && def ? *def : y);
    }
    return Value::array(std::move(out));
  }

  static std::span<const FilterEntry> array_filters() {
    static constexpr FilterEntry kTable[] = {
        {"list", [](Interp&, const Value& v, const FilterCall&) { return v; }},
        {"first", [](Interp&, const Value& v,
                     const FilterCall&) { return v.arr->empty() ? Value() : v.arr->front(); }},
        {"last", [](Interp&, const Value& v,
                    const FilterCall&) { return v.arr->empty() ? Value() : v.arr->back(); }},
        {"length", &Interp::array_length},
        {"count", &Interp::array_length},
        {"reverse",
         [](Interp&, const Value& v, const FilterCall&) {
           return Value::array(std::vector<Value>(v.arr->rbegin(), v.arr->rend()));
         }},
        {"string", [](Interp& in, const Value& v,
                      const FilterCall&) { return Value::string(py_string(v, in.room())); }},
        {"unique", &Interp::filter_unique},
        {"sort", &Interp::filter_sort},
        {"selectattr", &Interp::filter_selectattr},
        {"rejectattr", &Interp::filter_selectattr},
        {"select", &Interp::filter_select},
        {"reject", &Interp::filter_select},
        {"map", &Interp::filter_map},
    };
    return kTable;
  }
  static Value array_length(Interp&, const Value& v, const FilterCall&) {
    return Value::integer(static_cast<int64_t>(v.arr->size()));
  }

  static Value string_list(Interp& in, const Value& v, const FilterCall&) {
    return in.string_chars(v.s);
  }
  // A string's characters as a list, paid for first.
  Value string_chars(const std::string& s) {
    const auto cps = utf8_to_cpts(s);
    step(static_cast<int64_t>(cps.size()));
    charge(static_cast<int64_t>(cps.size() * sizeof(Value)));
    std::vector<Value> out;
    out.reserve(cps.size());
    for (uint32_t cp : cps) {
      std::string ch;
      append_utf8(ch, cp);
      out.push_back(Value::string(std::move(ch)));
    }
    return Value::array(std::move(out));
  }

  // first and last.
  static Value string_end(Interp&, const Value& v, const FilterCall& c) {
    const std::string& s = v.s;
    if (s.empty()) return Value();
    size_t p = 0;  // a UTF-8 character is at most 4 bytes
    if (c.name == "last") {
      p = s.size() - 1;
      while (p > 0 && s.size() - p < 4 && (static_cast<unsigned char>(s[p]) & 0xC0) == 0x80) --p;
    }
    const auto cps = utf8_to_cpts(s.substr(p, 4));
    std::string ch;
    append_utf8(ch, c.name == "first" ? cps.front() : cps.back());
    return Value::string(ch);
  }

  static Value string_indent(Interp& in, const Value& v, const FilterCall& c) {
    const std::string& s = v.s;
    const Value* width = c.a.get(0, "width");
    const Value* first = c.a.get(1, "first");
    const Value* blank = c.a.get(2, "blank");
    if (width && width->kind != K::Int) err("width must be a number");
    const int64_t w = width ? std::max<int64_t>(width->i, 0) : 4;
    const auto lines = static_cast<int64_t>(std::count(s.begin(), s.end(), '\n')) + 1;
    in.charge(std::min<int64_t>(w, in.budget_ + 1));  // before multiplying: w may be huge
    in.charge(static_cast<int64_t>(s.size()) + lines * w);
    const std::string ind(static_cast<size_t>(w), ' ');
    std::string out;
    size_t p = 0, line = 0;
    while (true) {
      const size_t q = s.find('\n', p);
      const std::string l = s.substr(p, q == std::string::npos ? std::string::npos : q - p);
      const bool skip =
          (line == 0 && !(first && first->truthy())) || (l.empty() && !(blank && blank->truthy()));
      out += (skip ? "" : ind) + l;
      if (q == std::string::npos) break;
      out += '\n';
      p = q + 1;
      ++line;
    }
    return Value::string(out);
  }

  static std::span<const FilterEntry> string_filters() {
    static constexpr FilterEntry kTable[] = {
        {"length", &Interp::string_length},
        {"count", &Interp::string_length},
        {"upper",
         [](Interp&, const Value& v, const FilterCall&) { return Value::string(js_upper(v.s)); }},
        {"lower",
         [](Interp&, const Value& v, const FilterCall&) { return Value::string(js_lower(v.s)); }},
        {"title",
         [](Interp&, const Value& v, const FilterCall&) { return Value::string(py_title(v.s)); }},
        {"capitalize", [](Interp&, const Value& v,
                          const FilterCall&) { return Value::string(py_capitalize(v.s)); }},
        {"trim",
         [](Interp&, const Value& v, const FilterCall&) { return Value::string(js_trim(v.s)); }},
        {"string", [](Interp&, const Value& v, const FilterCall&) { return v; }},
        {"list", &Interp::string_list},
        {"first", &Interp::string_end},
        {"last", &Interp::string_end},
        {"indent", &Interp::string_indent},
        {"replace", [](Interp& in, const Value& v,
                       const FilterCall& c) { return str_replace(v.s, c.a, in.room()); }},
    };
    return kTable;
  }
  static Value string_length(Interp&, const Value& v, const FilterCall&) {
    return Value::integer(char_length(v.s));
  }
};

}  // namespace

std::string render(const Program& program, const Value& context, const Limits& limits) {
  Interp in(program, limits);
  return in.run(context);
}

}  // namespace brisk::jinja
