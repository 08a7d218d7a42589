// A context-free grammar over Unicode code points: the one form every constraint (a JSON Schema, a
// regular expression, a choice among strings, llama.cpp's GBNF) is compiled to before decoding is
// matched against it. Rules are alternatives of sequences of symbols; a symbol is a set of code
// points or another rule. Repetition and grouping are lowered into rules of their own, so what
// matches the grammar sees is plain BNF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace brisk::grammar {

struct CharRange {
  uint32_t lo, hi;  // inclusive
  bool operator==(const CharRange&) const = default;
  auto operator<=>(const CharRange&) const = default;
};

struct Symbol {
  enum class Kind : uint8_t { Chars, Rule };
  Kind kind = Kind::Chars;
  std::vector<CharRange> ranges;  // Chars: sorted, disjoint, not adjacent, not empty
  int32_t rule = -1;              // Rule: its index

  static Symbol chars(std::vector<CharRange> ranges);  // normalized: sorted and merged
  static Symbol one(uint32_t c) { return chars({{c, c}}); }
  static Symbol ref(int32_t rule);
  bool operator==(const Symbol&) const = default;
};

// Every code point (0..U+10FFFF) that none of the sorted, disjoint ranges holds.
std::vector<CharRange> complement(const std::vector<CharRange>& sorted);
// A hexadecimal digit's value, or -1 (for the escapes of GBNF and regular expressions alike).
int hex_digit(char c);

using Sequence = std::vector<Symbol>;  // empty: the empty string

struct Rule {
  std::string name;
  std::vector<Sequence> alts;
  // Set by a builder that knows it: every string of plain characters (token_trie.h's: no control,
  // quote or backslash) begins some text the rule matches. Masks then take the plain tokens after
  // a character that leads into it whole, without proving it by stepping (token_masks.h).
  bool open = false;
};

// Bounds on what compiling an untrusted grammar may build; past one, compiling fails with an error
// that names it instead of growing.
struct Limits {
  size_t max_rules = size_t{1} << 16;
  size_t max_symbols = size_t{1} << 20;  // in all alternatives of all rules
  int max_depth = 128;                   // nesting of groups
  uint32_t max_repeat = 10000;           // {m,n} bounds
};

class Grammar {
 public:
  explicit Grammar(const Limits& limits = {}) : limits_(limits) {}

  // A new rule, empty until alternatives are added; its name need not be unique (helper rules of
  // repetitions are named after their rule).
  int32_t add_rule(std::string name);
  void add_alt(int32_t rule, Sequence seq);
  void set_open(int32_t rule) { rules_[static_cast<size_t>(rule)].open = true; }
  // The index of the rule with this name, or -1.
  int32_t find(std::string_view name) const;

  // Copies every rule of `other` into this grammar and returns the index its root now has.
  int32_t add_grammar(const Grammar& other);

  // Lowered repetitions: a rule matching `body` (an alternative list) between min and max times
  // (max = kUnbounded: no upper bound).
  static constexpr uint32_t kUnbounded = UINT32_MAX;
  int32_t add_repeat(const std::string& name, const Sequence& body, uint32_t min, uint32_t max);

  // Replaces each character class in the rules from `first` on (those present now) by the symbol
  // f gives for it; f may add rules.
  void map_chars(int32_t first, const std::function<Symbol(const std::vector<CharRange>&)>& f);

  // Checks that the root is set, every referenced rule exists and has an alternative, and that no
  // rule can reach itself without consuming a character (left recursion); throws naming the rule.
  void check() const;

  const std::vector<Rule>& rules() const { return rules_; }
  const Rule& rule(int32_t i) const { return rules_[static_cast<size_t>(i)]; }
  int32_t root() const { return root_; }
  void set_root(int32_t r) { root_ = r; }
  size_t n_symbols() const { return n_symbols_; }
  const Limits& limits() const { return limits_; }
  // Whether a rule can match the empty string, per rule.
  std::vector<bool> nullable() const;

  // The grammar in GBNF (helper rules included), for errors, tests and `brisk grammar`.
  std::string to_gbnf() const;

 private:
  const std::string& rule_name(int32_t rule) const;

  Limits limits_;
  std::vector<Rule> rules_;
  int32_t root_ = -1;
  size_t n_symbols_ = 0;
};

// llama.cpp's GBNF: `name ::= alternatives` rules (root is `root`), string literals, character
// classes ([a-z], [^"\\]), `.`, groups, `|`, `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` and `#`
// comments. An error names the line and column and what was expected there.
Grammar parse_gbnf(std::string_view text, const Limits& limits = {});

// An ECMAScript regular expression (JSON Schema's `pattern`, vLLM's guided_regex) as a rule of g
// that matches exactly the texts the whole pattern matches. What is not a regular language
// (backreferences, lookaround, word boundaries, anchors inside the pattern) or needs flags is
// refused with an error that names it.
int32_t add_regex(Grammar& g, std::string_view pattern, const std::string& name);
// The texts that contain a match somewhere (JSON Schema's `pattern` semantics): an alternative not
// anchored by ^ or $ may have any text before or after it.
int32_t add_regex_search(Grammar& g, std::string_view pattern, const std::string& name);
// The same as a grammar of its own, checked.
Grammar parse_regex(std::string_view pattern, const Limits& limits = {});

}  // namespace brisk::grammar
