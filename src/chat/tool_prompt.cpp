#include "chat/tool_prompt.h"

#include <string>
#include <vector>

#include "chat/messages.h"

namespace brisk {

using ojson = nlohmann::ordered_json;

namespace {

std::string text_of(const ojson& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;  // a list of text parts (checked)
  for (size_t k = 0; k < content.size(); ++k)
    text += (k ? "\n" : "") + content[k]["text"].get<std::string>();
  return text;
}

// An assistant's calls as the generic layout's reply: {"tool_calls": [{"name", "arguments"}]}.
std::string calls_as_text(const ojson& calls) {
  ojson list = ojson::array();
  for (const ojson& c : calls) {
    const ojson& f = c["function"];
    ojson args = f.contains("arguments") ? f["arguments"] : ojson::object();
    list.push_back({{"name", f["name"]}, {"arguments", std::move(args)}});
  }
  return ojson{{"tool_calls", std::move(list)}}.dump();
}

// A tool's result as a user turn's text.
std::string result_as_text(const ojson& m) {
  ojson r = {{"tool_response", ojson::object()}};
  if (m.contains("name") && m["name"].is_string()) r["tool_response"]["tool"] = m["name"];
  if (m.contains("tool_call_id") && m["tool_call_id"].is_string())
    r["tool_response"]["tool_call_id"] = m["tool_call_id"];
  r["tool_response"]["content"] = text_of(m["content"]);
  return r.dump();
}

bool involves_tools(const ojson& messages) {
  for (const ojson& m : messages)
    if (m["role"] == "tool" || m["role"] == "function" ||
        (m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty()))
      return true;
  return false;
}

// Adds text to the end of the first system message or, where the template has no system role,
// to the start of the first user turn; a message of its own when there is neither.
void add_description(ojson& out, const std::string& text, bool system_role) {
  if (!out.empty()) {
    ojson& m = out[0];
    if (system_role && (m["role"] == "system" || m["role"] == "developer")) {
      m["content"] = text_of(m["content"]) + "\n\n" + text;
      return;
    }
    if (!system_role && m["role"] == "user") {
      m["content"] = text + "\n\n" + text_of(m["content"]);
      return;
    }
  }
  const ojson first = {{"role", system_role ? "system" : "user"}, {"content", text}};
  out.insert(out.begin(), first);
}

// For a template that renders one call per assistant turn: each call its own turn, followed by
// its result (matched by tool_call_id, else by position).
ojson one_call_per_turn(const ojson& in) {
  ojson out = ojson::array();
  for (size_t i = 0; i < in.size(); ++i) {
    const ojson& m = in[i];
    if (m["role"] != "assistant" || !m.contains("tool_calls") || !m["tool_calls"].is_array() ||
        m["tool_calls"].size() < 2) {
      out.push_back(m);
      continue;
    }
    std::vector<ojson> results;
    while (i + 1 < in.size() && in[i + 1]["role"] == "tool") results.push_back(in[++i]);
    std::vector<bool> used(results.size(), false);
    const ojson& calls = m["tool_calls"];
    for (size_t k = 0; k < calls.size(); ++k) {
      ojson turn = m;
      turn["content"] = k == 0 ? m["content"] : ojson("");
      turn["tool_calls"] = ojson::array({calls[k]});
      out.push_back(std::move(turn));
      size_t pick = results.size();
      for (size_t r = 0; r < results.size() && pick == results.size(); ++r)
        if (!used[r] && calls[k].contains("id") &&
            results[r].value("tool_call_id", ojson()) == calls[k]["id"])
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

std::string describe_tools(const ojson& tools) {
  std::string text =
      "You can call the following tools to answer the user. Each is a JSON Schema of its "
      "arguments:\n";
  for (const ojson& t : tools) text += t.dump() + "\n";
  text +=
      "\nReply with JSON only. To call tools: {\"tool_calls\": [{\"name\": \"tool_name\", "
      "\"arguments\": {...}}]}. To answer directly: {\"response\": \"your answer\"}.";
  return text;
}

ojson fit_tools_to_template(const ojson& messages, const TemplateCaps& caps,
                            const std::string& description) {
  ojson in = check_messages(messages);
  if (description.empty() && !involves_tools(in)) return messages;
  if (caps.tool_calls && !caps.parallel_calls) in = one_call_per_turn(in);
  ojson out = ojson::array();
  for (ojson& m : in) {
    const std::string role = m["role"].get<std::string>();
    if (role == "assistant" && !caps.tool_calls && m.contains("tool_calls") &&
        m["tool_calls"].is_array() && !m["tool_calls"].empty()) {
      const std::string said = text_of(m["content"]);
      m["content"] = (said.empty() ? "" : said + "\n") + calls_as_text(m["tool_calls"]);
      m.erase("tool_calls");
    } else if ((role == "tool" || role == "function") && !caps.tool_role) {
      m = ojson{{"role", "user"}, {"content", result_as_text(m)}};
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
    ojson rest = ojson::array();
    for (ojson& m : out) {
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
