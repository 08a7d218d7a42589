// Structured output on real-world schemas never seen before: SchemaStore's schemas with their
// positive and negative test files (github:SchemaStore/schemastore: src/schemas/json/NAME.json,
// src/test/NAME/*.json, src/negative_test/NAME/*.json), on Llama 3's 128K vocabulary, one thread,
// one compile per schema as a server meets a new one. Each instance is written as brisk would
// generate it (compact, each object's properties in the order its schema names them), tokenized as
// the model would emit it and fed token by token with the full mask computed before each token; it
// must be accepted exactly when SchemaStore files it as valid. Prints a row per schema, the
// refusals by keyword, and the summary docs/performance.md quotes.
//   brisk_schema_corpus SCHEMASTORE_DIR [TOKENIZER_JSON] [MAX_INSTANCE_BYTES]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "formats/hf_tokenizer.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace brisk;
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The instance as brisk generates it: each object's keys in the order the schema that judges it
// names them (its properties, then those of its $ref, allOf, anyOf and oneOf parts, in document
// order; keys it never names last), found by walking the instance along the schema.
class Reorder {
 public:
  explicit Reorder(const ojson& root) : root_(root) {}
  ojson operator()(const ojson& v, const ojson* s, int depth = 0) {
    if (depth > 200) return v;
    s = resolve(s);
    if (v.is_array()) {
      ojson out = ojson::array();
      for (size_t i = 0; i < v.size(); ++i) out.push_back((*this)(v[i], item(s, i), depth + 1));
      return out;
    }
    if (!v.is_object()) return v;
    std::vector<std::pair<std::string, const ojson*>> order;  // key, its schema
    names(s, order, 0);
    std::vector<std::pair<size_t, std::string>> keys;
    for (const auto& [k, x] : v.items()) {
      size_t at = SIZE_MAX;
      for (size_t i = 0; i < order.size() && at == SIZE_MAX; ++i)
        if (order[i].first == k) at = i;
      keys.push_back({at, k});
    }
    std::stable_sort(keys.begin(), keys.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    ojson out = ojson::object();
    for (const auto& [at, k] : keys)
      out[k] = (*this)(v[k], at == SIZE_MAX ? extra(s, k) : order[at].second, depth + 1);
    return out;
  }

 private:
  const ojson& root_;

  const ojson* resolve(const ojson* s) const {
    for (int hops = 0; s && s->is_object() && s->contains("$ref") && hops < 32; ++hops) {
      const ojson& r = (*s)["$ref"];
      if (!r.is_string() || r.get<std::string>().rfind("#", 0) != 0) return s;
      try {
        s = &root_.at(ojson::json_pointer(r.get<std::string>().substr(1)));
      } catch (const std::exception&) {
        return nullptr;
      }
    }
    return s && s->is_object() ? s : nullptr;
  }
  void names(const ojson* s, std::vector<std::pair<std::string, const ojson*>>& out, int depth) {
    s = resolve(s);
    if (!s || depth > 16) return;
    if (s->contains("properties") && (*s)["properties"].is_object())
      for (const auto& [k, x] : (*s)["properties"].items()) out.push_back({k, &x});
    for (const char* comb : {"allOf", "anyOf", "oneOf"})
      if (s->contains(comb) && (*s)[comb].is_array())
        for (const ojson& b : (*s)[comb]) names(&b, out, depth + 1);
    for (const char* cond : {"then", "else"})
      if (s->contains(cond)) names(&(*s)[cond], out, depth + 1);
  }
  const ojson* extra(const ojson* s, const std::string& k) {
    if (!s) return nullptr;
    if (s->contains("patternProperties") && (*s)["patternProperties"].is_object()) {
      for (const auto& [pat, x] : (*s)["patternProperties"].items()) {
        try {
          if (std::regex_search(k, std::regex(pat, std::regex::ECMAScript))) return &x;
        } catch (const std::exception&) {
        }
      }
    }
    return s->contains("additionalProperties") ? &(*s)["additionalProperties"] : nullptr;
  }
  const ojson* item(const ojson* s, size_t i) {
    if (!s) return nullptr;
    for (const char* k : {"prefixItems", "items"})
      if (s->contains(k) && (*s)[k].is_array())
        return i < (*s)[k].size()
                   ? &(*s)[k][i]
                   : (s->contains("additionalItems") ? &(*s)["additionalItems"] : nullptr);
    return s->contains("items") ? &(*s)["items"] : nullptr;
  }
};

// Whether the text is accepted; `at` is where it went wrong (the text's length: at its end).
bool matches(const std::shared_ptr<const grammar::CompiledGrammar>& cg, const Tokenizer& tok,
             const std::string& text, std::vector<double>& mask_us, size_t& at) {
  grammar::Matcher m(cg);
  std::vector<uint64_t> mask(cg->trie().n_words());
  at = 0;
  static const char* slow_env = std::getenv("BRISK_CORPUS_SLOW_US");  // prints slower masks
  const double slow = slow_env ? std::atof(slow_env) : 0;
  for (int32_t t : tok.encode(text, false)) {
    const double t0 = now_seconds();
    m.fill_mask(mask.data());
    mask_us.push_back((now_seconds() - t0) * 1e6);
    if (slow > 0 && mask_us.back() > slow)
      std::printf("    slow mask %8.1f us after ...%s\n", mask_us.back(),
                  text.substr(at > 50 ? at - 50 : 0, std::min<size_t>(at, 50)).c_str());
    if (!((mask[size_t(t) >> 6] >> (t & 63)) & 1) || !m.accept(t)) return false;
    at += tok.token_bytes(t).size();
  }
  return m.can_end();
}

// The keyword a refusal names: the first quoted schema keyword in its message, else its text.
std::string refusal_keyword(const std::string& msg) {
  static const std::regex quoted("'([$A-Za-z]+)'");
  if (msg.find("$ref '") != std::string::npos) return "$ref (not a local pointer)";
  std::smatch m;
  if (std::regex_search(msg, m, quoted)) return m[1];
  const size_t colon = msg.find(": ", msg.find("at #"));
  return msg.substr(colon == std::string::npos ? 0 : colon + 2, 60);
}

std::vector<fs::path> json_files(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

struct Totals {
  int schemas = 0, compiled = 0, fully_right = 0;
  int valid = 0, valid_refused = 0, invalid = 0, invalid_accepted = 0, skipped = 0;
  std::map<std::string, int> refused_by;
  std::vector<double> compile_ms, grammar_ms, all_mask_us, schema_p99_us;
};

void run_schema(const std::string& name, const fs::path& root, const Tokenizer& tok,
                const std::shared_ptr<const grammar::TokenTrie>& trie, size_t max_bytes,
                Totals& t) {
  std::vector<std::pair<fs::path, bool>> instances;
  for (const fs::path& p : json_files(root / "src/test" / name)) instances.push_back({p, true});
  for (const fs::path& p : json_files(root / "src/negative_test" / name))
    instances.push_back({p, false});
  if (instances.empty()) return;
  ++t.schemas;
  ojson schema;
  std::shared_ptr<const grammar::CompiledGrammar> cg;
  const double t0 = now_seconds();
  try {
    schema = ojson::parse(read(root / "src/schemas/json" / (name + ".json")));
    const grammar::Grammar g = grammar::json_schema_grammar(schema);
    t.grammar_ms.push_back((now_seconds() - t0) * 1e3);
    cg = std::make_shared<grammar::CompiledGrammar>(g, trie);
  } catch (const std::exception& e) {
    const std::string why = refusal_keyword(e.what());
    ++t.refused_by[why];
    std::printf("%-36s refused (%s): %s\n", name.c_str(), why.c_str(), e.what());
    return;
  }
  t.compile_ms.push_back((now_seconds() - t0) * 1e3);
  ++t.compiled;
  Reorder reorder(schema);
  std::vector<double> mask_us;
  int wrong = 0, checked = 0;
  for (const auto& [path, valid] : instances) {
    const std::string text = read(path);
    const ojson data = ojson::parse(text, nullptr, false);
    if (data.is_discarded() || text.size() > max_bytes) {
      ++t.skipped;
      continue;
    }
    const std::string out =
        reorder(data, &schema).dump(-1, ' ', false, ojson::error_handler_t::replace);
    size_t at = 0;
    const bool accepted = matches(cg, tok, out, mask_us, at);
    ++checked;
    (valid ? t.valid : t.invalid) += 1;
    if (accepted != valid) {
      ++wrong;
      (valid ? t.valid_refused : t.invalid_accepted) += 1;
      const size_t from = at > 60 ? at - 60 : 0;
      std::printf("  %s: %s instance %s (%s) at byte %zu: ...%s<HERE>%s\n", name.c_str(),
                  valid ? "valid" : "INVALID", valid ? "refused" : "ACCEPTED",
                  path.filename().c_str(), at, out.substr(from, at - from).c_str(),
                  out.substr(at, 30).c_str());
    }
  }
  if (wrong == 0 && checked > 0) ++t.fully_right;
  t.all_mask_us.insert(t.all_mask_us.end(), mask_us.begin(), mask_us.end());
  if (!mask_us.empty()) t.schema_p99_us.push_back(pct(mask_us, 0.99));
  std::printf(
      "%-36s compile %8.2f ms (schema %7.2f)  %6zu tokens  mask p50 %7.1f us  p99 %8.1f us  %d "
      "of %d right\n",
      name.c_str(), t.compile_ms.back(), t.grammar_ms.back(), mask_us.size(), pct(mask_us, 0.5),
      pct(mask_us, 0.99), checked - wrong, checked);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SCHEMASTORE_DIR [TOKENIZER_JSON] [MAX_INSTANCE_BYTES]\n",
                 argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  const std::string tok_path = argc > 2 ? argv[2] : "../shared/tokenizers/llama3-hf/tokenizer.json";
  const size_t max_bytes = argc > 3 ? std::stoul(argv[3]) : 65536;
  const auto tok = Tokenizer::create(load_hf_tokenizer_file(tok_path));
  const auto trie = std::make_shared<grammar::TokenTrie>(grammar::TokenTrie::from_tokenizer(*tok));
  Totals t;
  // BRISK_CORPUS_ONLY=NAME,NAME: those schemas alone (for profiling one).
  const char* only = std::getenv("BRISK_CORPUS_ONLY");
  for (const fs::path& p : json_files(root / "src/schemas/json"))
    if (!only ||
        ("," + std::string(only) + ",").find("," + p.stem().string() + ",") != std::string::npos)
      run_schema(p.stem().string(), root, *tok, trie, max_bytes, t);
  std::printf("\nrefused, by keyword:\n");
  std::vector<std::pair<int, std::string>> by;
  for (const auto& [k, n] : t.refused_by) by.push_back({n, k});
  std::sort(by.rbegin(), by.rend());
  for (const auto& [n, k] : by) std::printf("  %4d  %s\n", n, k.c_str());
  std::printf(
      "\nsummary: %d schemas with test instances; %d compiled (%.0f%%), %d of them judge every "
      "instance right (%.0f%% of all); valid instances refused %d of %d; invalid accepted %d of "
      "%d; "
      "%d instances skipped (not JSON or over %zu bytes)\n",
      t.schemas, t.compiled, 100.0 * t.compiled / std::max(1, t.schemas), t.fully_right,
      100.0 * t.fully_right / std::max(1, t.schemas), t.valid_refused, t.valid, t.invalid_accepted,
      t.invalid, t.skipped, max_bytes);
  std::printf(
      "compile p50 %.1f ms, p99 %.1f ms, max %.1f ms; mask over %zu tokens p50 %.1f us; each "
      "schema's p99: median %.1f us, 95th-percentile schema %.1f us, worst %.1f us\n",
      pct(t.compile_ms, 0.5), pct(t.compile_ms, 0.99), pct(t.compile_ms, 1.0), t.all_mask_us.size(),
      pct(t.all_mask_us, 0.5), pct(t.schema_p99_us, 0.5), pct(t.schema_p99_us, 0.95),
      pct(t.schema_p99_us, 1.0));
  return 0;
}
