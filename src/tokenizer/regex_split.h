// Pre-tokenization by regular expressions, as Hugging Face's Split(behavior = Isolated) and
// llama.cpp apply them: each expression in turn cuts every current piece into its matches and the
// text between them; later expressions see one piece at a time (so `$` and look-arounds stop at
// the piece's ends). PCRE2 with Unicode properties and JIT does the matching.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace brisk {

class RegexSplitter {
 public:
  // Throws brisk::Error naming the pattern and the offset of a syntax error.
  explicit RegexSplitter(const std::vector<std::string>& patterns);
  ~RegexSplitter();
  RegexSplitter(RegexSplitter&&) noexcept;
  RegexSplitter& operator=(RegexSplitter&&) noexcept;

  // Appends the pieces of text (views into it) to out; with no patterns, text is one piece.
  void split(std::string_view text, std::vector<std::string_view>& out) const;
  bool empty() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace brisk
