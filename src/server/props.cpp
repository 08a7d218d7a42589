#include "server/props.h"

#include <unistd.h>

#include "core/kv_types.h"
#include "core/memory_stats.h"
#include "engine/spec/spec_config.h"
#include "ops/cpu.h"

namespace brisk::server {

nlohmann::json props_body(const Engine& e, const std::string& model_name,
                          const ReplyFormat& reply_format, bool fallback_template) {
  const Model& m = e.model();
  const EngineConfig& c = e.config();
  const KvGeometry& g = e.kv_geometry();
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return {
      {"model",
       {{"name", model_name},
        {"path", m.file.path},
        {"format", m.file.format},
        {"file_bytes", m.file.file_bytes},
        {"arch", m.hp.arch},
        {"n_layer", m.hp.n_layer},
        {"n_embd", m.hp.n_embd},
        {"n_head", m.hp.n_head},
        {"n_head_kv", m.hp.n_head_kv},
        {"n_vocab", m.hp.n_vocab},
        {"max_model_len", e.max_model_len()},
        {"chat_template", fallback_template ? "ChatML (the model has none)" : "the model's"},
        {"tool_call_parser", std::string(reply_format.tools->name())},
        {"reasoning_parser", reasoning_family_name(reply_format.reasoning)}}},
      {"engine",
       {{"max_seqs", c.max_seqs},
        {"max_batched_tokens", c.max_batched_tokens},
        {"kv_blocks", e.n_blocks()},
        {"block_size", g.block_size},
        {"kv_cache_type", kv_type_name(g.type)},
        {"kv_cache_bytes", e.kv_bytes()},
        {"kv_capacity_tokens", e.capacity_tokens()},
        {"prefix_caching", c.prefix_caching},
        {"speculative", spec_method_name(c.spec.method)}}},
      {"machine",
       {{"kernels", isa_name(best_isa())},
        {"threads", e.threads()},
        {"cpus", cpus > 0 ? cpus : 0},
        {"memory_total_bytes", total_memory_bytes()},
        {"resident_bytes", resident_bytes()}}},
      {"version", BRISK_VERSION},
  };
}

}  // namespace brisk::server
