#include "grammar/json_values.h"

#include <cmath>
#include <map>

#include "core/error.h"
#include "grammar/dfa.h"
#include "grammar/json.h"
#include "grammar/length_bounds.h"
#include "grammar/string_formats.h"
#include "tokenizer/unicode.h"

namespace brisk::grammar {
namespace {

using json = nlohmann::ordered_json;

void append_text(Sequence& seq, std::string_view s) {
  for (uint32_t c : utf8_to_cpts(std::string(s))) seq.push_back(Symbol::one(c));
}

std::string join(const std::vector<std::string>& alts) {
  std::string out;
  for (const std::string& a : alts) out += (out.empty() ? "" : "|") + a;
  return out;
}

// --- Numbers ---

// The digit strings of a's length between a and b (leading zeros allowed) as a pattern.
std::string same_length(const std::string& a, const std::string& b) {
  if (a == b) return a;
  size_t p = 0;
  while (a[p] == b[p]) ++p;
  const std::string prefix = a.substr(0, p), ar = a.substr(p + 1), br = b.substr(p + 1);
  const size_t rest = ar.size();
  auto any = [](size_t n) { return n ? fmt::format("[0-9]{{{}}}", n) : std::string(); };
  char lo = a[p], hi = b[p];
  std::vector<std::string> alts;
  if (ar.find_first_not_of('0') != std::string::npos) {
    alts.push_back(prefix + lo + "(?:" + same_length(ar, std::string(rest, '9')) + ")");
    ++lo;
  }
  if (br.find_first_not_of('9') != std::string::npos) {
    alts.push_back(prefix + hi + "(?:" + same_length(std::string(rest, '0'), br) + ")");
    --hi;
  }
  if (lo <= hi) alts.push_back(prefix + "[" + lo + "-" + hi + "]" + any(rest));
  return join(alts);
}

// Integers from lo to hi (none: no end) in their canonical decimal text.
std::string uint_range(uint64_t lo, std::optional<uint64_t> hi) {
  const size_t lo_digits = std::to_string(lo).size();
  const size_t hi_digits = hi ? std::to_string(*hi).size() : lo_digits;
  std::vector<std::string> alts;
  uint64_t first = 1;  // 10^(L-1)
  for (size_t l = 1; l <= hi_digits; ++l, first *= 10) {
    if (l < lo_digits) continue;
    const uint64_t a = std::max(lo, l == 1 ? uint64_t{0} : first);
    const uint64_t b = std::min(hi ? *hi : UINT64_MAX, first * 10 - 1);
    if (a <= b) alts.push_back(same_length(std::to_string(a), std::to_string(b)));
  }
  if (!hi && lo_digits < static_cast<size_t>(kMaxIntegerDigits))
    alts.push_back(fmt::format("[1-9][0-9]{{{},{}}}", lo_digits, kMaxIntegerDigits - 1));
  return join(alts);
}

// Non-negative integers between the bounds (both >= 0), each written plain or with a ".0" tail.
// (Pointers, not optionals: GCC 12 warns falsely about optionals built in the caller.)
std::string nonnegative_integer(const Bound* lo, const Bound* hi) {
  const std::string zero = fmt::format("(?:\\.0{{1,{}}})?", kMaxFractionDigits);
  const int64_t first = lo ? lo->value + (lo->exclusive ? 1 : 0) : 0;
  const int64_t last = hi ? hi->value - (hi->exclusive ? 1 : 0) : 0;
  if (hi && first > last) return "";
  return "(?:" +
         uint_range(static_cast<uint64_t>(first),
                    hi ? std::optional<uint64_t>(last) : std::nullopt) +
         ")" + zero;
}

// A non-negative decimal as its digits: the integer part (canonical) and the fraction (no
// trailing zeros).
struct Decimal {
  std::string whole = "0", frac;
};

// |v| exactly as the shortest text that parses back to v (the text a validator's bound is).
Decimal decimal_of(double v) {
  const std::string s = fmt::format("{}", std::fabs(v));
  const size_t e = s.find_first_of("eE");
  const std::string m = s.substr(0, e);
  const int exp = e == std::string::npos ? 0 : std::stoi(s.substr(e + 1));
  const size_t dot = m.find('.');
  const std::string digits = dot == std::string::npos ? m : m.substr(0, dot) + m.substr(dot + 1);
  const long point = static_cast<long>(dot == std::string::npos ? m.size() : dot) + exp;
  Decimal d;
  if (point <= 0) {
    d.frac = std::string(static_cast<size_t>(-point), '0') + digits;
  } else if (static_cast<size_t>(point) >= digits.size()) {
    d.whole = digits + std::string(static_cast<size_t>(point) - digits.size(), '0');
  } else {
    d.whole = digits.substr(0, static_cast<size_t>(point));
    d.frac = digits.substr(static_cast<size_t>(point));
  }
  d.whole.erase(0, std::min(d.whole.find_first_not_of('0'), d.whole.size() - 1));
  d.frac.erase(d.frac.find_last_not_of('0') + 1);
  return d;
}

std::string_view rest(std::string_view s) {
  return s.empty() ? s : s.substr(1);
}

// Fraction digits f, at most n of them, with lo <= 0.f <= hi compared exactly (lo, hi: the
// bounds' remaining digits, zero-padded; no hi: no upper bound). Returns whether no digits at all
// (the value of zeros) fits, and the pattern of the non-empty ones (none: no such digits).
std::pair<bool, std::optional<std::string>> fraction(std::string_view lo,
                                                     std::optional<std::string_view> hi, int n) {
  const bool empty_ok = lo.find_first_not_of('0') == std::string_view::npos;
  if (n == 0) return {empty_ok, std::nullopt};
  const int l0 = lo.empty() ? 0 : lo[0] - '0';
  const int h0 = !hi ? 9 : hi->empty() ? 0 : (*hi)[0] - '0';
  std::vector<std::string> alts;
  auto digit = [](int d) { return std::string(1, static_cast<char>('0' + d)); };
  auto then = [&](int d, std::string_view l, std::optional<std::string_view> h) {
    const auto [e, ne] = fraction(l, h, n - 1);
    if (ne)
      alts.push_back(digit(d) + "(?:" + *ne + ")" + (e ? "?" : ""));
    else if (e)
      alts.push_back(digit(d));
  };
  // Digits strictly inside the bounds' first digits take any rest.
  const int a = l0 + 1, b = hi ? h0 - 1 : 9;
  if (a <= b)
    alts.push_back((a == b ? digit(a) : fmt::format("[{}-{}]", a, b)) +
                   (n > 1 ? fmt::format("[0-9]{{0,{}}}", n - 1) : ""));
  if (!hi) {
    then(l0, rest(lo), std::nullopt);
  } else if (l0 == h0) {
    then(l0, rest(lo), rest(*hi));
  } else if (l0 < h0) {
    then(l0, rest(lo), std::nullopt);
    then(h0, "", rest(*hi));
  }
  if (alts.empty()) return {empty_ok, std::nullopt};
  return {empty_ok, join(alts)};
}

// ".digits" as a number's text writes its fraction (none at all where zeros fit), or nothing.
std::optional<std::string> fraction_text(std::string_view lo, std::optional<std::string_view> hi) {
  const auto [empty_ok, ne] = fraction(lo, hi, kMaxFractionDigits);
  if (!ne) return empty_ok ? std::optional<std::string>("") : std::nullopt;
  return "(?:\\.(?:" + *ne + "))" + (empty_ok ? "?" : "");
}

// Non-negative decimals from lo to hi (none: no end), both inclusive, as number text.
std::string nonnegative_decimal(const Decimal& lo, const std::optional<Decimal>& hi) {
  const uint64_t il = std::stoull(lo.whole), ih = hi ? std::stoull(hi->whole) : 0;
  std::vector<std::string> alts;
  auto add = [&](uint64_t whole, std::optional<std::string> f) {
    if (f) alts.push_back(std::to_string(whole) + *f);
  };
  if (!hi || il < ih) {
    if (!hi || il + 1 < ih)
      alts.push_back(
          "(?:" + uint_range(il + 1, hi ? std::optional<uint64_t>(ih - 1) : std::nullopt) + ")" +
          fmt::format("(?:\\.[0-9]{{1,{}}})?", kMaxFractionDigits));
    add(il, fraction_text(lo.frac, std::nullopt));
    if (hi) add(ih, fraction_text("", hi->frac));
  } else if (il == ih) {
    add(il, fraction_text(lo.frac, hi->frac));
  }
  return join(alts);
}

int32_t add_bounded_integer(Grammar& g, std::optional<Bound> lo, std::optional<Bound> hi) {
  for (const auto& b : {lo, hi})
    if (b && (b->value > kMaxBound || b->value < -kMaxBound))
      fail("a numeric bound of {} is past what can be enforced (±{})", b->value, kMaxBound);
  std::vector<std::string> alts;
  // x >= 0 ...
  const bool nonneg = !hi || hi->value > 0 || (hi->value == 0 && !hi->exclusive);
  if (nonneg) {
    const std::string s =
        nonnegative_integer(lo && lo->value >= 0 ? &*lo : nullptr, hi ? &*hi : nullptr);
    if (!s.empty()) alts.push_back(s);
  }
  // ... and x = -y < 0: x >= L is y <= -L, x <= U is y >= -U, and y > 0.
  if (!lo || lo->value < 0) {
    const Bound ylo = hi && hi->value < 0 ? Bound{-hi->value, hi->exclusive} : Bound{0, true};
    const Bound yhi = lo ? Bound{-lo->value, lo->exclusive} : Bound{0, false};
    const std::string s = nonnegative_integer(&ylo, lo ? &yhi : nullptr);
    if (!s.empty()) alts.push_back("-(?:" + s + ")");
  }
  if (alts.empty()) return -1;
  return add_regex(g, join(alts), "integer");
}

// --- Strings ---

// A code point's text inside a JSON string as a writer puts it: raw, or the escape JSON requires.
std::string char_text(uint32_t c) {
  switch (c) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      break;
  }
  std::string out;
  if (c < 0x20)
    out = fmt::format("\\u{:04x}", c);
  else
    append_utf8(out, c);
  return out;
}

bool needs_escape(uint32_t c) {
  return c < 0x20 || c == '"' || c == '\\';
}

// A set of code points as the JSON text of one of them: the raw ones as a class, the ones JSON
// escapes as their escapes (\u00XX in either case).
// A character class split for a JSON string: the characters written as themselves, and those
// that must be escaped (controls, '"', '\\').
struct JsonChars {
  std::vector<CharRange> plain;
  std::vector<uint32_t> escaped;
};

JsonChars json_chars(const std::vector<CharRange>& ranges) {
  JsonChars out;
  std::vector<CharRange> raw;
  for (const CharRange& r : ranges) {
    for (uint32_t c = r.lo; c <= std::min<uint32_t>(r.hi, 0x5C); ++c)
      if (needs_escape(c)) out.escaped.push_back(c);
    raw.push_back(r);
  }
  raw = complement(complement(raw));  // normalized
  std::vector<CharRange> specials = {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}};
  for (const CharRange& r : complement(specials))
    for (const CharRange& x : raw) {
      const uint32_t lo = std::max(r.lo, x.lo), hi = std::min(r.hi, x.hi);
      if (lo <= hi) out.plain.push_back({lo, hi});
    }
  return out;
}

