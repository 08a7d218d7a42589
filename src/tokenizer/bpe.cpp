#include "tokenizer/bpe.h"

#include <algorithm>
#include <unordered_map>

#include "core/error.h"
#include "tokenizer/pretokenizer.h"

namespace brisk {
namespace {

// Printable bytes stand for themselves; the others take code points from U+0100 up, in order.
struct ByteAlphabet {
  uint32_t cpt[256];
  int16_t byte[324];
  ByteAlphabet() {
    std::fill(std::begin(byte), std::end(byte), int16_t{-1});
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      cpt[b] = printable ? static_cast<uint32_t>(b) : next++;
      byte[cpt[b]] = static_cast<int16_t>(b);
    }
  }
};
const ByteAlphabet kAlphabet;

PreTokenizer pretokenizer_of(const Vocab& v) {
  PreTokenizer p;
  if (!v.pre_regex.empty()) {
    p.regexes = v.pre_regex;
  } else {
    auto f = find_pretokenizer(v.pre.empty() ? "default" : v.pre);
    if (!f) fail("tokenizer: pre-tokenizer '{}' (tokenizer.ggml.pre) is not known to brisk", v.pre);
    p = *f;
  }
  if (v.ignore_merges) p.ignore_merges = *v.ignore_merges;
  if (!v.normalizer.empty()) p.norm = parse_norm_form(v.normalizer);
  return p;
}

struct Sym {
  int32_t id;
  int prev, next;
};
struct Pair {
  int32_t rank;
  int left;
  int32_t lid, rid, merged;
  bool operator>(const Pair& o) const {  // min-heap on (rank, position)
    return rank > o.rank || (rank == o.rank && left > o.left);
  }
};

}  // namespace

struct BpeTokenizer::Scratch {
  std::vector<Sym> sym;
  std::vector<Pair> heap;
  std::string spelled;
};

uint64_t BpeTokenizer::slot_of(uint64_t key) const {
  return ((key * 0x9E3779B97F4A7C15ull) >> 20) & merge_mask_;
}

const BpeTokenizer::MergeSlot* BpeTokenizer::find_merge(int32_t l, int32_t r) const {
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
  for (uint64_t h = slot_of(key);; h = (h + 1) & merge_mask_) {
    const MergeSlot& slot = merge_table_[h];
    if (slot.key == key) return &slot;
    if (slot.key == ~uint64_t{0}) return nullptr;
  }
}

uint32_t BpeTokenizer::byte_to_cpt(uint8_t b) {
  return kAlphabet.cpt[b];
}
int BpeTokenizer::byte_of_cpt(uint32_t cp) {
  return cp < 324 ? kAlphabet.byte[cp] : -1;
}

