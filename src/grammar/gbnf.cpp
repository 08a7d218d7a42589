// llama.cpp's GBNF, parsed into a Grammar. A rule is `name ::= alternatives`; a sequence at the top
// level of a rule ends at a line break (a line that starts with `|` continues the alternatives),
// inside a group it may span lines.
#include <fmt/format.h>

#include "core/error.h"
#include "core/utf8.h"
#include "grammar/grammar.h"

namespace brisk::grammar {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

class GbnfParser {
 public:
  GbnfParser(std::string_view src, const Limits& limits) : src_(src), g_(limits) {}

  Grammar run() {
    skip_space(true);
    while (p_ < src_.size()) {
      rule_definition();
      skip_space(true);
    }
    for (size_t i = 0; i < g_.rules().size(); ++i)
      if (g_.rules()[i].alts.empty() && !defined_[i])
        fail("grammar: rule '{}' is used but never defined", g_.rules()[i].name);
    const int32_t root = g_.find("root");
    if (root < 0 || !defined_[static_cast<size_t>(root)])
      fail("grammar: there is no rule named 'root' (the rule a grammar starts from)");
    g_.set_root(root);
    g_.check();
    return std::move(g_);
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < p_ && i < src_.size(); ++i) {
      if (src_[i] == '\n')
        ++line, col = 1;
      else
        ++col;
    }
    fail("grammar: line {}, column {}: {}", line, col, what);
  }

