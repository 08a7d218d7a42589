#include "cli/options.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <cstdio>
#include <random>

#include "chat/tool_grammar.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace brisk::cli {

uint64_t parse_size(const std::string& s, const std::string& what) {
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                          s[i] == 'e' || s[i] == 'E'))
    ++i;
  double v = 0;
  try {
    size_t used = 0;
    v = std::stod(s.substr(0, i), &used);
    if (used != i) throw std::invalid_argument("");
  } catch (const std::exception&) {
    fail("{}: '{}' is not a size (examples: 2GiB, 512MiB, 1500000000)", what, s);
  }
  std::string unit = s.substr(i);
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double mul = 1;
  if (unit.empty() || unit == "b")
    mul = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    mul = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    mul = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    mul = 1024.0 * 1024 * 1024;
  else
    fail("{}: unknown unit '{}' in '{}' (B, KiB, MiB or GiB)", what, s.substr(i), s);
  const double bytes = v * mul;
  if (!(bytes >= 1) || bytes > 1e15) fail("{}: '{}' is out of range", what, s);
  return static_cast<uint64_t>(bytes);
}

namespace {

void add_model_options(CLI::App& app, ModelArgs& a) {
  app.add_option("-m,--model", a.path,
                 "Model to load: a GGUF file, a llama2.c checkpoint, or a Hugging Face directory "
                 "(config.json + *.safetensors + tokenizer.json). Default: stories260K");
  app.add_option(
      "-z,--tokenizer", a.tokenizer,
      "llama2.c tokenizer file (default: tokenizer.bin or tok<vocab>.bin beside the checkpoint)");
  app.add_option("--hf-repo", a.hf,
                 "Download a model from the Hugging Face hub: OWNER/REPO[:FILE-OR-QUANT] (also "
                 "-hf); cached in $BRISK_CACHE, $XDG_CACHE_HOME/brisk or ~/.cache/brisk");
  app.add_flag(
      "--no-repack", a.no_repack,
      "Use the weights as the file stores them, mapped from it: no copy, but slower kernels "
      "(by default Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, BF16 and F16 matrices are "
      "interleaved 16 rows at a time on CPUs with AVX2, F32 ones on CPUs with AVX-512)");
  app.add_flag("--no-repack-cache", a.no_repack_cache,
               "Interleave the weights at every start. By default, when the interleaved "
               "matrices come to 256 MiB or more, the first start also writes them to "
               "$BRISK_CACHE/repacked (the cache directory of --hf-repo) and later starts map "
               "that file instead of interleaving again: a fast start, for the disk space of a "
               "second copy of the model. The file is tied to the model's size, time and header "
               "and to this program's layouts, and replaced when either changes");
}

void add_engine_options(CLI::App& app, EngineArgs& a) {
  app.add_option("-c,--ctx-size,--max-model-len", a.max_model_len,
                 "Longest sequence, prompt plus output, in tokens (0: the model's training "
                 "context, as far as the KV cache holds it)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
  app.add_option("-b,--batch-size,--max-batched-tokens,--max-num-batched-tokens",
                 a.max_batched_tokens,
                 "Token budget of one forward pass; longer prompts are prefilled in chunks")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_option("--kv-cache-size", a.kv_cache_size,
                 "Memory for the paged KV cache, e.g. 2GiB or 512MiB (default: enough for "
                 "every sequence that runs at once, --max-seqs or the one of run and chat, at "
                 "the full --ctx-size, at most 2 GiB)");
  app.add_option("--kv-cache-dtype", a.kv_dtype,
                 "KV cache element type: auto (f32 or bf16 for such weights, else f16), f16, "
                 "bf16, f32 or q8_0 (8-bit, a scale per position and head)");
  app.add_option("--block-size", a.block_size, "Tokens per KV cache block")
      ->check(CLI::Range(1, 1024));
  app.add_flag("--no-prefix-caching,--no-enable-prefix-caching", a.no_prefix_caching,
               "Compute every prompt in full instead of reusing cached KV blocks of prefixes "
               "seen before");
}

void add_concurrency_options(CLI::App& app, EngineArgs& a, bool sweep) {
  if (sweep) {
    a.max_seqs_sweep = {a.max_seqs};
    app.add_option("--max-seqs,--max-num-seqs", a.max_seqs_sweep,
                   "Sequences running at once (more wait their turn); several, comma-separated, "
                   "run one after another")
        ->delimiter(',')
        ->check(CLI::Range(1, 4096));
  } else {
    app.add_option("--max-seqs,--max-num-seqs", a.max_seqs,
                   "Sequences running at once (more wait their turn)")
        ->check(CLI::Range(1, 4096));
  }
  app.add_option("--max-prefill-while-decoding", a.prefill_while_decoding,
                 "Prompt tokens one forward pass may compute while other sequences are decoding "
                 "(-1: as many as it has decode tokens, at least 32; 0: up to "
                 "--max-batched-tokens). Lower keeps streams smooth, higher gives new requests "
                 "their first token sooner")
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 20));
}

