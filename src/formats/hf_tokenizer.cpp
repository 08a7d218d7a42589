#include "formats/hf_tokenizer.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "formats/json_file.h"
#include "tokenizer/pretokenizer.h"

namespace brisk {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Escapes a literal for use inside a regular expression (Split with a String pattern).
std::string regex_quote(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

struct ByteLevelPre {
  std::vector<std::string> regexes;
  bool byte_level = false, add_prefix_space = false;
};

void read_pre_tokenizer(const json& pt, const std::string& p, ByteLevelPre& out) {
  if (pt.is_null()) return;
  const std::string type = pt.value("type", "");
  if (type == "Sequence") {
    for (const auto& sub : pt.at("pretokenizers")) read_pre_tokenizer(sub, p, out);
  } else if (type == "Split") {
    const json& pat = pt.at("pattern");
    const std::string behavior = pt.value("behavior", "Isolated");
    if (behavior != "Isolated" || pt.value("invert", false))
      fail("{}: pre_tokenizer Split with behavior '{}'{} is not supported (Isolated is)", p,
           behavior, pt.value("invert", false) ? " and invert" : "");
    if (pat.contains("Regex"))
      out.regexes.push_back(pat["Regex"].get<std::string>());
    else
      out.regexes.push_back(regex_quote(pat.at("String").get<std::string>()));
  } else if (type == "ByteLevel") {
    out.byte_level = true;
    out.add_prefix_space = pt.value("add_prefix_space", false);
    if (pt.value("use_regex", true)) out.regexes.emplace_back(kGpt2Regex);
  } else if (type == "Digits") {
    out.regexes.emplace_back(pt.value("individual_digits", false) ? "\\p{N}" : "\\p{N}+");
  } else if (type == "Metaspace" || type == "WhitespaceSplit" || type == "BertPreTokenizer") {
    // Handled by the SentencePiece and WordPiece paths.
  } else {
    fail("{}: pre_tokenizer type '{}' is not supported", p, type);
  }
}

std::string normalizer_form(const json& n, const std::string& p) {
  if (n.is_null()) return "";
  const std::string type = n.value("type", "");
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") return type;
  if (type == "Sequence") {
    std::string form;
    for (const auto& sub : n.at("normalizers")) {
      const std::string f = normalizer_form(sub, p);
      if (!f.empty()) form = f;
    }
    return form;
  }
  if (type == "Prepend" || type == "Replace" || type == "BertNormalizer" || type == "Lowercase" ||
      type == "Strip" || type == "StripAccents")
    return "";
  fail("{}: normalizer type '{}' is not supported", p, type);
}

// Whether the post-processor puts a special token before (and after) the text.
void template_specials(const json& pp, std::string& first, std::string& last) {
  if (pp.is_null()) return;
  const std::string type = pp.value("type", "");
  if (type == "Sequence") {
    for (const auto& sub : pp.at("processors")) template_specials(sub, first, last);
  } else if (type == "TemplateProcessing" && pp.contains("single") && pp["single"].is_array() &&
             !pp["single"].empty()) {
    const json& s = pp["single"];
    if (s.front().contains("SpecialToken")) first = s.front()["SpecialToken"].at("id");
    if (s.size() > 1 && s.back().contains("SpecialToken")) last = s.back()["SpecialToken"].at("id");
  } else if (type == "BertProcessing" || type == "RobertaProcessing") {
    first = pp.at("cls").at(0).get<std::string>();
    last = pp.at("sep").at(0).get<std::string>();
  }
}

using Meta = std::map<std::string, Value>;

// model.vocab and added_tokens as GGUF's token list and types (1 normal, 3 control, 4 user-defined,
// 5 unused: ids nothing names become [PADn]).
struct HfVocab {
  std::vector<std::string> toks;
  std::vector<int32_t> types;
  std::vector<bool> seen;
  size_t size() const { return toks.size(); }
  int64_t find(const std::string& s) const {
    for (size_t i = 0; i < toks.size(); ++i)
      if (toks[i] == s) return static_cast<int64_t>(i);
    return -1;
  }
};

HfVocab read_vocab(const json& t, const json& vocab, const std::string& p) {
  if (!vocab.is_object() || vocab.empty() || vocab.size() > (1u << 23))
    fail("{}: model.vocab is invalid", p);
  size_t n = vocab.size();
  struct Added {
    int64_t id;
    std::string text;
    bool special;
  };
  std::vector<Added> added;
  if (t.contains("added_tokens"))
    for (const auto& a : t["added_tokens"]) {
      added.push_back({json_int(a.at("id"), p + ": added token id", 0, (1 << 23) - 1),
                       a.at("content").get<std::string>(), a.value("special", true)});
      n = std::max<size_t>(n, static_cast<size_t>(added.back().id) + 1);
    }
  HfVocab v{std::vector<std::string>(n), std::vector<int32_t>(n, 1), std::vector<bool>(n, false)};
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    const int64_t id = json_int(it.value(), p + ": model.vocab id", 0, (1 << 23) - 1);
    if (static_cast<size_t>(id) >= n || v.seen[id])
      fail("{}: token id {} is invalid or repeated", p, id);
    v.toks[id] = it.key();
    v.seen[id] = true;
  }
  for (const Added& a : added) {
    v.toks[a.id] = a.text;
    v.types[a.id] = a.special ? 3 : 4;  // control : user-defined
    v.seen[a.id] = true;
  }
  return v;
}

// GGUF's WordPiece spelling: word starts get U+2581, continuations lose their prefix.
void respell_wordpiece(HfVocab& v, const json& model) {
  const std::string cont = model.value("continuing_subword_prefix", "##");
  for (size_t i = 0; i < v.size(); ++i) {
    std::string& s = v.toks[i];
    if (v.types[i] != 1 || (s.size() >= 2 && s.front() == '[' && s.back() == ']')) continue;
    if (!cont.empty() && s.rfind(cont, 0) == 0)
      s.erase(0, cont.size());
    else
      s = "\xe2\x96\x81" + s;
  }
}

// The merges as GGUF's "left right" strings; SentencePiece-style merging ranks a pair by the score
// of its union, so each union's score is minus its first merge's rank (earlier ranks higher).
std::vector<Value> read_merges(const json& model, const json& vocab, std::vector<float>& scores,
                               const std::string& p) {
  std::vector<Value> merges;
  if (!model.contains("merges")) return merges;
  std::set<std::string> scored;
  int64_t rank = 0;
  for (const auto& mg : model["merges"]) {
    std::string l, r;
    if (mg.is_string()) {
      const std::string s = mg.get<std::string>();
      const size_t sp = s.find(' ', 1);
      if (sp == std::string::npos) fail("{}: merge '{}' has no space", p, s);
      l = s.substr(0, sp);
      r = s.substr(sp + 1);
    } else {
      l = mg.at(0).get<std::string>();
      r = mg.at(1).get<std::string>();
    }
    merges.push_back(Value::of_str(l + " " + r));
    const std::string u = l + r;
    auto it = vocab.find(u);
    if (it != vocab.end() && scored.insert(u).second)
      scores[it.value().get<int64_t>()] = -static_cast<float>(rank);
    ++rank;
  }
  return merges;
}

// A byte-level BPE's pre-tokenizer and normalizer, as brisk's GGUF keys.
void put_byte_level(Meta& m, const json& t, const json& model, const std::string& p) {
  ByteLevelPre pre;
  read_pre_tokenizer(t.value("pre_tokenizer", json()), p, pre);
  if (!pre.byte_level) fail("{}: BPE without ByteLevel or byte_fallback is not supported", p);
  const std::string name = pretokenizer_name_for(pre.regexes);
  m["tokenizer.ggml.pre"] = Value::of_str(name.empty() ? "default" : name);
  std::vector<Value> rx;
  for (const auto& r : pre.regexes) rx.push_back(Value::of_str(r));
  m["tokenizer.brisk.pre_regex"] = Value::of_array(GgufType::STRING, std::move(rx));
  m["tokenizer.brisk.ignore_merges"] = Value::of_bool(model.value("ignore_merges", false));
  m["tokenizer.brisk.normalizer"] =
      Value::of_str(normalizer_form(t.value("normalizer", json()), p));
  m["tokenizer.ggml.add_space_prefix"] = Value::of_bool(pre.add_prefix_space);
}

void put_token_id(Meta& m, const HfVocab& v, const char* key, const std::string& text) {
  if (text.empty()) return;
  if (auto id = v.find(text); id >= 0) m[key] = Value::of_u32(static_cast<uint32_t>(id));
}

// tokenizer_config.json beside tokenizer.json: the special tokens, whether BOS/EOS are added, and
// the chat template. `first`: the BOS the post-processor's template adds ("" if none).
void put_tokenizer_config(Meta& m, const HfVocab& v, const fs::path& tc, const std::string& first,
                          const std::string& kind) {
  const json c = read_json_file(tc.string());
  auto tok_text = [](const json& j) -> std::string {
    if (j.is_string()) return j.get<std::string>();
    if (j.is_object() && j.contains("content") && j["content"].is_string())
      return j["content"].get<std::string>();
    return "";
  };
  for (const auto& [field, key] : {std::pair{"bos_token", "tokenizer.ggml.bos_token_id"},
                                   std::pair{"eos_token", "tokenizer.ggml.eos_token_id"},
                                   std::pair{"unk_token", "tokenizer.ggml.unknown_token_id"},
                                   std::pair{"pad_token", "tokenizer.ggml.padding_token_id"}})
    if (c.contains(field)) put_token_id(m, v, key, tok_text(c[field]));
  if (c.contains("add_bos_token") && c["add_bos_token"].is_boolean())
    m["tokenizer.ggml.add_bos_token"] = Value::of_bool(c["add_bos_token"].get<bool>());
  else if (first.empty() && kind == "gpt2" && m["tokenizer.ggml.pre"].s == "llama3" &&
           c.contains("bos_token"))
    // Llama 3 files without a template processor still expect BOS, as llama.cpp assumes.
    m["tokenizer.ggml.add_bos_token"] = Value::of_bool(true);
  if (c.contains("add_eos_token") && c["add_eos_token"].is_boolean())
    m["tokenizer.ggml.add_eos_token"] = Value::of_bool(c["add_eos_token"].get<bool>());
  if (c.contains("chat_template")) {
    const json& ct = c["chat_template"];
    if (ct.is_string()) {
      m["tokenizer.chat_template"] = Value::of_str(ct.get<std::string>());
    } else if (ct.is_array()) {  // named templates: the default one is the chat template
      for (const auto& e : ct)
        if (e.value("name", "") == "default" && e.contains("template"))
          m["tokenizer.chat_template"] = Value::of_str(e["template"].get<std::string>());
    }
  }
}

}  // namespace

