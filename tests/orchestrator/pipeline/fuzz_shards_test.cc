// The merge of a sharded campaign's summaries (fuzz_shards.h).
#include "orchestrator/pipeline/fuzz_shards.h"

#include <gtest/gtest.h>

#include "base/json.h"

namespace trench::orchestrator {
namespace {

Json Parse(const std::string& text) {
  StatusOr<Json> j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? *j : Json();
}

TEST(FuzzShardsTest, FlagsNameTheShard) {
  EXPECT_TRUE(ShardFlags(0, 1).empty());
  EXPECT_EQ(ShardFlags(1, 3), (std::vector<std::string>{"--shard", "1/3"}));
}

TEST(FuzzShardsTest, CountsAddFindingsMergeBySignatureReachAddsPerLine) {
  const Json a = Parse(R"({
    "programs": 10, "synthetic": 6, "traces": 4, "generator_errors": 0,
    "seconds": 3.0, "statuses": {"pass": 9, "mismatch": 1},
    "findings": [{"sig": "mismatch:add", "case": "out-0/a"}],
    "reach": {"lines": 3, "reached": 1, "no_code": 0,
              "unreached": ["f.cc:2", "f.cc:3"],
              "per_line": [{"line": "f.cc:1", "programs": 2},
                           {"line": "f.cc:2", "programs": 0},
                           {"line": "f.cc:3", "programs": 0}]}})");
  const Json b = Parse(R"({
    "programs": 11, "synthetic": 5, "traces": 6, "generator_errors": 1,
    "seconds": 4.0, "statuses": {"pass": 9, "mismatch": 1, "crash": 1},
    "findings": [{"sig": "mismatch:add", "case": "out-1/a"},
                 {"sig": "crash:hloc", "case": "out-1/b"}],
    "reach": {"lines": 3, "reached": 1, "no_code": 0,
              "unreached": ["f.cc:1", "f.cc:3"],
              "per_line": [{"line": "f.cc:1", "programs": 0},
                           {"line": "f.cc:2", "programs": 5},
                           {"line": "f.cc:3", "programs": 0}]}})");
  StatusOr<Json> m = MergeFuzzSummaries({a, b});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)["programs"].int64_value(), 21);
  EXPECT_EQ((*m)["synthetic"].int64_value(), 11);
  EXPECT_EQ((*m)["traces"].int64_value(), 10);
  EXPECT_EQ((*m)["generator_errors"].int64_value(), 1);
  EXPECT_DOUBLE_EQ((*m)["seconds"].number_value(), 4.0);
  EXPECT_EQ((*m)["statuses"]["pass"].int64_value(), 18);
  EXPECT_EQ((*m)["statuses"]["crash"].int64_value(), 1);
  ASSERT_EQ((*m)["findings"].array().size(), 2u);
  EXPECT_EQ((*m)["findings"].array()[0].Find("case")->string_value(),
            "out-0/a");
  EXPECT_EQ((*m)["distinct_findings"].int64_value(), 2);
  Json reach = (*m)["reach"];
  EXPECT_EQ(reach["reached"].int64_value(), 2);
  ASSERT_EQ(reach["unreached"].array().size(), 1u);
  EXPECT_EQ(reach["unreached"].array()[0].string_value(), "f.cc:3");
  EXPECT_EQ(reach["per_line"].array()[1].Find("programs")->int64_value(), 5);
}

TEST(FuzzShardsTest, OneShardIsItselfAndBadInputIsRefused) {
  const Json a = Parse(R"({"programs": 4, "findings": []})");
  StatusOr<Json> one = MergeFuzzSummaries({a});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->Dump(), a.Dump());
  EXPECT_EQ(MergeFuzzSummaries({}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(MergeFuzzSummaries({a, Json(3)}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace trench::orchestrator
