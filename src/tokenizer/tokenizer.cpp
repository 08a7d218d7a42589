#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/bpe.h"
#include "tokenizer/spm.h"
#include "tokenizer/wpm.h"

namespace brisk {

std::unique_ptr<Tokenizer> Tokenizer::create(const ModelFile& mf) {
  Vocab v = Vocab::from_model(mf);
  try {
    if (v.model == "llama") return std::make_unique<SpmTokenizer>(std::move(v));
    if (v.model == "gpt2") return std::make_unique<BpeTokenizer>(std::move(v));
    if (v.model == "bert") return std::make_unique<WpmTokenizer>(std::move(v));
  } catch (const Error& e) {
    fail("{}: {}", mf.path, e.what());
  }
  fail("{}: tokenizer kind '{}' (tokenizer.ggml.model) is not supported (llama, gpt2 and bert are)",
       mf.path, v.model);
}

Tokenizer::Tokenizer(Vocab v) : vocab_(std::move(v)) {
  for (int32_t i = 0; i < vocab_.size(); ++i) {
    const TokenType t = vocab_.types[i];
    const std::string& text = vocab_.tokens[i];
    if ((t != TokenType::Control && t != TokenType::UserDefined) || text.empty()) continue;
    // Two tokens with one text: the first id wins, as in a vocabulary lookup.
    if (!special_ids_.emplace(std::string_view(text), i).second) continue;
    auto& lens = special_lengths_[static_cast<unsigned char>(text[0])];
    if (std::find(lens.begin(), lens.end(), text.size()) == lens.end()) lens.push_back(text.size());
  }
  for (auto& lens : special_lengths_) std::sort(lens.rbegin(), lens.rend());
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && vocab_.add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
  out = encode_runs(text, parse_special, true, std::move(out));
  if (add_special && vocab_.add_eos && vocab_.eos >= 0) out.push_back(vocab_.eos);
  return out;
}

std::vector<int32_t> Tokenizer::encode_continuation(std::string_view text) const {
  return encode_runs(text, false, false, {});
}

std::vector<int32_t> Tokenizer::encode_runs(std::string_view text, bool parse_special,
                                            bool at_start, std::vector<int32_t> out) const {
  // User-defined tokens are always cut out of the text (as Hugging Face does with added tokens
  // that are not special); control tokens only when parse_special asks for them. The longest
  // text that matches wins.
  size_t start = 0, i = 0;
  bool after_special = at_start;  // text at the start, or right after a special token
  while (i < text.size()) {
    int32_t hit = -1;
    for (size_t len : special_lengths_[static_cast<unsigned char>(text[i])]) {
      if (len > text.size() - i) continue;
      auto it = special_ids_.find(text.substr(i, len));
      if (it == special_ids_.end()) continue;
      if (!parse_special && vocab_.types[it->second] == TokenType::Control) continue;
      hit = it->second;
      break;
    }
    if (hit < 0) {
      ++i;
      continue;
    }
    if (i > start) encode_text(text.substr(start, i - start), after_special, out);
    out.push_back(hit);
    after_special = true;
    i += vocab_.tokens[hit].size();
    start = i;
  }
  if (start < text.size()) encode_text(text.substr(start), after_special, out);
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
  if (!started_ && piece[0] == ' ' &&
      ((after_bos_ && tok_.strips_leading_space()) || tok_.strips_leading_space_always()))
    piece.erase(0, 1);
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
