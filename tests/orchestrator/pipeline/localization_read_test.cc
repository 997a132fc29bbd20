// How the pipeline reads hlo-bisect's localization report
// (step_util.h ToolLocalization, which the localize step parses the tool's
// stdout with, and BugLocalization, which the patch, stress and demo code
// read a bug's details.localization with).
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
