// Pieces every subcommand shares: which model to open (a path, -hf, or the default model),
// loading it with timing, reading the files users name, and Ctrl-C. Options: cli/options.h.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace brisk::cli {

struct ModelArgs {
  std::string path;              // -m
  std::string tokenizer;         // -z
  std::string hf;                // -hf OWNER/REPO[:FILE]
  bool no_repack = false;        // --no-repack: weights used as the file stores them
  bool no_repack_cache = false;  // --no-repack-cache: interleave at every start
  // The context the model runs with (-c where the command has one; 0: the model's own), which
  // LongRoPE models pick their rope factors by (model/model.h).
  int64_t context = 0;
};

// The file to open: -m, else -hf (downloaded), else the default model (stories260K from
// ../shared next to the checkout or the working directory, else downloaded once to the cache).
std::string resolve_model(ModelArgs& a);

// Under mpirun every rank loads its share of the model; on ranks other than 0 this call never
// returns: the rank follows rank 0's batches and exits when rank 0 ends the job.
std::unique_ptr<Model> load_model(ModelArgs& a, double* seconds);

// " (of which N ms interleaving rows for the kernels)", or mapping them from the cache file, or
// "" when nothing was interleaved: the load line of `run` and `bench`.
std::string repack_summary(const Model& m);

// The middle of the values (the upper one of an even count; 0 when none), and the nearest-rank
// percentile p in (0, 1]: what every benchmark and `brisk grammar` report.
double median(std::vector<double> v);
double percentile(std::vector<double> v, double p);

// The whole of a text file the user named; the error names the file and what it was for.
std::string read_text_file(const std::string& path, const char* what);

// Ctrl-C. The handler is installed first thing in main, so no interrupt is ever lost (a program
// started in the background by a shell begins with SIGINT ignored). Outside a graceful section
// it exits at once with status 130; inside one (generation) the first sets g_interrupted, which
// the loop honours at its next step, and a second exits at once.
extern std::atomic<bool> g_interrupted;
void install_interrupt_handler();
void catch_interrupts(bool graceful);
// A rank other than 0 under mpirun: its standard output goes nowhere (rank 0 prints for the
// job) and it ignores Ctrl-C (rank 0 handles it and then releases the others).
void quiet_follower();

}  // namespace brisk::cli
