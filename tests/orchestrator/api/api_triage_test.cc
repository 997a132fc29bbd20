// POST /api/v1/bugs/{id}/triage over a real socket: every verb moves the
// bug as lifecycle.def says and records it; bad bodies are 400 naming the
// field, illegal moves 409 with the lifecycle's message, and neither
// writes anything.
#include <gtest/gtest.h>

#include "orchestrator/pipeline/pipeline.h"
#include "orchestrator/pipeline/triage_verbs.h"
#include "orchestrator/store/job_queue.h"
#include "tests/orchestrator/api/api_test_util.h"
#include "tests/orchestrator/store/main_line_bug.h"

namespace trench::orchestrator::testing {
namespace {

class ApiTriageTest : public ApiTest {
 protected:
  int64_t BugIn(BugState last) {
    return MainLineBug(check_.get(), "sig" + std::to_string(++bugs_), last);
  }
  static std::string Target(int64_t id) {
    return "/api/v1/bugs/" + std::to_string(id) + "/triage";
  }
  HttpReply Triage(int64_t id, const std::string& body) {
    return Call("POST", Target(id), body, kToken);
  }
  // The bug's newest event.
  Event LastEvent(int64_t id) {
    auto events = check_->ListEvents(id, 0, 1000);
    EXPECT_TRUE(events.ok() && !events->empty());
    return events->back();
  }
  int bugs_ = 0;
};

TEST_F(ApiTriageTest, ApproveAndRejectRecordTheVerb) {
  const int64_t a = BugIn(BugState::kProposed);
  HttpReply r = Triage(a, R"({"verb": "approve", "comment": "lgtm"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().Find("verb")->string_value(), "approve");
  EXPECT_EQ(r.json().Find("bug")->Find("state")->string_value(), "approved");
  Event e = LastEvent(a);
  EXPECT_EQ(e.actor, "api:triage");
  EXPECT_EQ(e.evidence.Find("event")->string_value(), "triaged");
  EXPECT_EQ(e.evidence.Find("verb")->string_value(), "approve");
  EXPECT_EQ(e.evidence.Find("comment")->string_value(), "lgtm");
  EXPECT_EQ(
      check_->GetBug(a)->details.Find("review")->Find("verb")->string_value(),
      "approve");
  // Without push_on_approve, no push job.
  EXPECT_FALSE(
      JobQueue(check_.get()).Latest(BugJobKey(a, "push"))->has_value());

  const int64_t b = BugIn(BugState::kProposed);
  r = Triage(b, R"({"verb": "reject", "comment": "breaks the fast path"})");
  ASSERT_EQ(r.status, 200) << r.body;
  Bug rejected = *check_->GetBug(b);
  EXPECT_EQ(rejected.state, BugState::kRejected);
  // The comment guides the next drafting round.
  EXPECT_EQ(DraftHintsOf(rejected),
            std::vector<std::string>{"breaks the fast path"});
}

TEST_F(ApiTriageTest, RedraftKeepsTheHintAndGrantsAFreshBudget) {
  const int64_t id = BugIn(BugState::kProposed);
  Json d = check_->GetBug(id)->details;
  d["draft_rounds"] = 3;
  d["needs_human"] = true;
  ASSERT_TRUE(check_->SetBugDetails(id, d).ok());
  HttpReply r =
      Triage(id, R"({"verb": "redraft", "hint": "try fix_template in x.cc"})");
  ASSERT_EQ(r.status, 200) << r.body;
  Bug bug = *check_->GetBug(id);
  EXPECT_EQ(bug.state, BugState::kCulpritFound);
  const Json* hints = bug.details.Find("draft_hints");
  ASSERT_TRUE(hints && hints->is_array());
  ASSERT_EQ(hints->size(), 1u);
  EXPECT_EQ(hints->array()[0].Find("hint")->string_value(),
            "try fix_template in x.cc");
  EXPECT_TRUE(hints->array()[0].Find("at_ms")->is_integer());
  EXPECT_EQ(bug.details.Find("draft_rounds")->int64_value(), 0);
  EXPECT_EQ(bug.details.Find("needs_human"), nullptr);
  EXPECT_EQ(LastEvent(id).evidence.Find("hint")->string_value(),
            "try fix_template in x.cc");
  // A second redraft is refused from culprit_found (the drafter is on it).
  StoreSnapshot before = Snapshot();
  r = Triage(id, R"({"verb": "redraft", "hint": "again"})");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.error_message().find("cannot redraft a bug in state "
                                   "culprit_found (redraft applies to: "
                                   "proposed, rejected, patch_verified, "
                                   "patch_drafted)"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(ApiTriageTest, DuplicateInvalidCloseReopen) {
  const int64_t original = BugIn(BugState::kLocalized);
  const int64_t dup = BugIn(BugState::kReproduced);
  StoreSnapshot before = Snapshot();
  // Of itself, of a missing bug: the lifecycle refuses.
  HttpReply r = Triage(dup, "{\"verb\": \"duplicate\", \"duplicate_of\": " +
                                std::to_string(dup) + "}");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.error_message().find("duplicate of itself"), std::string::npos);
  r = Triage(dup, R"({"verb": "duplicate", "duplicate_of": 999})");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.error_message().find("which does not exist"), std::string::npos);
  EXPECT_EQ(Snapshot(), before);

  r = Triage(dup, "{\"verb\": \"duplicate\", \"duplicate_of\": " +
                      std::to_string(original) + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(check_->GetBug(dup)->state, BugState::kDuplicate);
  EXPECT_EQ(check_->GetBug(dup)->duplicate_of, original);
  EXPECT_EQ(LastEvent(dup).evidence.Find("duplicate_of")->int64_value(),
            original);
  // Reopen: back to new, no longer a duplicate, kept apart from dedup.
  r = Triage(dup, R"({"verb": "reopen", "comment": "different cause"})");
  ASSERT_EQ(r.status, 200) << r.body;
  Bug reopened = *check_->GetBug(dup);
  EXPECT_EQ(reopened.state, BugState::kNew);
  EXPECT_FALSE(reopened.duplicate_of.has_value());
  EXPECT_TRUE(ReopenedFromDuplicate(reopened));

  r = Triage(original, R"({"verb": "invalid"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(check_->GetBug(original)->state, BugState::kInvalid);
  // The metrics' state list follows the registry; the push step's kind is
  // listed with the others.
  HttpReply m = Call("GET", "/metrics");
  EXPECT_NE(m.body.find("trench_bugs{state=\"invalid\"} 1\n"),
            std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("kind=\"push\""), std::string::npos);
  r = Triage(original, R"({"verb": "close"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(check_->GetBug(original)->state, BugState::kClosed);
  // Closing a closed bug is an illegal move.
  r = Triage(original, R"({"verb": "close"})");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.error_message().find("cannot close a bug in state closed"),
            std::string::npos)
      << r.body;
  r = Triage(original, R"({"verb": "reopen"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(check_->GetBug(original)->state, BugState::kNew);
  // Approve of a new bug: illegal.
  r = Triage(original, R"({"verb": "approve"})");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.error_message().find("bug " + std::to_string(original) +
                                   ": cannot approve a bug in state new "
                                   "(approve applies to: proposed)"),
            std::string::npos)
      << r.body;
}

TEST_F(ApiTriageTest, BadRequestsNameTheProblemAndWriteNothing) {
  const int64_t id = BugIn(BugState::kProposed);
  const std::string t = Target(id);
  StoreSnapshot before = Snapshot();
  struct Bad {
    std::string target, body, token;
    int status;
    std::string message;
  } cases[] = {
      {t, R"({"verb": "approve", "colour": 1})", kToken, 400,
       "unknown field 'colour'"},
      {t, R"({"verb": 1})", kToken, 400, "field 'verb' must be a string"},
      {t, R"({})", kToken, 400, "field 'verb' is missing"},
      {t, R"({"verb": "nuke"})", kToken, 400,
       "field 'verb': unknown verb 'nuke' (valid: approve, reject, redraft, "
       "duplicate, invalid, close, reopen)"},
      {t, R"({"verb": "redraft"})", kToken, 400, "field 'hint' is missing"},
      {t, R"({"verb": "redraft", "hint": "  "})", kToken, 400,
       "field 'hint' must not be empty"},
      {t, R"({"verb": "redraft", "hint": 3})", kToken, 400,
       "field 'hint' must be a string"},
      {t, R"({"verb": "approve", "hint": "x"})", kToken, 400,
       "field 'hint' is only for redraft"},
      {t, R"({"verb": "duplicate"})", kToken, 400,
       "field 'duplicate_of' is missing"},
      {t, R"({"verb": "duplicate", "duplicate_of": "3"})", kToken, 400,
       "field 'duplicate_of'"},
      {t, R"({"verb": "close", "duplicate_of": 3})", kToken, 400,
       "field 'duplicate_of' is only for duplicate"},
      {t, R"({"verb": "approve", "comment": null})", kToken, 400,
       "field 'comment'"},
      {t, "[1]", kToken, 400, "request body must be a JSON object"},
      {t, "{", kToken, 400, "malformed JSON in request body: 1:2"},
      {Target(999), R"({"verb": "close"})", kToken, 404, "no bug 999"},
      {"/api/v1/bugs/x/triage", R"({"verb": "close"})", kToken, 404,
       "no bug 'x'"},
      {t, R"({"verb": "approve"})", "", 401, "Authorization"},
      {t, R"({"verb": "approve"})", "wrong", 403, "not valid"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.body);
    HttpReply r = Call("POST", b.target, b.body, b.token);
    EXPECT_EQ(r.status, b.status) << r.body;
    EXPECT_NE(r.error_message().find(b.message), std::string::npos) << r.body;
    EXPECT_EQ(Snapshot(), before);
  }
  HttpReply r = Call("GET", t);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers["allow"], "POST");
  // The old review endpoint still works.
  r = Call("POST", "/api/v1/patches/" + std::to_string(id) + "/review",
           R"({"decision": "approve"})", kToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(check_->GetBug(id)->state, BugState::kApproved);
}

}  // namespace
}  // namespace trench::orchestrator::testing
