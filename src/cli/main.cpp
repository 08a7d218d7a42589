// brisk: one binary, one subcommand per file in src/cli.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/error.h"

int main(int argc, char** argv) {
  brisk::cli::install_interrupt_handler();
  // llama.cpp spells the hub option -hf and the draft model -md; CLI11 allows only one-letter
  // short options.
  std::vector<std::string> args(argv, argv + argc);
  for (auto& a : args) {
    if (a == "-hf" || a == "-hfr") a = "--hf-repo";
    if (a == "-md") a = "--model-draft";
  }
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());

  CLI::App app{"brisk: fast LLM inference on your own CPU"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "brisk " BRISK_VERSION);
  brisk::cli::Commands cmds;
  brisk::cli::register_run(app, cmds);
  brisk::cli::register_info(app, cmds);
  brisk::cli::register_bench(app, cmds);
  brisk::cli::register_quantize(app, cmds);
  brisk::cli::register_perplexity(app, cmds);
  brisk::cli::register_imatrix(app, cmds);
  brisk::cli::register_tokenize(app, cmds);
  brisk::cli::register_template(app, cmds);
  brisk::cli::register_grammar(app, cmds);
  brisk::cli::register_chat(app, cmds);
  brisk::cli::register_serve(app, cmds);
  try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return cmds.selected ? cmds.selected() : 1;
  } catch (const brisk::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
