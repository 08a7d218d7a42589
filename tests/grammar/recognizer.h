// A small memoized recognizer for tests: every position where a rule can end after starting at a
// position, so a grammar's language can be checked directly. Exact for the grammars check()
// accepts (no left recursion); slow, and no part of brisk's matching.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "tokenizer/unicode.h"

namespace brisk::grammar::test {

// Every position where `rule` can end after starting at `pos`.
class Matcher {
 public:
  Matcher(const Grammar& g, const std::string& text) : g_(g), s_(utf8_to_cpts(text)) {}
  bool accepts() { return ends(g_.root(), 0).count(s_.size()) > 0; }

 private:
  const std::set<size_t>& ends(int32_t rule, size_t pos) {
    const auto key = std::make_pair(rule, pos);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    std::set<size_t> out;
    for (const Sequence& alt : g_.rule(rule).alts) {
      std::set<size_t> at = {pos};
      for (const Symbol& sym : alt) {
        std::set<size_t> next;
        for (size_t p : at) {
          if (sym.kind == Symbol::Kind::Rule) {
            const auto& e = ends(sym.rule, p);
            next.insert(e.begin(), e.end());
          } else if (p < s_.size()) {
            for (const CharRange& r : sym.ranges)
              if (s_[p] >= r.lo && s_[p] <= r.hi) next.insert(p + 1);
          }
        }
        at = std::move(next);
      }
      out.insert(at.begin(), at.end());
    }
    return memo_[key] = out;
  }

  const Grammar& g_;
  std::vector<uint32_t> s_;
  std::map<std::pair<int32_t, size_t>, std::set<size_t>> memo_;
};

inline bool accepts(const Grammar& g, const std::string& text) {
  return Matcher(g, text).accepts();
}

}  // namespace brisk::grammar::test
