#include "grammar/grammar.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"

namespace brisk::grammar {

Symbol Symbol::chars(std::vector<CharRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const CharRange& a, const CharRange& b) { return a.lo < b.lo; });
  std::vector<CharRange> merged;
  for (const CharRange& r : ranges) {
    if (r.lo > r.hi) continue;
    if (!merged.empty() && r.lo <= merged.back().hi + 1)
      merged.back().hi = std::max(merged.back().hi, r.hi);
    else
      merged.push_back(r);
  }
  Symbol s;
  s.ranges = std::move(merged);
  return s;
}

std::vector<CharRange> complement(const std::vector<CharRange>& sorted) {
  std::vector<CharRange> out;
  uint32_t next = 0;
  for (const CharRange& r : sorted) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= 0x10FFFF) out.push_back({next, 0x10FFFF});
  return out;
}

int hex_digit(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

Symbol Symbol::ref(int32_t rule) {
  Symbol s;
  s.kind = Kind::Rule;
  s.rule = rule;
  return s;
}

int32_t Grammar::add_rule(std::string name) {
  if (rules_.size() >= limits_.max_rules)
    fail("grammar: more than {} rules (the limit)", limits_.max_rules);
  rules_.push_back({std::move(name), {}});
  return static_cast<int32_t>(rules_.size() - 1);
}

void Grammar::add_alt(int32_t rule, Sequence seq) {
  n_symbols_ += seq.size();
  if (n_symbols_ > limits_.max_symbols)
    fail("grammar: more than {} symbols (the limit; a large repetition count or enum?)",
         limits_.max_symbols);
  for (const Symbol& s : seq)
    if (s.kind == Symbol::Kind::Chars && s.ranges.empty())
      fail("grammar: rule '{}' has a character class that matches nothing", rule_name(rule));
  rules_[static_cast<size_t>(rule)].alts.push_back(std::move(seq));
}

const std::string& Grammar::rule_name(int32_t rule) const {
  return rules_[static_cast<size_t>(rule)].name;
}

int32_t Grammar::find(std::string_view name) const {
  for (size_t i = 0; i < rules_.size(); ++i)
    if (rules_[i].name == name) return static_cast<int32_t>(i);
  return -1;
}

int32_t Grammar::add_grammar(const Grammar& other) {
  const auto offset = static_cast<int32_t>(rules_.size());
  for (const Rule& r : other.rules()) {
    const int32_t copy = add_rule(r.name);
    if (r.open) set_open(copy);
    for (Sequence alt : r.alts) {
      for (Symbol& s : alt)
        if (s.kind == Symbol::Kind::Rule) s.rule += offset;
      add_alt(copy, std::move(alt));
    }
  }
  return other.root() + offset;
}

int32_t Grammar::add_repeat(const std::string& name, const Sequence& body, uint32_t min,
                            uint32_t max) {
  if (max != kUnbounded && max < min)
    fail("grammar: rule '{}' repeats {{{},{}}}: the maximum is below the minimum", name, min, max);
  if (min > limits_.max_repeat || (max != kUnbounded && max > limits_.max_repeat))
    fail("grammar: rule '{}' repeats up to {} times (at most {})", name,
         max == kUnbounded ? min : max, limits_.max_repeat);
  // The optional tail: x* as S ::= x S | ε, or at most k more as O_k ::= x O_(k-1) | ε.
  int32_t tail = -1;
  if (max == kUnbounded) {
    tail = add_rule(name + "-star");
    Sequence loop = body;
    loop.push_back(Symbol::ref(tail));
    add_alt(tail, std::move(loop));
    add_alt(tail, {});
  } else {
    for (uint32_t k = 0; k < max - min; ++k) {
      const int32_t opt = add_rule(name + "-opt");
      Sequence more = body;
      if (tail >= 0) more.push_back(Symbol::ref(tail));
      add_alt(opt, std::move(more));
      add_alt(opt, {});
      tail = opt;
    }
  }
  const int32_t r = add_rule(name + "-rep");
  Sequence seq;
  for (uint32_t i = 0; i < min; ++i) {
    if (seq.size() + body.size() > limits_.max_symbols)
      fail("grammar: more than {} symbols (the limit; a large repetition count?)",
           limits_.max_symbols);
    seq.insert(seq.end(), body.begin(), body.end());
  }
  if (tail >= 0) seq.push_back(Symbol::ref(tail));
  add_alt(r, std::move(seq));
  return r;
}

void Grammar::map_chars(int32_t first,
                        const std::function<Symbol(const std::vector<CharRange>&)>& f) {
  const size_t end = rules_.size();
  for (size_t r = static_cast<size_t>(first); r < end; ++r)
    for (size_t a = 0; a < rules_[r].alts.size(); ++a)
      for (size_t k = 0; k < rules_[r].alts[a].size(); ++k) {
        if (rules_[r].alts[a][k].kind != Symbol::Kind::Chars) continue;
        const std::vector<CharRange> ranges = rules_[r].alts[a][k].ranges;
        Symbol s = f(ranges);  // may add rules, so rules_ is indexed afresh
        rules_[r].alts[a][k] = std::move(s);
      }
}

std::vector<bool> Grammar::nullable() const {
  std::vector<bool> n(rules_.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < rules_.size(); ++r) {
      if (n[r]) continue;
      for (const Sequence& alt : rules_[r].alts)
        if (std::all_of(alt.begin(), alt.end(), [&](const Symbol& s) {
              return s.kind == Symbol::Kind::Rule && n[static_cast<size_t>(s.rule)];
            })) {
          n[r] = changed = true;
          break;
        }
    }
  }
  return n;
}