BpeTokenizer::BpeTokenizer(Vocab v) : Tokenizer(std::move(v)), splitter_({}) {
  const PreTokenizer pre = pretokenizer_of(vocab_);
  splitter_ = RegexSplitter(pre.regexes);
  norm_ = pre.norm;
  ignore_merges_ = pre.ignore_merges;
  for (int b = 0; b < 256; ++b) {
    std::string s;
    append_utf8(s, kAlphabet.cpt[b]);
    byte_id_[b] = vocab_.find(s);
  }
  size_t cap = 16;
  while (cap < 2 * vocab_.merges.size()) cap *= 2;
  merge_table_.assign(cap, MergeSlot{});
  merge_mask_ = cap - 1;
  for (size_t r = 0; r < vocab_.merges.size(); ++r) {
    const std::string& m = vocab_.merges[r];
    const size_t sp = m.find(' ', 1);
    if (sp == std::string::npos) fail("tokenizer: merge #{} '{}' has no space", r, m);
    const int32_t l = vocab_.find(m.substr(0, sp)), rt = vocab_.find(m.substr(sp + 1));
    const int32_t u = vocab_.find(m.substr(0, sp) + m.substr(sp + 1));
    if (l < 0 || rt < 0 || u < 0) continue;  // a merge whose result no token holds is never used
    const uint64_t key =
        (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(rt);
    for (uint64_t h = slot_of(key);; h = (h + 1) & merge_mask_) {
      MergeSlot& slot = merge_table_[h];
      if (slot.key == key) break;  // a repeated merge keeps its first (lowest) rank
      if (slot.key == ~uint64_t{0}) {
        slot = {key, static_cast<int32_t>(r), u};
        break;
      }
    }
  }
  decoded_.resize(vocab_.tokens.size());
  for (size_t i = 0; i < vocab_.tokens.size(); ++i) {
    const std::string& t = vocab_.tokens[i];
    if (vocab_.types[i] != TokenType::Normal && vocab_.types[i] != TokenType::Byte) {
      decoded_[i] = t;  // user-defined and control tokens are stored as their raw text
      continue;
    }
    std::string out;
    for (uint32_t cp : utf8_to_cpts(t)) {
      const int b = byte_of_cpt(cp);
      if (b >= 0)
        out += static_cast<char>(b);
      else
        append_utf8(out, cp);
    }
    decoded_[i] = std::move(out);
  }
}

std::string BpeTokenizer::token_bytes(int32_t id, bool show_special) const {
  if (id < 0 || id >= vocab_.size()) return "";
  if (vocab_.types[id] == TokenType::Control && !show_special) return "";
  return decoded_[id];
}

void BpeTokenizer::encode_word(std::string_view word, Scratch& s, std::vector<int32_t>& out) const {
  if (ignore_merges_) {
    std::string& spelled = s.spelled;
    spelled.clear();
    for (unsigned char c : word) append_utf8(spelled, kAlphabet.cpt[c]);
    if (const int32_t id = vocab_.find(spelled); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  const int n = static_cast<int>(word.size());
  if (n == 1) {
    if (byte_id_[static_cast<unsigned char>(word[0])] >= 0)
      out.push_back(byte_id_[static_cast<unsigned char>(word[0])]);
    return;
  }
  std::vector<Sym>& sym = s.sym;
  sym.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    sym[i] = {byte_id_[static_cast<unsigned char>(word[i])], i - 1, i + 1};
  sym[n - 1].next = -1;
  std::vector<Pair>& heap = s.heap;
  heap.clear();
  auto consider = [&](int l) {
    if (l < 0) return;
    const int r = sym[l].next;
    if (r < 0 || sym[l].id < 0 || sym[r].id < 0) return;
    const MergeSlot* m = find_merge(sym[l].id, sym[r].id);
    if (!m) return;
    heap.push_back({m->rank, l, sym[l].id, sym[r].id, m->merged});
    std::push_heap(heap.begin(), heap.end(), std::greater<Pair>());
  };
  for (int i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<Pair>());
    const Pair p = heap.back();
    heap.pop_back();
    Sym& l = sym[p.left];
    // Stale: the left symbol was merged away or changed, or its right neighbour did.
    if (l.id != p.lid || l.next < 0 || sym[l.next].id != p.rid) continue;
    const int r = l.next;
    l.id = p.merged;
    l.next = sym[r].next;
    if (l.next >= 0) sym[l.next].prev = p.left;
    sym[r].id = -2;  // gone
    consider(l.prev);
    consider(p.left);
  }
  for (int i = 0; i >= 0; i = sym[i].next)
    if (sym[i].id >= 0) out.push_back(sym[i].id);
}

void BpeTokenizer::encode_text(std::string_view raw, bool at_start,
                               std::vector<int32_t>& out) const {
  std::string text = normalize(raw, norm_);
  // ByteLevel(add_prefix_space): a leading space makes the first word look like any other.
  if (at_start && vocab_.add_space_prefix && !text.empty() && text[0] != ' ') text.insert(0, " ");
  std::vector<std::string_view> words;
  splitter_.split(text, words);
  // Words repeat: a word seen earlier in this text copies the ids it got then.
  Scratch scratch;
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> seen;
  for (std::string_view w : words) {
    if (w.size() > 2) {
      auto [it, fresh] = seen.try_emplace(w, out.size(), 0);
      if (!fresh) {
        const auto [at, count] = it->second;
        for (size_t k = 0; k < count; ++k) out.push_back(out[at + k]);
        continue;
      }
      encode_word(w, scratch, out);
      it->second.second = out.size() - it->second.first;
    } else {
      encode_word(w, scratch, out);
    }
  }
}

}  // namespace brisk
