// The localization report's record (localization_record.h): its JSON round
// trip and the strict parser's errors, which name the field.
#include "triage/localize/localization_record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace trench::hlo_bisect {
namespace {

LocalizationReport Full() {
  LocalizationReport r;
  r.case_dir = "cases/x";
  r.status = "mismatch";
  r.message = "output 0 differs";
  r.coarse_signature = {{"status", "mismatch"}, {"sig", "0123"}};
  r.levels.push_back({.level = "pass",
                      .result = "found",
                      .summary = "pass execution 3",
                      .runs = 5,
                      .linear_runs = 12,
                      .evidence = {{"first_failing_limit", 3},
                                   {"probes", {1, 2.5, "x", nullptr}}}});
  r.levels.push_back({.level = "graph", .result = "none", .summary = "-"});
  r.findings.pass = "algsimp";
  r.findings.pass_execution = 3;
  r.findings.rewrite = {{"pass", "algsimp"}, {"site", "t-of-t"}, {"index", 0}};
  r.findings.instruction = "user";
  r.findings.opcode = "add";
  r.findings.dtype = "bf16";
  r.findings.called_computation = "greater";
  r.findings.called_instruction = "gt";
  r.findings.called_opcode = "compare";
  r.signature = {.status = "mismatch",
                 .pass = "algsimp",
                 .site = "t-of-t",
                 .opcode = "transpose",
                 .dtype = "bf16",
                 .sig = "0123456789abcdef"};
  r.runs = {.localize = 7, .linear_scan = 22};
  return r;
}

// The report's compact text with `edit` applied to its JSON.
template <typename Edit>
std::string Edited(Edit edit) {
  JsonDoc j = ToJson(Full());
  edit(j);
  return DumpJsonDoc(j);
}

std::string ErrorOf(std::string_view text) {
  StatusOr<LocalizationReport> r = ParseLocalizationReport(text);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}

TEST(LocalizationRecordTest, RoundTrips) {
  for (const LocalizationReport& r : {Full(), LocalizationReport()}) {
    StatusOr<LocalizationReport> back = LocalizationReportFromJson(ToJson(r));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, r);
    // And through text.
    StatusOr<LocalizationReport> parsed =
        ParseLocalizationReport(DumpJsonDocPretty(ToJson(r)));
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(DumpJsonDoc(ToJson(*parsed)), DumpJsonDoc(ToJson(r)));
  }
}

TEST(LocalizationRecordTest, UnsetFieldsAreWrittenAsNull) {
  const JsonDoc j = ToJson(LocalizationReport());
  EXPECT_EQ(DumpJsonDoc(j),
            R"({"format":1,"case":"","status":"","message":"",)"
            R"("coarse_signature":null,"levels":[],)"
            R"("findings":{"pass":null,"trigger":null,"pass_execution":null,)"
            R"("rewrite":null,"instruction":null,"opcode":null,)"
            R"("fusion":null,"fused_instruction":null,"fused_opcode":null,)"
            R"("dtype":null,"called_computation":null,)"
            R"("called_instruction":null,"called_opcode":null},)"
            R"("signature":{"status":"","pass":null,"site":null,)"
            R"("opcode":null,"dtype":null,"sig":""},)"
            R"("runs":{"localize":0,"linear_scan":0}})");
}

TEST(LocalizationRecordTest, ReportsWithoutTheCalledMembersStillParse) {
  // Reports written before the callee level have no "called_*" members.
  StatusOr<LocalizationReport> r =
      ParseLocalizationReport(Edited([](JsonDoc& j) {
        for (const char* k :
             {"called_computation", "called_instruction", "called_opcode"}) {
          j["findings"].erase(k);
        }
      }));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->findings.called_instruction.has_value());
  EXPECT_EQ(r->findings.instruction, std::optional<std::string>("user"));
  EXPECT_NE(ErrorOf(Edited([](JsonDoc& j) {
              j["findings"]["called_opcode"] = 3;
            })).find("findings.called_opcode"),
            std::string::npos);
}

TEST(LocalizationRecordTest, RewriteSite) {
  LocalizationFindingsRecord f = Full().findings;
  EXPECT_EQ(f.RewriteSite(), "t-of-t");
  f.rewrite["site"] = 3;
  EXPECT_EQ(f.RewriteSite(), std::nullopt);
  f.rewrite = JsonDoc();
  EXPECT_EQ(f.RewriteSite(), std::nullopt);
}

TEST(LocalizationRecordTest, MissingMembersAreNamed) {
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["signature"].erase("sig"); })),
            "field 'signature.sig' is missing");
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j.erase("signature"); })),
            "field 'signature' is missing");
  // Nullable members are always written: absent is an error too.
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["findings"].erase("trigger"); })),
            "field 'findings.trigger' is missing");
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["levels"][1].erase("runs"); })),
            "field 'levels[1].runs' is missing");
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["runs"].erase("localize"); })),
            "field 'runs.localize' is missing");
}

TEST(LocalizationRecordTest, IllTypedMembersAreNamed) {
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["signature"]["sig"] = 5; })),
            "field 'signature.sig' must be a string, got number");
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["levels"][0]["runs"] = "5"; })),
            "field 'levels[0].runs' must be an integer, got string");
  EXPECT_EQ(
      ErrorOf(Edited([](JsonDoc& j) { j["levels"] = JsonDoc::object(); })),
      "field 'levels' must be an array, got object");
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["levels"][0] = 1; })),
            "field 'levels[0]' must be an object, got number");
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["signature"] = "x"; })),
            "field 'signature' must be an object, got string");
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["findings"]["rewrite"] = "s"; })),
            "field 'findings.rewrite' must be an object or null, got string");
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["findings"]["pass"] = true; })),
            "field 'findings.pass' must be a string, got boolean");
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["format"] = 2; })),
            "field 'format' must be 1, got 2");
  EXPECT_EQ(ErrorOf("[1, 2]"), "the document must be an object, got array");
}

TEST(LocalizationRecordTest, UnknownMembersAreRefusedOutsideTheFreeFormOnes) {
  EXPECT_EQ(ErrorOf(Edited([](JsonDoc& j) { j["signature"]["x"] = 1; })),
            "unknown field 'signature.x' (expected one of status, pass, site, "
            "opcode, dtype, sig)");
  EXPECT_NE(ErrorOf(Edited([](JsonDoc& j) {
              j["extra"] = 1;
            })).find("unknown field 'extra'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Edited([](JsonDoc& j) {
              j["levels"][0]["x"] = 1;
            })).find("unknown field 'levels[0].x'"),
            std::string::npos);
  // The free-form members take anything.
  StatusOr<LocalizationReport> r =
      ParseLocalizationReport(Edited([](JsonDoc& j) {
        j["coarse_signature"]["anything"] = {1, 2};
        j["levels"][0]["evidence"]["more"] = "yes";
        j["findings"]["rewrite"]["extra"] = nullptr;
      }));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->levels[0].evidence["more"], "yes");
}

TEST(LocalizationRecordTest, TextThatIsNoJsonGivesItsLineAndColumn) {
  const std::string text = DumpJsonDocPretty(ToJson(Full()));
  const std::string truncated = text.substr(0, text.size() / 2);
  const std::string error = ErrorOf(truncated);
  const size_t lines = std::count(truncated.begin(), truncated.end(), '\n');
  EXPECT_EQ(error.rfind(std::to_string(lines + 1) + ":", 0), 0u) << error;
  EXPECT_EQ(ErrorOf("").rfind("1:1: ", 0), 0u);
}

}  // namespace
}  // namespace trench::hlo_bisect
