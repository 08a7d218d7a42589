// Chat templates rendered by brisk's Jinja interpreter against the reference renderers:
// tests/chat/jinja/expected/*.json hold, for every template in templates/ and every conversation
// in conversations.json, what Python's Jinja2 with transformers' settings renders
// (render_jinja2.py; the model templates and snippets.json) or, for brisk's two templates of
// JavaScript-style corners, what @huggingface/jinja renders (render.mjs).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "chat/jinja/interpreter.h"
#include "core/error.h"
#include "formats/loader.h"
#include "support/test_util.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace brisk {
namespace {

using json = nlohmann::ordered_json;
const std::string kDir = "tests/chat/jinja/";

TEST(ChatTemplate, EveryTemplateMatchesTheReferenceRenderer) {
  const json manifest = json::parse(test::read_file(kDir + "templates.json"));
  const json convs = json::parse(test::read_file(kDir + "conversations.json"));
  ASSERT_GE(manifest.size(), 13u);  // Llama-3, Qwen3, Phi-3 and at least ten more
  size_t compared = 0, errors = 0;
  for (auto it = manifest.begin(); it != manifest.end(); ++it) {
    const std::string name = it.key();
    const ChatTemplate tmpl(test::read_file(kDir + "templates/" + name + ".jinja"),
                            it.value().at("bos_token"), it.value().at("eos_token"));
    // Whether content parts reach the template as a list (it loops over them) or joined.
    EXPECT_EQ(tmpl.content_format() == ContentFormat::OpenAI,
              it.value().at("content_format") == "openai")
        << name;
    const json expected = json::parse(test::read_file(kDir + "expected/" + name + ".json"));
    ASSERT_EQ(expected.size(), convs.size() * 2) << name;
    for (const json& e : expected) {
      const json* conv = nullptr;
      for (const json& c : convs)
        if (c.at("name") == e.at("conversation")) conv = &c;
      ASSERT_NE(conv, nullptr);
      json extra = {{"date_string", "26 Jul 2024"}};
      if (conv->contains("tools")) extra["tools"] = conv->at("tools");
      const std::string what = name + " / " + e.at("conversation").get<std::string>() +
                               (e.at("add_generation_prompt").get<bool>() ? " +gen" : "");
      try {
        const std::string got =
            tmpl.apply(conv->at("messages"), e.at("add_generation_prompt"), extra);
        ASSERT_TRUE(e.contains("output"))
            << what << ": the reference raised '" << e.value("error", "") << "', brisk rendered:\n"
            << got;
        EXPECT_EQ(got, e.at("output").get<std::string>()) << what;
      } catch (const Error& err) {
        EXPECT_TRUE(e.contains("error")) << what << ": " << err.what();
        ++errors;
      }
      ++compared;
    }
  }
  EXPECT_GE(compared, 13u * 12u);
  EXPECT_GT(errors, 0u);  // raise_exception paths are compared too
}

// One construct each (tests with and without parentheses, strings and undefined values in loops
// and filters, dicts through list filters), as Python's Jinja2 renders them.
TEST(Jinja, SnippetsMatchJinja2) {
  const json snippets = json::parse(test::read_file(kDir + "snippets.json"));
  const json expected = json::parse(test::read_file(kDir + "expected/snippets.json"));
  ASSERT_EQ(snippets.size(), expected.size());
  for (size_t i = 0; i < snippets.size(); ++i) {
    const json& s = snippets[i];
    const std::string name = s.at("name");
    ASSERT_EQ(expected[i].at("name"), name);
    const ChatTemplate t(s.at("template").get<std::string>());
    try {
      const std::string got = t.render(s.at("context"));
      ASSERT_TRUE(expected[i].contains("output"))
          << name << ": Jinja2 raised, brisk rendered " << got;
      EXPECT_EQ(got, expected[i].at("output").get<std::string>()) << name;
    } catch (const Error& e) {
      EXPECT_TRUE(expected[i].contains("error")) << name << ": " << e.what();
    }
  }
}

// Clients send a call's arguments as a JSON string; templates iterate them as a mapping, so they
// arrive parsed and every template renders them as the reference does the object.
TEST(ChatTemplate, ArgumentsSentAsJsonTextRenderAsTheObject) {
  const json manifest = json::parse(test::read_file(kDir + "templates.json"));
  const json convs = json::parse(test::read_file(kDir + "conversations.json"));
  size_t compared = 0;
  for (const json& conv : convs) {
    if (conv.at("name") != "tool_calls") continue;
    json messages = conv.at("messages");
    for (json& m : messages)
      if (m.contains("tool_calls"))
        for (json& tc : m["tool_calls"])
          tc["function"]["arguments"] = tc["function"]["arguments"].dump();
    for (auto it = manifest.begin(); it != manifest.end(); ++it) {
      const ChatTemplate tmpl(test::read_file(kDir + "templates/" + it.key() + ".jinja"),
                              it.value().at("bos_token"), it.value().at("eos_token"));
      const json expected = json::parse(test::read_file(kDir + "expected/" + it.key() + ".json"));
      for (const json& e : expected) {
        if (e.at("conversation") != "tool_calls" || !e.contains("output")) continue;
        json extra = {{"date_string", "26 Jul 2024"}, {"tools", conv.at("tools")}};
        EXPECT_EQ(tmpl.apply(messages, e.at("add_generation_prompt"), extra),
                  e.at("output").get<std::string>())
            << it.key();
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 20u);
}

TEST(ChatTemplate, ModelTemplatesFromFiles) {
  // The Phi-3 template travels in the GGUF; Llama-3's and Qwen3's in tokenizer_config.json.
  for (const char* f :
       {"tokenizers/llama.cpp-vocab/ggml-vocab-phi-3.gguf", "tokenizers/llama3-hf/tokenizer.json",
        "tokenizers/qwen3-hf/tokenizer.json"}) {
    const Vocab v = Vocab::from_model(load_model_file(test::shared(f)));
    const auto t = ChatTemplate::for_vocab(v);
    const std::string out = t.apply(json::array({{{"role", "user"}, {"content", "Hi"}}}), true);
    EXPECT_NE(out.find("Hi"), std::string::npos) << f;
  }
  const Vocab stories =
      Vocab::from_model(load_model_file(test::shared("models/stories260K/stories260K.gguf")));
  EXPECT_THROW(ChatTemplate::for_vocab(stories), Error);
}

std::string render(const std::string& src, const json& ctx = json::object()) {
  return ChatTemplate(src).apply(json::array(), false, ctx);
}

TEST(Jinja, ErrorsNameLineAndColumn) {
  try {
    render("line one\n{% if x %}\n{{ 1 + }}\n{% endif %}");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
  try {
    render("{{ 'a' }}\n  {{ undefined_thing.x.y + 1 }}");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  try {
    render("{% for x in y %}never closed");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not closed"), std::string::npos) << e.what();
  }
  EXPECT_THROW(render("{{ raise_exception('bad conversation') }}"), Error);
}

std::string render_limited(const std::string& src) {
  jinja::Limits lim;
  lim.max_steps = 200000;  // small limits keep the test quick (the defaults are far larger)
  lim.max_output = 1 << 20;
  return jinja::render(jinja::parse(src), jinja::Value::object(), lim);
}

TEST(Jinja, HostileTemplatesAreBounded) {
  // Endless recursion, huge loops and huge output stop with an error instead of hanging.
  EXPECT_THROW(render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"), Error);
  EXPECT_THROW(render_limited("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor "
                              "%}{% endfor %}"),
               Error);
  EXPECT_THROW(render_limited(
                   "{% set s = namespace(t='x') %}{% for i in range(100) %}{% set s.t = s.t + s.t "
                   "%}{% endfor %}{{ s.t | length }}"),
               Error);
  // No access to anything outside the context.
  EXPECT_EQ(render("{{ os }}{{ self }}{{ config }}"), "");
}

TEST(Jinja, WhitespaceControlAndLoopHelpers) {
  EXPECT_EQ(render("a  {%- if true -%}  b  {%- endif -%}  c"), "abc");
  EXPECT_EQ(render("{% for x in xs %}\n{{ loop.index }}{{ ',' if not loop.last }}\n{% endfor %}",
                   {{"xs", {1, 2, 3}}}),
            "1,\n2,\n3\n");
  EXPECT_EQ(render("{{ x | default('none') }} {{ y | default('d', true) }}", {{"y", ""}}),
            "none d");
}

TEST(ChatTemplate, ContentPartsFollowTheTemplatesContentFormat) {
  const json msgs = json::parse(
      R"([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
          {"role": "assistant", "content": "c"}])");
  // Concatenating content: the parts arrive joined by "\n", as vLLM's "string" format.
  const ChatTemplate joined(
      "{% for m in messages %}{{ m.role + ': ' + m.content + ';' }}{% endfor %}");
  EXPECT_EQ(joined.content_format(), ContentFormat::String);
  EXPECT_EQ(joined.apply(msgs, false), "user: a\nb;assistant: c;");
  // Looping over the parts (Gemma 3's shape): the list as sent.
  const ChatTemplate parts(
      "{% for m in messages %}{% if m['content'] is string %}{{ m['content'] }}{% else %}"
      "{% for p in m['content'] %}[{{ p['text'] }}]{% endfor %}{% endif %}{% endfor %}");
  EXPECT_EQ(parts.content_format(), ContentFormat::OpenAI);
  EXPECT_EQ(parts.apply(msgs, false), "[a][b]c");
  const ChatTemplate alias(
      "{% for m in messages %}{% set c = m.content %}"
      "{% for p in c | selectattr('type', 'equalto', 'text') %}{{ p.text }}{% endfor %}{% endfor "
      "%}");
  EXPECT_EQ(alias.content_format(), ContentFormat::OpenAI);
  // Mistral loops over `message.content` as tool calls: not content parts.
  const ChatTemplate calls(
      "{% for m in messages %}{% set tool_calls = m.content %}"
      "{% for t in tool_calls %}{{ t.function.name }}{% endfor %}{% endfor %}");
  EXPECT_EQ(calls.content_format(), ContentFormat::String);
  // Parts that are not text are refused, naming the message and part.
  try {
    joined.apply(json::parse(R"([{"role": "user", "content": "x"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}])"),
                 false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("messages[1].content[0]"), std::string::npos) << e.what();
  }
}

TEST(Jinja, InvalidUtf8ReadsAsReplacementCharacters) {
  // As the reference decodes bytes (WHATWG): one U+FFFD per maximal ill-formed subpart.
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(utf8_sanitize("ok \xC3\xA9 \xF0\x9F\x8E\x89"), "ok \xC3\xA9 \xF0\x9F\x8E\x89");
  EXPECT_EQ(utf8_sanitize("a\xFF"), "a" + r);
  EXPECT_EQ(utf8_sanitize("\xF0\x9F\x8E"), r);                  // truncated: one
  EXPECT_EQ(utf8_sanitize("\xED\xA0\x80"), r + r + r);          // a surrogate: three
  EXPECT_EQ(utf8_sanitize("\xC0\xAF"), r + r);                  // overlong
  EXPECT_EQ(utf8_sanitize("\xF4\x90\x80\x80"), r + r + r + r);  // past U+10FFFF
  EXPECT_EQ(utf8_sanitize("\xE6\x97x"), r + "x");
  EXPECT_EQ(
      render("a\xFF {{ x | upper }} {{ x | length }}", {{"x", std::string("\xE6\x97") + "c"}}),
      "a" + r + " " + r + "C 2");
}

TEST(Jinja, UnicodeCaseMappingIsPythons) {
  EXPECT_EQ(
      render("{{ 'İ' | lower }}|{{ 'ΣΑΣ ΟΔΟΣ.' | lower }}|{{ 'Σ' | lower }}|{{ 'AΣ1' | lower }}"),
      "i\xCC\x87|σας οδος.|σ|aς1");
  EXPECT_EQ(render("{{ 'straße' | upper }}|{{ 'ﬁ' | upper }}|{{ 'ŉ' | upper }}|{{ 'ΐ' | upper }}"),
            "STRASSE|FI|ʼN|\xCE\x99\xCC\x88\xCC\x81");  // ΐ: Ι, diaeresis, acute
  // title() and capitalize() as Python's: title case after an uncased character, lower case
  // after a cased one (ß is cased), and ǆ's own title case.
  EXPECT_EQ(render("{{ 'straße café' | title }}|{{ 'ǆemal' | capitalize }}|{{ 'hELLO wORLD' | "
                   "capitalize }}"),
            "Straße Café|ǅemal|Hello world");
}

}  // namespace
}  // namespace brisk
