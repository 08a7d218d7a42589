#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "core/error.h"
#include "tokenizer/spm.h"
#include "tokenizer/utf8.h"

namespace brisk {

std::unique_ptr<Tokenizer> Tokenizer::create(const ModelFile& mf) {
  Vocab v = Vocab::from_model(mf);
  if (v.model == "llama") return std::make_unique<SpmTokenizer>(std::move(v));
  fail("{}: tokenizer kind '{}' is not supported yet (SentencePiece 'llama' vocabularies are)",
       mf.path, v.model);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && vocab_.add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
  if (!parse_special) {
    if (!text.empty()) encode_text(text, true, out);
  } else {
    // Longest special-token text wins at each position; the rest is ordinary text.
    std::vector<int32_t> specials;
    for (int32_t i = 0; i < vocab_.size(); ++i)
      if ((vocab_.types[i] == TokenType::Control || vocab_.types[i] == TokenType::UserDefined) &&
          !vocab_.tokens[i].empty())
        specials.push_back(i);
    std::sort(specials.begin(), specials.end(), [&](int32_t a, int32_t b) {
      return vocab_.tokens[a].size() > vocab_.tokens[b].size();
    });
    size_t start = 0, i = 0;
    bool at_start = true;
    while (i < text.size()) {
      int32_t hit = -1;
      for (int32_t s : specials)
        if (text.compare(i, vocab_.tokens[s].size(), vocab_.tokens[s]) == 0) {
          hit = s;
          break;
        }
      if (hit < 0) {
        ++i;
        continue;
      }
      if (i > start) encode_text(text.substr(start, i - start), at_start, out);
      out.push_back(hit);
      at_start = false;
      i += vocab_.tokens[hit].size();
      start = i;
    }
    if (start < text.size()) encode_text(text.substr(start), at_start, out);
  }
  if (add_special && vocab_.add_eos && vocab_.eos >= 0) out.push_back(vocab_.eos);
  return out;
}

std::string StreamDecoder::push(int32_t id) {
  if (id < 0 || id >= tok_.vocab().size()) return "";
  if (id == tok_.vocab().bos) {
    after_bos_ = true;
    if (!show_special_) return "";
  }
  std::string piece = tok_.token_bytes(id, show_special_);
  if (piece.empty()) return "";
  if (after_bos_ && !started_ && tok_.strips_leading_space() && piece[0] == ' ') piece.erase(0, 1);
  started_ = true;
  pending_ += piece;
  const size_t n = utf8_complete_prefix(pending_);
  std::string out = pending_.substr(0, n);
  pending_.erase(0, n);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace brisk
