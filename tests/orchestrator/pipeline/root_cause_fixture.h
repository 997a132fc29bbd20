// The fixture of the root-cause tests (root_cause_test.cc,
// root_cause_wait_test.cc): commits base_, culprit_ and other_ on a real
// mirror, each built as this checkout; fuzz findings filed as FileFinding
// files them, moved along the pipeline's states by hand; builds whose hloc
// crashes on chosen modules.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/random_inputs.h"
#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/web_data.h"
#include "orchestrator/pipeline/root_cause.h"
#include "orchestrator/pipeline/step_util.h"
#include "orchestrator/pipeline/triage_report.h"
#include "orchestrator/store/records_json.h"
#include "tests/orchestrator/pipeline/step_test_fixture.h"
#include "triage/case/case_bundle.h"

namespace trench::orchestrator::testing {

class RootCauseTest : public testing::StepTest {
 protected:
  void SetUp() override {
    StepTest::SetUp();
    ctx_.worker = "test";
    base_ = Commit({{"pass.cc", "int rule = 1;\n"}}, "base");
    culprit_ = Commit({{"pass.cc", "int rule = 2;\n"}}, "tidy the rule");
    other_ = Commit({{"emit.cc", "int op = 3;\n"}}, "emit");
    ASSERT_TRUE(store_->PutCase(kMin, "", Json::MakeObject()).ok());
  }

