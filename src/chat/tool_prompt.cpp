#include "chat/tool_prompt.h"

#include <string>
#include <vector>

#include "chat/messages.h"

namespace brisk {

using json = nlohmann::ordered_json;

namespace {

std::string text_of(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;  // a list of text parts (checked)
  for (size_t k = 0; k < content.size(); ++k)
    text += (k ? "\n" : "") + content[k]["text"].get<std::string>();
  return text;
}

// An assistant's calls as the generic layout's reply: {"tool_calls": [{"name", "arguments"}]}.
std::string calls_as_text(const json& calls) {
  json list = json::array();
  for (const json& c : calls) {
    const json& f = c["function"];
    json args = f.contains("arguments") ? f["arguments"] : json::object();
    list.push_back({{"name", f["name"]}, {"arguments", std::move(args)}});
  }
  return json{{"tool_calls", std::move(list)}}.dump();
}

// A tool's result as a user turn's text.
std::string result_as_text(const json& m) {
  json r = {{"tool_response", json::object()}};
  if (m.contains("name") && m["name"].is_string()) r["tool_response"]["tool"] = m["name"];
  if (m.contains("tool_call_id") && m["tool_call_id"].is_string())
    r["tool_response"]["tool_call_id"] = m["tool_call_id"];
  r["tool_response"]["content"] = text_of(m["content"]);
  return r.dump();
}

bool involves_tools(const json& messages) {
  for (const json& m : messages)
    if (m["role"] == "tool" || m["role"] == "function" ||
        (m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty()))
      return true;
  return false;
}

// Adds text to the end of the first system message or, where the template has no system role,
// to the start of the first user turn; a message of its own when there is neither.
void add_description(json& out, const std::string& text, bool system_role) {
  if (!out.empty()) {
    json& m = out[0];
    if (system_role && (m["role"] == "system" || m["role"] == "developer")) {
      m["content"] = text_of(m["content"]) + "\n\n" + text;
      return;
    }
    if (!system_role && m["role"] == "user") {
      m["content"] = text + "\n\n" + text_of(m["content"]);
      return;
    }
  }
  const json first = {{"role", system_role ? "system" : "user"}, {"content", text}};
  out.insert(out.begin(), first);
}

// For a template that renders one call per assistant turn: each call its own turn, followed by
// its result (matched by tool_call_id, else by position).
json one_call_per_turn(const json& in) {
  json out = json::array();
  for (size_t i = 0; i < in.size(); ++i) {
    const json& m = in[i];
    if (m["role"] != "assistant" || !m.contains("tool_calls") || !m["tool_calls"].is_array() ||
        m["tool_calls"].size() < 2) {
      out.push_back(m);
      continue;
    }
    std::vector<json> results;
    while (i + 1 < in.size() && in[i + 1]["role"] == "tool") results.push_back(in[++i]);
    std::vector<bool> used(results.size(), false);
    const json& calls = m["tool_calls"];
    for (size_t k = 0; k < calls.size(); ++k) {
      json turn = m;
      turn["content"] = k == 0 ? m["content"] : json("");
      turn["tool_calls"] = json::array({calls[k]});
      out.push_back(std::move(turn));
      size_t pick = results.size();
      for (size_t r = 0; r < results.size() && pick == results.size(); ++r)
        if (!used[r] && calls[k].contains("id") &&
            results[r].value("tool_call_id", json()) == calls[k]["id"])
          pick = r;
      for (size_t r = 0; r < results.size() && pick == results.size(); ++r)
        if (!used[r]) pick = r;
      if (pick < results.size()) {
        used[pick] = true;
        out.push_back(results[pick]);
      }
    }
    for (size_t r = 0; r < results.size(); ++r)
      if (!used[r]) out.push_back(results[r]);
  }
  return out;
}

}  // namespace

json fit_tools_to_template(const json& messages, const TemplateCaps& caps,
                           const std::string& description) {
  json in = check_messages(messages);
  if (description.empty() && !involves_tools(in)) return messages;
  if (caps.tool_calls && !caps.parallel_calls) in = one_call_per_turn(in);
  json out = json::array();
  for (json& m : in) {
    const std::string role = m["role"].get<std::string>();
    if (role == "assistant" && !caps.tool_calls && m.contains("tool_calls") &&
        m["tool_calls"].is_array() && !m["tool_calls"].empty()) {
      const std::string said = text_of(m["content"]);
      m["content"] = (said.empty() ? "" : said + "\n") + calls_as_text(m["tool_calls"]);
      m.erase("tool_calls");
    } else if ((role == "tool" || role == "function") && !caps.tool_role) {
      m = json{{"role", "user"}, {"content", result_as_text(m)}};
    }
    // A template that refuses two user turns in a row gets them as one.
    if (!caps.consecutive_users && m["role"] == "user" && !out.empty() &&
        out.back()["role"] == "user") {
      out.back()["content"] = text_of(out.back()["content"]) + "\n\n" + text_of(m["content"]);
      continue;
    }
    out.push_back(std::move(m));
  }
  std::string preface = description;
  if (!caps.system_role) {
    // The system text goes to the first user turn, before the description.
    std::string system;
    json rest = json::array();
    for (json& m : out) {
      if (m["role"] == "system" || m["role"] == "developer")
        system += (system.empty() ? "" : "\n\n") + text_of(m["content"]);
      else
        rest.push_back(std::move(m));
    }
    out = std::move(rest);
    if (!system.empty()) preface = description.empty() ? system : system + "\n\n" + description;
  }
  if (!preface.empty()) add_description(out, preface, caps.system_role);
  return out;
}

}  // namespace brisk
