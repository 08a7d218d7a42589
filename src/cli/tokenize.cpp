// brisk tokenize: text to token ids with a model's tokenizer, like llama-tokenize. Works on full
// models, vocab-only GGUF files and tokenizer.json files.
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/options.h"
#include "core/error.h"
#include "core/utf8.h"
#include "formats/loader.h"
#include "tokenizer/tokenizer.h"

namespace brisk::cli {
namespace {

struct TokenizeArgs {
  Options opt;
  std::string prompt, file;
  bool from_stdin = false, ids_only = false, no_bos = false, parse_special = false;
  bool show_count = false;
};

// A piece shown between quotes: printable as is, other bytes escaped.
std::string shown(const std::string& s) {
  std::string out;
  const bool valid = utf8_valid(s);  // a token holding part of a character shows its bytes
  for (unsigned char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\'' || c == '\\')
      out += std::string("\\") + static_cast<char>(c);
    else if (c < 0x20 || c == 0x7f || (!valid && c >= 0x80))
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  return out;
}

int tokenize(TokenizeArgs& a) {
  const int sources = !a.prompt.empty() + !a.file.empty() + a.from_stdin;
  if (sources != 1) fail("tokenize: give exactly one of -p TEXT, -f FILE, --stdin");
  std::string text = a.prompt;
  if (!a.file.empty()) text = read_text_file(a.file, "text file");
  if (a.from_stdin) {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  }
  const std::string path = resolve_model(a.opt.model);
  const auto tok = Tokenizer::create(load_model_file(path, a.opt.model.tokenizer));
  const auto ids = tok->encode(text, !a.no_bos, a.parse_special);
  if (a.ids_only) {
    std::string line = "[";
    for (size_t i = 0; i < ids.size(); ++i) line += fmt::format("{}{}", i ? ", " : "", ids[i]);
    fmt::print("{}]\n", line);
  } else {
    for (int32_t id : ids)
      fmt::print("{:>6} -> '{}'\n", id, shown(tok->token_bytes(id, /*show_special=*/true)));
  }
  if (a.show_count) fmt::print("Total number of tokens: {}\n", ids.size());
  return 0;
}

}  // namespace

void register_tokenize(CLI::App& app, Commands& c) {
  auto a = std::make_shared<TokenizeArgs>();
  CLI::App* s = app.add_subcommand(
      "tokenize", "Show the tokens a model's tokenizer makes of a text (like llama-tokenize)");
  s->option_defaults()->always_capture_default();
  add_options(*s, a->opt, kModel);
  s->add_option("-p,--prompt", a->prompt, "Text to tokenize");
  s->add_option("-f,--file", a->file, "Read the text from this file");
  s->add_flag("--stdin", a->from_stdin, "Read the text from standard input");
  s->add_flag("--ids", a->ids_only, "Print only the ids, as a list: [1, 15043, ...]");
  s->add_flag("--no-bos", a->no_bos,
              "Do not add the BOS/EOS tokens the tokenizer would add to a prompt");
  s->add_flag("--parse-special", a->parse_special,
              "Match special-token texts such as <|im_start|> in the text (off: they are "
              "tokenized as plain characters)");
  s->add_flag("--show-count", a->show_count, "Also print the number of tokens");
  s->callback([a, &c] { c.selected = [a] { return tokenize(*a); }; });
}

}  // namespace brisk::cli
