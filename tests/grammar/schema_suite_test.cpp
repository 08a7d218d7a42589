// The official JSON-Schema-Test-Suite (Debian's json-schema-test-suite: drafts 4, 6 and 7, the
// format tests included) through the matcher on Llama 3's 128K vocabulary: every schema is compiled
// or refused; for each one compiled, each instance is written as brisk would generate it (compact,
// properties in the order the schema names them), tokenized as the model would emit it and fed
// token by token, the full mask computed before each token; it must be accepted exactly when the
// suite calls it valid. Refused schemas are counted, never failures; a wrong verdict is one.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "formats/hf_tokenizer.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "support/test_util.h"

namespace brisk::grammar {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

const char* kSuite = "/usr/share/json-schema-test-suite/tests";

// Every object key of the schema in document order: an instance's keys are written in this order
// (those the schema never names last), which is the order the grammar generates them in.
void rank_keys(const ojson& s, std::map<std::string, size_t>& rank) {
  if (s.is_object()) {
    for (const auto& [k, v] : s.items()) {
      rank.emplace(k, rank.size());
      rank_keys(v, rank);
    }
  } else if (s.is_array()) {
    for (const auto& v : s) rank_keys(v, rank);
  }
}

ojson reorder(const ojson& v, const std::map<std::string, size_t>& rank) {
  if (v.is_array()) {
    ojson out = ojson::array();
    for (const auto& x : v) out.push_back(reorder(x, rank));
    return out;
  }
  if (!v.is_object()) return v;
  std::vector<std::pair<std::string, const ojson*>> items;
  for (const auto& [k, x] : v.items()) items.push_back({k, &x});
  std::stable_sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
    auto ra = rank.find(a.first), rb = rank.find(b.first);
    const size_t ka = ra == rank.end() ? SIZE_MAX : ra->second;
    const size_t kb = rb == rank.end() ? SIZE_MAX : rb->second;
    return ka < kb;
  });
  ojson out = ojson::object();
  for (const auto& [k, x] : items) out[k] = reorder(*x, rank);
  return out;
}

struct Tally {
  int schemas = 0, compiled = 0, instances = 0, checked = 0;
  std::vector<std::string> wrong;
};

bool matches(const std::shared_ptr<const CompiledGrammar>& cg, const Tokenizer& tok,
             const std::string& text) {
  Matcher m(cg);
  std::vector<uint64_t> mask(cg->trie().n_words());
  for (int32_t t : tok.encode(text, false)) {
    m.fill_mask(mask.data());
    if (!((mask[size_t(t) >> 6] >> (t & 63)) & 1)) return false;
    if (!m.accept(t)) ADD_FAILURE() << "the mask allows a token accept() refuses: " << text;
  }
  return m.can_end();
}

void run_file(const fs::path& file, int draft, const Tokenizer& tok,
              const std::shared_ptr<const TokenTrie>& trie, Tally& tally) {
  std::ifstream in(file);
  const ojson groups = ojson::parse(in);
  for (const ojson& group : groups) {
    ++tally.schemas;
    const ojson& schema = group["schema"];
    std::shared_ptr<const CompiledGrammar> cg;
    try {
      SchemaOptions o;
      o.draft = draft;
      cg = std::make_shared<CompiledGrammar>(json_schema_grammar(schema, o), trie);
    } catch (const Error& e) {
      if (std::getenv("BRISK_SUITE_VERBOSE"))
        std::printf("refused %s / %s: %s\n", file.filename().c_str(),
                    group["description"].dump().c_str(), e.what());
      tally.instances += static_cast<int>(group["tests"].size());
      continue;  // refused: counted, not a failure
    }
    ++tally.compiled;
    std::map<std::string, size_t> rank;
    rank_keys(schema, rank);
    for (const ojson& t : group["tests"]) {
      ++tally.instances;
      ++tally.checked;
      const std::string text = reorder(t["data"], rank).dump();
      const bool valid = t["valid"].get<bool>();
      if (matches(cg, tok, text) != valid)
        tally.wrong.push_back(
            fmt::format("{} / {} / {}: {} is {} but was {}", file.filename().string(),
                        group["description"].dump(), t["description"].dump(), text,
                        valid ? "valid" : "invalid", valid ? "refused" : "accepted"));
    }
  }
}

TEST(JsonSchemaSuite, EveryCompiledSchemaJudgesEveryInstanceRight) {
  ASSERT_TRUE(fs::exists(kSuite)) << kSuite << " is missing: install json-schema-test-suite";
  const auto tok = Tokenizer::create(
      load_hf_tokenizer_file(brisk::test::shared("tokenizers/llama3-hf/tokenizer.json")));
  const auto trie = std::make_shared<TokenTrie>(TokenTrie::from_tokenizer(*tok));
  for (const auto& [dir, draft] : {std::pair{"draft4", 4}, {"draft6", 6}, {"draft7", 7}}) {
    Tally tally;
    std::vector<fs::path> files;
    // The format tests: a folder of their own from draft 6, one file in draft 4.
    for (const fs::path& sub : {fs::path(kSuite) / dir, fs::path(kSuite) / dir / "optional/format"})
      if (fs::is_directory(sub))
        for (const auto& e : fs::directory_iterator(sub))
          if (e.path().extension() == ".json") files.push_back(e.path());
    if (fs::exists(fs::path(kSuite) / dir / "optional/format.json"))
      files.push_back(fs::path(kSuite) / dir / "optional/format.json");
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) run_file(f, draft, *tok, trie, tally);
    std::printf(
        "%s: %d of %d schemas compiled (%d refused); %d of %d instances judged, %zu wrong\n", dir,
        tally.compiled, tally.schemas, tally.schemas - tally.compiled, tally.checked,
        tally.instances, tally.wrong.size());
    for (const std::string& w : tally.wrong) ADD_FAILURE() << dir << ": " << w;
  }
}

}  // namespace
}  // namespace brisk::grammar