void add_spec_method_options(CLI::App& app, SpecArgs& a) {
  app.add_option("--spec", a.method,
                 "Speculative decoding: none; draft (a smaller model with the same vocabulary "
                 "drafts, -md; the default when one is given); ngram (prompt lookup: propose "
                 "what followed the latest earlier occurrence of the last few tokens); or "
                 "layer-skip (the model's own first layers draft). Drafts are verified by the "
                 "whole model in one pass; output is distributed exactly as without speculation")
      ->check(CLI::IsMember({"none", "draft", "ngram", "layer-skip"}));
  app.add_option("--draft-max,--draft,--spec-draft-n-max", a.draft_max,
                 "Speculative tokens proposed per step at most (adapts per sequence below this)")
      ->check(CLI::Range(1, kMaxDraftTokens));
}

void add_spec_tuning_options(CLI::App& app, SpecArgs& a) {
  app.add_option("--model-draft,--draft-model", a.draft_model,
                 "-md: a draft model for speculative decoding (GGUF, llama2.c or Hugging Face "
                 "directory), smaller than -m and with its vocabulary; its KV cache takes its "
                 "share of the KV memory");
  app.add_flag("--draft-fixed", a.fixed,
               "Always propose --draft-max tokens, instead of choosing per sequence and step the "
               "length expected to pay most (from the measured step times and acceptance)");
  app.add_option("--draft-min,--spec-draft-n-min", a.draft_min,
                 "Fewest speculative tokens worth verifying")
      ->check(CLI::Range(1, kMaxDraftTokens));
  app.add_option("--spec-ngram-max,--prompt-lookup-max", a.ngram_max,
                 "Prompt lookup: longest suffix of the sequence searched for (tried first)")
      ->check(CLI::Range(1, kMaxNgram));
  app.add_option("--spec-ngram-min,--prompt-lookup-min", a.ngram_min,
                 "Prompt lookup: shortest suffix searched for")
      ->check(CLI::Range(1, kMaxNgram));
  app.add_option("--spec-draft-layers", a.draft_layers,
                 "Layer skipping: the first layers the draft runs (0: half the model's)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--spec-disable-batch-size,--speculative-disable-by-batch-size",
                 a.disable_batch_size,
                 "No speculation in a step that decodes more sequences than this (0: no limit; "
                 "speculation still switches itself off where its measured cost outweighs what "
                 "the guesses are expected to save, as in large compute-bound batches)")
      ->check(CLI::Range(0, 1 << 20));
}

