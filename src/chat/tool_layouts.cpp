#include "chat/tool_layouts.h"

#include <algorithm>
#include <optional>

namespace brisk::tool_layouts {

namespace {

using json = nlohmann::ordered_json;

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

bool one_of(std::string_view key, const std::vector<std::string_view>& keys) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// A complete JSON string's value ("" when it does not decode).
std::string decode_string(std::string_view quoted) {
  try {
    const json j = json::parse(quoted);
    if (j.is_string()) return j.get<std::string>();
  } catch (const std::exception&) {
  }
  return "";
}

std::string quote(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

// The call being read: appended once its name is known, its arguments kept up to date.
struct PendingCall {
  explicit PendingCall(std::vector<ToolCallText>& o) : out(o) {}
  std::vector<ToolCallText>& out;
  std::optional<std::string> name;
  std::string args;
  bool added = false;

  void sync() {
    if (!name) return;
    if (!added) {
      out.push_back({*name, args, false});
      added = true;
    } else {
      out.back().arguments = args;
    }
  }
  void close() {
    sync();
    if (added) out.back().complete = true;
  }
};

}  // namespace

size_t skip_ws(std::string_view s, size_t pos) {
  while (pos < s.size() && is_ws(s[pos])) ++pos;
  return pos;
}

bool may_become(std::string_view s, size_t pos, std::string_view m) {
  const std::string_view rest = s.substr(std::min(pos, s.size()));
  return rest.size() < m.size() && m.starts_with(rest);
}

size_t marker_tail(std::string_view s, const std::vector<std::string>& markers) {
  size_t best = 0;
  for (const std::string& m : markers)
    for (size_t n = std::min(s.size(), m.size() - 1); n > best; --n)
      if (s.substr(s.size() - n) == std::string_view(m).substr(0, n)) {
        best = n;
        break;
      }
  return best;
}

namespace {

// A harmony header's value after `key` (a channel name, a recipient), up to a space or a marker.
std::string header_word(std::string_view h, std::string_view key) {
  const size_t k = h.find(key);
  if (k == h.npos) return "";
  size_t e = k + key.size();
  while (e < h.size() && h[e] != ' ' && h[e] != '<') ++e;
  return std::string(h.substr(k + key.size(), e - k - key.size()));
}

}  // namespace

void read_harmony(std::string_view s, bool partial, bool calls, Reply& out) {
  static const std::vector<std::string> kEnds = {"<|end|>", "<|call|>", "<|return|>", "<|start|>"};
  constexpr std::string_view kStart = "<|start|>", kMessage = "<|message|>",
                             kChannel = "<|channel|>";
  size_t i = 0;
  while (i < s.size()) {
    // Text outside any message (a model that writes no channels) is content.
    if (!s.substr(i).starts_with(kStart) && !s.substr(i).starts_with(kChannel) &&
        !(partial && (may_become(s, i, kStart) || may_become(s, i, kChannel)))) {
      size_t e = std::min(s.find(kStart, i), s.find(kChannel, i));
      std::string_view text = s.substr(i, e == s.npos ? s.npos : e - i);
      if (e == s.npos && partial)
        text.remove_suffix(marker_tail(text, {std::string(kStart), std::string(kChannel)}));
      out.content += text;
      if (e == s.npos) return;
      i = e;
      continue;
    }
    const size_t m = s.find(kMessage, i);
    if (m == s.npos) return;  // the header is not whole yet (or never was)
    const std::string_view header = s.substr(i, m - i);
    const size_t body = m + kMessage.size();
    size_t e = s.npos, len = 0;
    for (const std::string& end : kEnds)
      if (const size_t f = s.find(end, body); f < e) e = f, len = end == kStart ? 0 : end.size();
    std::string_view text = s.substr(body, e == s.npos ? s.npos : e - body);
    if (e == s.npos && partial) text.remove_suffix(marker_tail(text, kEnds));
    const std::string to = header_word(header, "to=");
    const std::string channel = header_word(header, kChannel);
    if (calls && to.starts_with("functions.")) {
      // The arguments are the JSON value (which may hold a marker's text); the call's end
      // (<|call|>) ends generation, so a whole reply closes it.
      const size_t a = skip_ws(s, body);
      const JsonEnd v = json_value_end(s, a, kMaxReplyNesting);
      const bool whole = v.state == Span::Complete || (!partial && v.state == Span::Incomplete);
      out.calls.push_back({to.substr(10), std::string(s.substr(body, v.end - body)), whole});
      if (v.state != Span::Complete) return;
      i = v.end;
      for (const std::string& end : kEnds)
        if (end != kStart && s.substr(i).starts_with(end)) i += end.size();
      continue;
    } else if (channel == "analysis") {
      out.reasoning += text;
    } else {
      out.content += text;
    }
    if (e == s.npos) return;
    i = e + len;
  }
}

namespace {

// '[' item (',' item)* ']', whitespace anywhere; it stops where an item stops short.
template <typename ReadItem>
Section read_list(std::string_view s, size_t pos, ReadItem read_item) {
  size_t i = skip_ws(s, pos);
  if (i >= s.size() || s[i] != '[') return {i, false};
  ++i;
  while (true) {
    i = skip_ws(s, i);
    if (i >= s.size()) return {i, false};
    if (s[i] == ']') return {i + 1, true};
    if (s[i] == ',') {
      ++i;
      continue;
    }
    const Section c = read_item(i);
    if (!c.complete) return c;
    i = c.end;
  }
}

}  // namespace

Section read_call_object(std::string_view s, size_t pos, bool partial, const CallKeys& keys,
                         std::vector<ToolCallText>& out) {
  PendingCall call(out);
  bool args_seen = false;
  size_t i = skip_ws(s, pos);
  if (i >= s.size() || s[i] != '{') return {i, false};
  ++i;
  while (true) {
    i = skip_ws(s, i);
    if (i >= s.size()) break;
    if (s[i] == '}') {
      call.close();
      return {i + 1, true};
    }
    if (s[i] == ',') {
      ++i;
      continue;
    }
    const JsonEnd k = json_value_end(s, i, kMaxReplyNesting);
    if (k.state != Span::Complete || s[i] != '"') break;
    const std::string key = decode_string(s.substr(i, k.end - i));
    i = skip_ws(s, k.end);
    if (i >= s.size() || s[i] != ':') break;
    i = skip_ws(s, i + 1);
    if (i >= s.size()) break;
    JsonEnd v = json_value_end(s, i, kMaxReplyNesting);
    // A scalar at the very end is whole once nothing more can come.
    if (v.state == Span::Incomplete && !partial && s[i] != '"' && s[i] != '{' && s[i] != '[')
      v.state = Span::Complete;
    // The first name and the first arguments count; a repeated key is skipped like any other.
    if (one_of(key, keys.name) && !call.name) {
      if (v.state != Span::Complete || s[i] != '"') break;
      call.name = decode_string(s.substr(i, v.end - i));
      call.sync();
    } else if (one_of(key, keys.args) && !args_seen) {
      args_seen = true;
      if (s[i] == '"') {  // arguments as a JSON string of JSON
        if (v.state != Span::Complete) break;
        call.args = decode_string(s.substr(i, v.end - i));
      } else {
        call.args = std::string(s.substr(i, v.end - i));
      }
      call.sync();
      if (v.state != Span::Complete) break;
    } else if (v.state != Span::Complete) {
      break;
    }
    i = v.end;
  }
  call.sync();
  return {i, false};
}

Section read_call_array(std::string_view s, size_t pos, bool partial, const CallKeys& keys,
                        std::vector<ToolCallText>& out) {
  return read_list(s, pos, [&](size_t i) { return read_call_object(s, i, partial, keys, out); });
}

Section read_name_args(std::string_view s, size_t pos, bool partial,
                       std::vector<ToolCallText>& out) {
  constexpr std::string_view kArgs = "[ARGS]";
  const size_t a = s.find(kArgs, pos);
  if (a == s.npos) return {pos, false};
  std::string name(s.substr(pos, a - pos));
  while (!name.empty() && is_ws(name.back())) name.pop_back();
  const size_t start = skip_ws(s, a + kArgs.size());
  JsonEnd v = json_value_end(s, start, kMaxReplyNesting);
  if (v.state == Span::Incomplete && !partial && start < s.size() && s[start] != '{' &&
      s[start] != '[')
    v.state = Span::Complete;
  out.push_back({name, std::string(s.substr(start, v.end - start)), v.state == Span::Complete});
  return {v.end, v.state == Span::Complete};
}

namespace {

// The JSON a parameter's text stands for: a string, unless the tool's schema gives the parameter
// another type and the text parses as JSON.
std::string xml_value(const json& tools, const std::string& fn, const std::string& key,
                      std::string_view text) {
  bool string_typed = true;
  for (const json& t : tools) {
    if (!t.is_object() || !t.contains("function") || !t["function"].is_object()) continue;
    const json& f = t["function"];
    if (f.value("name", "") != fn || !f.contains("parameters")) continue;
    const json& p = f["parameters"];
    if (p.is_object() && p.contains("properties") && p["properties"].is_object() &&
        p["properties"].contains(key) && p["properties"][key].is_object()) {
      const json& ty = p["properties"][key].value("type", json("string"));
      string_typed = ty == "string";
    }
  }
  if (!string_typed) {
    try {
      return json::parse(text).dump();
    } catch (const std::exception&) {
    }
  }
  return quote(text);
}

std::string_view trim_one_newline(std::string_view v) {
  if (v.starts_with('\n')) v.remove_prefix(1);
  if (v.ends_with('\n')) v.remove_suffix(1);
  return v;
}

}  // namespace

Section read_xml_function(std::string_view s, size_t pos, bool partial, const json& tools,
                          std::vector<ToolCallText>& out) {
  constexpr std::string_view kFn = "<function=", kParam = "<parameter=", kParamEnd = "</parameter>",
                             kFnEnd = "</function>";
  size_t i = skip_ws(s, pos);
  if (!s.substr(i).starts_with(kFn)) return {i, false};
  const size_t gt = s.find('>', i + kFn.size());
  if (gt == s.npos) return {i, false};
  ToolCallText call{std::string(s.substr(i + kFn.size(), gt - i - kFn.size())), "{", false};
  i = gt + 1;
  bool first = true;
  while (true) {
    i = skip_ws(s, i);
    if (s.substr(i).starts_with(kFnEnd)) {
      call.arguments += "}";
      call.complete = true;
      out.push_back(std::move(call));
      return {i + kFnEnd.size(), true};
    }
    if (!s.substr(i).starts_with(kParam)) break;
    const size_t kgt = s.find('>', i + kParam.size());
    if (kgt == s.npos) break;
    const size_t vend = s.find(kParamEnd, kgt + 1);
    if (vend == s.npos) break;
    const std::string key(s.substr(i + kParam.size(), kgt - i - kParam.size()));
    const std::string_view value = trim_one_newline(s.substr(kgt + 1, vend - kgt - 1));
    call.arguments +=
        (first ? "" : ", ") + quote(key) + ": " + xml_value(tools, call.name, key, value);
    first = false;
    i = vend + kParamEnd.size();
  }
  (void)partial;
  out.push_back(std::move(call));
  return {i, false};
}

namespace {

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

}  // namespace

namespace {

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

}  // namespace

Section read_pythonic(std::string_view s, size_t pos, std::vector<ToolCallText>& out) {
  return read_list(s, pos, [&](size_t i) { return read_python_call(s, i, out); });
}

Section read_deepseek(std::string_view s, size_t pos, bool partial,
                      std::vector<ToolCallText>& out) {
  const std::string_view kBegin = "<\uff5ctool\u2581call\u2581begin\uff5c>",
                         kSep = "<\uff5ctool\u2581sep\uff5c>",
                         kEnd = "<\uff5ctool\u2581call\u2581end\uff5c>",
                         kAllEnd = "<\uff5ctool\u2581calls\u2581end\uff5c>";
  size_t i = pos;
  while (true) {
    i = skip_ws(s, i);
    if (s.substr(i).starts_with(kAllEnd)) return {i + kAllEnd.size(), true};
    if (!s.substr(i).starts_with(kBegin)) return {i, false};
    const size_t sep = s.find(kSep, i + kBegin.size());
    if (sep == s.npos) return {i, false};
    std::string name(s.substr(i + kBegin.size(), sep - i - kBegin.size()));
    size_t a = sep + kSep.size();
    bool fenced = false;
    if (name == "function") {  // V3: the name on its own line, the arguments in a json fence
      const size_t nl = s.find('\n', a);
      if (nl == s.npos) return {i, false};
      name = std::string(s.substr(a, nl - a));
      a = skip_ws(s, nl);
      if (s.substr(a).starts_with("```json"))
        a += 7, fenced = true;
      else if (may_become(s, a, "```json"))
        return {i, false};
    }
    a = skip_ws(s, a);
    const JsonEnd v = json_value_end(s, a, kMaxReplyNesting);
    out.push_back({name, std::string(s.substr(a, v.end - a)), false});
    if (v.state != Span::Complete) return {i, false};
    size_t e = skip_ws(s, v.end);
    if (fenced) {
      if (!s.substr(e).starts_with("```")) return {i, false};
      e = skip_ws(s, e + 3);
    }
    if (!s.substr(e).starts_with(kEnd)) return {i, false};
    out.back().complete = true;
    i = e + kEnd.size();
  }
  (void)partial;
}

}  // namespace brisk::tool_layouts
