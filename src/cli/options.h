// Every option that more than one command takes, defined once with one default and one help text
// (as llama.cpp's common/arg.cpp keeps them), in groups; each command names the groups it takes
// and adds only the flags that are its own. vLLM's spellings are accepted beside llama.cpp's.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "cli/common.h"
#include "engine/engine.h"
#include "grammar/constraint.h"

namespace brisk::cli {

// Speculative decoding.
struct SpecArgs {
  std::string method = "none";         // "draft" whenever a draft model is named
  std::string draft_model;             // -md
  std::shared_ptr<const Model> draft;  // loaded by spec_config
  int draft_max = 8, draft_min = 1;
  int ngram_max = 4, ngram_min = 1;
  int draft_layers = 0;
  int disable_batch_size = 0;
  bool fixed = false;
};

// The engine: its KV cache, the size of a forward pass, how many sequences run at once, and
// speculation. run and chat are this engine with one sequence (max_seqs = 1).
struct EngineArgs {
  std::string kv_cache_size;  // "2GiB", "512MiB", "1e9", ... ("" : automatic)
  std::string kv_dtype = "auto";
  int block_size = 16;
  int64_t max_batched_tokens = 512;  // -b
  int max_seqs = 64;
  // kConcurrencySweep: the --max-seqs values to run one after another (the first is max_seqs).
  std::vector<int> max_seqs_sweep;
  int64_t prefill_while_decoding = -1;
  int64_t max_model_len = 0;  // -c
  bool no_prefix_caching = false;
  SpecArgs spec;
};

// Constrained output: at most one of these (a JSON Schema or a grammar from a file).
struct ConstraintArgs {
  bool json = false;
  std::string json_schema;  // a file
  std::string regex;
  std::string grammar;  // a GBNF file
  std::string choice;   // A,B,...
  int json_whitespace = 20;
  bool oneof_as_anyof = false;
  std::string tools;                 // a file of OpenAI's tools list
  std::string tool_choice = "auto";  // auto, required, or a function's name
  std::string tool_parser = "auto";  // the family's syntax: auto (the chat template's) or a name
};

// The option groups; a command takes the union of those it names.
enum OptionGroup : unsigned {
  kModel = 1u << 0,         // -m, -z, -hf, --no-repack
  kThreads = 1u << 1,       // -t
  kEngine = 1u << 2,        // -c, -b, the KV cache (size, type, blocks), prefix caching
  kConcurrency = 1u << 3,   // --max-seqs, --max-prefill-while-decoding
  kSpecMethod = 1u << 4,    // --spec, --draft-max
  kSpecTuning = 1u << 5,    // -md and how drafts are sized and found
  kSampling = 1u << 6,      // --temp, --top-k, --top-p, --min-p, penalties, -s
  kChatTemplate = 1u << 7,  // --chat-template
  kConstraint = 1u << 8,    // --json, --json-schema, --regex, --grammar, --choice, --tools
  // kConcurrency with --max-seqs taking several values, comma-separated (bench throughput)
  kConcurrencySweep = 1u << 9,
  kSpeculation = kSpecMethod | kSpecTuning,
};

struct Options {
  ModelArgs model;
  int threads = 0;  // 0: every core
  EngineArgs engine;
  SamplingParams sampling;
  int64_t seed = -1;  // -1: random
  std::string chat_template;
  ConstraintArgs constraint;

  // The values the commands use, resolved the same way everywhere.
  int thread_count() const;
  // The seed given, or a random one (printed to stderr when random or when `verbose`).
  uint64_t resolve_seed(bool verbose) const;
  // The chat template file's text ("" when none was given: the model's own).
  std::string chat_template_source() const;
  // The constraint asked for (files read), or none; tool calls are written in the family of
  // this chat template (or of --tool-call-parser).
  std::optional<grammar::Constraint> output_constraint(std::string_view template_source = {}) const;
  std::optional<grammar::Constraint> tool_call_constraint(std::string_view template_source) const;
};

void add_options(CLI::App& app, Options& o, unsigned groups);

// The engine these options describe for model m (the draft model, if any, is loaded once).
EngineConfig engine_config(EngineArgs& a, const Model& m);
// Loads the draft model (-md) the first time, keeping it in `a` for the engine's lifetime.
SpecConfig spec_config(SpecArgs& a);
// Lines for stderr: drafts verified, tokens accepted, mean accepted length, acceptance by position
// ("" when nothing was proposed).
std::string describe_spec(const EngineStats& st);

// --kv-cache-dtype: "auto" keeps the KV in the weights' own precision where that is a float type
// (f32, bf16) and f16 otherwise, as vLLM's "auto" and llama.cpp's default do.
KvType kv_type_for(const std::string& name, const Model& m);

// Parses a byte size: a number with an optional unit (B, K/KB/KiB, M/MB/MiB, G/GB/GiB; the
// decimal and binary units alike mean powers of 1024, as memory sizes usually do).
uint64_t parse_size(const std::string& s, const std::string& what);

// One line for stderr: how many blocks and tokens the pool holds, in what memory.
std::string describe_kv(const Engine& e);

}  // namespace brisk::cli
