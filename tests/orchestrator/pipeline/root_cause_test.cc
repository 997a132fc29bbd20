// One root cause, one bug (root_cause.h), on a real store file and a real
// git mirror: bugs with the same culprit and localized site, or the same
// drafted fix, become duplicates with their evidence; a fuzz finding with
// the coarse signature of an older bug still being triaged waits for it,
// across a restart of the store, and is released when that bug is marked
// invalid or has its culprit.
#include "orchestrator/pipeline/root_cause.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/web_data.h"
#include "orchestrator/pipeline/step_util.h"
#include "orchestrator/pipeline/triage_report.h"
#include "orchestrator/store/records_json.h"
#include "tests/orchestrator/pipeline/step_test_fixture.h"

namespace trench::orchestrator {
namespace {

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

  // A fuzz finding at `commit`, filed as FileFinding files one.
  int64_t Finding(const std::string& commit, const std::string& fine,
                  const std::string& coarse) {
    NewBug nb;
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
  void Drafted(int64_t id, const std::string& diff,
               const std::string& strategy) {
    StatusOr<int64_t> patch =
        store_->AddPatch(id, "trench/bug-" + std::to_string(id), diff);
    ASSERT_TRUE(patch.ok()) << patch.status().ToString();
    Json draft = Json::MakeObject();
    draft["base"] = other_;
    draft["patch"] = *patch;
    draft["strategy"] = strategy;
    TransitionFields f;
    f.details = DetailsWith(Get(id), "draft", draft);
    ASSERT_TRUE(store_
                    ->TransitionBug(id, BugState::kPatchDrafted, "test",
                                    Json::MakeObject(), f)
                    .ok());
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
  Json full = Json::MakeObject();
  full["bug"] = BugToJson(dup);
  full["events"] = Json::MakeArray();
  for (const Event& e : *events) full["events"].push_back(EventToJson(e));
  StatusOr<std::string> text = BugReportText(full);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("duplicate of: bug " + std::to_string(a)),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("same culprit " + culprit_.substr(0, 12)),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("site fold_add"), std::string::npos) << *text;

  // So does the bug page's data (GET /api/v1/bugs/{id}/view).
  ApiResponse view = WebBugView(store_.get(), ApiOptions{}, b);
  ASSERT_EQ(view.status, 200) << view.body;
  StatusOr<Json> page = ParseJson(view.body);
  ASSERT_TRUE(page.ok());
  const Json* rc = page->Find("root_cause");
  ASSERT_NE(rc, nullptr) << view.body;
  EXPECT_EQ(rc->Find("duplicate")->Find("duplicate_of")->int64_value(), a);
  EXPECT_EQ(rc->Find("duplicate")->Find("culprit")->string_value(), culprit_);
  EXPECT_TRUE(rc->Find("waiting_for")->is_null());
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
  EXPECT_EQ((*same)->older.id, a);
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

TEST_F(RootCauseTest, WaiterIsReleasedWhenTheOlderBugIsInvalid) {
  const int64_t a = Finding(other_, "f1", "coarse");
  const int64_t b = Finding(other_, "f2", "coarse");
  const int64_t c = Finding(other_, "f3", "elsewhere");  // Never waits.
  StatusOr<Json> out = Reproduce(b);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Json* w = out->Find("waiting_for");
  ASSERT_NE(w, nullptr) << out->Dump();
  EXPECT_EQ(w->Find("bug")->int64_value(), a);
  EXPECT_NE(w->Find("reason")->string_value().find("waiting for bug"),
            std::string::npos);
  EXPECT_EQ(out->Find("note")->string_value(),
            w->Find("reason")->string_value());
  EXPECT_EQ(Get(b).state, BugState::kNew);
  // The reconciler queues nothing for it while bug a is triaged.
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_FALSE(ReproduceQueued(b));
  EXPECT_TRUE(ReproduceQueued(a));
  EXPECT_TRUE(ReproduceQueued(c));
  ASSERT_TRUE(RootCauseToWaitFor(ctx_, Get(c)).ok());
  EXPECT_FALSE(*RootCauseToWaitFor(ctx_, Get(c)));

  ASSERT_TRUE(
      store_
          ->TransitionBug(a, BugState::kInvalid, "api:rev", Json::MakeObject())
          .ok());
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_TRUE(ReproduceQueued(b));
  const Bug released = Get(b);
  const Json* r = released.details.Find("released");
  ASSERT_NE(r, nullptr) << released.details.Dump();
  EXPECT_NE(r->Find("reason")->string_value().find("invalid"),
            std::string::npos);
  EXPECT_TRUE(released.details.Find("waiting_for")->is_null());
  // Released once: it never waits again, even for another older bug.
  EXPECT_FALSE(*RootCauseToWaitFor(ctx_, released));
  // The history shows the wait and the release as notes (no state change).
  StatusOr<std::vector<Event>> events = store_->ListEvents(b, 0, 100);
  ASSERT_TRUE(events.ok());
  std::vector<std::string> notes;
  for (const Event& e : *events) {
    if (!e.from || *e.from != e.to) continue;
    EXPECT_EQ(e.to, BugState::kNew);
    const Json* what = e.evidence.Find("event");
    ASSERT_NE(what, nullptr) << e.evidence.Dump();
    notes.push_back(what->string_value());
    EXPECT_EQ(e.evidence.Find("bug")->int64_value(), a);
  }
  EXPECT_EQ(notes, (std::vector<std::string>{"waiting", "released"}));
}

TEST_F(RootCauseTest, LaterCommitHoldingTheOlderOneWaitsAnUnrelatedDoesNot) {
  const int64_t a = Finding(culprit_, "f1", "coarse");
  const int64_t later = Finding(other_, "f2", "coarse");
  const int64_t earlier = Finding(base_, "f3", "coarse");
  StatusOr<std::optional<Json>> w = RootCauseToWaitFor(ctx_, Get(later));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(*w);
  EXPECT_EQ((*w)->Find("bug")->int64_value(), a);
  w = RootCauseToWaitFor(ctx_, Get(earlier));
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(*w);
}

TEST_F(RootCauseTest, RestartKeepsTheWaitThenTheCulpritReleasesIt) {
  const int64_t a = Finding(other_, "f1", "coarse");
  const int64_t b = Finding(other_, "f2", "coarse");
  ASSERT_TRUE(Reproduce(b).ok());
  // The daemon restarts: a new connection on the same file.
  queue_.reset();
  store_.reset();
  store_ = OpenStore(SystemClock::Get());
  ASSERT_NE(store_, nullptr);
  queue_ = std::make_unique<JobQueue>(store_.get());
  ctx_.store = store_.get();
  ctx_.queue = queue_.get();
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_FALSE(ReproduceQueued(b));
  EXPECT_TRUE(Get(b).details.Find("waiting_for")->is_object());
  // Bug a localized: still waiting for its culprit.
  Localize(a, "algsimp", "fold_add", "add");
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_FALSE(ReproduceQueued(b));
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_TRUE(ReproduceQueued(b));
  const Bug released = Get(b);
  const Json* r = released.details.Find("released");
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r->Find("reason")->string_value().find("has its culprit"),
            std::string::npos);
}

// The "waiting" notes in bug `id`'s history.
int WaitingNotes(Store* store, int64_t id) {
  StatusOr<std::vector<Event>> events = store->ListEvents(id, 0, 1000);
  EXPECT_TRUE(events.ok());
  int n = 0;
  for (const Event& e : events.ok() ? *events : std::vector<Event>()) {
    const Json* what = e.evidence.Find("event");
    n += e.from && *e.from == e.to && what && what->is_string() &&
         what->string_value() == "waiting";
  }
  return n;
}

// A daemon SIGKILLed while a finding starts to wait, again and again (its
// reproduce job then runs again after each restart): the wait's details
// and its note are written together or not at all, and the note is written
// once, however often the step runs. The older bug's culprit then
// releases it once.
TEST_F(RootCauseTest, KilledWhileAFindingStartsToWaitItWaitsOnce) {
  const int64_t a = Finding(other_, "f1", "coarse");
  const int64_t b = Finding(other_, "f2", "coarse");
  std::mt19937 rng(20261205);
  int waiting_seen = 0;
  for (int round = 0; round < 30; ++round) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The restarted daemon: its own connection, the step in a loop.
      StatusOr<Connection> own = OwnConnection();
      if (!own.ok()) _exit(2);
      Json payload = Json::MakeObject();
      payload["bug"] = b;
      for (;;) {
        if (!RunReproduceStep(own->ctx, MakeJob("reproduce", payload)).ok()) {
          _exit(3);
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 30000));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child ended by itself: " << status;
    const Bug now = Get(b);
    EXPECT_EQ(now.state, BugState::kNew);
    const Json* w = now.details.Find("waiting_for");
    const bool waiting = w && w->is_object();
    waiting_seen += waiting;
    EXPECT_EQ(WaitingNotes(store_.get(), b), waiting ? 1 : 0)
        << "round " << round << ": " << now.details.Dump();
    if (waiting) {
      EXPECT_EQ(w->Find("bug")->int64_value(), a);
    }
  }
  EXPECT_GT(waiting_seen, 0) << "no kill came after the wait was written";
  ASSERT_TRUE(Reproduce(b).ok());
  EXPECT_EQ(WaitingNotes(store_.get(), b), 1);
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_FALSE(ReproduceQueued(b));
  Localize(a, "algsimp", "fold_add", "add");
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_TRUE(ReproduceQueued(b));
  const Bug released = Get(b);
  ASSERT_NE(released.details.Find("released"), nullptr)
      << released.details.Dump();
  EXPECT_EQ(WaitingNotes(store_.get(), b), 1);
}

TEST_F(RootCauseTest, WaiterIsReleasedWhenTheOlderBugsStepIsParked) {
  const int64_t a = Finding(other_, "f1", "coarse");
  const int64_t b = Finding(other_, "f2", "coarse");
  ASSERT_TRUE(Reproduce(b).ok());
  ASSERT_TRUE(Reconcile(ctx_).ok());
  // Bug a's reproduction fails for good.
  StatusOr<std::vector<Job>> leased =
      queue_->Lease("w", 1, 60000, {"reproduce"});
  ASSERT_TRUE(leased.ok());
  ASSERT_EQ(leased->size(), 1u);
  ASSERT_EQ((*leased)[0].payload.Find("bug")->int64_value(), a);
  ASSERT_TRUE(queue_->Fail(LeaseOf((*leased)[0]), "broken", false).ok());
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_TRUE(ReproduceQueued(b));
  EXPECT_FALSE(ReproduceQueued(a));
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