// One rule of the escape sequences of `escaped` (each hex digit in either case).
int32_t escapes_rule(Grammar& g, const std::vector<uint32_t>& escaped) {
  const int32_t rule = g.add_rule("json-escape");
  for (uint32_t c : escaped) {
    Sequence seq;
    const std::string t = char_text(c);
    for (char ch : t) {
      const int v = hex_digit(ch);
      if (ch >= 'a' && ch <= 'f' && v >= 0)
        seq.push_back(
            Symbol::chars({{uint32_t(ch), uint32_t(ch)}, {uint32_t(ch - 32), uint32_t(ch - 32)}}));
      else
        seq.push_back(Symbol::one(static_cast<unsigned char>(ch)));
    }
    g.add_alt(rule, std::move(seq));
  }
  return rule;
}

Symbol json_class(Grammar& g, const std::vector<CharRange>& ranges) {
  const JsonChars jc = json_chars(ranges);
  if (jc.escaped.empty()) return Symbol::chars(jc.plain);
  const int32_t rule = g.add_rule("json-char");
  if (!jc.plain.empty()) g.add_alt(rule, {Symbol::chars(jc.plain)});
  g.add_alt(rule, {Symbol::ref(escapes_rule(g, jc.escaped))});
  return Symbol::ref(rule);
}

