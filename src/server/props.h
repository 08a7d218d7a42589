// GET /props: what the dashboard shows above its charts (the model, the engine's settings and the
// machine), in one JSON object. llama-server has an endpoint of the same name; its fields differ.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "chat/tool_family.h"
#include "engine/engine.h"

namespace brisk::server {

nlohmann::json props_body(const Engine& e, const std::string& model_name,
                          const ReplyFormat& reply_format, bool fallback_template);

}  // namespace brisk::server
