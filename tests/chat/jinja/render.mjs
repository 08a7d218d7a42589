// Renders the templates whose templates.json entry has "reference": "huggingface" (brisk's own
// templates of the interpreter's JavaScript-style corners) for every conversation in
// conversations.json, with add_generation_prompt true and false, using @huggingface/jinja (what
// transformers.js uses). Writes expected/<template>.json; the C++ tests compare byte for byte.
// The model templates are rendered by Python's Jinja2 instead (render_jinja2.py).
// Usage: cd tests/chat/jinja && npm install && node render.mjs
import { Template } from "@huggingface/jinja";
import fs from "node:fs";

const manifest = JSON.parse(fs.readFileSync("templates.json", "utf8"));
const conversations = JSON.parse(fs.readFileSync("conversations.json", "utf8"));

// Content given as a list of text parts reaches a "string" template joined by "\n" (as vLLM
// does for templates that concatenate content); an "openai" template (one that loops over the
// content) gets the list. templates.json says which each template is; brisk detects it.
// A null content becomes "" and arguments sent as JSON text are parsed, as brisk's front door
// (and vLLM) does.
function forTemplate(messages, format) {
  return messages.map((m) => {
    m = { ...m, content: m.content ?? "" };
    if (format !== "openai" && Array.isArray(m.content))
      m.content = m.content.map((p) => p.text).join("\n");
    if (m.tool_calls)
      m.tool_calls = m.tool_calls.map((c) => {
        let args = c.function.arguments;
        if (typeof args === "string") {
          try {
            const parsed = JSON.parse(args);
            if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) args = parsed;
          } catch {}
        }
        return { ...c, function: { ...c.function, arguments: args } };
      });
    return m;
  });
}
fs.mkdirSync("expected", { recursive: true });
for (const [name, info] of Object.entries(manifest)) {
  if (info.reference !== "huggingface") continue;
  const source = fs.readFileSync(`templates/${name}.jinja`, "utf8");
  const template = new Template(source);
  const cases = [];
  for (const conv of conversations) {
    for (const add_generation_prompt of [true, false]) {
      const context = {
        messages: forTemplate(conv.messages, info.content_format),
        add_generation_prompt,
        bos_token: info.bos_token,
        eos_token: info.eos_token,
        date_string: "26 Jul 2024",  // templates that show today's date get a fixed one
      };
      if (conv.tools) context.tools = conv.tools;
      let result;
      try {
        result = { output: template.render(context) };
      } catch (e) {
        result = { error: String(e.message ?? e) };
      }
      cases.push({ conversation: conv.name, add_generation_prompt, ...result });
    }
  }
  fs.writeFileSync(`expected/${name}.json`, JSON.stringify(cases, null, 1) + "\n");
  const errors = cases.filter((c) => c.error).length;
  console.log(`${name}: ${cases.length} renderings${errors ? `, ${errors} raise errors` : ""}`);
}
