// One root cause, one bug (root_cause.h), on a real store file and a real
// git mirror: bugs with the same culprit and localized site, or the same
// drafted fix, become duplicates with their evidence (the waits for an
// older bug are in root_cause_wait_test.cc).
#include "orchestrator/pipeline/root_cause.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/web_data.h"
#include "orchestrator/pipeline/step_util.h"
#include "orchestrator/pipeline/triage_report.h"
#include "orchestrator/store/records_json.h"
#include "tests/orchestrator/pipeline/root_cause_fixture.h"

namespace trench::orchestrator {
namespace {

using testing::RootCauseTest;

TEST_F(RootCauseTest, SameCulpritAndSiteIsADuplicateWithEvidence) {
  const int64_t a = Finding(other_, "f1", "c1");
  const int64_t b = Finding(other_, "f2", "c2");
  Localize(a, "algsimp", "fold_add", "add");
  Localize(b, "algsimp", "fold_add", "multiply");  // Same site: op aside.
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  EXPECT_EQ(Get(a).state, BugState::kCulpritFound);
  StatusOr<Json> ev = Bisected(b, culprit_);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  const Bug dup = Get(b);
  EXPECT_EQ(dup.state, BugState::kDuplicate);
  ASSERT_TRUE(dup.duplicate_of);
  EXPECT_EQ(*dup.duplicate_of, a);
  EXPECT_EQ(dup.culprit_commit.value_or(""), culprit_);
  // The evidence: in the event and in the details.
  EXPECT_EQ(ev->Find("duplicate_of")->int64_value(), a);
  EXPECT_EQ(ev->Find("culprit")->string_value(), culprit_);
  EXPECT_EQ(ev->Find("site")->Find("site")->string_value(), "fold_add");
  const Json* d = dup.details.Find("duplicate");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->Find("reason")->string_value().find("same culprit"),
            std::string::npos);
  StatusOr<std::vector<Event>> events = store_->ListEvents(b, 0, 100);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->back().to, BugState::kDuplicate);
  EXPECT_EQ(events->back().evidence.Find("duplicate_of")->int64_value(), a);

