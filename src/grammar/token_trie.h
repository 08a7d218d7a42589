// The vocabulary as the matcher sees it: each token's bytes in a trie stored in preorder (a walk is
// a pass over an array that skips a subtree by jumping to its end), and the end-of-generation
// tokens, which are allowed exactly where the grammar may end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace brisk::grammar {

class TokenTrie {
 public:
  struct Node {
    uint8_t byte;     // the byte leading here from the parent
    uint16_t depth;   // bytes from the root
    uint32_t end;     // the index past its subtree
    uint32_t first;   // its subtree's first token in order(); those ending here come first
    uint32_t n_here;  // tokens ending here
  };

  // Tokens by id: their bytes ("" for those never matched: control, unknown and unused tokens);
  // eog: the tokens that end generation.
  TokenTrie(std::vector<std::string> bytes, std::vector<int32_t> eog);
  // special_text: control tokens (end-of-generation ones aside) are matched as their text too.
  static TokenTrie from_tokenizer(const Tokenizer& tok, bool special_text = false);

  // nodes()[0] is the root; a sentinel after the last node closes every subtree's token range.
  const std::vector<Node>& nodes() const { return nodes_; }
  size_t n_nodes() const { return nodes_.size() - 1; }
  // Tokens in byte order; a node's subtree holds order()[first, nodes()[end].first).
  const std::vector<int32_t>& order() const { return order_; }
  const std::string& bytes(int32_t id) const { return bytes_[static_cast<size_t>(id)]; }
  const std::vector<int32_t>& eog() const { return eog_; }
  int32_t n_vocab() const { return static_cast<int32_t>(bytes_.size()); }
  size_t n_words() const { return (bytes_.size() + 63) / 64; }  // of a mask
  size_t max_depth() const { return max_depth_; }
  // Bytes order()[k] shares with order()[k - 1] (0 for k = 0): the common prefix of any two
  // tokens is the least of these between them.
  const std::vector<uint16_t>& order_lcp() const { return order_lcp_; }
  // How many tokens are longer than n bytes, and where they are in order(): the first
  // n_longer(n) of by_length() (longest first).
  size_t n_longer(size_t n) const { return n < n_longer_.size() ? n_longer_[n] : 0; }
  const std::vector<uint32_t>& by_length() const { return by_length_; }
  // Where token `id` is in order() (-1 for a token with no bytes).
  int32_t rank(int32_t id) const { return rank_[static_cast<size_t>(id)]; }

  // Plain-text tokens: whole UTF-8 characters, none a control, a quote or a backslash (what most
  // strings take, so most of a vocabulary). Per node, the most characters of a token below it
  // (kNotPlain when one is not plain text).
  static constexpr uint16_t kNotPlain = UINT16_MAX;
  const std::vector<uint16_t>& max_plain() const { return max_plain_; }

 private:
  std::vector<std::string> bytes_;
  std::vector<int32_t> eog_;
  std::vector<int32_t> order_;
  std::vector<Node> nodes_;
  std::vector<uint16_t> order_lcp_;
  std::vector<int32_t> rank_;
  std::vector<size_t> n_longer_;
  std::vector<uint32_t> by_length_;
  std::vector<uint16_t> max_plain_;
  size_t max_depth_ = 0;

  void find_plain();
};

}  // namespace brisk::grammar