// String bodies of `need` to `need + extra` characters (any number past `need` when extra is
// absent). Up to kMaxChain characters are a chain of rules, one per character still allowed, each
// with its own escape rule so that every rule is called from one place (see stacks.h). Longer
// bounds are counted in blocks instead of unrolled (maxLength 65535 is common in real schemas):
// at most n characters are R_q with R_i ::= up_to(K-1) | exact(K) R_(i-1), R_0 ::= up_to(K-1)
// and the odd remainder in the outermost rule, so the rules grow with the number of digits of n in
// base kMaxChain, and at most one parse per level is alive at once (still in a block, or past it).
class CharCounts {
 public:
  CharCounts(Grammar& g, StringBodies* shared) : g_(g), shared_(shared ? shared : &own_) {}

  int32_t body(uint32_t need, std::optional<uint32_t> extra) {
    int32_t tail;
    if (extra) {
      tail = up_to(*extra);
    } else {
      tail = g_.add_rule("chars-star");
      g_.set_open(tail);
      const int32_t one = step(tail, false);
      g_.add_alt(tail, {Symbol::ref(one)});
      g_.add_alt(tail, {});
    }
    return exact(need, tail);
  }

 private:
  static constexpr uint32_t kMaxChain = 256;

  // One character, then `next` (nothing when -1); or nothing at all when optional.
  int32_t step(int32_t next, bool optional) {
    const int32_t r = g_.add_rule("chars");
    Sequence a = {raw_};
    if (next >= 0) a.push_back(Symbol::ref(next));
    g_.add_alt(r, std::move(a));
    g_.add_alt(r, {Symbol::one('\\'), Symbol::ref(escapes(next))});
    if (optional) g_.add_alt(r, {});
    return r;
  }
  int32_t escapes(int32_t next) {
    const int32_t e = g_.add_rule("escape");
    Sequence simple = {Symbol::chars({{'"', '"'},
                                      {'/', '/'},
                                      {'\\', '\\'},
                                      {'b', 'b'},
                                      {'f', 'f'},
                                      {'n', 'n'},
                                      {'r', 'r'},
                                      {'t', 't'}})};
    const Symbol hex = Symbol::chars({{'0', '9'}, {'A', 'F'}, {'a', 'f'}});
    // \uXXXX without surrogates: a pair would be one character counted as two.
    Sequence u1 = {Symbol::one('u'),
                   Symbol::chars({{'0', '9'}, {'A', 'C'}, {'E', 'F'}, {'a', 'c'}, {'e', 'f'}}), hex,
                   hex, hex};
    Sequence u2 = {Symbol::one('u'), Symbol::chars({{'D', 'D'}, {'d', 'd'}}),
                   Symbol::chars({{'0', '7'}}), hex, hex};
    for (Sequence* s : {&simple, &u1, &u2}) {
      if (next >= 0) s->push_back(Symbol::ref(next));
      g_.add_alt(e, *s);
    }
    return e;
  }
  static uint32_t block(uint32_t n) { return std::max(kMaxChain, (n + kMaxChain - 1) / kMaxChain); }
  // A rule with one alternative: the symbols.
  int32_t seq(const char* name, Sequence s) {
    const int32_t r = g_.add_rule(name);
    g_.add_alt(r, std::move(s));
    return r;
  }

