// Regular expressions (the ECMAScript syntax JSON Schema's `pattern` and vLLM's guided_regex use)
// compiled into grammar rules that match the whole text. Everything a regular language needs is
// there: alternation, groups (capturing, non-capturing and named), classes with ranges, negation
// and the \d \w \s escapes, `.`, and every quantifier (a lazy one matches the same strings).
// What is not a regular language, or not one text at a time, is refused by name: backreferences,
// lookaround, word boundaries, anchors inside the pattern, and flags.
#include <fmt/format.h>

#include "core/error.h"
#include "core/utf8.h"
#include "grammar/grammar.h"

namespace brisk::grammar {
namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

const std::vector<CharRange>& digit_ranges() {
  static const std::vector<CharRange> r = {{'0', '9'}};
  return r;
}
const std::vector<CharRange>& word_ranges() {
  static const std::vector<CharRange> r = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
  return r;
}
// ECMAScript's white space and line terminators.
const std::vector<CharRange>& space_ranges() {
  static const std::vector<CharRange> r = {
      {'\t', '\r'},     {' ', ' '},       {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
      {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
  return r;
}

class RegexParser {
 public:
  RegexParser(Grammar& g, std::string_view src, std::string name, bool search)
      : g_(g), src_(src), name_(std::move(name)), search_(search) {}

  int32_t run() {
    const int32_t r = alternation(0);
    if (p_ < src_.size()) error(fmt::format("unexpected '{}'", src_[p_]));
    return r;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    fail("regex: at offset {} of /{}/: {}", p_, std::string(src_.substr(0, 200)), what);
  }
  bool at(char c) const { return p_ < src_.size() && src_[p_] == c; }

  // Alternatives into a rule of their own.
  int32_t alternation(int depth) {
    if (depth > g_.limits().max_depth)
      error(fmt::format("groups nest deeper than {}", g_.limits().max_depth));
    const int32_t r = g_.add_rule(name_);
    while (true) {
      g_.add_alt(r, sequence(depth));
      if (!at('|')) return r;
      ++p_;
    }
  }

  Sequence sequence(int depth) {
    Sequence seq;
    bool starts = false, ends = false;  // anchored
    while (p_ < src_.size() && !at('|') && !at(')')) {
      // ^ and $ where they only say "the whole text": at an alternative's start and end.
      if (at('^') && seq.empty() && depth == 0) {
        ++p_;
        starts = true;
        continue;
      }
      if (at('$') && depth == 0 && (p_ + 1 == src_.size() || src_[p_ + 1] == '|')) {
        ++p_;
        ends = true;
        continue;
      }
      Sequence item = atom(depth);
      item = quantified(std::move(item));
      seq.insert(seq.end(), item.begin(), item.end());
    }
    // A search matches anywhere: an alternative not anchored there may have anything around it.
    if (search_ && depth == 0) {
      if (any_ < 0)
        any_ =
            g_.add_repeat(name_ + "-any", {Symbol::chars({{0, 0x10FFFF}})}, 0, Grammar::kUnbounded);
      if (!starts) seq.insert(seq.begin(), Symbol::ref(any_));
      if (!ends) seq.push_back(Symbol::ref(any_));
    }
    return seq;
  }

  Sequence atom(int depth) {
    const char c = src_[p_];
    if (c == '(') return group(depth);
    if (c == '[') return {char_class()};
    if (c == '.') {
      ++p_;
      return {Symbol::chars(complement({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}))};
    }
    if (c == '\\') return {escape(false)};
    if (c == '^' || c == '$')
      error("anchors are only supported at the start and end of the pattern");
    if (c == '*' || c == '+' || c == '?') error("nothing to repeat");
    if (c == '{' && quantifier_at(p_)) error("nothing to repeat");
    const uint32_t cp = code_point();
    return {Symbol::one(cp)};
  }

  Sequence group(int depth) {
    ++p_;
    if (at('?')) {
      ++p_;
      if (at(':')) {
        ++p_;
      } else if (at('<') && p_ + 1 < src_.size() && src_[p_ + 1] != '=' && src_[p_ + 1] != '!') {
        while (p_ < src_.size() && src_[p_] != '>') ++p_;  // a named group
        if (!at('>')) error("unterminated group name");
        ++p_;
      } else if (at('=') || at('!') || at('<')) {
        error("lookaround assertions are not supported");
      } else {
        error("inline flags and other (?...) groups are not supported");
      }
    }
    const int32_t r = alternation(depth + 1);
    if (!at(')')) error("missing ')'");
    ++p_;
    return {Symbol::ref(r)};
  }

  // Whether a quantifier {m}, {m,} or {m,n} starts at i (otherwise '{' is a literal brace).
  bool quantifier_at(size_t i) const {
    if (i >= src_.size() || src_[i] != '{') return false;
    size_t j = i + 1;
    const size_t digits = j;
    while (j < src_.size() && src_[j] >= '0' && src_[j] <= '9') ++j;
    if (j == digits) return false;
    if (j < src_.size() && src_[j] == ',') {
      ++j;
      while (j < src_.size() && src_[j] >= '0' && src_[j] <= '9') ++j;
    }
    return j < src_.size() && src_[j] == '}';
  }

  uint32_t bound() {
    uint64_t v = 0;
    while (p_ < src_.size() && src_[p_] >= '0' && src_[p_] <= '9') {
      v = v * 10 + static_cast<uint64_t>(src_[p_++] - '0');
      if (v > g_.limits().max_repeat)
        error(fmt::format("repetition count over {}", g_.limits().max_repeat));
    }
    return static_cast<uint32_t>(v);
  }

  Sequence quantified(Sequence item) {
    uint32_t min = 0, max = Grammar::kUnbounded;
    if (at('*')) {
      ++p_;
    } else if (at('+')) {
      ++p_, min = 1;
    } else if (at('?')) {
      ++p_, max = 1;
    } else if (quantifier_at(p_)) {
      ++p_;
      min = max = bound();
      if (at(',')) {
        ++p_;
        max = at('}') ? Grammar::kUnbounded : bound();
      }
      ++p_;  // '}'
    } else {
      return item;
    }
    if (at('?')) ++p_;  // lazy: the same strings match
    if (at('+')) error("possessive quantifiers are not supported");
    if (at('*') || at('+') || at('?') || quantifier_at(p_)) error("nothing to repeat");
    return {Symbol::ref(g_.add_repeat(name_, item, min, max))};
  }

  uint32_t code_point() {
    uint32_t cp;
    if (!utf8_decode(src_, p_, cp)) error("invalid UTF-8");
    return cp;
  }

  uint32_t hex(size_t digits) {
    if (p_ + digits > src_.size()) error("expected hexadecimal digits");
    uint32_t v = 0;
    for (size_t i = 0; i < digits; ++i) {
      const char c = src_[p_++];
      const int d = hex_digit(c);
      if (d < 0) error("expected a hexadecimal digit");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  }

  // After a backslash: a class escape (\d \w \s and their complements) or one character. In a
  // class, \b is a backspace; outside it a word boundary, which is refused.
  Symbol escape(bool in_class) {
    ++p_;
    if (p_ >= src_.size()) error("a pattern may not end with '\\'");
    const char e = src_[p_++];
    switch (e) {
      case 'd':
        return Symbol::chars(digit_ranges());
      case 'D':
        return Symbol::chars(complement(digit_ranges()));
      case 'w':
        return Symbol::chars(word_ranges());
      case 'W':
        return Symbol::chars(complement(word_ranges()));
      case 's':
        return Symbol::chars(space_ranges());
      case 'S':
        return Symbol::chars(complement(space_ranges()));
      default:
        break;
    }
    uint32_t cp = static_cast<unsigned char>(e);
    switch (e) {
      case 'n':
        cp = '\n';
        break;
      case 'r':
        cp = '\r';
        break;
      case 't':
        cp = '\t';
        break;
      case 'f':
        cp = '\f';
        break;
      case 'v':
        cp = '\v';
        break;
      case '0':
        cp = 0;
        break;
      case 'x':
        cp = hex(2);
        break;
      case 'u':
        if (at('{')) {
          ++p_;
          const size_t start = p_;
          while (p_ < src_.size() && src_[p_] != '}') ++p_;
          if (!at('}') || p_ == start || p_ - start > 6) error("invalid \\u{...} escape");
          const size_t n = p_ - start;
          p_ = start;
          cp = hex(n);
          ++p_;  // '}'
          if (cp > kMaxCodePoint) error("code point beyond U+10FFFF");
        } else {
          cp = hex(4);
        }
        break;
      case 'b':
        if (!in_class) error("word boundaries (\\b) are not supported");
        cp = '\b';
        break;
      case 'B':
        error("word boundaries (\\B) are not supported");
      case 'c':
        error("control escapes (\\c) are not supported");
      case 'k':
        error("backreferences are not supported");
      default:
        if (e >= '1' && e <= '9') error("backreferences are not supported");
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z'))
          error(fmt::format("unknown escape '\\{}'", e));
        if (static_cast<unsigned char>(e) >= 0x80) {
          --p_;
          cp = code_point();
        }
    }
    return Symbol::one(cp);
  }

  Symbol char_class() {
    ++p_;
    const bool negated = at('^');
    if (negated) ++p_;
    std::vector<CharRange> ranges;
    while (true) {
      if (p_ >= src_.size()) error("missing ']'");
      if (at(']')) break;
      const Symbol lo = class_item();
      if (at('-') && p_ + 1 < src_.size() && src_[p_ + 1] != ']') {
        ++p_;
        const Symbol hi = class_item();
        if (lo.ranges.size() != 1 || hi.ranges.size() != 1 || lo.ranges[0].lo != lo.ranges[0].hi ||
            hi.ranges[0].lo != hi.ranges[0].hi)
          error("a class escape cannot bound a range");
        if (hi.ranges[0].lo < lo.ranges[0].lo) error("a character range ends below its start");
        ranges.push_back({lo.ranges[0].lo, hi.ranges[0].lo});
      } else {
        ranges.insert(ranges.end(), lo.ranges.begin(), lo.ranges.end());
      }
    }
    ++p_;
    Symbol s = Symbol::chars(std::move(ranges));
    if (negated) s = Symbol::chars(complement(s.ranges));  // [^] is any character
    if (s.ranges.empty()) error("a character class that matches nothing");
    return s;
  }

  Symbol class_item() {
    if (at('\\')) return escape(true);
    const uint32_t cp = code_point();
    return Symbol::one(cp);
  }

  Grammar& g_;
  std::string_view src_;
  std::string name_;
  bool search_;
  int32_t any_ = -1;
  size_t p_ = 0;
};

}  // namespace

int32_t add_regex(Grammar& g, std::string_view pattern, const std::string& name) {
  return RegexParser(g, pattern, name, false).run();
}

int32_t add_regex_search(Grammar& g, std::string_view pattern, const std::string& name) {
  return RegexParser(g, pattern, name, true).run();
}

Grammar parse_regex(std::string_view pattern, const Limits& limits) {
  Grammar g(limits);
  g.set_root(add_regex(g, pattern, "regex"));
  g.check();
  return g;
}

}  // namespace brisk::grammar
