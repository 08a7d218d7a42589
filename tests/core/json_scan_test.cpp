// The JSON structure scanner against nlohmann's parser: random values end where their text ends,
// every cut of them is incomplete, a wrong closer is invalid, and nesting past the limit is
// flagged without recursion.
#include "core/json_scan.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

namespace brisk {
namespace {

nlohmann::ordered_json random_value(std::mt19937& rng, int depth) {
  switch (depth > 4 ? rng() % 4 : rng() % 6) {
    case 0:
      return static_cast<int>(rng() % 2000) - 1000;
    case 1:
      return std::string("s\"\\\n{[") + std::to_string(rng() % 97);
    case 2:
      return rng() % 2 == 0;
    case 3:
      return nullptr;
    case 4: {
      auto a = nlohmann::ordered_json::array();
      for (unsigned i = rng() % 4; i-- > 0;) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      auto o = nlohmann::ordered_json::object();
      for (unsigned i = rng() % 4; i-- > 0;)
        o["k" + std::to_string(i) + "}"] = random_value(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonScan, EndsWhereTheParserEnds) {
  std::mt19937 rng(5);
  for (int n = 0; n < 400; ++n) {
    const std::string text = random_value(rng, 0).dump(rng() % 2 ? -1 : 1);
    const std::string padded = "  " + text + " ,x";
    const JsonEnd e = json_value_end(padded, 2, 64);
    ASSERT_EQ(e.state, JsonSpan::Complete) << text;
    ASSERT_EQ(e.end, 2 + text.size()) << text;
    if (text.size() < 2 || (text[0] != '{' && text[0] != '[' && text[0] != '"')) continue;
    const size_t cut = 1 + rng() % (text.size() - 1);
    EXPECT_EQ(json_value_end(text.substr(0, cut), 0, 64).state, JsonSpan::Incomplete)
        << text.substr(0, cut);
  }
}

// A text that grows a few bytes at a time, scanned on from the kept state each time, ends where a
// scan of the whole text ends; a scan of another value between reads leaves the kept one alone.
TEST(JsonScan, AGrowingTextScannedOnEndsAsAWholeScan) {
  std::mt19937 rng(11);
  for (int n = 0; n < 300; ++n) {
    std::string text = "x " + random_value(rng, 0).dump(rng() % 2 ? -1 : 1) + " ,y";
    if (n % 7 == 0) text.insert(text.size() / 2, "]");  // a wrong closer somewhere
    const JsonEnd whole = json_value_end(text, 2, 64);
    JsonScanState kept;
    JsonEnd e{JsonSpan::Incomplete, 0};
    for (size_t len = 2; len <= text.size(); len += 1 + rng() % 5) {
      e = json_value_end(std::string_view(text).substr(0, len), 2, 64, kept);
      (void)json_value_end("\"other\"", 0, 64, kept);
      if (e.state != JsonSpan::Incomplete) break;
    }
    if (e.state == JsonSpan::Incomplete) e = json_value_end(text, 2, 64, kept);
    ASSERT_EQ(e.state, whole.state) << text;
    ASSERT_EQ(e.end, whole.end) << text;
  }
}

TEST(JsonScan, WrongClosersAndDeepNestingAreInvalid) {
  EXPECT_EQ(json_value_end("[1, 2}", 0, 64).state, JsonSpan::Invalid);
  EXPECT_EQ(json_value_end("{\"a\": [}", 0, 64).state, JsonSpan::Invalid);
  EXPECT_EQ(json_value_end("\"a\x01\"", 0, 64).state, JsonSpan::Invalid);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const JsonEnd e = json_value_end(deep, 0, 64);
  EXPECT_EQ(e.state, JsonSpan::Invalid);
  EXPECT_TRUE(e.too_deep);
  EXPECT_EQ(e.end, 64u);
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_EQ(json_value_end(ok, 0, 64).state, JsonSpan::Complete);
  EXPECT_FALSE(json_value_end("[1, 2}", 0, 64).too_deep);
}

}  // namespace
}  // namespace brisk