  // The triage report shows why.
  const std::string text = ReportOf(b);
  EXPECT_NE(text.find("duplicate of: bug " + std::to_string(a)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("same culprit " + culprit_.substr(0, 12)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("site fold_add"), std::string::npos) << text;

  // So does the bug page's data (GET /api/v1/bugs/{id}/view).
  const Json rc = RootCauseOnPage(b);
  ASSERT_TRUE(rc.is_object());
  EXPECT_EQ(rc.Find("duplicate")->Find("duplicate_of")->int64_value(), a);
  EXPECT_EQ(rc.Find("duplicate")->Find("culprit")->string_value(), culprit_);
  EXPECT_TRUE(rc.Find("waiting_for")->is_null());
}

TEST_F(RootCauseTest, SameCulpritOtherSiteIsNotADuplicate) {
  const int64_t a = Finding(other_, "f1", "c1");
  const int64_t b = Finding(other_, "f2", "c1");
  const int64_t c = Finding(other_, "f3", "c1");
  const int64_t d = Finding(other_, "f4", "c1");
  Localize(a, "algsimp", "fold_add", "add");
  Localize(b, "algsimp", "fold_mul", "add");  // Another site.
  Localize(c, "fusion", "", "add");           // Another pass.
  Localize(d, "algsimp", "fold_add", "add");  // Same site, other culprit.
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  ASSERT_TRUE(Bisected(b, culprit_).ok());
  ASSERT_TRUE(Bisected(c, culprit_).ok());
  ASSERT_TRUE(Bisected(d, other_).ok());
  for (int64_t id : {a, b, c, d}) {
    EXPECT_EQ(Get(id).state, BugState::kCulpritFound) << "bug " << id;
  }
}

TEST_F(RootCauseTest, NoSiteComparesPassAndOpcode) {
  const int64_t a = Finding(other_, "f1", "c1");
  const int64_t b = Finding(other_, "f2", "c1");
  const int64_t c = Finding(other_, "f3", "c1");
  Localize(a, "codegen", "", "reduce");
  Localize(b, "codegen", "", "sort");
  Localize(c, "codegen", "", "reduce");
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  ASSERT_TRUE(Bisected(b, culprit_).ok());
  ASSERT_TRUE(Bisected(c, culprit_).ok());
  EXPECT_EQ(Get(b).state, BugState::kCulpritFound);
  EXPECT_EQ(Get(c).state, BugState::kDuplicate);
  EXPECT_EQ(Get(c).duplicate_of.value_or(0), a);
}

TEST_F(RootCauseTest, IdenticalDraftedDiffIsADuplicate) {
  const int64_t a = Finding(other_, "f1", "c1");
  const int64_t b = Finding(other_, "f2", "c2");
  const int64_t c = Finding(other_, "f3", "c3");
  Localize(a, "algsimp", "fold_add", "add");
  Localize(b, "layout", "", "transpose");  // Another site: not at bisect.
  Localize(c, "layout", "", "copy");
  for (int64_t id : {a, b, c}) ASSERT_TRUE(Bisected(id, culprit_).ok());
  ASSERT_EQ(Get(b).state, BugState::kCulpritFound);
  Drafted(a, Diff(1), "revert_file");
  // The same lines, at another position: the same fix.
  StatusOr<std::optional<SameRootCause>> same =
      SameCulpritAndDraft(ctx_, Get(b), Diff(7), "revert_file");
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  ASSERT_TRUE(*same);
  EXPECT_EQ((*same)->kept.id, a);
  Json evidence = Json::MakeObject();
  evidence["event"] = "patch_drafted";
  StatusOr<Json> ev =
      MarkDuplicate(ctx_, Get(b), **same, evidence, TransitionFields{});
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  const Bug dup = Get(b);
  EXPECT_EQ(dup.state, BugState::kDuplicate);
  EXPECT_EQ(dup.duplicate_of.value_or(0), a);
  const Json* d = dup.details.Find("duplicate");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->Find("culprit")->string_value(), culprit_);
  EXPECT_TRUE(d->Find("older_patch")->is_integer());
  EXPECT_NE(d->Find("reason")->string_value().find("same lines"),
            std::string::npos);

  // Another change for the same culprit is not the same fix.
  std::string other = Diff(1);
  other.replace(other.find("+int rule = 1;"), 14, "+int rule = 3;");
  StatusOr<std::optional<SameRootCause>> not_same =
      SameCulpritAndDraft(ctx_, Get(c), other, "fix_template");
  ASSERT_TRUE(not_same.ok());
  EXPECT_FALSE(*not_same);
}

// Bisected side by side, the younger bug may get its culprit first: the
// older one then joins it (run 21 of the collective demo proposed both).
TEST_F(RootCauseTest, TheYoungerBugJudgedFirstKeepsTheRootCause) {
  const int64_t a = Finding(other_, "f1", "c1");
  const int64_t b = Finding(other_, "f2", "c2");
  Localize(a, "codegen", "", "all-gather");
  Localize(b, "codegen", "", "all-gather");
  ASSERT_TRUE(Bisected(b, culprit_).ok());
  EXPECT_EQ(Get(b).state, BugState::kCulpritFound);
  StatusOr<Json> ev = Bisected(a, culprit_);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(Get(a).state, BugState::kDuplicate);
  EXPECT_EQ(Get(a).duplicate_of.value_or(0), b);
  ASSERT_NE(ev->Find("reason"), nullptr) << ev->Dump();
  EXPECT_NE(ev->Find("reason")->string_value().find(
                "bug " + std::to_string(b) + " (younger, further along)"),
            std::string::npos)
      << ev->Dump();
  // A bug that waits for its culprit is not a candidate: only judged ones.
  const int64_t c = Finding(other_, "f3", "c3");
  Localize(c, "codegen", "", "all-gather");
  StatusOr<std::optional<SameRootCause>> same =
      SameCulpritAndSite(ctx_, Get(b), culprit_);
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(*same) << "bug " << (*same)->kept.id;
}

TEST_F(RootCauseTest, TheYoungerBugDraftedFirstKeepsTheRootCause) {
  const int64_t a = Finding(other_, "f1", "c1");
  const int64_t b = Finding(other_, "f2", "c2");
  // Other sites: one fault, two ops (an all-gather and an all-reduce).
  Localize(a, "codegen", "", "all-gather");
  Localize(b, "codegen", "", "all-reduce");
  for (int64_t id : {a, b}) ASSERT_TRUE(Bisected(id, culprit_).ok());
  ASSERT_EQ(Get(a).state, BugState::kCulpritFound);
  Drafted(b, Diff(1), "partial_revert");
  StatusOr<std::optional<SameRootCause>> same =
      SameCulpritAndDraft(ctx_, Get(a), Diff(4), "partial_revert");
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  ASSERT_TRUE(*same);
  EXPECT_EQ((*same)->kept.id, b);
  EXPECT_TRUE((*same)->evidence.Find("older_patch")->is_integer());
  // A duplicate keeps nothing: once a joined b, b's check finds no one.
  ASSERT_TRUE(MarkDuplicate(ctx_, Get(a), **same, Json::MakeObject(), {}).ok());
  StatusOr<std::optional<SameRootCause>> back =
      SameCulpritAndDraft(ctx_, Get(b), Diff(1), "partial_revert");
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(*back);
}

// Pairs of bugs with one root cause judged at the same moment on two
// threads, each with its own store connection as the daemon's workers:
// one stays open, the other is its duplicate, never both nor neither.
TEST_F(RootCauseTest, BugsJudgedAtOnceEndAsOneBugPerRootCause) {
  constexpr int kPairs = 40;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int i = 0; i < kPairs; ++i) {
    const std::string site = "site" + std::to_string(i);
    const int64_t a = Finding(other_, "a" + std::to_string(i), "c");
    const int64_t b = Finding(other_, "b" + std::to_string(i), "c");
    Localize(a, "algsimp", site, "add");
    Localize(b, "algsimp", site, "add");
    pairs.emplace_back(a, b);
  }
  std::atomic<int> ready{0};
  std::atomic<int> go{-1};
  auto judge = [&](bool first) {
    std::unique_ptr<Store> store = OpenStore(SystemClock::Get());
    ASSERT_NE(store, nullptr);
    JobQueue queue(store.get());
    StepContext ctx = ctx_;
    ctx.store = store.get();
    ctx.queue = &queue;
    for (int i = 0; i < kPairs; ++i) {
      const int64_t id = first ? pairs[i].first : pairs[i].second;
      StatusOr<Bug> bug = store->GetBug(id);
      ASSERT_TRUE(bug.ok());
      Json report = Json::MakeObject();
      report["culprit"] = Json::MakeObject();
      report["culprit"]["sha"] = culprit_;
      ++ready;
      while (go.load() < i) std::this_thread::yield();
      StatusOr<Json> ev = JudgeCulprit(ctx, *bug, report);
      ASSERT_TRUE(ev.ok()) << ev.status().ToString();
    }
  };
  std::thread one(judge, true), two(judge, false);
  for (int i = 0; i < kPairs; ++i) {
    while (ready.load() < 2 * (i + 1)) std::this_thread::yield();
    go = i;
  }
  one.join();
  two.join();
  for (const auto& [a, b] : pairs) {
    const Bug x = Get(a), y = Get(b);
    const int open = (x.state == BugState::kCulpritFound) +
                     (y.state == BugState::kCulpritFound);
    ASSERT_EQ(open, 1) << "bugs " << a << " and " << b;
    const Bug& dup = x.state == BugState::kDuplicate ? x : y;
    const Bug& kept = x.state == BugState::kDuplicate ? y : x;
    EXPECT_EQ(dup.state, BugState::kDuplicate);
    EXPECT_EQ(dup.duplicate_of.value_or(0), kept.id);
  }
}

