// How the pipeline reads the tools' reports (step_util.h): hlo-bisect's
// localization report (ToolLocalization, which the localize step parses
// the tool's stdout with, and BugLocalization, which the patch, stress and
// demo code read a bug's details.localization with) and hlo-diff's verdict
// (ToolVerdict, behind every RunVerdict of the steps).
#include <gtest/gtest.h>

#include "base/json_nlohmann.h"
#include "orchestrator/pipeline/step_util.h"

namespace trench::orchestrator {
namespace {

// A report as hlo-bisect prints it.
JsonDoc Report() {
  hlo_bisect::LocalizationReport r;
  r.case_dir = "var/cases/x";
  r.status = "mismatch";
  r.coarse_signature = {{"status", "mismatch"}};
  r.findings.pass = "algsimp";
  r.signature = {.status = "mismatch",
                 .pass = "algsimp",
                 .opcode = "add",
                 .sig = "0123456789abcdef"};
  return hlo_bisect::ToJson(r);
}

sandbox::Result Printed(const std::string& stdout_data) {
  sandbox::Result r;
  r.exited = true;
  r.exit_code = 0;
  r.stdout_data = stdout_data;
  return r;
}

TEST(ToolLocalizationTest, ReadsTheReport) {
  StatusOr<hlo_bisect::LocalizationReport> l =
      ToolLocalization(Printed(DumpJsonDocPretty(Report())));
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->signature.sig, "0123456789abcdef");
  EXPECT_EQ(l->signature.pass, "algsimp");
}

TEST(ToolLocalizationTest, AReportWithoutTheSignatureHashNamesTheField) {
  JsonDoc report = Report();
  report["signature"].erase("sig");
  StatusOr<hlo_bisect::LocalizationReport> l =
      ToolLocalization(Printed(DumpJsonDoc(report)));
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kInternal);  // Retried, as before.
  EXPECT_EQ(l.status().message(),
            "hlo-bisect's report: field 'signature.sig' is missing");
}

TEST(ToolLocalizationTest, TruncatedOutputGivesTheLineAndColumn) {
  StatusOr<hlo_bisect::LocalizationReport> l =
      ToolLocalization(Printed("{\"format\": 1,\n  \"case\": "));
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message().rfind("hlo-bisect's report: 2:", 0), 0u)
      << l.status().message();
}

TEST(ToolVerdictTest, ReadsTheVerdictAndNamesAWrongMember) {
  hlo_diff::Verdict v;
  v.status = hlo_diff::VerdictStatus::kMismatch;
  v.message = "output 0 differs";
  v.signature.status = v.status;
  v.signature.dtype = "f32";
  v.signature.sig = hlo_diff::SignatureHash(v.signature);
  StatusOr<hlo_diff::Verdict> read =
      ToolVerdict(Printed(v.ToJson().DumpPretty()));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->status, hlo_diff::VerdictStatus::kMismatch);
  EXPECT_EQ(read->signature.sig, v.signature.sig);

  Json bad = v.ToJson();
  bad["status"] = "mostly fine";
  StatusOr<hlo_diff::Verdict> refused = ToolVerdict(Printed(bad.Dump()));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInternal);  // Retried.
  EXPECT_EQ(
      refused.status().message().rfind("hlo-diff's verdict: verdict.status", 0),
      0u)
      << refused.status().message();
  // No JSON at all: ToolJson's message, with the run and its stderr.
  StatusOr<hlo_diff::Verdict> none = ToolVerdict(Printed("Segmentation"));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("hlo-diff printed no JSON result"),
            std::string::npos)
      << none.status().message();
}

TEST(BugLocalizationTest, TheStoredReportOrNothing) {
  Bug bug;
  EXPECT_FALSE(BugLocalization(bug).has_value());
  bug.details["localization"] = FromJsonDoc(Report());
  std::optional<hlo_bisect::LocalizationReport> l = BugLocalization(bug);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->signature.opcode, "add");
  // A report that does not parse reads as no localization.
  bug.details["localization"]["signature"] = Json("x");
  EXPECT_FALSE(BugLocalization(bug).has_value());
}

}  // namespace
}  // namespace trench::orchestrator
