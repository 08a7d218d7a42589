// brisk grammar: compiles a constraint (--json, --json-schema, --regex, --grammar, --choice)
// against a model's vocabulary without running the model, and with --check feeds texts through
// the matcher token by token, timing the full mask before every token.
#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/options.h"
#include "core/clock.h"
#include "core/error.h"
#include "formats/loader.h"
#include "grammar/matcher.h"
#include "tokenizer/tokenizer.h"

namespace brisk::cli {
namespace {

using json = nlohmann::ordered_json;

struct GrammarArgs {
  Options opt;
  std::string check;  // a JSONL file of {"text": ...}
  bool print = false;
};

// One text through the matcher: whether every token is allowed (the mask computed before each)
// and the grammar may end after them; the byte where it went wrong otherwise.
json check_text(const std::shared_ptr<const grammar::CompiledGrammar>& cg, const Tokenizer& tok,
                const std::string& text, std::vector<double>& mask_us) {
  grammar::Matcher m(cg);
  std::vector<uint64_t> mask(cg->trie().n_words());
  size_t at = 0;
  for (int32_t t : tok.encode_continuation(text)) {
    const double t0 = now_seconds();
    m.fill_mask(mask.data());
    mask_us.push_back((now_seconds() - t0) * 1e6);
    if (!((mask[size_t(t) >> 6] >> (t & 63)) & 1) || !m.accept(t))
      return {{"accepted", false}, {"error_at", at}};
    at += tok.token_bytes(t).size();
  }
  if (!m.can_end()) return {{"accepted", false}, {"error_at", at}};
  return {{"accepted", true}, {"error_at", nullptr}};
}

int grammar_command(GrammarArgs& a) {
  const auto tok =
      Tokenizer::create(load_model_file(resolve_model(a.opt.model), a.opt.model.tokenizer));
  std::optional<grammar::Constraint> constraint;
  try {
    constraint = a.opt.output_constraint(tok->vocab().chat_template);
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
  if (!constraint)
    fail("grammar: give one of --json, --json-schema, --regex, --grammar, --choice, --tools");
  const auto trie = std::make_shared<grammar::TokenTrie>(
      grammar::TokenTrie::from_tokenizer(*tok, constraint->special_text));
  const double t0 = now_seconds();
  std::shared_ptr<const grammar::CompiledGrammar> cg;
  try {
    const grammar::Grammar g = grammar::constraint_grammar(*constraint);
    if (a.print) fmt::print(stderr, "{}", g.to_gbnf());
    cg = std::make_shared<grammar::CompiledGrammar>(g, trie);
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
  const double compile_ms = (now_seconds() - t0) * 1e3;
  std::vector<double> mask_us;
  if (!a.check.empty()) {
    std::ifstream in(a.check);
    if (!in) fail("grammar: cannot open --check file {}", a.check);
    std::string line;
    for (size_t i = 0; std::getline(in, line);) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("text") || !j["text"].is_string())
        fail("grammar: --check line {} is not {{\"text\": \"...\"}}", i + 1);
      const json verdict = check_text(cg, *tok, j["text"].get<std::string>(), mask_us);
      json out = {{"index", i++}};
      out.update(verdict);
      fmt::print("{}\n", out.dump());
    }
  }
  json summary = {{"compile_ms", compile_ms}, {"tokens", mask_us.size()}};
  summary["mask_us_p50"] = median(mask_us);
  summary["mask_us_p99"] = percentile(mask_us, 0.99);
  summary["mask_us_max"] = mask_us.empty() ? 0 : *std::max_element(mask_us.begin(), mask_us.end());
  fmt::print("{}\n", summary.dump());
  return 0;
}

}  // namespace

void register_grammar(CLI::App& app, Commands& c) {
  auto a = std::make_shared<GrammarArgs>();
  CLI::App* s = app.add_subcommand(
      "grammar",
      "Compile a constraint against a model's vocabulary and check texts against it (exit "
      "status 2 when the constraint is refused)");
  s->option_defaults()->always_capture_default();
  add_options(*s, a->opt, kModel | kConstraint);
  s->add_option("--check", a->check,
                "JSONL file of {\"text\": ...}: each text is tokenized as the model would emit it "
                "and fed token by token, the full mask computed before each; prints one verdict "
                "per line and a summary with mask times");
  s->add_flag("--print", a->print, "Print the compiled grammar (GBNF) to stderr");
  s->callback([a, &c] { c.selected = [a] { return grammar_command(*a); }; });
}

}  // namespace brisk::cli