void add_sampling_options(CLI::App& app, SamplingParams& sp, int64_t& seed) {
  app.add_option("--temp", sp.temperature,
                 "Sampling temperature; 0 picks the most likely token (greedy)")
      ->check(CLI::Range(0.0f, 100.0f));
  app.add_option("--top-k", sp.top_k, "Keep only the k most likely tokens (0: off)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--top-p", sp.top_p,
                 "Keep the most likely tokens whose probabilities sum to p (1: off)")
      ->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--min-p", sp.min_p,
                 "Drop tokens less likely than min-p times the most likely one (0: off)")
      ->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--repeat-penalty", sp.repeat_penalty,
                 "Penalize tokens seen in the last --repeat-last-n tokens (1: off)")
      ->check(CLI::Range(0.0f, 100.0f));
  app.add_option("--repeat-last-n", sp.penalty_last_n,
                 "Tokens the penalties look back over (-1: whole context)")
      ->check(CLI::Range(-1, 1 << 24));
  app.add_option("--presence-penalty", sp.presence_penalty,
                 "Subtract this from tokens already present (0: off)");
  app.add_option("--frequency-penalty", sp.frequency_penalty,
                 "Subtract this times a token's count (0: off)");
  app.add_option("-s,--seed", seed, "Random seed (-1: random, printed to stderr)");
}

void add_constraint_options(CLI::App& app, ConstraintArgs& c) {
  app.add_flag("--json", c.json, "Constrain the output to one JSON value");
  app.add_option("--json-schema", c.json_schema,
                 "Constrain the output to JSON valid under this JSON Schema file (a keyword that "
                 "cannot be enforced is refused, naming it)");
  app.add_option("--regex", c.regex,
                 "Constrain the output to match this regular expression whole (ECMAScript syntax)");
  app.add_option("--grammar", c.grammar,
                 "Constrain the output to this GBNF grammar file (llama.cpp's format; root is "
                 "'root')");
  app.add_option("--choice", c.choice,
                 "Constrain the output to one of these comma-separated strings");
  app.add_option("--json-whitespace", c.json_whitespace,
                 "Most whitespace characters allowed between JSON tokens (0: compact JSON)")
      ->check(CLI::Range(0, 1000));
  app.add_flag("--json-oneof-as-anyof", c.oneof_as_anyof,
               "Enforce a JSON Schema's oneOf as anyOf where its branches may overlap (refused "
               "otherwise; a value may then match two branches)");
  app.add_option("--tools", c.tools,
                 "Tools the output may call: a JSON file of OpenAI's tools list; calls are "
                 "written in the chat template's family (see --tool-call-parser)");
  app.add_option("--tool-choice", c.tool_choice,
                 "With --tools: auto (text, or calls once one starts), required (calls only), or "
                 "a function's name (calls of it only)");
  std::vector<std::string> parsers = ToolFamily::names();
  parsers.insert(parsers.begin(), "auto");
  app.add_option("--tool-call-parser", c.tool_parser,
                 "With --tools, the family whose call syntax is used: auto (from the chat "
                 "template) or one of: " +
                     fmt::format("{}", fmt::join(parsers.begin() + 1, parsers.end(), ", ")))
      ->check(CLI::IsMember(parsers));
}

}  // namespace

// --tools FILE with --tool-choice: the family's call grammar, its arguments per each function's
// schema (an error names the tool and the keyword).
std::optional<grammar::Constraint> Options::tool_call_constraint(
    std::string_view template_source) const {
  const ConstraintArgs& c = constraint;
  nlohmann::ordered_json tools;
  try {
    tools = nlohmann::ordered_json::parse(read_text_file(c.tools, "tools file"));
  } catch (const nlohmann::json::exception& e) {
    fail("--tools {}: not valid JSON: {}", c.tools, e.what());
  }
  if (!tools.is_array() || tools.empty())
    fail("--tools {}: must be a non-empty list of tools", c.tools);
  ReplyFormat reply_format = detect_reply_format(template_source);
  if (c.tool_parser != "auto") reply_format.tools = ToolFamily::named(c.tool_parser);
  ToolChoice choice;
  if (c.tool_choice == "auto") {
    choice.mode = ToolChoice::Mode::Auto;
  } else if (c.tool_choice == "required") {
    choice.mode = ToolChoice::Mode::Required;
  } else {
    choice.mode = ToolChoice::Mode::Function;
    choice.function = c.tool_choice;
  }
  bool named = choice.mode != ToolChoice::Mode::Function;
  for (size_t i = 0; i < tools.size(); ++i) {
    const auto& t = tools[i];
    if (!t.is_object() || !t.contains("function") || !t["function"].is_object() ||
        !t["function"].contains("name") || !t["function"]["name"].is_string())
      fail(
          "--tools {}: tools[{}] must be {{\"type\": \"function\", \"function\": {{\"name\": "
          "...}}}}",
          c.tools, i);
    named |= t["function"]["name"] == choice.function;
  }
  if (!named) fail("--tool-choice {}: no such function in {}", choice.function, c.tools);
  auto call_constraint = tool_constraint(reply_format, false, tools, choice);
  if (!call_constraint)
    fail("--tools: the chat template's family writes no tool calls; give --tool-call-parser");
  return call_constraint;
}

