// Verdict <-> JSON: the one mapping round-trips every part (outputs with
// their first mismatches and non-finite statistics, the oracle, the target
// run, the structure error), keeps the members in hlo-diff's order, and
// refuses malformed verdicts naming the member.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <limits>

#include "tests/triage/case/hlo_diff_test_util.h"
#include "triage/case/verdict.h"

namespace trench::hlo_diff {
namespace {

using testing::AddCase;
using testing::RealTarget;
using testing::TempDir;

std::vector<std::string> Keys(const Json& j) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.object()) keys.push_back(k);
  return keys;
}

Verdict FullVerdict() {
  Verdict v;
  v.status = VerdictStatus::kMismatch;
  v.message = "output 0 differs";
  v.case_sha = std::string(64, 'a');
  v.compare = CompareKind::kNear;
  OutputComparison o;
  o.index = 0;
  o.expected_shape = o.actual_shape = "f32[2,3]";
  o.tolerance = {1e-5, 1e-3};
  o.element_count = 6;
  o.max_abs_error = 1.0;
  o.max_rel_error = std::numeric_limits<double>::infinity();
  o.max_ulp_error = 8388608;
  o.mismatch_count = 1;
  ElementMismatch m;
  m.linear_index = 3;
  m.index = {1, 0};
  m.expected = Json(12.0);
  m.actual = Json(13.0);
  m.abs_error = 1;
  m.rel_error = 1.0 / 12;
  m.allowed = 0.5;
  o.first_mismatch = m;
  o.nonfinite_mismatch_count = 1;
  ElementMismatch n = m;
  n.actual = Json("nan");
  n.abs_error = std::numeric_limits<double>::quiet_NaN();
  n.allowed.reset();
  o.first_nonfinite_mismatch = n;
  o.bounded = true;
  o.max_allowed = 0.25;
  o.undetermined_count = 2;
  OutputComparison bad;
  bad.index = 1;
  bad.expected_shape = "bf16[2,3]";
  bad.actual_shape = "f32[2,3]";
  bad.shape_error = "expected bf16[2,3], got f32[2,3]";
  v.outputs = std::vector<OutputComparison>{o, bad};
  v.oracle.undetermined = 2;
  v.oracle.seconds = 0.125;
  TargetResult t;
  t.status = TargetStatus::kRunCrash;
  t.stage = "run";
  t.signal = SIGSEGV;
  t.message = "killed by SIGSEGV";
  t.last_pass = "codegen";
  t.output_error = "out/1.npy: missing";
  t.seconds = 1.5;
  t.report = Json::MakeObject();
  t.report["run"] = Json::MakeObject();
  v.target = t;
  v.structure_error = "the target wrote 1 outputs, the module has 2";
  v.signature.status = VerdictStatus::kMismatch;
  v.signature.dtype = "f32";
  v.signature.sig = SignatureHash(v.signature);
  return v;
}

TEST(VerdictJsonTest, FullVerdictRoundTripsInHloDiffOrder) {
  Json j = FullVerdict().ToJson();
  EXPECT_EQ(Keys(j), (std::vector<std::string>{
                         "status", "message", "case", "compare", "outputs",
                         "oracle", "target", "structure_error", "signature"}));
  EXPECT_EQ(Keys(j["oracle"]),
            (std::vector<std::string>{"undetermined", "status", "message",
                                      "seconds"}));
  EXPECT_EQ(j["target"].Find("signal")->string_value(), "SIGSEGV");
  StatusOr<Verdict> back = Verdict::FromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->status, VerdictStatus::kMismatch);
  EXPECT_EQ(back->compare, CompareKind::kNear);
  ASSERT_TRUE(back->outputs.has_value());
  ASSERT_EQ(back->outputs->size(), 2u);
  EXPECT_TRUE(std::isinf((*back->outputs)[0].max_rel_error));
  EXPECT_EQ((*back->outputs)[0].first_mismatch->allowed, 0.5);
  EXPECT_FALSE((*back->outputs)[0].first_nonfinite_mismatch->allowed);
  EXPECT_EQ(back->target->signal, SIGSEGV);
  EXPECT_EQ(back->stage(), "run");
  EXPECT_EQ(back->last_pass(), "codegen");
  EXPECT_EQ(back->ToJson().Dump(), j.Dump());
  // Through text, as the service reads hlo-diff's output.
  StatusOr<Json> parsed = ParseJson(j.DumpPretty());
  ASSERT_TRUE(parsed.ok());
  back = Verdict::FromJson(*parsed);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson().DumpPretty(), j.DumpPretty());
}

TEST(VerdictJsonTest, UnreadCaseHasStatusMessageSignatureOnly) {
  const Json j = InvalidInputVerdict("c/case.json: missing").ToJson();
  EXPECT_EQ(Keys(j),
            (std::vector<std::string>{"status", "message", "signature"}));
  StatusOr<Verdict> back = Verdict::FromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->status, VerdictStatus::kInvalidInput);
  EXPECT_TRUE(back->case_sha.empty());
  EXPECT_EQ(back->ToJson().Dump(), j.Dump());
}

TEST(VerdictJsonTest, RealVerdictRoundTrips) {
  TempDir tmp;
  TargetRunner runner(RealTarget(TargetMode::kHloRun));
  StatusOr<Verdict> v = ComputeVerdict(AddCase(), runner, tmp / "work");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->status, VerdictStatus::kPass);
  const Json j = v->ToJson();
  EXPECT_EQ(Keys(j), (std::vector<std::string>{"status", "message", "case",
                                               "compare", "outputs", "oracle",
                                               "target", "signature"}));
  StatusOr<Json> parsed = ParseJson(j.DumpPretty());
  ASSERT_TRUE(parsed.ok());
  StatusOr<Verdict> back = Verdict::FromJson(*parsed);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson().DumpPretty(), j.DumpPretty());
}

TEST(VerdictJsonTest, MalformedVerdictsNameTheMember) {
  Json j = FullVerdict().ToJson();
  j["status"] = "exploded";
  StatusOr<Verdict> v = Verdict::FromJson(j);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("verdict.status: unknown verdict "
                                      "status 'exploded'"),
            std::string::npos)
      << v.status().message();
  j = FullVerdict().ToJson();
  j["oracle"]["seconds"] = "soon";
  v = Verdict::FromJson(j);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("verdict.oracle.seconds"),
            std::string::npos)
      << v.status().message();
  j = FullVerdict().ToJson();
  j["outputs"].mutable_array()[0]["mismatches"] = "one";
  v = Verdict::FromJson(j);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("verdict.outputs[0].mismatches"),
            std::string::npos)
      << v.status().message();
  EXPECT_FALSE(Verdict::FromJson(Json("pass")).ok());
}

}  // namespace
}  // namespace trench::hlo_diff
