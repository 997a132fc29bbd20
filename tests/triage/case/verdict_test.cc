// Verdict pieces without processes (message normalization, op mix,
// signature hash), and the hlo-diff command line end to end.
#include "triage/case/verdict.h"

#include <gtest/gtest.h>

#include "base/subprocess.h"
#include "compiler/ir/hlo_parser.h"
#include "tests/triage/case/hlo_diff_test_util.h"

namespace trench::hlo_diff {
namespace {

using testing::AddCase;
using testing::BinaryDir;
using testing::TempDir;
using testing::WriteText;

TEST(NormalizeMessageTest, StripsWhatVaries) {
  EXPECT_EQ(NormalizeMessage("INTERNAL: pass 'cse' (execution 12): %add.3 "
                             "at 0x7ffe12 in /tmp/x/module.hlo:4:7"),
            "INTERNAL: pass 'cse' (execution N): %<name> at <hex> in <path>");
  EXPECT_EQ(NormalizeMessage("operand fusion.2  of\tkernel 'k17'\n"),
            "operand <name> of kernel '<name>'");
  EXPECT_EQ(NormalizeMessage(""), "");
  // One bug, programs of other types, ranks and layouts, and a location.
  const char* a =
      "INTERNAL: module fails verification after pass 'algsimp' (execution "
      "3): in computation %main: %v9: transpose declared shape bf16[2,3,4] "
      "is not compatible with inferred shape bf16[4,3,2]";
  const char* b =
      "INTERNAL: module fails verification after pass 'algsimp' (execution "
      "5): 12:7: in computation %main: %v2: transpose declared shape "
      "s32[5,1,2,8]{3,2,1,0} is not compatible with inferred shape "
      "pred[8,2,1,5]";
  EXPECT_EQ(NormalizeMessage(a), NormalizeMessage(b));
  EXPECT_NE(NormalizeMessage(a).find("declared shape <shape> is not"),
            std::string::npos)
      << NormalizeMessage(a);
}

TEST(OpMixTest, TwoProducerStepsThroughTuples) {
  auto m = ParseHloModule(R"(HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  e0 = f32[4] exponential(p0)
  l0 = f32[4] log(e0)
  m0 = f32[4] multiply(l0, p1)
  s0 = f32[4] sqrt(m0)
  c0 = f32[4] constant({1, 2, 3, 4})
  a0 = f32[4] add(p1, c0)
  ROOT t = (f32[4], (f32[4])) tuple(a0, (f32[4]) tuple(s0))
})");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  using Ops = std::vector<std::string>;
  EXPECT_EQ(OpMixNear(**m, 0), Ops({"add"}));
  // sqrt <- multiply <- log (exponential is 3 steps away).
  EXPECT_EQ(OpMixNear(**m, 1), Ops({"log", "multiply", "sqrt"}));
  EXPECT_EQ(OpMixNear(**m, 1, 3),
            Ops({"exponential", "log", "multiply", "sqrt"}));
}

TEST(SignatureTest, HashCoversEveryFieldButItself) {
  Json a = Json::MakeObject();
  a["status"] = "mismatch";
  a["dtype"] = "f32";
  Json ha = WithSignatureHash(a);
  EXPECT_EQ(ha.Find("sig")->string_value().size(), 16u);
  EXPECT_EQ(WithSignatureHash(ha), ha);
  Json b = a;
  b["dtype"] = "bf16";
  EXPECT_NE(WithSignatureHash(b).Find("sig")->string_value(),
            ha.Find("sig")->string_value());
}

// Runs the hlo-diff binary of this build.
ProcessResult HloDiff(std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {BinaryDir() + "/hlo-diff"};
  for (std::string& a : args) spec.argv.push_back(std::move(a));
  spec.timeout_seconds = 300;
  StatusOr<ProcessResult> r = RunProcess(spec);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ProcessResult();
}

TEST(HloDiffCliTest, PassOnACaseAndRecord) {
  TempDir tmp;
  ASSERT_TRUE(WriteCase(tmp / "c", AddCase()).ok());
  ProcessResult r = HloDiff({tmp / "c", "--record"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  StatusOr<Json> v = ParseJson(r.out);
  ASSERT_TRUE(v.ok()) << r.out;
  EXPECT_EQ(v->Find("status")->string_value(), "pass");
  StatusOr<Case> back = ReadCase(tmp / "c");
  ASSERT_TRUE(back.ok());
  ASSERT_TRUE(back->verdict.has_value());
  EXPECT_STREQ(back->verdict->status_name(), "pass");
  EXPECT_EQ(back->signature, *v->Find("signature"));
}

TEST(HloDiffCliTest, ModuleWithRandomInputsWritesACase) {
  TempDir tmp;
  WriteText(tmp / "m.hlo", testing::kAddModule);
  ProcessResult r =
      HloDiff({tmp / "m.hlo", "--random-inputs", "--seed", "7", "--hlo-run",
               BinaryDir() + "/hlo-run", "--write-case", tmp / "saved"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  StatusOr<Case> c = ReadCase(tmp / "saved");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->origin.Find("seed")->int64_value(), 7);
  ASSERT_TRUE(c->verdict.has_value());
  EXPECT_STREQ(c->verdict->status_name(), "pass");
  // Stored content-addressed: twice the same directory.
  for (int i = 0; i < 2; ++i) {
    r = HloDiff({tmp / "saved", "--store", tmp / "var"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(tmp / ("var/cases/" + CaseSha256(*c))),
              std::string::npos)
        << r.err;
  }
}

// A tuple-shaped parameter takes one input per leaf in the case; the
// oracle gets it assembled, the target gets the leaves.
TEST(HloDiffCliTest, TupleParameterFromLeafInputs) {
  TempDir tmp;
  WriteText(tmp / "m.hlo", R"(
HloModule m
ENTRY e {
  p = (f32[2,3], s32[4]) parameter(0)
  q = f32[2,3] parameter(1)
  a = f32[2,3] get-tuple-element(p), index=0
  ROOT r = f32[2,3] add(a, q)
}
)");
  ProcessResult r =
      HloDiff({tmp / "m.hlo", "--random-inputs", "--seed", "3", "--hlo-run",
               BinaryDir() + "/hlo-run", "--write-case", tmp / "c"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  StatusOr<Case> c = ReadCase(tmp / "c");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->inputs.size(), 3u);
  ASSERT_TRUE(c->verdict.has_value());
  EXPECT_STREQ(c->verdict->status_name(), "pass");
}

TEST(HloDiffCliTest, MalformedCaseIsExitOneWithFileAndPosition) {
  TempDir tmp;
  ASSERT_TRUE(WriteCase(tmp / "c", AddCase()).ok());
  WriteText(tmp / "c/case.json", "{\"format\": 1,, }");
  ProcessResult r = HloDiff({tmp / "c"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.signal, 0);
  EXPECT_NE(r.err.find(tmp / "c/case.json:1:14: "), std::string::npos) << r.err;
  StatusOr<Json> v = ParseJson(r.out);
  ASSERT_TRUE(v.ok()) << r.out;
  EXPECT_EQ(v->Find("status")->string_value(), "invalid_input");
}

TEST(HloDiffCliTest, UsageErrors) {
  ProcessResult r = HloDiff({});
  EXPECT_EQ(r.exit_code, 2);
  r = HloDiff({"/nonexistent/m.hlo"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/m.hlo"), std::string::npos) << r.err;
}

TEST(HloDiffCliTest, OracleUnsupportedOp) {
  TempDir tmp;
  WriteText(tmp / "m.hlo", R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(p), custom_call_target="mystery"
})");
  ProcessResult r = HloDiff({tmp / "m.hlo", "--random-inputs"});
  StatusOr<Json> v = ParseJson(r.out);
  ASSERT_TRUE(v.ok()) << r.out << r.err;
  EXPECT_EQ(v->Find("status")->string_value(), "oracle_unsupported") << r.out;
  EXPECT_EQ(r.exit_code, 12);
}

// A loop that never ends (the trace mutator can make one by perturbing a
// loop's step to 0) is judged by the oracle's loop limit before the target
// would burn its timeout on it: oracle_unsupported, target not run.
TEST(HloDiffCliTest, RunawayLoopIsNotRunOnTheTarget) {
  TempDir tmp;
  WriteText(tmp / "m.hlo", R"(HloModule m
cond {
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  zero = s32[] constant(0)
  next = s32[] add(i, zero)
  ROOT t = (s32[]) tuple(next)
}
ENTRY e {
  z = s32[] constant(0)
  t = (s32[]) tuple(z)
  ROOT w = (s32[]) while(t), condition=cond, body=body
})");
  ProcessResult r = HloDiff({tmp / "m.hlo", "--random-inputs"});
  StatusOr<Json> v = ParseJson(r.out);
  ASSERT_TRUE(v.ok()) << r.out << r.err;
  EXPECT_EQ(v->Find("status")->string_value(), "oracle_unsupported") << r.out;
  EXPECT_TRUE(v->Find("target")->is_null()) << r.out;
  EXPECT_EQ(r.exit_code, 12);
}

}  // namespace
}  // namespace trench::hlo_diff
