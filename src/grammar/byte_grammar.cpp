#include "grammar/byte_grammar.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/error.h"

namespace brisk::grammar {
namespace {

// Splits [lo, hi] until each piece encodes as a product of byte ranges of one length.
void split_range(uint32_t lo, uint32_t hi, std::vector<ByteSeq>& out) {
  static constexpr uint32_t kLast[] = {0x7F, 0x7FF, 0xFFFF};
  for (uint32_t last : kLast)
    if (lo <= last && hi > last) {
      split_range(lo, last, out);
      split_range(last + 1, hi, out);
      return;
    }
  if (hi <= 0x7F) {
    out.push_back({{static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)}});
    return;
  }
  for (int i = 1; i < 4; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) == (hi & ~m)) continue;
    if ((lo & m) != 0) {
      split_range(lo, lo | m, out);
      split_range((lo | m) + 1, hi, out);
      return;
    }
    if ((hi & m) != m) {
      split_range(lo, (hi & ~m) - 1, out);
      split_range(hi & ~m, hi, out);
      return;
    }
  }
  auto encode = [](uint32_t c, uint8_t* b) {
    if (c < 0x800) {
      b[0] = static_cast<uint8_t>(0xC0 | (c >> 6));
      b[1] = static_cast<uint8_t>(0x80 | (c & 0x3F));
      return 2;
    }
    if (c < 0x10000) {
      b[0] = static_cast<uint8_t>(0xE0 | (c >> 12));
      b[1] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
      b[2] = static_cast<uint8_t>(0x80 | (c & 0x3F));
      return 3;
    }
    b[0] = static_cast<uint8_t>(0xF0 | (c >> 18));
    b[1] = static_cast<uint8_t>(0x80 | ((c >> 12) & 0x3F));
    b[2] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
    b[3] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    return 4;
  };
  uint8_t a[4], b[4];
  const int n = encode(lo, a);
  encode(hi, b);
  ByteSeq seq;
  for (int k = 0; k < n; ++k) seq.push_back({a[k], b[k]});
  out.push_back(std::move(seq));
}

// The intermediate form: rules of alternatives of items, an item a byte class or a rule.
struct Item {
  bool ref;
  int32_t v;
  bool operator==(const Item&) const = default;
  auto operator<=>(const Item&) const = default;
};
using Alt = std::vector<Item>;
struct IRule {
  std::string name;
  std::vector<Alt> alts;
  bool open = false;
};

// Inlining bounds: a rule is inlined only when it is this small, and an alternative it is
// inlined into grows into at most kMaxProduct alternatives.
constexpr size_t kMaxInlineAlts = 32, kMaxInlineItems = 256, kMaxProduct = 64;

class Lowering {
 public:
  explicit Lowering(const Grammar& g) : g_(g) {}

  ByteGrammar run() {
    translate();
    inline_leaves();
    factor_prefixes();
    return flatten();
  }

 private:
  int32_t class_of(const ByteSet& s) {
    auto [it, fresh] = class_ids_.try_emplace(s.w, static_cast<int32_t>(classes_.size()));
    if (fresh) classes_.push_back(s);
    return it->second;
  }
  static ByteSet range_set(uint8_t lo, uint8_t hi) {
    ByteSet s;
    s.add_range(lo, hi);
    return s;
  }

  // A set of code points as one item: a byte class when every code point is one byte, else a
  // helper rule of its encodings (one per use, so each has a single caller; see stacks.h).
  // Its encodings are worked out once per distinct set (a large grammar repeats a few sets).
  Item chars_item(const std::vector<CharRange>& ranges) {
    auto [it, fresh] = encodings_.try_emplace(ranges);
    std::vector<Alt>& alts = it->second;
    if (fresh) {
      const std::vector<ByteSeq> seqs = utf8_sequences(ranges);
      if (seqs.empty())
        fail("grammar: a character class holds only surrogates, which UTF-8 cannot");
      ByteSet single;
      bool any_single = false;
      for (const ByteSeq& s : seqs) {
        if (s.size() == 1) {
          single.add_range(s[0].first, s[0].second);
          any_single = true;
          continue;
        }
        Alt a;
        for (auto [lo, hi] : s) a.push_back({false, class_of(range_set(lo, hi))});
        alts.push_back(std::move(a));
      }
      if (any_single) alts.insert(alts.begin(), Alt{{false, class_of(single)}});
    }
    if (alts.size() == 1 && alts[0].size() == 1) return alts[0][0];
    rules_.push_back({"utf8", alts, false});
    return {true, static_cast<int32_t>(rules_.size() - 1)};
  }