TEST_F(RootCauseTest, SameRevertOfTheCulpritIsADuplicate) {
  const int64_t a = Finding(other_, "f1", "c1");
  const int64_t b = Finding(other_, "f2", "c2");
  Localize(a, "algsimp", "fold_add", "add");
  Localize(b, "layout", "", "copy");
  for (int64_t id : {a, b}) ASSERT_TRUE(Bisected(id, culprit_).ok());
  Drafted(a, Diff(1), "revert_commit");
  // A revert of the whole culprit made on another base reads differently.
  StatusOr<std::optional<SameRootCause>> same =
      SameCulpritAndDraft(ctx_, Get(b), Diff(1) + "-int x;\n", "revert_commit");
  ASSERT_TRUE(same.ok());
  ASSERT_TRUE(*same);
  EXPECT_NE((*same)->evidence.Find("reason")->string_value().find("revert"),
            std::string::npos);
}

TEST_F(RootCauseTest, ADoneJobsNoteIsShownWithTheJob) {
  Json payload = Json::MakeObject();
  payload["bug"] = 1;
  ASSERT_TRUE(queue_->Enqueue("reproduce", payload).ok());
  StatusOr<std::vector<Job>> leased = queue_->Lease("w", 1, 60000);
  ASSERT_TRUE(leased.ok());
  ASSERT_EQ(leased->size(), 1u);
  Json result = Json::MakeObject();
  result["note"] = "waiting for bug 1";
  ASSERT_TRUE(queue_->Complete(LeaseOf((*leased)[0]), result).ok());
  StatusOr<Job> done = queue_->Get((*leased)[0].id);
  ASSERT_TRUE(done.ok());
  const BugJob j = BugJobOf(*done);
  EXPECT_EQ(j.note, "waiting for bug 1");
  StatusOr<JobList> back = ParseJobList(ToJson(JobList{{j}, 0}));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->jobs[0].note, "waiting for bug 1");
}

TEST(SameChangeTest, ComparesChangedLinesOnly) {
  const std::string a =
      "--- a/x.cc\n+++ b/x.cc\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new\n";
  const std::string b =
      "diff --git a/x.cc b/x.cc\nindex 1..2\n--- a/x.cc\n+++ b/x.cc\n"
      "@@ -9,2 +9,2 @@\n other ctx\n-old\n+new\n";
  EXPECT_TRUE(SameChange(a, b));
  EXPECT_FALSE(SameChange(a, "--- a/y.cc\n+++ b/y.cc\n-old\n+new\n"));
  EXPECT_FALSE(SameChange("", ""));
}

}  // namespace
}  // namespace trench::orchestrator
