// Answers on an exchange that are not a job's: a JSON body, or an API error in OpenAI's shape.
#pragma once

#include "server/http.h"
#include "server/openai.h"

namespace brisk::server {

inline void send_error(Exchange& ex, const ApiError& e, const Headers& extra = {}) {
  ex.respond(static_cast<http::status>(e.status), "application/json", error_body(e), extra);
}

inline void send_json(Exchange& ex, const json& j) {
  ex.respond(http::status::ok, "application/json", dump(j));
}

}  // namespace brisk::server