  // The rules the root reaches, renumbered, with their symbols as items.
  void translate() {
    std::vector<int32_t> id(g_.rules().size(), -1);
    std::vector<int32_t> order = {g_.root()};
    id[static_cast<size_t>(g_.root())] = 0;
    for (size_t i = 0; i < order.size(); ++i)
      for (const Sequence& alt : g_.rule(order[i]).alts)
        for (const Symbol& s : alt)
          if (s.kind == Symbol::Kind::Rule && id[static_cast<size_t>(s.rule)] < 0) {
            id[static_cast<size_t>(s.rule)] = static_cast<int32_t>(order.size());
            order.push_back(s.rule);
          }
    rules_.resize(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      const Rule& r = g_.rule(order[i]);
      rules_[i].name = r.name;
      rules_[i].open = r.open;
      for (const Sequence& seq : r.alts) {
        Alt a;
        for (const Symbol& s : seq)
          a.push_back(s.kind == Symbol::Kind::Rule ? Item{true, id[static_cast<size_t>(s.rule)]}
                                                   : chars_item(s.ranges));
        rules_[i].alts.push_back(std::move(a));
      }
    }
  }

  // Inlining must not make the grammar ambiguous: a rule is inlined only when its alternatives
  // start with disjoint bytes (and none is empty), so exactly one survives the first byte. (A
  // bounded repetition's tail, x{0,3} as xxx | xx | x | "", would leave several alive for as
  // long as x repeats, and the stacks above them multiply.)
  bool inlinable(int32_t r) const {
    const IRule& rule = rules_[static_cast<size_t>(r)];
    if (!leaf_[static_cast<size_t>(r)] || rule.alts.size() > kMaxInlineAlts) return false;
    size_t items = 0;
    ByteSet firsts;
    for (const Alt& a : rule.alts) {
      if (a.empty()) return false;
      const ByteSet& f = classes_[static_cast<size_t>(a[0].v)];
      for (size_t w = 0; w < 4; ++w) {
        if (firsts.w[w] & f.w[w]) return false;
        firsts.w[w] |= f.w[w];
      }
      items += a.size();
    }
    return items <= kMaxInlineItems;
  }

  // One alternative with its inlinable references replaced by their alternatives.
  std::vector<Alt> expand(const Alt& alt) const {
    std::vector<Alt> out(1);
    for (const Item& it : alt) {
      if (it.ref && inlinable(it.v)) {
        const auto& sub = rules_[static_cast<size_t>(it.v)].alts;
        if (out.size() * sub.size() <= kMaxProduct) {
          std::vector<Alt> next;
          for (const Alt& head : out)
            for (const Alt& tail : sub) {
              Alt a = head;
              a.insert(a.end(), tail.begin(), tail.end());
              next.push_back(std::move(a));
            }
          out = std::move(next);
          continue;
        }
      }
      for (Alt& a : out) a.push_back(it);
    }
    return out;
  }