  // Exactly n characters, then `next` (-1: nothing).
  int32_t exact(uint32_t n, int32_t next) {
    if (n <= kMaxChain && next < 0) return exactly(n);
    if (n <= kMaxChain) {
      for (uint32_t k = 0; k < n; ++k) next = step(next, false);
      if (next < 0) next = seq("chars", {});
      return next;
    }
    const uint32_t k = block(n);
    const int32_t b = exact(k, -1);
    next = exact(n % k, next);
    for (uint32_t i = 0; i < n / k; ++i)
      next = seq("chars-block", {Symbol::ref(b), Symbol::ref(next)});
    return next;
  }

  // Exactly n characters and nothing after (a block, or a remainder of a long bound), shared as
  // up_to's chains are: every bound past kMaxChain uses the same block.
  int32_t exactly(uint32_t n) {
    auto& made = shared_->exactly;
    if (auto it = made.find(n); it != made.end()) return it->second;
    if (n == 0) return made[0] = seq("chars", {});
    uint32_t k = 0;
    int32_t next = -1;
    if (auto it = made.lower_bound(n); it != made.begin() && (--it)->first >= 1)
      k = it->first, next = it->second;
    for (; k < n; ++k) made[k + 1] = next = step(next, false);
    return next;
  }

  // 0 to n characters, and nothing after; a chain goes on from the longest one made before.
  int32_t up_to(uint32_t n) {
    auto& made = shared_->up_to;
    if (auto it = made.find(n); it != made.end()) return it->second;
    if (n <= kMaxChain) {
      uint32_t k = 0;
      int32_t next = -1;
      if (auto it = made.upper_bound(n); it != made.begin() && (--it)->first >= 1)
        k = it->first, next = it->second;
      for (; k < n; ++k) made[k + 1] = next = step(next, true);
      if (next < 0) made[0] = next = seq("chars", {});
      return next;
    }
    const uint32_t k = block(n), q = (n + 1) / k - 1, r = (n + 1) % k;
    // n + 1 = (q + 1) k + r: q uniform rounds of a block under one of at most k - 1 characters,
    // and the remainder r as a shorter first round (r - 1 characters, or r and then the rounds).
    const int32_t b = exact(k, -1), less = up_to(k - 1);
    int32_t next = less;
    for (uint32_t i = 0; i < q; ++i) {
      const int32_t round = g_.add_rule("chars-round");
      g_.add_alt(round, {Symbol::ref(less)});
      g_.add_alt(round, {Symbol::ref(b), Symbol::ref(next)});
      next = round;
    }
    if (r > 0) {
      const int32_t first = g_.add_rule("chars-round");
      g_.add_alt(first, {Symbol::ref(up_to(r - 1))});
      g_.add_alt(first, {Symbol::ref(exact(r, -1)), Symbol::ref(next)});
      next = first;
    }
    return made[n] = next;
  }