void Grammar::check() const {
  if (root_ < 0) fail("grammar: no root rule");
  // A rule without alternatives is an error where something refers to it (a rule left empty by
  // whoever built the grammar and never used is harmless).
  std::vector<bool> used(rules_.size(), false);
  used[static_cast<size_t>(root_)] = true;
  for (const Rule& r : rules_)
    for (const Sequence& alt : r.alts)
      for (const Symbol& s : alt)
        if (s.kind == Symbol::Kind::Rule && s.rule >= 0 &&
            static_cast<size_t>(s.rule) < rules_.size())
          used[static_cast<size_t>(s.rule)] = true;
  for (size_t i = 0; i < rules_.size(); ++i) {
    const Rule& r = rules_[i];
    if (r.alts.empty() && used[i]) fail("grammar: rule '{}' is used but never defined", r.name);
    for (const Sequence& alt : r.alts)
      for (const Symbol& s : alt)
        if (s.kind == Symbol::Kind::Rule &&
            (s.rule < 0 || static_cast<size_t>(s.rule) >= rules_.size()))
          fail("grammar: rule '{}' refers to a rule that does not exist", r.name);
  }
  // Left recursion: a rule that reaches itself through symbols that may all be empty. Edges
  // A -> B where B follows only nullable rules in one of A's alternatives; a cycle is refused.
  const std::vector<bool> eps = nullable();
  std::vector<std::vector<int32_t>> edges(rules_.size());
  for (size_t a = 0; a < rules_.size(); ++a)
    for (const Sequence& alt : rules_[a].alts)
      for (const Symbol& s : alt) {
        if (s.kind != Symbol::Kind::Rule) break;
        edges[a].push_back(s.rule);
        if (!eps[static_cast<size_t>(s.rule)]) break;
      }
  // Iterative depth-first search: 0 unseen, 1 on the path, 2 done.
  std::vector<uint8_t> state(rules_.size(), 0);
  for (size_t start = 0; start < rules_.size(); ++start) {
    if (state[start]) continue;
    std::vector<std::pair<int32_t, size_t>> stack = {{static_cast<int32_t>(start), 0}};
    state[start] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const auto& out = edges[static_cast<size_t>(node)];
      if (next == out.size()) {
        state[static_cast<size_t>(node)] = 2;
        stack.pop_back();
        continue;
      }
      const int32_t m = out[next++];
      if (state[static_cast<size_t>(m)] == 1)
        fail(
            "grammar: rule '{}' can reach itself without matching a character (left recursion, "
            "or a repeated part that may be empty); rewrite it to consume something first",
            rules_[static_cast<size_t>(m)].name);
      if (state[static_cast<size_t>(m)] == 0) {
        state[static_cast<size_t>(m)] = 1;
        stack.push_back({m, 0});
      }
    }
  }
}

namespace {

std::string escape_char(uint32_t c, bool in_class) {
  if (c == '"' && !in_class) return "\\\"";
  if (c == '\\') return "\\\\";
  if (in_class && (c == ']' || c == '[' || c == '^' || c == '-'))
    return "\\" + std::string(1, char(c));
  if (c == '\n') return "\\n";
  if (c == '\r') return "\\r";
  if (c == '\t') return "\\t";
  if (c < 0x20 || c == 0x7f) return fmt::format("\\x{:02X}", c);
  if (c < 0x80) return std::string(1, static_cast<char>(c));
  return c <= 0xFFFF ? fmt::format("\\u{:04X}", c) : fmt::format("\\U{:08X}", c);
}

// Each rule's name in the printed grammar: "root" for the root, its own name where that is unique,
// else the name with the rule's index (and more indexes until no two rules print alike).
std::vector<std::string> display_names(const Grammar& g) {
  const auto& rules = g.rules();
  std::map<std::string, int> count;
  for (const Rule& r : rules) ++count[r.name];
  std::vector<std::string> names;
  std::set<std::string> taken = {"root"};
  for (size_t i = 0; i < rules.size(); ++i) {
    if (static_cast<int32_t>(i) == g.root()) {
      names.push_back("root");
      continue;
    }
    std::string n = rules[i].name;
    if (count[n] > 1 || n == "root") n += "-" + std::to_string(i);
    while (!taken.insert(n).second) n += "-" + std::to_string(i);
    names.push_back(n);
  }
  return names;
}

std::string symbol_gbnf(const std::vector<std::string>& names, const Symbol& s) {
  if (s.kind == Symbol::Kind::Rule) return names[static_cast<size_t>(s.rule)];
  if (s.ranges.size() == 1 && s.ranges[0].lo == s.ranges[0].hi)
    return "\"" + escape_char(s.ranges[0].lo, false) + "\"";
  std::string out = "[";
  for (const CharRange& r : s.ranges) {
    out += escape_char(r.lo, true);
    if (r.hi != r.lo) out += "-" + escape_char(r.hi, true);
  }
  return out + "]";
}

}  // namespace

std::string Grammar::to_gbnf() const {
  const std::vector<std::string> names = display_names(*this);
  std::string out;
  for (size_t i = 0; i < rules_.size(); ++i) {
    out += names[i] + " ::=";
    const Rule& r = rules_[i];
    for (size_t a = 0; a < r.alts.size(); ++a) {
      if (a) out += " |";
      if (r.alts[a].empty()) out += " \"\"";
      for (const Symbol& s : r.alts[a]) out += " " + symbol_gbnf(names, s);
    }
    out += "\n";
  }
  return out;
}

}  // namespace brisk::grammar
