// fx::parse_json_text: the limits nlohmann does not keep, refused with the
// place in the document.
#include "fx_core/format/json_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace fx {
namespace {

using ::testing::HasSubstr;

// The error message of parsing `text` ("" when it parses).
std::string error_of(const std::string& text, size_t depth = kMaxJsonDepth) {
  absl::StatusOr<nlohmann::ordered_json> j =
      parse_json_text(text, "t.json", depth);
  if (j.ok()) return "";
  EXPECT_EQ(j.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(j.status().message());
}

TEST(JsonText, ParsesWhatIsInRange) {
  absl::StatusOr<nlohmann::ordered_json> j = parse_json_text(
      R"({"a": [1, -9223372036854775808, 18446744073709551615, 1.5e308],
          "b": {"c": null}})",
      "t.json");
  ASSERT_TRUE(j.ok()) << j.status().message();
  EXPECT_EQ((*j)["a"][1].get<int64_t>(), INT64_MIN);
  EXPECT_EQ((*j)["a"][2].get<uint64_t>(), UINT64_MAX);
  EXPECT_EQ((*j)["a"][3].get<double>(), 1.5e308);
  EXPECT_TRUE((*j)["b"]["c"].is_null());
  EXPECT_EQ(j->begin().key(), "a");  // file order kept
}

TEST(JsonText, NumbersBeyondADoubleAreRefusedWithTheirPlace) {
  EXPECT_EQ(error_of(R"({"nodes": [{"args": [1, 1e999]}]})"),
            "t.json: number 1e999 out of range (beyond a double) at "
            "nodes[0].args[1]");
  EXPECT_EQ(error_of("-1e400"),
            "t.json: number -1e400 out of range (beyond a double) at the top "
            "level");
}

TEST(JsonText, IntegersBeyond64BitsAreRefusedNotRounded) {
  EXPECT_EQ(error_of(R"({"x": [18446744073709551616]})"),
            "t.json: integer 18446744073709551616 out of range (beyond 64 "
            "bits) at x[0]");
  EXPECT_EQ(error_of(R"({"x": -9223372036854775809})"),
            "t.json: integer -9223372036854775809 out of range (beyond 64 "
            "bits) at x");
}

TEST(JsonText, DuplicateKeysAreRefused) {
  EXPECT_EQ(error_of(R"({"nodes": [{"name": "a", "name": "b"}]})"),
            "t.json: duplicate key 'name' at nodes[0]");
  EXPECT_EQ(error_of(R"({"a": 1, "a": 1})"),
            "t.json: duplicate key 'a' at the top level");
  // The same key in different objects is fine.
  EXPECT_EQ(error_of(R"([{"a": 1}, {"a": 2}, {"b": {"a": 3}}])"), "");
}

TEST(JsonText, NestingIsLimited) {
  EXPECT_EQ(error_of("[[[1]]]", 3), "");
  EXPECT_EQ(error_of("[[[[1]]]]", 3),
            "t.json: nested deeper than 3 levels at [0][0][0]");
  EXPECT_EQ(error_of(R"({"a": {"b": {"c": {}}}})", 3),
            "t.json: nested deeper than 3 levels at a.b.c");
}

TEST(JsonText, FiftyThousandLevelsAreAnErrorNotAStackOverflow) {
  std::string deep = std::string(50000, '[') + std::string(50000, ']');
  std::string message = error_of(deep);
  EXPECT_THAT(message, HasSubstr("t.json: nested deeper than 1000 levels at "
                                 "[0][0][0][0][0][0][0][0][0][0][0][0]... "
                                 "(1000 levels)"));
}

TEST(JsonText, MalformedJsonSaysWhere) {
  EXPECT_THAT(error_of(R"({"a": [1, 2})"),
              HasSubstr("t.json: malformed JSON: [json.exception.parse_error"));
  EXPECT_THAT(error_of(""), HasSubstr("t.json: malformed JSON"));
}

}  // namespace
}  // namespace fx