  Grammar& g_;
  StringBodies own_;
  StringBodies* shared_;
  const Symbol raw_ = Symbol::chars(complement({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}));
};

// A rule of the strings whose value is none of the names, from trie node `at`.
struct NameTrie {
  struct Node {
    bool terminal = false;
    std::map<uint32_t, int> kids;
  };
  std::vector<Node> nodes{1};
  void add(const std::vector<uint32_t>& cps) {
    int v = 0;
    for (uint32_t c : cps) {
      auto it = nodes[size_t(v)].kids.find(c);
      if (it == nodes[size_t(v)].kids.end()) {
        nodes.emplace_back();
        it = nodes[size_t(v)].kids.emplace(c, int(nodes.size() - 1)).first;
      }
      v = it->second;
    }
    nodes[size_t(v)].terminal = true;
  }
};

// Nodes that leave the same names behind are one rule: a node's rule is keyed by whether a name
// ends there and its children's rules, built first. Every name's last node is then one rule, and
// so is each common ending ("...Id", "...Name"). Rules called from several nodes of one trie still
// return to one place (the key's closing quote), so their positions stay fully classified (see
// stacks.h). So does `wide`, the non-ASCII characters every node whose names go on in ASCII lets
// through: one rule instead of some thirty bytes of UTF-8 alternatives per node. The escape rules
// are shared (NameEscapes).
struct ExceptRules {
  explicit ExceptRules(NameEscapes& e) : escapes(e.by_set) {}
  int32_t any = -1;   // any name characters
  int32_t wide = -1;  // a non-ASCII character, then any
  std::vector<CharRange> wide_chars;
  std::map<std::vector<uint32_t>, int32_t>& escapes;
  std::map<std::vector<int64_t>, int32_t> nodes;
  std::map<std::vector<CharRange>, int32_t> others;  // by the characters a node takes
};

