// Waiting for an older bug of the same root cause, and the patch check
// that ends the wait (root_cause.h), on a real store file, a real git
// mirror and real runs of hlo-diff in the sandbox: a fuzz finding waits
// for an older bug found with its coarse signature, on its commit, or
// before its commit when its case fails there too; across a restart of
// the store and kills of the daemon; until that bug (or the bug it
// duplicates) has a verified patch, or nobody works on it. The waiter's
// case then runs without and with that patch: the patch fixes it, and it
// is the older bug's duplicate before any reproduction; it does not, and
// it runs the pipeline.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "orchestrator/pipeline/root_cause.h"
#include "tests/orchestrator/pipeline/root_cause_fixture.h"

namespace trench::orchestrator {
namespace {

using testing::RootCauseTest;

constexpr char kAdd[] = R"(HloModule adds

ENTRY e {
  p = f32[4,8] parameter(0)
  ROOT a = f32[4,8] add(p, p)
}
)";

constexpr char kMultiply[] = R"(HloModule multiplies

ENTRY e {
  p = f32[4,8] parameter(0)
  ROOT m = f32[4,8] multiply(p, p)
}
)";

TEST_F(RootCauseTest, WaiterIsReleasedWhenTheOlderBugIsInvalid) {
  const int64_t a = Finding(other_, "f1", "coarse");
  const int64_t b = Finding(other_, "f2", "coarse");
  // On an earlier commit, under another signature: never waits.
  const int64_t c = Finding(base_, "f3", "elsewhere");
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

// A finding from before the culprit the older bug was bisected to is
// another bug, whatever its coarse signature.
TEST_F(RootCauseTest, LaterCommitHoldingTheOlderOneWaitsAnUnrelatedDoesNot) {
  const int64_t a = Finding(culprit_, "f1", "coarse");
  const int64_t later = Finding(other_, "f2", "coarse");
  const int64_t earlier = Finding(base_, "f3", "coarse");
  StatusOr<std::optional<Json>> w = RootCauseToWaitFor(ctx_, Get(later));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(*w);
  EXPECT_EQ((*w)->Find("bug")->int64_value(), a);
  ASSERT_TRUE(StartWaiting(ctx_, Get(later), **w).ok());
  Localize(a, "algsimp", "fold_add", "add");
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  w = RootCauseToWaitFor(ctx_, Get(earlier));
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(*w) << (*w)->Dump();
}

TEST_F(RootCauseTest, RestartKeepsTheWaitThenAVerifiedPatchReleasesIt) {
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
  // Bug a localized, then bisected: no verified patch yet.
  Localize(a, "algsimp", "fold_add", "add");
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_FALSE(ReproduceQueued(b));
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_FALSE(ReproduceQueued(b));
  VerifiedPatch(a, other_, Diff(1), TRENCH_BINARY_DIR);
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_TRUE(ReproduceQueued(b));
  const Bug released = Get(b);
  const Json* r = released.details.Find("released");
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r->Find("reason")->string_value().find("has a verified patch"),
            std::string::npos);
  EXPECT_EQ(r->Find("patch_of")->int64_value(), a);
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
// once, however often the step runs. The older bug's verified patch then
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
  VerifiedPatch(a, other_, Diff(1), TRENCH_BINARY_DIR);
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_TRUE(ReproduceQueued(b));
  const Bug released = Get(b);
  ASSERT_NE(released.details.Find("released"), nullptr)
      << released.details.Dump();
  EXPECT_EQ(WaitingNotes(store_.get(), b), 1);
}