void add_options(CLI::App& app, Options& o, unsigned groups) {
  if (groups & kModel) add_model_options(app, o.model);
  if (groups & kThreads)
    app.add_option("-t,--threads", o.threads, "Threads to compute with (0: every core)")
        ->check(CLI::Range(0, 1024));
  if (groups & kChatTemplate)
    app.add_option("--chat-template", o.chat_template,
                   "Jinja chat template file to use instead of the model's own (which keeps "
                   "its BOS/EOS texts)");
  if (groups & kEngine) add_engine_options(app, o.engine);
  if (groups & (kConcurrency | kConcurrencySweep))
    add_concurrency_options(app, o.engine, groups & kConcurrencySweep);
  if (groups & kSpecMethod) add_spec_method_options(app, o.engine.spec);
  if (groups & kSpecTuning) add_spec_tuning_options(app, o.engine.spec);
  if (groups & kSampling) add_sampling_options(app, o.sampling, o.seed);
  if (groups & kConstraint) add_constraint_options(app, o.constraint);
}

std::optional<grammar::Constraint> Options::output_constraint(
    std::string_view template_source) const {
  using K = grammar::Constraint::Kind;
  const ConstraintArgs& c = constraint;
  const int given = c.json + !c.json_schema.empty() + !c.regex.empty() + !c.grammar.empty() +
                    !c.choice.empty() + !c.tools.empty();
  if (given > 1)
    fail("give at most one of --json, --json-schema, --regex, --grammar, --choice, --tools");
  if (given == 0) return std::nullopt;
  if (!c.tools.empty()) return tool_call_constraint(template_source);
  grammar::Constraint out;
  out.style.max_whitespace = c.json_whitespace;
  out.style.compact = c.json_whitespace == 0;
  out.oneof_as_anyof = c.oneof_as_anyof;
  if (c.json) out.kind = K::Json;
  if (!c.json_schema.empty()) {
    out.kind = K::JsonSchema;
    out.text = read_text_file(c.json_schema, "JSON Schema file");
  }
  if (!c.regex.empty()) {
    out.kind = K::Regex;
    out.text = c.regex;
  }
  if (!c.grammar.empty()) {
    out.kind = K::Gbnf;
    out.text = read_text_file(c.grammar, "grammar file");
  }
  if (!c.choice.empty()) {
    out.kind = K::Choice;
    std::string cur;
    for (char ch : c.choice + ",") {
      if (ch != ',') {
        cur += ch;
        continue;
      }
      out.choices.push_back(cur);
      cur.clear();
    }
  }
  return out;
}

int Options::thread_count() const {
  return threads > 0 ? threads : ThreadPool::default_threads();
}

uint64_t Options::resolve_seed(bool verbose) const {
  const uint64_t s = seed >= 0 ? static_cast<uint64_t>(seed) : std::random_device{}();
  if (verbose || seed < 0) std::fprintf(stderr, "seed: %llu\n", static_cast<unsigned long long>(s));
  return s;
}

std::string Options::chat_template_source() const {
  return chat_template.empty() ? std::string() : read_text_file(chat_template, "chat template");
}