// A first character other than `taken`, then any name characters: one rule per set taken in
// the trie (most nodes take one letter, so a few dozen rules serve thousands of nodes).
int32_t other_rule(Grammar& g, const std::vector<CharRange>& taken, ExceptRules& shared) {
  if (auto it = shared.others.find(taken); it != shared.others.end()) return it->second;
  const int32_t r = g.add_rule("other-char");
  const JsonChars other = json_chars(complement(Symbol::chars(taken).ranges));
  std::vector<CharRange> narrow, wide;
  for (const CharRange& c : other.plain) {
    if (c.lo < 0x80) narrow.push_back({c.lo, std::min<uint32_t>(c.hi, 0x7F)});
    if (c.hi >= 0x80) wide.push_back({std::max<uint32_t>(c.lo, 0x80), c.hi});
  }
  if (wide == shared.wide_chars) {
    g.add_alt(r, {Symbol::ref(shared.wide)});
  } else {
    narrow.insert(narrow.end(), wide.begin(), wide.end());
  }
  if (!narrow.empty()) g.add_alt(r, {Symbol::chars(narrow), Symbol::ref(shared.any)});
  if (!other.escaped.empty()) {
    auto it = shared.escapes.find(other.escaped);
    if (it == shared.escapes.end())
      it = shared.escapes.emplace(other.escaped, escapes_rule(g, other.escaped)).first;
    g.add_alt(r, {Symbol::ref(it->second), Symbol::ref(shared.any)});
  }
  return shared.others[taken] = r;
}

int32_t except_rule(Grammar& g, const NameTrie& t, int v, ExceptRules& shared) {
  const NameTrie::Node& n = t.nodes[size_t(v)];
  std::vector<int64_t> key = {n.terminal ? 1 : 0};
  std::vector<int32_t> kids;
  for (const auto& [c, kid] : n.kids) {
    kids.push_back(except_rule(g, t, kid, shared));
    key.insert(key.end(), {int64_t{c}, int64_t{kids.back()}});
  }
  if (auto it = shared.nodes.find(key); it != shared.nodes.end()) return it->second;
  const int32_t r = g.add_rule("other-name");
  g.set_open(r);  // it takes every character: a kid's, or another then any name characters
  if (!n.terminal) g.add_alt(r, {});
  std::vector<CharRange> taken;
  size_t i = 0;
  for (const auto& [c, kid] : n.kids) {
    Sequence seq;
    append_text(seq, char_text(c));
    seq.push_back(Symbol::ref(kids[i++]));
    g.add_alt(r, std::move(seq));
    taken.push_back({c, c});
  }
  g.add_alt(r, {Symbol::ref(other_rule(g, Symbol::chars(taken).ranges, shared))});
  return shared.nodes[key] = r;
}

// --- Literals ---