TEST_F(RootCauseTest, AFindingOfTheSameCampaignWaitsUnderAnotherSignature) {
  const int64_t a = Finding(other_, "f1", "c1");
  const int64_t b = Finding(other_, "f2", "c2");
  const int64_t earlier = Finding(culprit_, "f3", "c3");
  StatusOr<std::optional<Json>> w = RootCauseToWaitFor(ctx_, Get(b));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(*w);
  EXPECT_EQ((*w)->Find("bug")->int64_value(), a);
  EXPECT_EQ((*w)->Find("rule")->string_value(), "campaign");
  EXPECT_NE((*w)->Find("reason")->string_value().find("same commit"),
            std::string::npos);
  // Found before bug a's commit: a finding of its own.
  w = RootCauseToWaitFor(ctx_, Get(earlier));
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(*w);
  // A bug that waits itself is not waited for: c waits for a, not b.
  ASSERT_TRUE(Reproduce(b).ok());
  const int64_t c = Finding(other_, "f4", "c4");
  w = RootCauseToWaitFor(ctx_, Get(c));
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(*w);
  EXPECT_EQ((*w)->Find("bug")->int64_value(), a);
}

// Commits that land together are fuzzed newest first: bug a is found on
// the later commit other_, then findings on the earlier culprit_. One
// waits for a when it shares a's coarse signature, or once a was bisected
// to a culprit its commit holds; a finding from before the culprit never.
TEST_F(RootCauseTest, AFindingOnAnEarlierCommitWaitsForABugFoundLater) {
  const int64_t a = Finding(other_, "f1", "c1");
  const int64_t b = Finding(culprit_, "f2", "c2");
  StatusOr<std::optional<Json>> w = RootCauseToWaitFor(ctx_, Get(b));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_FALSE(*w) << (*w)->Dump();
  // Finding `id` waits for a under `rule`, its reason holding `text`; the
  // wait is recorded, as the reproduce step does.
  auto waits_for_a = [&](int64_t id, const std::string& rule,
                         const std::string& text) {
    StatusOr<std::optional<Json>> got = RootCauseToWaitFor(ctx_, Get(id));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_TRUE(*got);
    EXPECT_EQ((*got)->Find("bug")->int64_value(), a);
    EXPECT_EQ((*got)->Find("rule")->string_value(), rule);
    EXPECT_NE((*got)->Find("reason")->string_value().find(text),
              std::string::npos)
        << (*got)->Dump();
    ASSERT_TRUE(StartWaiting(ctx_, Get(id), **got).ok());
  };
  const int64_t c = Finding(culprit_, "f3", "c1");
  waits_for_a(c, "coarse",
              "found on " + other_.substr(0, 12) + ", which holds its commit " +
                  culprit_.substr(0, 12));
  Localize(a, "algsimp", "fold_add", "add");
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  waits_for_a(b, "culprit",
              "which holds " + culprit_.substr(0, 12) + ", the culprit of");
  // From before that culprit: not a's, even with a's coarse signature.
  const int64_t d = Finding(base_, "f4", "c1");
  w = RootCauseToWaitFor(ctx_, Get(d));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_FALSE(*w) << (*w)->Dump();
}

// On a later commit, under another signature, a finding waits only when
// its case fails on the older bug's commit too: there hloc aborts on
// multiplies.
TEST_F(RootCauseTest, AFindingWaitsWhenItsFailurePredatesItsCommit) {
  const std::string found = Commit({{"pass.cc", "int rule = 3;\n"}}, "found",
                                   CrashingBin("found", "multiply"));
  const std::string later = Commit({{"emit.cc", "int op = 4;\n"}}, "later",
                                   CrashingBin("later", "HloModule"));
  const int64_t a = Finding(found, "f1", "c1");
  // Its add passes on bug a's commit: no wait.
  const int64_t add = FindingWithCase(later, "f3", "c3", kAdd);
  StatusOr<std::optional<Json>> w = RootCauseToWaitFor(ctx_, Get(add), 2);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_FALSE(*w) << (*w)->Dump();
  // Its multiply fails there too: it waits for bug a (the oldest).
  const int64_t mul = FindingWithCase(later, "f2", "c2", kMultiply);
  w = RootCauseToWaitFor(ctx_, Get(mul), 1);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(*w);
  EXPECT_EQ((*w)->Find("bug")->int64_value(), a);
  EXPECT_EQ((*w)->Find("rule")->string_value(), "predates");
  EXPECT_NE((*w)->Find("reason")->string_value().find("compile_crash"),
            std::string::npos)
      << (*w)->Dump();
}

