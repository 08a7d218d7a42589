#include "grammar/pattern_keys.h"

#include <map>
#include <optional>

#include "core/error.h"
#include "grammar/dfa.h"
#include "tokenizer/unicode.h"

namespace brisk::grammar {
namespace {

constexpr size_t kMaxPatterns = 61;  // with the markers of names, of any key and of allowed, 64
constexpr size_t kMaxRules = 16384;

// The keys' language: each pattern's then its marker, each name then the names' marker, any
// string then the next marker (so that every key reaches a state), and the allowed names then
// the last.
Grammar keys_language(const std::vector<std::string>& patterns,
                      const std::vector<std::string>& names, const Grammar* allowed) {
  const uint32_t n = static_cast<uint32_t>(patterns.size());
  Grammar lang;
  const int32_t root = lang.add_rule("keys");
  for (uint32_t i = 0; i < n; ++i)
    lang.add_alt(root, {Symbol::ref(add_regex_search(lang, patterns[i], "pattern")),
                        Symbol::one(Dfa::kMarker + i)});
  for (const std::string& name : names) {
    Sequence seq;
    for (uint32_t c : utf8_to_cpts(name)) seq.push_back(Symbol::one(c));
    seq.push_back(Symbol::one(Dfa::kMarker + n));
    lang.add_alt(root, std::move(seq));
  }
  const int32_t any = lang.add_rule("any");
  lang.add_alt(any, {Symbol::chars({{0, 0x10FFFF}}), Symbol::ref(any)});
  lang.add_alt(any, {});
  lang.add_alt(root, {Symbol::ref(any), Symbol::one(Dfa::kMarker + n + 1)});
  if (allowed)
    lang.add_alt(root,
                 {Symbol::ref(lang.add_grammar(*allowed)), Symbol::one(Dfa::kMarker + n + 2)});
  lang.set_root(root);
  return lang;
}

// The rule of the keys whose state ends with `want` (the patterns matched), from the states that
// can reach such an end; -1 when the start cannot.
int32_t keys_of(Grammar& g, const Dfa& d, const std::vector<std::optional<uint64_t>>& matched,
                uint64_t want, size_t& budget) {
  const size_t n = d.moves.size();
  std::vector<bool> goal(n);
  for (size_t s = 0; s < n; ++s) goal[s] = matched[s] == want;
  const std::vector<bool> alive = reaching(targets(d), goal);
  if (!alive[0]) return -1;
  std::vector<int32_t> rule(n, -1);
  for (size_t s = 0; s < n; ++s) {
    if (!alive[s]) continue;
    if (budget-- == 0)
      fail("patternProperties need more than {} rules to tell their keys apart (the limit)",
           kMaxRules);
    rule[s] = g.add_rule("pattern-key");
  }
  for (size_t s = 0; s < n; ++s) {
    if (!alive[s]) continue;
    for (const auto& [t, chars] : d.moves[s])
      if (alive[size_t(t)])
        g.add_alt(rule[s], {Symbol::chars(chars), Symbol::ref(rule[size_t(t)])});
    if (matched[s] == want) g.add_alt(rule[s], {});
  }
  return rule[0];
}

}  // namespace

std::vector<PatternKeys> add_pattern_keys(Grammar& g, const std::vector<std::string>& patterns,
                                          const std::vector<std::string>& names,
                                          const Grammar* allowed) {
  const size_t n = patterns.size();
  if (n > kMaxPatterns) fail("more than {} patternProperties (the limit)", kMaxPatterns);
  const Dfa d = determinize(keys_language(patterns, names, allowed), n + (allowed ? 3 : 2));
  // Per state: the patterns a key ending there matches; none for a declared name or one that
  // propertyNames refuses.
  std::vector<std::optional<uint64_t>> matched(d.moves.size());
  std::map<uint64_t, bool> sets;
  for (size_t s = 0; s < d.moves.size(); ++s) {
    const uint64_t m = d.markers[s];
    if (((m >> n) & 1) || (allowed && !((m >> (n + 2)) & 1))) continue;
    matched[s] = m & ((uint64_t{1} << n) - 1);
    sets[*matched[s]] = true;
  }
  std::vector<PatternKeys> out;
  size_t budget = kMaxRules;
  for (const auto& [want, unused] : sets) {
    const int32_t rule = keys_of(g, d, matched, want, budget);
    if (rule < 0) continue;
    PatternKeys k{{}, rule};
    for (size_t i = 0; i < n; ++i)
      if ((want >> i) & 1) k.patterns.push_back(i);
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace brisk::grammar