void literal(Grammar& g, const json& v, int32_t ws, Sequence& seq) {
  switch (v.type()) {
    case json::value_t::object: {
      seq.push_back(Symbol::one('{'));
      seq.push_back(Symbol::ref(ws));
      bool first = true;
      for (const auto& [k, x] : v.items()) {
        if (!first) seq.insert(seq.end(), {Symbol::ref(ws), Symbol::one(','), Symbol::ref(ws)});
        first = false;
        append_text(seq, json(k).dump());
        seq.insert(seq.end(), {Symbol::ref(ws), Symbol::one(':'), Symbol::ref(ws)});
        literal(g, x, ws, seq);
      }
      if (!first) seq.push_back(Symbol::ref(ws));
      seq.push_back(Symbol::one('}'));
      return;
    }
    case json::value_t::array: {
      seq.push_back(Symbol::one('['));
      seq.push_back(Symbol::ref(ws));
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) seq.insert(seq.end(), {Symbol::ref(ws), Symbol::one(','), Symbol::ref(ws)});
        literal(g, v[i], ws, seq);
      }
      if (!v.empty()) seq.push_back(Symbol::ref(ws));
      seq.push_back(Symbol::one(']'));
      return;
    }
    case json::value_t::number_float: {
      const double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) {
        literal(g, json(static_cast<int64_t>(d)), ws, seq);
        return;
      }
      append_text(seq, v.dump());
      return;
    }
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: {
      append_text(seq, v.dump());
      // 1.0 and 1.00 are the integer 1 too.
      const int32_t zeros = g.add_rule("dot-zeros");
      g.add_alt(zeros, {Symbol::one('.'), Symbol::ref(g.add_repeat("zeros", {Symbol::one('0')}, 1,
                                                                   kMaxFractionDigits))});
      g.add_alt(zeros, {});
      seq.push_back(Symbol::ref(zeros));
      return;
    }
    default:
      append_text(seq, v.dump());
  }
}

}  // namespace

int32_t add_integer(Grammar& g, std::optional<Bound> lo, std::optional<Bound> hi) {
  if (lo || hi) return add_bounded_integer(g, lo, hi);
  return add_regex(g,
                   fmt::format("-?(?:0|[1-9][0-9]{{0,{}}})(?:\\.0{{1,{}}})?", kMaxIntegerDigits - 1,
                               kMaxFractionDigits),
                   "integer");
}

int32_t add_number(Grammar& g, std::optional<NumberBound> lo, std::optional<NumberBound> hi) {
  if (lo || hi) {
    // Exclusive bounds become inclusive at the next double inward, and the text's exact value is
    // compared with the bound's shortest text: then a value is accepted only if the double a
    // validator parses from it is within the bounds, however many digits it has.
    std::optional<double> l, h;
    for (const auto& [b, upper] : {std::pair{lo, false}, std::pair{hi, true}}) {
      if (!b) continue;
      if (!std::isfinite(b->value) || std::fabs(b->value) > static_cast<double>(kMaxBound))
        fail("a numeric bound of {} is past what can be enforced (±{})", b->value, kMaxBound);
      const double inclusive = !b->exclusive ? b->value
                               : upper       ? std::nextafter(b->value, -INFINITY)
                                             : std::nextafter(b->value, INFINITY);
      (upper ? h : l) = inclusive == 0 ? 0.0 : inclusive;  // -0 is 0
    }
    if (l && h && *l > *h) return -1;
    std::vector<std::string> alts;
    if (!h || *h >= 0) {  // x >= 0
      const Decimal from = l && *l > 0 ? decimal_of(*l) : Decimal{};
      const std::string s =
          nonnegative_decimal(from, h ? std::optional<Decimal>(decimal_of(*h)) : std::nullopt);
      if (!s.empty()) alts.push_back(s);
    }
    if (!l || *l < 0) {  // x = -y < 0: y from -h (or the least positive text) to -l
      Decimal from{"0", std::string(static_cast<size_t>(kMaxFractionDigits) - 1, '0') + "1"};
      if (h && *h < 0) from = decimal_of(*h);
      const std::string s =
          nonnegative_decimal(from, l ? std::optional<Decimal>(decimal_of(*l)) : std::nullopt);
      if (!s.empty()) alts.push_back("-(?:" + s + ")");
    }
    if (alts.empty()) return -1;
    return add_regex(g, join(alts), "number");
  }
  return add_regex(
      g,
      fmt::format("-?(?:0|[1-9][0-9]{{0,{}}})(?:\\.[0-9]{{1,{}}})?(?:[eE][-+]?[0-9]{{1,{}}})?",
                  kMaxIntegerDigits - 1, kMaxFractionDigits, kMaxExponentDigits),
      "number");
}

