#include "tokenizer/spm.h"

#include <fmt/format.h>

#include <queue>
#include <unordered_map>

#include "core/error.h"
#include "core/utf8.h"

namespace brisk {
namespace {

const std::string kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's word marker

struct Symbol {
  int prev, next;
  size_t start, len;
};

struct Bigram {
  int left, right;
  float score;
  size_t llen, rlen;                       // the two sides' lengths when queued
  bool operator<(const Bigram& o) const {  // priority_queue pops the largest
    return score < o.score || (score == o.score && left > o.left);
  }
};

}  // namespace

SpmTokenizer::SpmTokenizer(Vocab v) : Tokenizer(std::move(v)) {
  // Word-safe: no token has the word marker after another character (runs of markers aside).
  word_safe_ = true;
  for (const std::string& t : vocab_.tokens)
    for (size_t p = t.find(kSpace, 1); p != std::string::npos && word_safe_;
         p = t.find(kSpace, p + 1))
      if (p < 3 || t.compare(p - 3, 3, kSpace) != 0) word_safe_ = false;
  for (int b = 0; b < 256; ++b) byte_token_[b] = vocab_.find(fmt::format("<0x{:02X}>", b));
}

std::string SpmTokenizer::token_bytes(int32_t id, bool show_special) const {
  if (id < 0 || id >= vocab_.size()) return "";
  const std::string& t = vocab_.tokens[id];
  switch (vocab_.types[id]) {
    case TokenType::Control:
      return show_special ? t : "";
    case TokenType::Byte:
      if (t.size() == 6 && t.rfind("<0x", 0) == 0) {
        return std::string(1, static_cast<char>(std::stoi(t.substr(3, 2), nullptr, 16)));
      }
      return t;
    default: {
      std::string out;
      out.reserve(t.size());
      for (size_t i = 0; i < t.size();) {
        if (t.compare(i, 3, kSpace) == 0) {
          out += ' ';
          i += 3;
        } else {
          out += t[i++];
        }
      }
      return out;
    }
  }
}

void SpmTokenizer::emit(std::string_view piece, std::vector<int32_t>& out) const {
  const int32_t id = vocab_.find(piece);
  if (id >= 0) {
    out.push_back(id);
    return;
  }
  for (unsigned char c : piece) {
    if (byte_token_[c] >= 0)
      out.push_back(byte_token_[c]);
    else if (vocab_.unk >= 0)
      out.push_back(vocab_.unk);
  }
}

void SpmTokenizer::encode_text(std::string_view raw, bool at_start,
                               std::vector<int32_t>& out) const {
  std::string text;
  text.reserve(raw.size() + 8);
  if (at_start && vocab_.add_space_prefix) text += kSpace;
  for (char c : raw) {
    if (c == ' ')
      text += kSpace;
    else
      text += c;
  }
  const std::string_view all(text);
  if (!word_safe_) {
    encode_chunk(all, out);
    return;
  }
  // No token holds a character followed by the word marker, so no merge ever crosses the start
  // of a word: words are merged alone, and a word seen before in this text reuses its ids.
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> seen;
  size_t start = 0;
  auto flush = [&](size_t end) {
    const std::string_view w = all.substr(start, end - start);
    start = end;
    if (w.empty()) return;
    auto [it, fresh] = seen.try_emplace(w, out.size(), 0);
    if (!fresh) {
      const auto [at, count] = it->second;
      for (size_t k = 0; k < count; ++k) out.push_back(out[at + k]);
      return;
    }
    encode_chunk(w, out);
    it->second.second = out.size() - it->second.first;
  };
  for (size_t i = 1; i < all.size(); ++i)
    if (all.compare(i, 3, kSpace) == 0 && (i < 3 || all.compare(i - 3, 3, kSpace) != 0)) flush(i);
  flush(all.size());
}

void SpmTokenizer::encode_chunk(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<Symbol> sym;
  for (size_t i = 0; i < text.size();) {
    const size_t n = std::min(utf8_len(static_cast<unsigned char>(text[i])), text.size() - i);
    sym.push_back({static_cast<int>(sym.size()) - 1, static_cast<int>(sym.size()) + 1, i, n});
    i += n;
  }
  if (sym.empty()) return;
  sym.back().next = -1;

  std::priority_queue<Bigram> queue;
  auto try_add = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    const size_t len = sym[l].len + sym[r].len;
    const int32_t id = vocab_.find(text.substr(sym[l].start, len));
    if (id < 0) return;
    queue.push({l, r, vocab_.scores[id], sym[l].len, sym[r].len});
  };
  for (size_t i = 1; i < sym.size(); ++i) try_add(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = sym[b.left];
    Symbol& r = sym[b.right];
    // Stale entries: one side was merged away or grew since this pair was queued. (Comparing
    // only the sum of the lengths lets a stale pair through when the sums agree.)
    if (l.len != b.llen || r.len != b.rlen || l.next != b.right) continue;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int i = 0; i >= 0; i = sym[i].next) emit(text.substr(sym[i].start, sym[i].len), out);
}

}  // namespace brisk