  // Spaces, tabs and comments; line breaks too where `newlines`.
  void skip_space(bool newlines) {
    while (p_ < src_.size()) {
      const char c = src_[p_];
      if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
        ++p_;
      } else if (c == '#') {
        while (p_ < src_.size() && src_[p_] != '\n') ++p_;
      } else {
        break;
      }
    }
  }

  std::string name() {
    const size_t start = p_;
    while (p_ < src_.size() && is_name_char(src_[p_])) ++p_;
    if (p_ == start) error("expected a rule name");
    return std::string(src_.substr(start, p_ - start));
  }

  // The rule of this name, created when first referred to (it may be defined later).
  int32_t rule_named(const std::string& n) {
    int32_t r = g_.find(n);
    if (r < 0) {
      r = g_.add_rule(n);
      defined_.push_back(false);
    }
    return r;
  }

  void rule_definition() {
    const std::string n = name();
    skip_space(false);
    if (src_.compare(p_, 3, "::=") != 0) error("expected '::=' after the rule name '" + n + "'");
    p_ += 3;
    const int32_t r = rule_named(n);
    if (defined_[static_cast<size_t>(r)]) error("rule '" + n + "' is defined twice");
    defined_[static_cast<size_t>(r)] = true;
    skip_space(true);
    alternatives(r, n, 0);
    if (p_ < src_.size() && src_[p_] != '\n' && src_[p_] != '\r')
      error(fmt::format("unexpected '{}'", src_[p_]));
  }

  // Alternatives into rule r until the rule (depth 0) or the group ends.
  void alternatives(int32_t r, const std::string& n, int depth) {
    while (true) {
      g_.add_alt(r, sequence(n, depth));
      skip_space(depth > 0);
      size_t q = p_;  // a line that starts with '|' continues a top-level rule
      if (depth == 0) {
        while (q < src_.size() &&
               (src_[q] == ' ' || src_[q] == '\t' || src_[q] == '\n' || src_[q] == '\r'))
          ++q;
      }
      if (q >= src_.size() || src_[q] != '|') return;
      p_ = q + 1;
      skip_space(true);
    }
  }

  Sequence sequence(const std::string& n, int depth) {
    Sequence seq;
    while (true) {
      skip_space(depth > 0);
      if (p_ >= src_.size()) break;
      const char c = src_[p_];
      if (c == '|' || c == ')' || c == '\n' || c == '\r') break;
      Sequence item = element(n, depth);
      skip_space(depth > 0);
      item = postfix(n, std::move(item));
      seq.insert(seq.end(), item.begin(), item.end());
    }
    return seq;
  }

  // One element: a literal (its characters), a class, `.`, a rule reference or a group.
  Sequence element(const std::string& n, int depth) {
    const char c = src_[p_];
    if (c == '"') return literal();
    if (c == '[') return {char_class()};
    if (c == '.') {
      ++p_;
      return {Symbol::chars({{0, 0x10FFFF}})};
    }
    if (c == '(') {
      if (depth + 1 > g_.limits().max_depth)
        error(fmt::format("groups nest deeper than {}", g_.limits().max_depth));
      ++p_;
      skip_space(true);
      const int32_t group = g_.add_rule(n);
      defined_.push_back(true);
      alternatives(group, n, depth + 1);
      skip_space(true);
      if (p_ >= src_.size() || src_[p_] != ')') error("expected ')' to close the group");
      ++p_;
      return {Symbol::ref(group)};
    }
    if (c == '<') error("token references (<...>) are not supported");
    if (is_name_char(c)) return {Symbol::ref(rule_named(name()))};
    error(fmt::format("unexpected '{}'", c));
  }

  // `*`, `+`, `?` or `{m}`, `{m,}`, `{m,n}` after an element.
  Sequence postfix(const std::string& n, Sequence item) {
    if (p_ >= src_.size()) return item;
    uint32_t min = 0, max = Grammar::kUnbounded;
    const char c = src_[p_];
    if (c == '*') {
      ++p_;
    } else if (c == '+') {
      ++p_, min = 1;
    } else if (c == '?') {
      ++p_, max = 1;
    } else if (c == '{') {
      ++p_;
      skip_space(false);
      min = max = p_ < src_.size() && src_[p_] == ',' ? 0 : number();
      skip_space(false);
      if (p_ < src_.size() && src_[p_] == ',') {
        ++p_;
        skip_space(false);
        max = p_ < src_.size() && src_[p_] == '}' ? Grammar::kUnbounded : number();
        skip_space(false);
      }
      if (p_ >= src_.size() || src_[p_] != '}') error("expected '}' to close the repetition");
      ++p_;
    } else {
      return item;
    }
    const int32_t r = g_.add_repeat(n, item, min, max);
    while (static_cast<size_t>(r) >= defined_.size()) defined_.push_back(true);
    return {Symbol::ref(r)};
  }

  uint32_t number() {
    const size_t start = p_;
    uint64_t v = 0;
    while (p_ < src_.size() && src_[p_] >= '0' && src_[p_] <= '9') {
      v = v * 10 + static_cast<uint64_t>(src_[p_++] - '0');
      if (v > g_.limits().max_repeat)
        error(fmt::format("repetition count over {}", g_.limits().max_repeat));
    }
    if (p_ == start) error("expected a number");
    return static_cast<uint32_t>(v);
  }

  // One character of a literal or class: an escape or a UTF-8 sequence.
  uint32_t character() {
    if (p_ >= src_.size()) error("unexpected end of the grammar");
    const auto b = static_cast<unsigned char>(src_[p_]);
    if (b == '\\') return escape();
    uint32_t cp;
    if (!utf8_decode(src_, p_, cp)) error("invalid UTF-8");
    return cp;
  }

  uint32_t escape() {
    ++p_;
    if (p_ >= src_.size()) error("unexpected end of the grammar after '\\'");
    const char e = src_[p_++];
    switch (e) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case '\\':
      case '"':
      case '[':
      case ']':
      case '-':
      case '^':
        return static_cast<uint32_t>(e);
      case 'x':
        return hex(2);
      case 'u':
        return hex(4);
      case 'U':
        return hex(8);
      default:
        error(fmt::format("unknown escape '\\{}'", e));
    }
  }

  uint32_t hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      if (p_ >= src_.size()) error("expected a hexadecimal digit");
      const char c = src_[p_++];
      const int d = hex_digit(c);
      if (d < 0) error("expected a hexadecimal digit");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    if (v > 0x10FFFF) error("code point beyond U+10FFFF");
    return v;
  }

  Sequence literal() {
    ++p_;
    Sequence seq;
    while (true) {
      if (p_ >= src_.size() || src_[p_] == '\n') error("unterminated string literal");
      if (src_[p_] == '"') break;
      const uint32_t c = character();
      seq.push_back(Symbol::one(c));
    }
    ++p_;
    return seq;
  }

  Symbol char_class() {
    ++p_;
    const bool negated = p_ < src_.size() && src_[p_] == '^';
    if (negated) ++p_;
    std::vector<CharRange> ranges;
    while (true) {
      if (p_ >= src_.size() || src_[p_] == '\n') error("unterminated character class");
      if (src_[p_] == ']') break;
      const uint32_t lo = character();
      uint32_t hi = lo;
      if (p_ + 1 < src_.size() && src_[p_] == '-' && src_[p_ + 1] != ']') {
        ++p_;
        hi = character();
        if (hi < lo) error("a character range ends below its start");
      }
      ranges.push_back({lo, hi});
    }
    ++p_;
    Symbol s = Symbol::chars(std::move(ranges));
    if (!negated) return s;
    return Symbol::chars(complement(s.ranges));
  }

  std::string_view src_;
  size_t p_ = 0;
  Grammar g_;
  std::vector<bool> defined_;  // per rule: a definition (or a helper rule) was parsed
};

}  // namespace

Grammar parse_gbnf(std::string_view text, const Limits& limits) {
  return GbnfParser(text, limits).run();
}

}  // namespace brisk::grammar