int32_t add_string(Grammar& g, const StringSpec& spec, StringBodies* shared) {
  StringSpec s = spec;
  if (format_is_annotation(s.format)) s.format.clear();  // unknown formats constrain nothing
  if (s.max_length && *s.max_length < s.min_length) return -1;
  int32_t body;
  if (!s.pattern.empty() || !s.format.empty()) {
    const auto first = static_cast<int32_t>(g.rules().size());
    const bool both = !s.pattern.empty() && !s.format.empty();
    if (both || s.min_length > 0 || s.max_length) {
      // The pattern, the format, or (both given) the strings both match, then cut to the lengths.
      Grammar pattern, format, language;
      if (!s.pattern.empty()) pattern.set_root(add_regex_search(pattern, s.pattern, "pattern"));
      if (!s.format.empty()) format.set_root(add_format(format, s.format));
      if (both) {
        const int32_t r = add_intersection(language, pattern, format);
        if (r < 0) return -1;
        language.set_root(r);
      } else {
        language = s.pattern.empty() ? std::move(format) : std::move(pattern);
      }
      body = s.min_length > 0 || s.max_length
                 ? add_length_bounded(g, language, s.min_length, s.max_length)
                 : g.add_grammar(language);
      if (body < 0) return -1;
    } else {
      body =
          s.pattern.empty() ? add_format(g, s.format) : add_regex_search(g, s.pattern, "pattern");
    }
    g.map_chars(first, [&](const std::vector<CharRange>& r) { return json_class(g, r); });
  } else {
    body = CharCounts(g, shared).body(
        s.min_length,
        s.max_length ? std::optional<uint32_t>(*s.max_length - s.min_length) : std::nullopt);
  }
  const int32_t r = g.add_rule("string");
  g.add_alt(r, {Symbol::one('"'), Symbol::ref(body), Symbol::one('"')});
  return r;
}

void to_json_chars(Grammar& g, int32_t first) {
  g.map_chars(first, [&](const std::vector<CharRange>& r) { return json_class(g, r); });
}

int32_t add_string_except(Grammar& g, const std::vector<std::string>& names, NameEscapes* escapes) {
  NameTrie t;
  for (const std::string& n : names) {
    const std::vector<uint32_t> cps = utf8_to_cpts(n);
    if (cps.size() > 1024) fail("a property name of {} characters (at most 1024)", cps.size());
    t.add(cps);
  }
  NameEscapes own;
  ExceptRules shared(escapes ? *escapes : own);
  shared.any = g.add_rule("name-chars");
  g.set_open(shared.any);
  g.add_alt(shared.any, {json_class(g, {{0, 0x10FFFF}}), Symbol::ref(shared.any)});
  g.add_alt(shared.any, {});
  for (const CharRange& c : json_chars({{0x80, 0x10FFFF}}).plain)
    if (c.hi >= 0x80) shared.wide_chars.push_back({std::max<uint32_t>(c.lo, 0x80), c.hi});
  shared.wide = g.add_rule("other-wide");
  g.add_alt(shared.wide, {Symbol::chars(shared.wide_chars), Symbol::ref(shared.any)});
  const int32_t r = g.add_rule("other-key");
  g.add_alt(r, {Symbol::one('"'), Symbol::ref(except_rule(g, t, 0, shared)), Symbol::one('"')});
  return r;
}

int32_t add_literal(Grammar& g, const json& v, int32_t ws) {
  Sequence seq;
  literal(g, v, ws, seq);
  const int32_t r = g.add_rule("literal");
  g.add_alt(r, std::move(seq));
  return r;
}

}  // namespace brisk::grammar