  // Rules are visited children first (iteratively: a chain of rules may be long); a rule inside a
  // cycle is never a leaf, so recursion is never inlined.
  void inline_leaves() {
    const size_t n = rules_.size();
    leaf_.assign(n, false);
    std::vector<uint8_t> state(n, 0);  // 0 unseen, 1 in progress, 2 done
    struct Frame {
      int32_t rule;
      std::vector<int32_t> callees;
      size_t next = 0;
    };
    auto frame = [&](int32_t r) {
      Frame f{r, {}};
      for (const Alt& a : rules_[static_cast<size_t>(r)].alts)
        for (const Item& it : a)
          if (it.ref) f.callees.push_back(it.v);
      state[static_cast<size_t>(r)] = 1;
      return f;
    };
    std::vector<Frame> stack;
    stack.push_back(frame(0));
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.callees.size()) {
        const int32_t c = f.callees[f.next++];
        if (state[static_cast<size_t>(c)] == 0) stack.push_back(frame(c));
        continue;
      }
      IRule& rule = rules_[static_cast<size_t>(f.rule)];
      std::vector<Alt> alts;
      for (const Alt& a : rule.alts)
        for (Alt& e : expand(a)) alts.push_back(std::move(e));
      std::sort(alts.begin(), alts.end());
      alts.erase(std::unique(alts.begin(), alts.end()), alts.end());
      rule.alts = std::move(alts);
      leaf_[static_cast<size_t>(f.rule)] =
          std::all_of(rule.alts.begin(), rule.alts.end(), [](const Alt& a) {
            return std::none_of(a.begin(), a.end(), [](const Item& i) { return i.ref; });
          });
      state[static_cast<size_t>(f.rule)] = 2;
      stack.pop_back();
    }
  }

  // Alternatives that start with the same byte class share it: "\\" "u" "0" | "\\" "t" becomes
  // "\\" ("u" "0" | "t"), so one parse follows the common bytes instead of one per alternative (an
  // inlined escape has dozens), and each first byte is one grammar position to classify.
  void factor_prefixes() {
    for (size_t r = 0; r < rules_.size(); ++r) {  // tails added below are factored in turn
      std::vector<Alt> alts = std::move(rules_[r].alts), out;
      for (size_t i = 0; i < alts.size();) {
        size_t j = i + 1;
        if (!alts[i].empty() && !alts[i][0].ref)
          while (j < alts.size() && !alts[j].empty() && alts[j][0] == alts[i][0]) ++j;
        if (j - i == 1) {
          out.push_back(std::move(alts[i++]));
          continue;
        }
        IRule tail{rules_[r].name, {}, false};
        for (; i < j; ++i) tail.alts.emplace_back(alts[i].begin() + 1, alts[i].end());
        std::sort(tail.alts.begin(), tail.alts.end());
        out.push_back({alts[j - 1][0], {true, static_cast<int32_t>(rules_.size())}});
        rules_.push_back(std::move(tail));
      }
      rules_[r].alts = std::move(out);
    }
  }

  ByteGrammar flatten() {
    ByteGrammar bg;
    std::vector<int32_t> id(rules_.size(), -1);
    std::vector<int32_t> order = {0};
    id[0] = 0;
    for (size_t i = 0; i < order.size(); ++i)
      for (const Alt& a : rules_[static_cast<size_t>(order[i])].alts)
        for (const Item& it : a)
          if (it.ref && id[static_cast<size_t>(it.v)] < 0) {
            id[static_cast<size_t>(it.v)] = static_cast<int32_t>(order.size());
            order.push_back(it.v);
          }
    using K = ByteGrammar::Kind;
    bg.alts.resize(order.size());
    bg.call_site.assign(order.size(), ByteGrammar::kNoCall);
    bg.call_site[0] = ByteGrammar::kFromOutside;
    const size_t max_elems = 4 * g_.limits().max_symbols + 1024;
    for (size_t r = 0; r < order.size(); ++r) {
      const IRule& rule = rules_[static_cast<size_t>(order[r])];
      bg.names.push_back(rule.name);
      bg.open.push_back(rule.open);
      for (const Alt& a : rule.alts) {
        bg.alts[r].push_back(static_cast<int32_t>(bg.elems.size()));
        for (const Item& it : a) {
          if (!it.ref) {
            bg.elems.push_back({K::Bytes, it.v});
            continue;
          }
          bg.elems.push_back({K::Ref, id[static_cast<size_t>(it.v)]});
        }
        bg.elems.push_back({K::End, static_cast<int32_t>(r)});
        if (bg.elems.size() > max_elems)
          fail("grammar: more than {} elements once lowered to bytes (the limit)", max_elems);
      }
    }
    bg.root = 0;
    continuations(bg);
    bg.classes = classes_;
    equivalence_classes(bg);
    return bg;
  }

  // Where each rule returns to when its caller is unknown: a call in tail position returns where
  // its caller does, so a rule's continuations are its other calls' next elements plus the
  // continuations of the rules that tail-call it. Each is none, one element, or many (a fixpoint
  // over that three-level lattice).
  static void continuations(ByteGrammar& bg) {
    using K = ByteGrammar::Kind;
    auto join = [](int32_t a, int32_t b) {
      if (a == ByteGrammar::kNoCall || a == b) return b;
      if (b == ByteGrammar::kNoCall) return a;
      return ByteGrammar::kManyCalls;
    };
    std::vector<int32_t>& cs = bg.call_site;
    std::vector<int32_t> owner(bg.elems.size());  // the rule each element belongs to
    for (size_t r = 0; r < bg.alts.size(); ++r)
      for (int32_t a : bg.alts[r])
        for (size_t e = static_cast<size_t>(a);; ++e) {
          owner[e] = static_cast<int32_t>(r);
          if (bg.elems[e].kind == K::End) break;
        }
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t e = 0; e < bg.elems.size(); ++e) {
        if (bg.elems[e].kind != K::Ref) continue;
        const bool tail = bg.elems[e + 1].kind == K::End;
        int32_t& c = cs[static_cast<size_t>(bg.elems[e].arg)];
        const int32_t next =
            join(c, tail ? cs[static_cast<size_t>(owner[e])] : static_cast<int32_t>(e));
        if (next != c) {
          c = next;
          changed = true;
        }
      }
    }
  }

  // Refines the partition of the 256 bytes by every class.
  static void equivalence_classes(ByteGrammar& bg) {
    std::array<int, 256> part{};
    int n = 1;
    for (const ByteSet& s : bg.classes) {
      std::map<std::pair<int, bool>, int> next;
      std::array<int, 256> np{};
      for (int b = 0; b < 256; ++b) {
        auto [it, fresh] =
            next.try_emplace({part[static_cast<size_t>(b)], s.has(static_cast<uint8_t>(b))},
                             static_cast<int>(next.size()));
        np[static_cast<size_t>(b)] = it->second;
      }
      part = np;
      n = static_cast<int>(next.size());
      if (n == 256) break;
    }
    for (int b = 0; b < 256; ++b)
      bg.byte_class[static_cast<size_t>(b)] = static_cast<uint8_t>(part[static_cast<size_t>(b)]);
    bg.n_byte_classes = n;
  }

  const Grammar& g_;
  std::vector<IRule> rules_;
  std::vector<bool> leaf_;
  std::vector<ByteSet> classes_;
  std::map<std::array<uint64_t, 4>, int32_t> class_ids_;
  struct RangesHash {
    size_t operator()(const std::vector<CharRange>& v) const {
      uint64_t h = 0x9E3779B97F4A7C15ull ^ v.size();
      for (const CharRange& r : v) h = (h ^ (uint64_t{r.lo} << 32 | r.hi)) * 0x100000001B3ull;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<std::vector<CharRange>, std::vector<Alt>, RangesHash> encodings_;
};

}  // namespace

std::vector<ByteSeq> utf8_sequences(const std::vector<CharRange>& ranges) {
  std::vector<ByteSeq> out;
  for (const CharRange& r : ranges) {
    // Surrogates (D800..DFFF) have no UTF-8 form.
    if (r.lo < 0xD800) split_range(r.lo, std::min<uint32_t>(r.hi, 0xD7FF), out);
    if (r.hi > 0xDFFF) split_range(std::max<uint32_t>(r.lo, 0xE000), r.hi, out);
  }
  return out;
}

ByteGrammar lower_to_bytes(const Grammar& g) {
  g.check();
  return Lowering(g).run();
}

}  // namespace brisk::grammar
