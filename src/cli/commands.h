#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace brisk::cli {

// Each subcommand registers its options and, when chosen, sets `selected` to its action.
struct Commands {
  std::function<int()> selected;
};

void register_run(CLI::App& app, Commands& c);
void register_info(CLI::App& app, Commands& c);
void register_bench(CLI::App& app, Commands& c);
void register_bench_throughput(CLI::App& bench, Commands& c);  // brisk bench throughput
void register_bench_serve(CLI::App& bench, Commands& c);       // brisk bench serve
void register_bench_spec(CLI::App& bench, Commands& c);        // brisk bench spec
void register_quantize(CLI::App& app, Commands& c);
void register_perplexity(CLI::App& app, Commands& c);
void register_imatrix(CLI::App& app, Commands& c);
void register_tokenize(CLI::App& app, Commands& c);
void register_chat(CLI::App& app, Commands& c);
void register_serve(CLI::App& app, Commands& c);
void register_template(CLI::App& app, Commands& c);
void register_grammar(CLI::App& app, Commands& c);

}  // namespace brisk::cli
