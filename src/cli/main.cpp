// brisk: one binary, one subcommand per file in src/cli.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/error.h"
#include "model/follower.h"
#include "parallel/communicator.h"

namespace {

// Under mpirun, the commands that run a model split over the ranks; the rest are one-process
// tools, refused rather than run N times over the same files.
bool runs_split(const CLI::App& app) {
  for (const CLI::App* c = &app; !c->get_subcommands().empty();) {
    c = c->get_subcommands().front();
    const std::string& n = c->get_name();
    if (n == "run" || n == "chat" || n == "serve" || n == "perplexity" || n == "throughput" ||
        n == "spec")
      return true;
    if (n != "bench") return false;
    if (c->get_subcommands().empty()) return true;  // brisk bench itself
  }
  return false;
}

// Every exit: the other ranks are released (or released with) rank 0, then MPI finishes.
int finish(int rc) {
  brisk::end_plans(brisk::world());
  brisk::finish_world();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  brisk::Communicator& comm = brisk::init_world(&argc, &argv);
  brisk::cli::install_interrupt_handler();
  // Rank 0 speaks for the job: the other ranks print only errors and leave Ctrl-C to it.
  if (comm.rank() != 0) brisk::cli::quiet_follower();
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
    return finish(comm.rank() == 0 ? app.exit(e) : 1);
  }
  if (comm.size() > 1 && !runs_split(app)) {
    if (comm.rank() == 0)
      std::fprintf(stderr,
                   "error: under mpirun brisk runs run, chat, serve, bench, bench throughput, "
                   "bench spec and perplexity; start the others without mpirun\n");
    return finish(1);
  }
  try {
    return finish(cmds.selected ? cmds.selected() : 1);
  } catch (const std::exception& e) {
    // A rank other than 0 failing alone leaves the job out of step: it ends the whole job.
    if (comm.rank() != 0) comm.abort(e.what());
    std::fprintf(stderr, "error: %s\n", e.what());
    return finish(1);
  }
}
