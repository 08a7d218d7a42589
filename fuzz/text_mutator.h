// Syntax-aware mutations of regular expressions and GBNF grammars for their fuzz targets: random
// bytes mostly break the syntax and stop at the parser, so these insert the language's own
// constructs (groups, classes, quantifiers, alternations, escapes; rules, references, repetitions,
// recursion) where they keep a text close to parsing, so the compiler, the lowering to bytes and
// the matcher get the inputs.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace brisk::fuzz {

// libFuzzer's custom-mutator hook over a text: one time in eight its own byte-level mutation, else
// `edit` (a TextMutator method) on the text, cut to max_size.
template <typename Edit>
size_t mutate_text(uint8_t* data, size_t size, size_t max_size, unsigned int seed, Edit edit) {
  if (seed % 8 == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::string text(reinterpret_cast<const char*>(data), size);
  edit(text, seed);
  if (text.size() > max_size) text.resize(max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

class TextMutator {
 public:
  explicit TextMutator(uint64_t seed) : rng_(seed) {}

  void mutate_regex(std::string& re) {
    static const char* const kPieces[] = {
        "(a|b)", "(?:x)", "[a-z]",       "[^0-9]", "[\\w-]", "*",       "+",          "?",
        "{2,5}", "{3}",   "{0,1000}",    "*?",     ".",      "\\d",     "\\s",        "\\b",
        "^",     "$",     "|",           "(",      ")",      "\\u00e9", "\\u{1F600}", "(?=a)",
        "(?!b)", "\\1",   "[[:alpha:]]", "\\p{L}", "(a*)*",  "é",       "\\.",        "[\\]]"};
    for (int n = 1 + static_cast<int>(pick(3)); n > 0; --n) {
      const size_t at = pick(re.size() + 1);
      switch (pick(5)) {
        case 0:
        case 1:
          re.insert(at, kPieces[pick(std::size(kPieces))]);
          break;
        case 2: {  // a piece of it in a group with a quantifier
          const size_t len = pick(re.size() - at + 1);
          static const char* const kQuant[] = {"*", "+", "?", "{1,3}", ""};
          re = re.substr(0, at) + "(" + re.substr(at, len) + ")" + kQuant[pick(5)] +
               re.substr(at + len);
          break;
        }
        case 3:  // a piece repeated
          re.insert(at, re.substr(pick(re.size() + 1), pick(8)));
          break;
        default:
          re.erase(at, pick(4) + 1);
      }
    }
    if (re.size() > 4096) re.resize(4096);
  }

  void mutate_gbnf(std::string& text) {
    std::vector<std::string> lines, names;
    size_t p = 0;
    while (p <= text.size()) {
      const size_t q = text.find('\n', p);
      lines.push_back(text.substr(p, q == std::string::npos ? std::string::npos : q - p));
      if (std::string n = rule_name(lines.back()); !n.empty()) names.push_back(std::move(n));
      if (q == std::string::npos) break;
      p = q + 1;
    }
    if (names.empty()) names.push_back("root");
    auto name = [&] { return names[pick(names.size())]; };
    static const char* const kElems[] = {"\"x\"",  "[a-c]",     "[^\"\\\\]",        "\"\\u00e9\"",
                                         "[0-9]+", "\"ab\"?",   "(\"y\" | \"z\")*", "[ \\t\\n]*",
                                         ".",      "\"q\"{2,4}"};
    for (int n = 1 + static_cast<int>(pick(3)); n > 0; --n) {
      std::string& line = lines[pick(lines.size())];
      switch (pick(6)) {
        case 0:  // another alternative
          line += " | " + name() + " " + kElems[pick(std::size(kElems))];
          break;
        case 1:  // an element
          line += std::string(" ") + kElems[pick(std::size(kElems))];
          break;
        case 2:  // a reference, maybe to itself (recursion) or to nothing
          line += " " + (pick(4) == 0 ? std::string("undefined-rule") : name());
          break;
        case 3: {  // the right-hand side wrapped in a repetition
          const size_t eq = line.find("::=");
          if (eq != std::string::npos) {
            static const char* const kQuant[] = {")*", ")+", ")?", "){0,3}", "){2}"};
            line = line.substr(0, eq + 3) + " (" + line.substr(eq + 3) + kQuant[pick(5)];
          }
          break;
        }
        case 4:  // a new rule
          lines.push_back("r" + std::to_string(pick(100)) + " ::= " + name() + " " +
                          kElems[pick(std::size(kElems))] + " | " +
                          kElems[pick(std::size(kElems))]);
          break;
        default:  // a rule duplicated
          lines.push_back(lines[pick(lines.size())]);
      }
    }
    text.clear();
    for (size_t i = 0; i < lines.size(); ++i) text += (i ? "\n" : "") + lines[i];
    if (text.size() > 8192) text.resize(8192);
  }

 private:
  std::mt19937_64 rng_;
  size_t pick(size_t n) { return n ? static_cast<size_t>(rng_() % n) : 0; }

  // The name a line "NAME ::= ..." defines, or "".
  static std::string rule_name(const std::string& line) {
    const size_t eq = line.find("::=");
    if (eq == std::string::npos) return "";
    const size_t b = line.find_first_not_of(" \t");
    const size_t e = line.find_last_not_of(" \t", eq - 1);
    if (b == std::string::npos || e == std::string::npos || e < b || b >= eq) return "";
    const std::string name = line.substr(b, e - b + 1);
    for (char c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return "";
    return name;
  }
};

}  // namespace brisk::fuzz
