// The serving engine's options (KV pool, batching, prefix caching), shared by every subcommand
// that runs the engine, with vLLM's spellings accepted beside brisk's.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "engine/engine.h"

namespace brisk::cli {

// Speculative decoding (run, chat, serve, bench throughput).
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
void add_spec_options(CLI::App& app, SpecArgs& a);
// All but --spec and --draft-max (for a command that chooses those itself, as bench spec does).
void add_spec_tuning_options(CLI::App& app, SpecArgs& a);
void add_draft_model_option(CLI::App& app, SpecArgs& a);  // -md
// Loads the draft model (-md) the first time, keeping it in `a` for the engine's lifetime.
SpecConfig spec_config(SpecArgs& a);
// Lines for stderr: drafts verified, tokens accepted, mean accepted length, acceptance by position
// ("" when nothing was proposed).
std::string describe_spec(const EngineStats& st);

struct EngineArgs {
  std::string kv_cache_size;  // "2GiB", "512MiB", "1e9", ... ("" : automatic)
  std::string kv_dtype = "auto";
  int block_size = 16;
  int64_t max_batched_tokens = 512;
  int max_seqs = 64;
  int64_t prefill_while_decoding = -1;
  int64_t max_model_len = 0;
  bool no_prefix_caching = false;
  SpecArgs spec;
};

void add_engine_options(CLI::App& app, EngineArgs& a);
EngineConfig engine_config(EngineArgs& a, const Model& m);

// --kv-cache-dtype: "auto" (the default everywhere) keeps the KV in the weights' own precision
// where that is a float type (f32, bf16) and f16 otherwise, as vLLM's "auto" and llama.cpp's
// default do; or one of f32, f16, bf16, q8_0.
KvType kv_type_for(const std::string& name, const Model& m);
inline const char* kKvDtypeHelp =
    "KV cache element type: auto (f32 or bf16 for such weights, else f16), f16, bf16, f32 or q8_0 "
    "(8-bit, a scale per position and head)";

// Parses a byte size: a number with an optional unit (B, K/KB/KiB, M/MB/MiB, G/GB/GiB; the
// decimal and binary units alike mean powers of 1024, as memory sizes usually do).
uint64_t parse_size(const std::string& s, const std::string& what);

// One line for stderr: how many blocks and tokens the pool holds, in what memory.
std::string describe_kv(const Engine& e);

}  // namespace brisk::cli
