#include "grammar/shared_positions.h"

#include <algorithm>
#include <climits>
#include <numeric>
#include <unordered_map>

namespace brisk::grammar {

namespace {

using K = ByteGrammar::Kind;
constexpr int32_t kFar = 1 << 24;  // "more bytes than any token": saturates the sums

struct VecHash {
  size_t operator()(const std::vector<int32_t>& v) const {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ v.size();
    for (int32_t x : v) h = (h ^ static_cast<uint32_t>(x)) * 0x100000001B3ull + (h >> 29);
    return static_cast<size_t>(h);
  }
};
using ClassIds = std::unordered_map<std::vector<int32_t>, int32_t, VecHash>;

int32_t class_of(ClassIds& ids, const std::vector<int32_t>& key) {
  return ids.try_emplace(key, static_cast<int32_t>(ids.size())).first->second;
}

// Rules, their element ranges and the fewest bytes matched before each element of its
// alternative (rules are numbered callers first, so callees first converges in a few passes).
struct Layout {
  std::vector<int32_t> begin, end, pre, min_len;

  explicit Layout(const ByteGrammar& g) {
    const size_t n = g.n_rules();
    begin.resize(n);
    end.resize(n);
    for (size_t r = 0; r < n; ++r) {
      begin[r] = g.alts[r].front();
      int32_t e = g.alts[r].back();
      while (g.elems[static_cast<size_t>(e)].kind != K::End) ++e;
      end[r] = e + 1;
    }
    min_len.assign(n, kFar);
    pre.assign(g.elems.size(), 0);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = n; r-- > 0;) {
        int32_t best = kFar, sum = 0;
        for (int32_t e = begin[r]; e < end[r]; ++e) {
          const ByteGrammar::Elem& el = g.elems[static_cast<size_t>(e)];
          pre[static_cast<size_t>(e)] = sum;
          if (el.kind == K::End) {
            best = std::min(best, sum);
            sum = 0;
          } else {
            sum = std::min(kFar,
                           sum + (el.kind == K::Bytes ? 1 : min_len[static_cast<size_t>(el.arg)]));
          }
        }
        if (best < min_len[r]) {
          min_len[r] = best;
          changed = true;
        }
      }
    }
  }
};

// Depth 0: the same elements (classes, calls made before any byte, the bytes before each other
// call), ended alike and returning to the same place.
std::vector<int32_t> depth0_classes(const ByteGrammar& g, const Layout& l) {
  ClassIds ids;
  std::vector<int32_t> cls(g.n_rules());
  std::vector<int32_t> key;
  for (size_t r = 0; r < g.n_rules(); ++r) {
    key.assign({g.call_site[r]});
    for (int32_t e = l.begin[r]; e < l.end[r]; ++e) {
      const ByteGrammar::Elem& el = g.elems[static_cast<size_t>(e)];
      const int32_t pre = l.pre[static_cast<size_t>(e)];
      if (el.kind == K::Bytes) key.insert(key.end(), {0, el.arg});
      if (el.kind == K::Ref) key.insert(key.end(), {1, pre, pre == 0 ? el.arg : -1});
      if (el.kind == K::End) key.push_back(2);
    }
    cls[r] = class_of(ids, key);
  }
  return cls;
}

}  // namespace

SharedPositions find_shared_positions(const ByteGrammar& g) {
  const size_t n_rules = g.n_rules();
  SharedPositions out;
  out.canon.resize(g.elems.size());
  std::iota(out.canon.begin(), out.canon.end(), 0);
  out.limit.assign(g.elems.size(), 0);
  if (n_rules == 0) return out;
  const Layout l(g);
  const std::vector<int32_t> cls0 = depth0_classes(g, l);

  // Only rules that share their depth-0 class take part; the others are alone at every depth.
  std::vector<int32_t> count(n_rules, 0), active, index(n_rules, -1);
  for (int32_t c : cls0) ++count[static_cast<size_t>(c)];
  for (size_t r = 0; r < n_rules; ++r)
    if (count[static_cast<size_t>(cls0[r])] > 1) {
      index[r] = static_cast<int32_t>(active.size());
      active.push_back(static_cast<int32_t>(r));
    }
  if (active.empty()) return out;
  // history[d][i]: active rule i's class at depth d, while it shares one (alone: -1 - rule).
  std::vector<std::vector<int32_t>> history(1, std::vector<int32_t>(active.size()));
  std::vector<int32_t> alone_from(active.size(), INT_MAX), best_depth(n_rules, -1),
      best_canon(n_rules, -1);
  for (size_t i = 0; i < active.size(); ++i) history[0][i] = cls0[static_cast<size_t>(active[i])];
  auto class_at = [&](int32_t rule, int32_t d) {
    const int32_t i = index[static_cast<size_t>(rule)];
    if (i < 0 || d >= alone_from[static_cast<size_t>(i)]) return -1 - rule;
    return history[static_cast<size_t>(d)][static_cast<size_t>(i)];
  };
  std::vector<int32_t> key;
  for (int32_t d = 0; d <= kMaxSharedDepth; ++d) {
    if (d > 0) {
      ClassIds ids;
      history.emplace_back(active.size(), -1);
      for (size_t i = 0; i < active.size(); ++i) {
        if (alone_from[i] < d) continue;
        const size_t r = static_cast<size_t>(active[i]);
        key.assign({history[static_cast<size_t>(d - 1)][i]});
        for (int32_t e = l.begin[r]; e < l.end[r]; ++e) {
          const ByteGrammar::Elem& el = g.elems[static_cast<size_t>(e)];
          const int32_t pre = l.pre[static_cast<size_t>(e)];
          if (el.kind == K::Ref && pre > 0 && pre <= d) key.push_back(class_at(el.arg, d - pre));
        }
        history[static_cast<size_t>(d)][i] = class_of(ids, key);
      }
    }
    // Each class's first rule is its members' canonical one.
    std::unordered_map<int32_t, std::pair<int32_t, int32_t>> members;  // class: first, count
    for (size_t i = 0; i < active.size(); ++i) {
      if (alone_from[i] < d) continue;
      auto [it, fresh] = members.try_emplace(history[static_cast<size_t>(d)][i], active[i], 0);
      ++it->second.second;
    }
    bool any = false;
    for (size_t i = 0; i < active.size(); ++i) {
      if (alone_from[i] < d) continue;
      const auto [first, n] = members.at(history[static_cast<size_t>(d)][i]);
      if (n == 1) {
        alone_from[i] = d;
        continue;
      }
      any = true;
      if (first != active[i]) {
        best_depth[static_cast<size_t>(active[i])] = d;
        best_canon[static_cast<size_t>(active[i])] = first;
      }
    }
    if (!any) break;
  }
  for (size_t r = 0; r < n_rules; ++r) {
    if (best_canon[r] < 0) continue;
    const int32_t c = best_canon[r];
    for (int32_t e = l.begin[r]; e < l.end[r]; ++e) {
      const int32_t lim = best_depth[r] - l.pre[static_cast<size_t>(e)];
      if (g.elems[static_cast<size_t>(e)].kind != K::Bytes || lim < 1) continue;
      out.canon[static_cast<size_t>(e)] = l.begin[static_cast<size_t>(c)] + (e - l.begin[r]);
      out.limit[static_cast<size_t>(e)] = static_cast<uint16_t>(lim);
    }
  }
  return out;
}

}  // namespace brisk::grammar
