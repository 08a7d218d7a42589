// brisk chat: an interactive conversation in the terminal. The model's chat template renders the
// whole conversation each turn; the session keeps the KV cache of what it has already processed,
// so a turn only computes the tokens that are new since the last one.
#include <atomic>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "engine/session.h"
#include "tokenizer/chat_template.h"

namespace brisk::cli {
namespace {

// What llama.cpp falls back to for a model without a template.
const char* kChatMl =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|im_start|>assistant\\n' }}{% endif %}";

struct ChatArgs {
  ModelArgs model;
  std::string system, template_file;
  int64_t n_predict = -1, n_ctx = 0, n_batch = 512;
  int threads = 0;
  SamplingParams sp;
  int64_t seed = -1;
  bool verbose = false;
};

// One user message: a line, or several joined while a line ends with a backslash.
bool read_message(std::string& out) {
  out.clear();
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\\') {
      line.pop_back();
      out += line + "\n";
      std::fputs(". ", stderr);
      continue;
    }
    out += line;
    return true;
  }
  return !out.empty();
}

int chat(ChatArgs& a) {
  const int threads = a.threads > 0 ? a.threads : ThreadPool::default_threads();
  double load_s = 0;
  auto model = load_model(a.model, &load_s);
  const Tokenizer& tok = *model->tokenizer;
  const Vocab& vocab = tok.vocab();
  auto text_of = [&](int32_t id) { return id >= 0 ? vocab.tokens[id] : std::string(); };
  std::unique_ptr<ChatTemplate> tmpl;
  if (!a.template_file.empty()) {
    tmpl = std::make_unique<ChatTemplate>(read_text_file(a.template_file, "chat template"),
                                          text_of(vocab.bos), text_of(vocab.eos));
  } else if (!vocab.chat_template.empty()) {
    tmpl = std::make_unique<ChatTemplate>(ChatTemplate::for_vocab(vocab));
  } else {
    std::fprintf(stderr,
                 "note: the model has no chat template; using ChatML (--chat-template "
                 "FILE to choose one)\n");
    tmpl = std::make_unique<ChatTemplate>(kChatMl, text_of(vocab.bos), text_of(vocab.eos));
  }
  const int64_t n_ctx = a.n_ctx > 0 ? a.n_ctx : std::min<int64_t>(model->hp.n_ctx_train, 4096);
  a.sp.seed = a.seed >= 0 ? static_cast<uint64_t>(a.seed) : std::random_device{}();
  if (a.verbose || a.seed < 0)
    std::fprintf(stderr, "seed: %llu\n", static_cast<unsigned long long>(a.sp.seed));
  ThreadPool pool(threads);
  Session session(*model, pool, n_ctx, a.n_batch);
  Sampler sampler(a.sp);

  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!a.system.empty()) messages.push_back({{"role", "system"}, {"content", a.system}});
  std::fprintf(stderr,
               "brisk chat: %s, context %lld tokens. Type a message and press Enter; end a line "
               "with \\ to continue it. /reset starts over, /exit (or Ctrl-D) quits, Ctrl-C "
               "stops a reply.\n",
               model->file.path.c_str(), static_cast<long long>(n_ctx));
  catch_interrupts(true);
  std::string input;
  while (true) {
    std::fputs("\n> ", stderr);
    std::fflush(stderr);
    g_interrupted = false;
    if (!read_message(input)) break;
    if (input == "/exit" || input == "/quit") break;
    if (input == "/reset") {
      messages = nlohmann::ordered_json::array();
      if (!a.system.empty()) messages.push_back({{"role", "system"}, {"content", a.system}});
      session.truncate(0);
      std::fputs("(conversation cleared)\n", stderr);
      continue;
    }
    if (input.empty()) continue;
    messages.push_back({{"role", "user"}, {"content", input}});
    std::vector<int32_t> ids;
    try {
      const std::string prompt = tmpl->apply(messages, true);
      // Templates usually write BOS themselves; add it only where the model wants one and the
      // text does not start with it.
      const bool bos = vocab.add_bos && vocab.bos >= 0 && prompt.rfind(text_of(vocab.bos), 0) != 0;
      ids = tok.encode(prompt, false, true);
      if (bos) ids.insert(ids.begin(), vocab.bos);
      if (static_cast<int64_t>(ids.size()) >= n_ctx)
        fail("the conversation needs {} tokens, the context holds {}: /reset, or raise -c",
             ids.size(), n_ctx);
    } catch (const Error& e) {
      messages.erase(messages.end() - 1);
      std::fprintf(stderr, "error: %s\n", e.what());
      continue;
    }
    const int64_t before_prompt = session.stats().prompt_tokens;
    const int64_t before_gen = session.stats().generated_tokens;
    const double before_ps = session.stats().prompt_seconds;
    const double before_gs = session.stats().generate_seconds;
    session.feed_conversation(ids);
    const int64_t fresh = session.stats().prompt_tokens - before_prompt;
    // The sampler already holds what earlier turns fed and generated; only this turn's new
    // tokens join its penalty history.
    for (size_t i = ids.size() - static_cast<size_t>(fresh); i < ids.size(); ++i)
      sampler.accept(ids[i]);
    StreamDecoder dec(tok);
    std::string reply;
    int64_t n_predict = n_ctx - static_cast<int64_t>(ids.size());
    if (a.n_predict >= 0) n_predict = std::min(n_predict, a.n_predict);
    session.generate(
        sampler, n_predict, false,
        [&](int32_t t) {
          const std::string s = dec.push(t);
          reply += s;
          std::fwrite(s.data(), 1, s.size(), stdout);
          std::fflush(stdout);
          return true;
        },
        &g_interrupted);
    const std::string rest = dec.flush();
    reply += rest;
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    messages.push_back({{"role", "assistant"}, {"content", reply}});
    const auto& st = session.stats();
    const double gs = st.generate_seconds - before_gs;
    const int64_t gen = st.generated_tokens - before_gen;
    std::fprintf(stderr,
                 "[%s%lld prompt tokens: %lld reused from the cache, %lld processed in %.2f s | "
                 "%lld generated, %.2f tokens/s]\n",
                 g_interrupted ? "stopped | " : "", static_cast<long long>(ids.size()),
                 static_cast<long long>(static_cast<int64_t>(ids.size()) - fresh),
                 static_cast<long long>(fresh), st.prompt_seconds - before_ps,
                 static_cast<long long>(gen), gs > 0 ? gen / gs : 0.0);
  }
  catch_interrupts(false);
  std::fputc('\n', stderr);
  return 0;
}

}  // namespace

void register_chat(CLI::App& app, Commands& c) {
  auto a = std::make_shared<ChatArgs>();
  CLI::App* s = app.add_subcommand(
      "chat", "Chat with a model in the terminal, using its chat template (replies on stdout)");
  s->option_defaults()->always_capture_default();
  add_model_options(*s, a->model);
  s->add_option("--system", a->system, "System message that opens the conversation");
  s->add_option("--chat-template", a->template_file,
                "Jinja chat template file to use instead of the model's own");
  s->add_option("-n,--n-predict", a->n_predict,
                "Most tokens per reply (-1: until the end of the turn or a full context)");
  s->add_option("-t,--threads", a->threads, "Threads to compute with (default: all cores)")
      ->check(CLI::Range(1, 1024));
  s->add_option("-c,--ctx-size", a->n_ctx,
                "Context size in tokens for the whole conversation (default: the model's, at "
                "most 4096)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  s->add_option("-b,--batch-size", a->n_batch, "Prompt tokens processed per forward pass")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  add_sampling_options(*s, a->sp, a->seed);
  s->add_flag("-v,--verbose", a->verbose, "Print run details to stderr");
  s->callback([a, &c] { c.selected = [a] { return chat(*a); }; });
}

}  // namespace brisk::cli
