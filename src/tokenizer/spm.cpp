#include "tokenizer/spm.h"

#include <fmt/format.h>

#include <queue>

#include "core/error.h"
#include "tokenizer/utf8.h"

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
  size_t len;
  bool operator<(const Bigram& o) const {  // priority_queue pops the largest
    return score < o.score || (score == o.score && left > o.left);
  }
};

}  // namespace

SpmTokenizer::SpmTokenizer(Vocab v) : Tokenizer(std::move(v)) {
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
  const int32_t id = vocab_.find(std::string(piece));
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
    queue.push({l, r, vocab_.scores[id], len});
  };
  for (size_t i = 1; i < sym.size(); ++i) try_add(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = sym[b.left];
    Symbol& r = sym[b.right];
    // Stale entries: one side was merged away or grew since this pair was queued.
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.len || l.next != b.right) continue;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int i = 0; i >= 0; i = sym[i].next)
    emit(std::string_view(text).substr(sym[i].start, sym[i].len), out);
}

}  // namespace brisk