void add_hf_tokenizer(ModelFile& mf, const std::string& tokenizer_json) {
  const std::string& p = tokenizer_json;
  const json t = read_json_file(p);
  auto& m = mf.meta;
  try {
    const json& model = t.at("model");
    const std::string mtype = model.value("type", "");
    if (mtype != "BPE" && mtype != "WordPiece")
      fail("{}: tokenizer model type '{}' is not supported (BPE and WordPiece are)", p, mtype);
    const json& vocab = model.at("vocab");
    HfVocab v = read_vocab(t, vocab, p);
    const size_t n = v.size();
    const bool wordpiece = mtype == "WordPiece";
    const bool byte_fallback = !wordpiece && model.value("byte_fallback", false);
    if (wordpiece) respell_wordpiece(v, model);
    std::vector<float> scores(n, 0.0f);
    std::vector<Value> merges;
    if (!wordpiece) merges = read_merges(model, vocab, scores, p);
    std::vector<Value> vt, vs, vty;
    for (size_t i = 0; i < n; ++i) {
      if (!v.seen[i]) v.toks[i] = fmt::format("[PAD{}]", i), v.types[i] = 5;
      if (byte_fallback && v.toks[i].size() == 6 && v.toks[i].rfind("<0x", 0) == 0) v.types[i] = 6;
      vt.push_back(Value::of_str(v.toks[i]));
      vs.push_back(Value::of_f32(scores[i]));
      vty.push_back(Value::of_i32(v.types[i]));
    }
    const std::string kind = wordpiece ? "bert" : byte_fallback ? "llama" : "gpt2";
    m["tokenizer.ggml.model"] = Value::of_str(kind);
    m["tokenizer.ggml.tokens"] = Value::of_array(GgufType::STRING, std::move(vt));
    m["tokenizer.ggml.token_type"] = Value::of_array(GgufType::I32, std::move(vty));
    if (byte_fallback) {
      m["tokenizer.ggml.scores"] = Value::of_array(GgufType::F32, std::move(vs));
      const bool prepend =
          t.contains("normalizer") && t["normalizer"].dump().find("Prepend") != std::string::npos;
      m["tokenizer.ggml.add_space_prefix"] = Value::of_bool(prepend);
    } else if (kind == "gpt2") {
      m["tokenizer.ggml.merges"] = Value::of_array(GgufType::STRING, std::move(merges));
      put_byte_level(m, t, model, p);
    } else {
      m["tokenizer.ggml.pre"] = Value::of_str("bert");
    }
    if (wordpiece)
      put_token_id(m, v, "tokenizer.ggml.unknown_token_id", model.value("unk_token", "[UNK]"));
    std::string first, last;
    template_specials(t.value("post_processor", json()), first, last);
    if (!first.empty()) {
      put_token_id(m, v, "tokenizer.ggml.bos_token_id", first);
      m["tokenizer.ggml.add_bos_token"] = Value::of_bool(true);
    }
    if (!last.empty()) {
      put_token_id(m, v, "tokenizer.ggml.eos_token_id", last);
      m["tokenizer.ggml.add_eos_token"] = Value::of_bool(true);
    }
    const fs::path tc = fs::path(p).parent_path() / "tokenizer_config.json";
    if (fs::exists(tc)) put_tokenizer_config(m, v, tc, first, kind);
  } catch (const json::exception& e) {
    fail("{}: malformed tokenizer: {}", p, e.what());
  }
}

ModelFile load_hf_tokenizer_file(const std::string& tokenizer_json) {
  ModelFile mf;
  mf.path = tokenizer_json;
  mf.format = "tokenizer.json";
  std::error_code ec;
  mf.file_bytes = fs::file_size(tokenizer_json, ec);
  add_hf_tokenizer(mf, tokenizer_json);
  return mf;
}

}  // namespace brisk
