// Llama 3.2 and 4 and others: the reply opens with a Python list of calls,
// [get_weather(city="Paris"), get_time()], keyword arguments as Python literals (after
// <|python_start|> or bare). A call can only open the reply.
#include <cctype>

#include "chat/tool_grammar_builder.h"

namespace brisk {

namespace {

using namespace tool_layouts;
using json = nlohmann::ordered_json;

constexpr std::string_view kTag = "<|python_start|>";

// Python literals (what pythonic calls pass) as JSON text.
class PyLiteral {
 public:
  enum class State { Ok, More, Bad };
  PyLiteral(std::string_view s, size_t& i) : s_(s), i_(i) {}

  State value(std::string& out, int depth = 0) {
    i_ = skip_ws(s_, i_);
    if (i_ >= s_.size()) return State::More;
    if (depth > 64) return State::Bad;
    const char c = s_[i_];
    if (c == '\'' || c == '"') return string(out);
    if (c == '[' || c == '(') return list(out, c == '[' ? ']' : ')', depth);
    if (c == '{') return dict(out, depth);
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return number(out);
    // Python's literals, and JSON's (a grammar may write arguments as JSON values).
    for (auto [py, js] : {std::pair{"True", "true"},
                          {"False", "false"},
                          {"None", "null"},
                          {"true", "true"},
                          {"false", "false"},
                          {"null", "null"}}) {
      const std::string_view w = py;
      if (s_.substr(i_).starts_with(w)) {
        i_ += w.size();
        out = js;
        return State::Ok;
      }
      if (may_become(s_, i_, w)) return State::More;
    }
    return State::Bad;
  }

 private:
  State string(std::string& out) {
    const char q = s_[i_];
    std::string v;
    for (size_t j = i_ + 1; j < s_.size(); ++j) {
      const char c = s_[j];
      if (c == q) {
        i_ = j + 1;
        out = quote(v);
        return State::Ok;
      }
      if (c != '\\') {
        v += c;
        continue;
      }
      if (++j >= s_.size()) return State::More;
      switch (s_[j]) {
        case 'n':
          v += '\n';
          break;
        case 't':
          v += '\t';
          break;
        case 'r':
          v += '\r';
          break;
        default:
          v += s_[j];
      }
    }
    return State::More;
  }
  State number(std::string& out) {
    size_t j = i_ + 1;
    while (j < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[j])) || s_[j] == '.' ||
                             s_[j] == 'e' || s_[j] == 'E' || s_[j] == '+' || s_[j] == '-'))
      ++j;
    if (j >= s_.size()) return State::More;
    try {
      out = json::parse(s_.substr(i_, j - i_)).dump();
    } catch (const std::exception&) {
      out = quote(s_.substr(i_, j - i_));
    }
    i_ = j;
    return State::Ok;
  }
  State list(std::string& out, char close, int depth) {
    ++i_;
    out = "[";
    for (bool first = true;; first = false) {
      i_ = skip_ws(s_, i_);
      if (i_ >= s_.size()) return State::More;
      if (s_[i_] == close) {
        ++i_;
        out += "]";
        return State::Ok;
      }
      if (!first && s_[i_++] != ',') return State::Bad;
      i_ = skip_ws(s_, i_);
      if (i_ < s_.size() && s_[i_] == close) continue;
      std::string v;
      if (const State st = value(v, depth + 1); st != State::Ok) return st;
      out += (first ? "" : ", ") + v;
    }
  }
  State dict(std::string& out, int depth) {
    ++i_;
    out = "{";
    for (bool first = true;; first = false) {
      i_ = skip_ws(s_, i_);
      if (i_ >= s_.size()) return State::More;
      if (s_[i_] == '}') {
        ++i_;
        out += "}";
        return State::Ok;
      }
      if (!first && s_[i_++] != ',') return State::Bad;
      std::string k, v;
      if (const State st = value(k, depth + 1); st != State::Ok) return st;
      if (k.empty() || k[0] != '"') k = quote(k);
      i_ = skip_ws(s_, i_);
      if (i_ >= s_.size()) return State::More;
      if (s_[i_++] != ':') return State::Bad;
      if (const State st = value(v, depth + 1); st != State::Ok) return st;
      out += (first ? "" : ", ") + k + ": " + v;
    }
  }

  std::string_view s_;
  size_t& i_;
};

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// name(key=value, ...): the arguments as a JSON object, a keyword at a time.
Section read_python_call(std::string_view s, size_t i, std::vector<ToolCallText>& out) {
  size_t j = i;
  while (j < s.size() && ident_char(s[j])) ++j;
  if (j == i || j >= s.size() || s[j] != '(') return {i, false};
  out.push_back({std::string(s.substr(i, j - i)), "{", false});
  ToolCallText& call = out.back();
  i = j + 1;
  for (bool first = true;; first = false) {
    i = skip_ws(s, i);
    if (i >= s.size()) return {i, false};
    if (s[i] == ')') {
      call.arguments += "}";
      call.complete = true;
      return {i + 1, true};
    }
    if (!first && s[i++] != ',') return {i, false};
    i = skip_ws(s, i);
    if (i < s.size() && s[i] == ')') continue;
    size_t k = i;
    while (k < s.size() && ident_char(s[k])) ++k;
    const size_t eq = skip_ws(s, k);
    if (k == i || eq >= s.size() || s[eq] != '=') return {i, false};
    size_t at = eq + 1;
    std::string v;
    PyLiteral lit(s, at);
    if (lit.value(v) != PyLiteral::State::Ok) return {i, false};
    call.arguments += (first ? "" : ", ") + quote(s.substr(i, k - i)) + ": " + v;
    i = at;
  }
}