  // A fuzz finding at `commit`, filed as FileFinding files one (with the
  // stored case `case_sha`, if any).
  int64_t Finding(const std::string& commit, const std::string& fine,
                  const std::string& coarse, const std::string& case_sha = "") {
    NewBug nb;
    if (!case_sha.empty()) nb.case_sha256 = case_sha;
    nb.signature = "sig:" + fine;
    nb.title = "fuzz finding: " + fine;
    nb.details["source"] = "fuzz";
    nb.details["commit"] = commit;
    nb.details["finding"] = Json::MakeObject();
    nb.details["finding"]["sig"] = fine;
    nb.details["finding"]["coarse_signatures"] = Json::MakeArray();
    nb.details["finding"]["coarse_signatures"].push_back(coarse);
    StatusOr<int64_t> id = store_->CreateBug(nb, "test", Json::MakeObject());
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  Bug Get(int64_t id) {
    StatusOr<Bug> b = store_->GetBug(id);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? *b : Bug();
  }

  // Moves bug `id` from new to localized at `pass` / `site` / `opcode`.
  void Localize(int64_t id, const std::string& pass, const std::string& site,
                const std::string& opcode) {
    for (BugState s :
         {BugState::kReproduced, BugState::kMinimized, BugState::kLocalized}) {
      TransitionFields f;
      f.minimized_sha256 = kMin;
      if (s == BugState::kLocalized) {
        Json sig = Json::MakeObject();
        sig["status"] = "mismatch";
        sig["pass"] = pass;
        sig["site"] = site.empty() ? Json() : Json(site);
        sig["opcode"] = opcode;
        sig["sig"] = "0123456789abcdef";
        Json loc = Json::MakeObject();
        loc["signature"] = sig;
        f.details = DetailsWith(Get(id), "localization", loc);
      }
      StatusOr<Bug> moved =
          store_->TransitionBug(id, s, "test", Json::MakeObject(), f);
      ASSERT_TRUE(moved.ok()) << moved.status().ToString();
    }
  }

  // The bisect step's end with `culprit` as hlo-bisect's answer.
  StatusOr<Json> Bisected(int64_t id, const std::string& culprit) {
    Json report = Json::MakeObject();
    report["culprit"] = Json::MakeObject();
    report["culprit"]["sha"] = culprit;
    report["culprit"]["summary"] = "tidy the rule";
    return JudgeCulprit(ctx_, Get(id), report);
  }

  // The reproduce step's job for bug `id`.
  StatusOr<Json> Reproduce(int64_t id) {
    Json payload = Json::MakeObject();
    payload["bug"] = id;
    return RunReproduceStep(ctx_, MakeJob("reproduce", payload));
  }

  static std::string Diff(int line) {
    return "diff --git a/pass.cc b/pass.cc\n--- a/pass.cc\n+++ b/pass.cc\n"
           "@@ -" +
           std::to_string(line) + " +" + std::to_string(line) +
           " @@\n-int rule = 2;\n+int rule = 1;\n";
  }

  // Bug `id` (culprit_found) drafted `diff` with `strategy`.
  void Drafted(int64_t id, const std::string& diff, const std::string& strategy,
               const std::string& base = "") {
    StatusOr<int64_t> patch =
        store_->AddPatch(id, "trench/bug-" + std::to_string(id), diff);
    ASSERT_TRUE(patch.ok()) << patch.status().ToString();
    Json draft = Json::MakeObject();
    draft["base"] = base.empty() ? other_ : base;
    draft["patch"] = *patch;
    draft["strategy"] = strategy;
    TransitionFields f;
    f.details = DetailsWith(Get(id), "draft", draft);
    ASSERT_TRUE(store_
                    ->TransitionBug(id, BugState::kPatchDrafted, "test",
                                    Json::MakeObject(), f)
                    .ok());
  }

  // Bug `id` (culprit_found) drafted `diff` on `base` and verified it;
  // the patched build is `bin`.
  void VerifiedPatch(int64_t id, const std::string& base,
                     const std::string& diff, const std::string& bin) {
    Drafted(id, diff, "edit", base);
    const Json* draft = Get(id).details.Find("draft");
    ASSERT_NE(draft, nullptr);
    Json report = Json::MakeObject();
    report["base"] = base;
    ASSERT_TRUE(store_
                    ->SetPatchVerified(draft->Find("patch")->int64_value(),
                                       true, report)
                    .ok());
    ASSERT_TRUE(
        store_->PutBuild(base, PatchHash(diff), BuildStatus::kOk, bin, "")
            .ok());
    ASSERT_TRUE(store_
                    ->TransitionBug(id, BugState::kPatchVerified, "test",
                                    Json::MakeObject())
                    .ok());
  }

  // A build directory `name`: this checkout's tpusim, and its hloc and
  // hlo-run behind scripts that abort (a compile crash) on every module
  // holding `crash_on`: a module file named on the command line, or a
  // request of hlo-run --serve (which carries the module's text; each
  // request is answered by a one-request real server).
  std::string CrashingBin(const std::string& name,
                          const std::string& crash_on) {
    namespace fs = std::filesystem;
    const std::string bin = paths_->build_cache + "/" + name + "/bin";
    fs::create_directories(bin);
    fs::create_symlink(std::string(TRENCH_BINARY_DIR) + "/tpusim",
                       bin + "/tpusim");
    for (const char* tool : {"hloc", "hlo-run"}) {
      const std::string real = std::string(TRENCH_BINARY_DIR) + "/" + tool;
      std::ofstream script(bin + "/" + tool);
      script << "#!/bin/sh\n"
                "if [ \"$1\" = --serve ]; then\n"
                "  while IFS= read -r line; do\n"
                "    case \"$line\" in *'"
             << crash_on
             << "'*) kill -ABRT $$ ;; esac\n"
                "    printf '%s\\n' \"$line\" | "
             << real
             << " \"$@\"\n"
                "  done\n"
                "  exit 0\n"
                "fi\n"
                "for a in \"$@\"; do\n"
                "  if [ -f \"$a\" ] && grep -q '"
             << crash_on
             << "' \"$a\"; then kill -ABRT $$; fi\n"
                "done\n"
                "exec "
             << real << " \"$@\"\n";
    }
    OpenBinToSandbox(name, {"hloc", "hlo-run"});
    return bin;
  }

  // A fuzz finding at `commit` whose stored case runs `module`.
  int64_t FindingWithCase(const std::string& commit, const std::string& fine,
                          const std::string& coarse,
                          const std::string& module) {
    StatusOr<std::unique_ptr<HloModule>> m =
        hlo_diff::ParseCaseModule(module, "test");
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (!m.ok()) return 0;
    StatusOr<hlo_diff::Case> c =
        hlo_diff::MakeCase(module, hlo_diff::ArgumentLeaves(RandomArguments(
                                       *(*m)->entry_computation(), 7)));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    const std::string src = dir_ + "/case-" + fine;
    EXPECT_TRUE(hlo_diff::WriteCase(src, *c).ok());
    StatusOr<std::string> sha = ImportCase(ctx_, src, Json::MakeObject());
    EXPECT_TRUE(sha.ok()) << sha.status().ToString();
    const int64_t id = Finding(commit, fine, coarse, sha.ok() ? *sha : "");
    return id;
  }

  // The triage report of bug `id` with its history (BugReportText).
  std::string ReportOf(int64_t id) {
    StatusOr<std::vector<Event>> events = store_->ListEvents(id, 0, 100);
    EXPECT_TRUE(events.ok());
    Json full = Json::MakeObject();
    full["bug"] = BugToJson(Get(id));
    full["events"] = Json::MakeArray();
    for (const Event& e : events.ok() ? *events : std::vector<Event>()) {
      full["events"].push_back(EventToJson(e));
    }
    StatusOr<std::string> text = BugReportText(full);
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    return text.ok() ? *text : "";
  }

  // The root_cause member of bug `id`'s page data (GET
  // /api/v1/bugs/{id}/view), or null.
  Json RootCauseOnPage(int64_t id) {
    ApiResponse view = WebBugView(store_.get(), ApiOptions{}, id);
    EXPECT_EQ(view.status, 200) << view.body;
    StatusOr<Json> page = ParseJson(view.body);
    EXPECT_TRUE(page.ok()) << view.body;
    const Json* rc = page.ok() ? page->Find("root_cause") : nullptr;
    return rc ? *rc : Json();
  }

  // Whether bug `id` has a live reproduce job.
  bool ReproduceQueued(int64_t id) {
    StatusOr<std::optional<Job>> j = queue_->Latest(BugJobKey(id, "reproduce"));
    EXPECT_TRUE(j.ok());
    return j.ok() && *j && (*j)->state == JobState::kQueued;
  }

  static constexpr char kMin[] =
      "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd";
  std::string base_, culprit_, other_;
};

}  // namespace trench::orchestrator::testing