// Bug a's commit `head` aborts on every module; a's verified patch aborts
// on multiplies only. The add finding is merged by the patch before any
// reproduction; the multiply finding is not, and is reproduced; a finding
// filed after the patch was verified is merged at once.
TEST_F(RootCauseTest, ThePatchCheckMergesWhatThePatchFixesAndKeepsTheRest) {
  const std::string head = Commit({{"pass.cc", "int rule = 5;\n"}}, "head",
                                  CrashingBin("head", "HloModule"));
  const int64_t a = Finding(head, "f1", "c1");
  const int64_t add = FindingWithCase(head, "f2", "c2", kAdd);
  const int64_t mul = FindingWithCase(head, "f3", "c3", kMultiply);
  ASSERT_TRUE(Reproduce(add).ok());
  ASSERT_TRUE(Reproduce(mul).ok());
  EXPECT_TRUE(Get(add).details.Find("waiting_for")->is_object());
  EXPECT_TRUE(Get(mul).details.Find("waiting_for")->is_object());
  Localize(a, "algsimp", "fold_add", "add");
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  VerifiedPatch(a, head, Diff(1), CrashingBin("patched", "multiply"));
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_TRUE(ReproduceQueued(add));
  EXPECT_TRUE(ReproduceQueued(mul));

  StatusOr<Json> out = Reproduce(add);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Bug merged = Get(add);
  EXPECT_EQ(merged.state, BugState::kDuplicate) << merged.details.Dump();
  ASSERT_TRUE(merged.duplicate_of);
  EXPECT_EQ(*merged.duplicate_of, a);
  const Json* check = merged.details.Find("patch_check");
  ASSERT_NE(check, nullptr) << merged.details.Dump();
  EXPECT_TRUE(check->Find("fixed")->bool_value());
  EXPECT_EQ(check->Find("without")->string_value(), "compile_crash");
  EXPECT_EQ(check->Find("with")->Dump(), R"(["pass","pass"])");
  EXPECT_NE(out->Find("reason")->string_value().find("verified patch"),
            std::string::npos)
      << out->Dump();
  // Never reproduced: its history goes from new to duplicate.
  StatusOr<std::vector<Event>> events = store_->ListEvents(add, 0, 100);
  ASSERT_TRUE(events.ok());
  for (const Event& e : *events) EXPECT_NE(e.to, BugState::kReproduced);
  // The triage report and the bug page's data show the check.
  const std::string text = ReportOf(add);
  EXPECT_NE(text.find("checked against bug " + std::to_string(a) + "'s patch"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(": fixed (fails (compile_crash)"), std::string::npos)
      << text;
  const Json rc = RootCauseOnPage(add);
  ASSERT_TRUE(rc.is_object());
  EXPECT_TRUE(rc.Find("patch_check")->Find("fixed")->bool_value());

  ASSERT_TRUE(Reproduce(mul).ok());
  const Bug kept = Get(mul);
  EXPECT_EQ(kept.state, BugState::kReproduced) << kept.details.Dump();
  check = kept.details.Find("patch_check");
  ASSERT_NE(check, nullptr) << kept.details.Dump();
  EXPECT_FALSE(check->Find("fixed")->bool_value());
  EXPECT_NE(check->Find("why")->string_value().find("still fails"),
            std::string::npos);

  // Filed once bug a has its verified patch: checked at once.
  const int64_t late = FindingWithCase(head, "f4", "c4", kAdd);
  ASSERT_TRUE(Reproduce(late).ok());
  EXPECT_EQ(Get(late).state, BugState::kDuplicate);
}

// A finding that passes without the patch is no evidence of anything: it
// runs the pipeline (here its case passes everywhere: not reproducible).
TEST_F(RootCauseTest, APatchCheckThatPassesWithoutThePatchMergesNothing) {
  const int64_t a = Finding(other_, "f1", "c1");
  const int64_t b = FindingWithCase(other_, "f2", "c2", kAdd);
  ASSERT_TRUE(Reproduce(b).ok());
  Localize(a, "algsimp", "fold_add", "add");
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  VerifiedPatch(a, other_, Diff(1), TRENCH_BINARY_DIR);
  ASSERT_TRUE(Reproduce(b).ok());
  const Bug kept = Get(b);
  EXPECT_EQ(kept.state, BugState::kNotReproducible) << kept.details.Dump();
  EXPECT_NE(kept.details.Find("patch_check")
                ->Find("why")
                ->string_value()
                .find("passes on"),
            std::string::npos);
}

// A release record that a stranger could have edited (through the
// store, or a reviewer's restore): a patch id that is no number, a patch
// that is not the named bug's, a bug that is gone. None merges anything
// or fails the step; the finding runs the pipeline.
TEST_F(RootCauseTest, AMalformedReleaseMergesNothing) {
  const int64_t a = Finding(other_, "f1", "c1");
  Localize(a, "algsimp", "fold_add", "add");
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  VerifiedPatch(a, other_, Diff(1), TRENCH_BINARY_DIR);
  const std::vector<std::pair<std::string, std::string>> records = {
      {"\"1; rm -rf /\"", std::to_string(a)},
      {"987654321", std::to_string(a)},
      {"1", "987654321"},
      {"1", "\"<script>\""},
  };
  int n = 0;
  for (const auto& [patch, of] : records) {
    const int64_t b =
        FindingWithCase(other_, "m" + std::to_string(n++), "mc", kAdd);
    Json d = Get(b).details;
    d["released"] = J(R"({"bug": 1, "reason": "x", "patch": )" + patch +
                      R"(, "patch_of": )" + of + "}");
    ASSERT_TRUE(store_->SetBugDetails(b, d).ok());
    StatusOr<Json> out = Reproduce(b);
    ASSERT_TRUE(out.ok()) << patch << " " << of << ": "
                          << out.status().ToString();
    const Bug after = Get(b);
    EXPECT_NE(after.state, BugState::kDuplicate) << after.details.Dump();
    EXPECT_NE(after.state, BugState::kNew) << after.details.Dump();
  }
}

TEST_F(RootCauseTest, AWaitFollowsTheOlderBugIntoTheBugItDuplicates) {
  const int64_t a = Finding(other_, "f1", "c1");
  const int64_t b = Finding(base_, "f2", "c2");
  const int64_t c = Finding(other_, "f3", "c3");
  Json w = Json::MakeObject();
  w["bug"] = b;
  w["rule"] = "coarse";
  w["reason"] = "waiting for bug " + std::to_string(b);
  ASSERT_TRUE(StartWaiting(ctx_, Get(c), w).ok());
  TransitionFields f;
  f.duplicate_of = a;
  ASSERT_TRUE(store_
                  ->TransitionBug(b, BugState::kDuplicate, "test",
                                  Json::MakeObject(), f)
                  .ok());
  StatusOr<bool> still = StillWaiting(ctx_, Get(c));
  ASSERT_TRUE(still.ok()) << still.status().ToString();
  EXPECT_TRUE(*still);
  Localize(a, "algsimp", "fold_add", "add");
  ASSERT_TRUE(Bisected(a, culprit_).ok());
  VerifiedPatch(a, other_, Diff(1), TRENCH_BINARY_DIR);
  still = StillWaiting(ctx_, Get(c));
  ASSERT_TRUE(still.ok());
  EXPECT_FALSE(*still);
  const Bug released = Get(c);
  const Json* r = released.details.Find("released");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->Find("patch_of")->int64_value(), a);
  EXPECT_NE(r->Find("reason")->string_value().find(
                "which bug " + std::to_string(b) + " duplicates"),
            std::string::npos)
      << r->Dump();
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

}  // namespace
}  // namespace trench::orchestrator
