// The localization report: JSON layout, the refined signature and the text
// form.
#include <gtest/gtest.h>

#include "triage/case/verdict.h"
#include "triage/localize/localization_report.h"

namespace trench::hlo_bisect {
namespace {

Localization Sample() {
  Localization l;
  l.full.status = "mismatch";
  l.full.verdict.message = "output 0 differs";
  l.full.verdict.signature.status = hlo_diff::VerdictStatus::kMismatch;
  l.full.verdict.signature.dtype = "f32";
  l.full.verdict.signature.sig =
      hlo_diff::SignatureHash(l.full.verdict.signature);
  LevelResult pass;
  pass.level = "pass";
  pass.result = "found";
  pass.summary = "pass execution 3 ('algsimp') introduces the failure";
  pass.runs = 5;
  pass.linear_runs = 12;
  pass.evidence["first_failing_limit"] = 3;
  l.levels.push_back(pass);
  LevelResult graph;
  graph.level = "graph";
  graph.result = "found";
  graph.summary = "first diverging instruction: %t2 (transpose)";
  graph.runs = 1;
  graph.linear_runs = 9;
  l.levels.push_back(graph);
  l.findings.pass = "algsimp";
  l.findings.pass_execution = 3;
  l.findings.rewrite = Json::MakeObject();
  l.findings.rewrite["pass"] = "algsimp";
  l.findings.rewrite["site"] = "transpose-of-transpose";
  l.findings.rewrite["instruction"] = "t2";
  l.findings.rewrite_opcode = "transpose";
  l.findings.instruction = "user";
  l.findings.opcode = "add";
  l.findings.dtype = "bf16";
  l.runs = 7;
  l.linear_runs = 22;
  return l;
}

TEST(RefinedSignatureTest, PassCulpritsUseTheRewrittenOpcode) {
  Localization l = Sample();
  Json s = RefinedSignature(l);
  EXPECT_EQ(s["status"].string_value(), "mismatch");
  EXPECT_EQ(s["pass"].string_value(), "algsimp");
  EXPECT_EQ(s["site"].string_value(), "transpose-of-transpose");
  EXPECT_EQ(s["opcode"].string_value(), "transpose");
  EXPECT_EQ(s["dtype"].string_value(), "bf16");
  EXPECT_EQ(s["sig"].string_value().size(), 16u);
  // One bug: the same rewrite site on other ops and other dtypes, and one
  // crash class.
  const std::string sig = s["sig"].string_value();
  l.findings.rewrite_opcode = "copy";
  l.findings.dtype = "s32";
  EXPECT_EQ(RefinedSignature(l)["sig"].string_value(), sig);
  l.full.status = "nan_mismatch";
  EXPECT_EQ(RefinedSignature(l)["sig"].string_value(), sig);
  // Another: a crash, another site, another pass.
  l.full.status = "memory_error";
  const std::string crash = RefinedSignature(l)["sig"].string_value();
  EXPECT_NE(crash, sig);
  l.full.status = "run_crash";
  EXPECT_EQ(RefinedSignature(l)["sig"].string_value(), crash);
  l.full.status = "mismatch";
  l.findings.rewrite["site"] = "reshape-of-reshape";
  EXPECT_NE(RefinedSignature(l)["sig"].string_value(), sig);
  l.findings.rewrite["site"] = "transpose-of-transpose";
  l.findings.pass = "cse";
  EXPECT_NE(RefinedSignature(l)["sig"].string_value(), sig);
}

TEST(RefinedSignatureTest, CrashSitesKeepCrashesOfOnePassApart) {
  // Two crash bugs in dot-decomposer on a dot, at no named rewrite site:
  // different checks fail. The coarse signature's message is the crash
  // site (triage/case/crash_site.h, normalized).
  auto crash = [](const std::string& message) {
    Localization l;
    l.full.status = "compile_crash";
    l.full.verdict.status = hlo_diff::VerdictStatus::kCompileCrash;
    hlo_diff::Signature& c = l.full.verdict.signature;
    c.status = hlo_diff::VerdictStatus::kCompileCrash;
    c.stage = "compile";
    c.pass = "dot-decomposer";
    c.message = hlo_diff::NormalizeMessage(message);
    c.sig = hlo_diff::SignatureHash(c);
    l.findings.pass = "dot-decomposer";
    l.findings.opcode = "dot";
    return l;
  };
  const Localization a = crash(
      "killed by SIGABRT: Check failed: k > 0 (k=0) for %dot.3 [frames: "
      "trench::CanonicalDot; trench::DotDecomposer::Run]");
  const Localization same = crash(
      "killed by SIGABRT: Check failed: k > 0 (k=17) for %dot.41 [frames: "
      "trench::CanonicalDot; trench::DotDecomposer::Run]");
  const Localization other = crash(
      "killed by SIGABRT: Check failed: batch_dims.size() == 1 for %dot.3 "
      "[frames: trench::SplitBatch; trench::DotDecomposer::Run]");
  const Localization fpe = crash("killed by SIGFPE");
  const std::string sig = RefinedSignature(a)["sig"].string_value();
  EXPECT_EQ(RefinedSignature(same)["sig"].string_value(), sig);
  EXPECT_NE(RefinedSignature(other)["sig"].string_value(), sig);
  EXPECT_NE(RefinedSignature(fpe)["sig"].string_value(), sig);
  EXPECT_NE(RefinedSignature(fpe)["sig"].string_value(),
            RefinedSignature(other)["sig"].string_value());
  // The coarse signatures differ too.
  EXPECT_EQ(a.full.verdict.signature.sig, same.full.verdict.signature.sig);
  EXPECT_NE(a.full.verdict.signature.sig, other.full.verdict.signature.sig);
}

TEST(RefinedSignatureTest, ValueFailureHashesDoNotChange) {
  // The hash of a value failure covers {class, pass, site, opcode} only, as
  // before crash sites: stored findings keep deduplicating.
  Localization l = Sample();
  Json key = Json::MakeObject();
  key["class"] = "value";
  key["pass"] = "algsimp";
  key["site"] = "transpose-of-transpose";
  key["opcode"] = Json();
  EXPECT_EQ(RefinedSignature(l)["sig"].string_value(),
            hlo_diff::WithSignatureHash(key)["sig"].string_value());
}

TEST(RefinedSignatureTest, BackEndCulpritsUseTheDivergingOpcode) {
  Localization l = Sample();
  l.findings.pass = "codegen";
  Json s = RefinedSignature(l);
  EXPECT_EQ(s["opcode"].string_value(), "add");
  l.findings.fused_opcode = "reduce";
  EXPECT_EQ(RefinedSignature(l)["opcode"].string_value(), "reduce");
  const std::string sig = RefinedSignature(l)["sig"].string_value();
  l.findings.rewrite = Json();
  Json none = RefinedSignature(l);
  EXPECT_TRUE(none["site"].is_null());
  EXPECT_NE(none["sig"].string_value(), sig);  // Site is part of the hash.
  // Without a site the opcode tells back-end bugs apart.
  l.findings.fused_opcode = "pad";
  EXPECT_NE(RefinedSignature(l)["sig"].string_value(),
            none["sig"].string_value());
  // Without levels' findings the coarse signature's dtype is kept.
  Localization bare = Sample();
  bare.findings = Findings();
  Json b = RefinedSignature(bare);
  EXPECT_TRUE(b["pass"].is_null());
  EXPECT_TRUE(b["opcode"].is_null());
  EXPECT_EQ(b["dtype"].string_value(), "f32");
}

TEST(LocalizationJsonTest, LevelsFindingsAndRuns) {
  Json j = LocalizationJson(Sample(), "cases/x");
  EXPECT_EQ(j["format"].int64_value(), 1);
  EXPECT_EQ(j["case"].string_value(), "cases/x");
  EXPECT_EQ(j["status"].string_value(), "mismatch");
  EXPECT_EQ(j["message"].string_value(), "output 0 differs");
  ASSERT_EQ(j["levels"].size(), 2u);
  const Json& p = j["levels"].array()[0];
  EXPECT_EQ(p.Find("level")->string_value(), "pass");
  EXPECT_EQ(p.Find("runs")->int64_value(), 5);
  EXPECT_EQ(p.Find("linear_runs")->int64_value(), 12);
  EXPECT_EQ(p.Find("evidence")->Find("first_failing_limit")->int64_value(), 3);
  EXPECT_EQ(j["findings"]["pass_execution"].int64_value(), 3);
  EXPECT_TRUE(j["findings"]["fusion"].is_null());
  EXPECT_EQ(j["runs"]["localize"].int64_value(), 7);
  EXPECT_EQ(j["runs"]["linear_scan"].int64_value(), 22);
  EXPECT_EQ(j["signature"], RefinedSignature(Sample()));
  // The JSON text parses back.
  StatusOr<Json> back = ParseJson(j.DumpPretty());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, j);
}

// hlo-bisect's JSON, member by member (the hashes come from the report).
TEST(LocalizationJsonTest, LayoutIsPinned) {
  Json j = LocalizationJson(Sample(), "cases/x");
  const std::string coarse = j["coarse_signature"]["sig"].string_value();
  const std::string refined = j["signature"]["sig"].string_value();
  const std::string expected =
      R"({"format":1,"case":"cases/x","status":"mismatch",)"
      R"("message":"output 0 differs","coarse_signature":{"status":)"
      R"("mismatch","dtype":"f32","ops":[],"sig":")" +
      coarse +
      R"("},"levels":[{"level":"pass","result":"found","summary":)"
      R"("pass execution 3 ('algsimp') introduces the failure",)"
      R"("runs":5,"linear_runs":12,"evidence":{"first_failing_limit":3}},)"
      R"({"level":"graph","result":"found","summary":)"
      R"j("first diverging instruction: %t2 (transpose)","runs":1,)j"
      R"("linear_runs":9,"evidence":{}}],"findings":{"pass":"algsimp",)"
      R"("trigger":null,"pass_execution":3,"rewrite":{"pass":"algsimp",)"
      R"("site":"transpose-of-transpose","instruction":"t2"},)"
      R"("instruction":"user","opcode":"add","fusion":null,)"
      R"("fused_instruction":null,"fused_opcode":null,"dtype":"bf16",)"
      R"("called_computation":null,"called_instruction":null,)"
      R"("called_opcode":null},)"
      R"("signature":{"status":"mismatch","pass":"algsimp",)"
      R"("site":"transpose-of-transpose","opcode":"transpose",)"
      R"("dtype":"bf16","sig":")" +
      refined + R"("},"runs":{"localize":7,"linear_scan":22}})";
  EXPECT_EQ(j.Dump(), expected);
}

// The printed report reads back as the record and prints the same text.
TEST(LocalizationJsonTest, TextReadsBackAsTheRecord) {
  const std::string text = LocalizationJson(Sample(), "cases/x").DumpPretty();
  StatusOr<LocalizationReport> r = ParseLocalizationReport(text);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, MakeLocalizationReport(Sample(), "cases/x"));
  EXPECT_EQ(r->signature, RefinedSignatureOf(Sample()));
  EXPECT_EQ(FromJsonDoc(ToJson(*r)).DumpPretty(), text);
}

TEST(LocalizationTextTest, OneBlockPerLevel) {
  const std::string t = LocalizationText(Sample(), "cases/x");
  EXPECT_NE(t.find("case cases/x: mismatch (output 0 differs)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  pass: found [5 runs, linear scan 12]"), std::string::npos)
      << t;
  EXPECT_NE(t.find("  graph: found [1 run, linear scan 9]"), std::string::npos)
      << t;
  EXPECT_NE(t.find("\"opcode\":\"transpose\""), std::string::npos) << t;
  EXPECT_NE(t.find("target runs: 7 (baseline included); linear scan: 22"),
            std::string::npos)
      << t;
}

}  // namespace
}  // namespace trench::hlo_bisect