// Whether the text at q opens a call list: '[' then a name and '('.
Decided opens_call_list(std::string_view s, size_t q, bool partial) {
  if (q >= s.size()) return partial ? Decided::Undecided : Decided::Content;
  if (s[q] != '[') return Decided::Content;
  size_t j = skip_ws(s, q + 1);
  const size_t start = j;
  while (j < s.size() && ident_char(s[j])) ++j;
  if (j >= s.size()) return partial ? Decided::Undecided : Decided::Content;
  return j > start && s[j] == '(' ? Decided::Calls : Decided::Content;
}

class Pythonic final : public ToolFamily {
 public:
  std::string_view name() const override { return "pythonic"; }
  bool taught_by(std::string_view t) const override {
    return contains(t, "[func_name1(") || contains(t, "[func_name(");
  }
  std::string trigger() const override { return ""; }

  void read_reply(std::string_view s, const ReplyResume& from, bool partial, const json&,
                  Reply& out, ReplyResume& resume) const override {
    read_opening_calls(
        s, from, partial, kTag, [&](size_t q) { return opens_call_list(s, q, partial); },
        [&](size_t q) {
          return read_list(s, q, [&](size_t i) { return read_python_call(s, i, out.calls); });
        },
        out, resume);
  }

  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    const auto param = [&b](const std::string& key, const json& schema, const std::string& where) {
      return b.cat(b.lit(key + "="), {b.ref(b.schema_rule(schema, where, false))});
    };
    const int32_t call = b.one_of("call", [&](size_t i) {
      return b.cat(b.cat(b.lit(b.tool_name(i) + "("), {b.ref(b.params(i, ", ", param))}),
                   b.lit(")"));
    });
    return {"", b.call_array(call, "")};
  }
  int32_t body_grammar(ToolGrammarBuilder& b, const CallGrammar& calls) const override {
    if (b.calls_required()) return ToolFamily::body_grammar(b, calls);
    return b.opening_body(calls, b.text_not_opening_with('['));
  }
};

}  // namespace

namespace families {
const ToolFamily& pythonic() {
  static const Pythonic f;
  return f;
}
}  // namespace families

}  // namespace brisk