SpecConfig spec_config(SpecArgs& a) {
  SpecConfig c;
  if (!a.draft_model.empty() && a.method == "none") a.method = "draft";
  c.method = parse_spec_method(a.method);
  if (c.method == SpecMethod::DraftModel) {
    if (a.draft_model.empty()) fail("--spec draft needs a draft model (-md FILE)");
    if (!a.draft) a.draft = Model::load(a.draft_model);
    c.draft_model = a.draft.get();
  } else if (!a.draft_model.empty()) {
    fail("a draft model (-md) was given but --spec is {}", a.method);
  }
  c.draft_max = a.draft_max;
  c.draft_min = a.draft_min;
  c.ngram.n_max = a.ngram_max;
  c.ngram.n_min = a.ngram_min;
  c.draft_layers = a.draft_layers;
  c.disable_batch_size = a.disable_batch_size;
  c.adaptive = !a.fixed;
  if (c.draft_min > c.draft_max)
    fail("--draft-min {} is above --draft-max {}", c.draft_min, c.draft_max);
  if (c.ngram.n_min > c.ngram.n_max)
    fail("--spec-ngram-min {} is above --spec-ngram-max {}", c.ngram.n_min, c.ngram.n_max);
  return c;
}

std::string describe_spec(const EngineStats& st) {
  if (st.spec_drafts == 0) return "";
  std::string by_pos;
  for (size_t i = 0; i < st.spec_accepted_per_pos.size(); ++i) {
    if (st.spec_accepted_per_pos[i] == 0) break;
    by_pos += fmt::format("{}{:.0f}%", i ? " " : "",
                          100.0 * static_cast<double>(st.spec_accepted_per_pos[i]) /
                              static_cast<double>(st.spec_drafts));
  }
  return fmt::format(
      "speculation:  {} drafts, {} of {} tokens accepted ({:.1f}%), {:.2f} tokens per "
      "verification; "
      "accepted by position: {}",
      st.spec_drafts, st.spec_accepted_tokens, st.spec_draft_tokens,
      100.0 * static_cast<double>(st.spec_accepted_tokens) /
          static_cast<double>(std::max<int64_t>(st.spec_draft_tokens, 1)),
      1.0 + static_cast<double>(st.spec_accepted_tokens) / static_cast<double>(st.spec_drafts),
      by_pos.empty() ? "none" : by_pos);
}

KvType kv_type_for(const std::string& name, const Model& m) {
  if (name != "auto") return parse_kv_type(name);
  const DType w = m.w.layers.empty() ? m.w.output.type : m.w.layers[0].wq.type;
  return w == DType::F32 ? KvType::F32 : w == DType::BF16 ? KvType::BF16 : KvType::F16;
}

EngineConfig engine_config(EngineArgs& a, const Model& m) {
  EngineConfig c;
  if (!a.kv_cache_size.empty()) c.kv_cache_bytes = parse_size(a.kv_cache_size, "--kv-cache-size");
  c.kv_type = kv_type_for(a.kv_dtype, m);
  c.block_size = a.block_size;
  c.max_batched_tokens = a.max_batched_tokens;
  c.max_seqs = a.max_seqs;
  c.prefill_while_decoding = a.prefill_while_decoding;
  c.max_model_len = a.max_model_len;
  c.prefix_caching = !a.no_prefix_caching;
  c.spec = spec_config(a.spec);
  return c;
}

std::string describe_kv(const Engine& e) {
  const auto& g = e.kv_geometry();
  const KvGeometry* d = e.draft_kv_geometry();
  return fmt::format(
      "KV cache: {} blocks of {} tokens = {} tokens in {:.1f} MiB ({}, {:.1f} KiB per token{}); "
      "max model length {}",
      e.n_blocks(), g.block_size, e.capacity_tokens(), static_cast<double>(e.kv_bytes()) / 1048576,
      kv_type_name(g.type), static_cast<double>(g.bytes_per_block()) / g.block_size / 1024,
      d ? fmt::format(" + {:.1f} KiB for the draft model",
                      static_cast<double>(d->bytes_per_block()) / d->block_size / 1024)
        : "",
      e.max_model_len());
}

}  // namespace brisk::cli
