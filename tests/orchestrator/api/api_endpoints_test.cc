// The API's endpoints over a real socket: reports, bugs, review, events,
// metrics; bad input gets the right 4xx with a message and writes nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "base/sha256.h"
#include "orchestrator/pipeline/tool_runner.h"
#include "orchestrator/store/job_queue.h"
#include "tests/orchestrator/api/api_test_util.h"

namespace trench::orchestrator::testing {
namespace {

// Wraps `s` as a JSON string.
std::string Q(const std::string& s) { return Json(s).Dump(); }

std::string Inputs() {
  return R"([{"dtype": "f32", "shape": [2], "values": [1, 2]},
             {"dtype": "f32", "shape": [2], "values": [3, "nan"]}])";
}

class ApiEndpointsTest : public ApiTest {
 protected:
  JobState StateOfJob(int64_t id) {
    return JobQueue(check_.get()).Get(id)->state;
  }
  // A bug moved along the main line up to `proposed`.
  int64_t ProposedBug() {
    const std::string sha = Sha256Hex("minimized");
    EXPECT_TRUE(check_->PutCase(sha, "", Json::MakeObject()).ok());
    auto id = check_->CreateBug({"sig", "t", std::nullopt, Json::MakeObject()},
                                "test", Json());
    EXPECT_TRUE(id.ok());
    TransitionFields f;
    f.minimized_sha256 = sha;
    f.culprit_commit = "abc";
    for (BugState s :
         {BugState::kReproduced, BugState::kMinimized, BugState::kLocalized,
          BugState::kCulpritFound, BugState::kPatchDrafted,
          BugState::kPatchVerified, BugState::kProposed}) {
      EXPECT_TRUE(check_->TransitionBug(*id, s, "test", Json(), f).ok());
    }
    return *id;
  }

  // POSTs `body` as a report and expects `status` with `message_part` in
  // the error message, and no change to the store.
  void ExpectBadReport(const std::string& body, int status,
                       const std::string& message_part) {
    SCOPED_TRACE(body.substr(0, 200));
    StoreSnapshot before = Snapshot();
    HttpReply r = Call("POST", "/api/v1/reports", body, kToken);
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_NE(r.error_message().find(message_part), std::string::npos)
        << r.body;
    EXPECT_EQ(Snapshot(), before);
    ExpectHealthy();
  }
};

TEST_F(ApiEndpointsTest, TextReportCreatesANewBug) {
  HttpReply r = Call("POST", "/api/v1/reports",
                     R"({"text": "add is wrong\nmore detail"})", kToken);
  ASSERT_EQ(r.status, 201) << r.body;
  const int64_t id = r.json().Find("id")->int64_value();
  EXPECT_EQ(r.headers["location"], "/api/v1/bugs/" + std::to_string(id));
  auto bug = check_->GetBug(id);
  ASSERT_TRUE(bug.ok());
  EXPECT_EQ(bug->state, BugState::kNew);
  EXPECT_EQ(bug->title, "add is wrong");
  EXPECT_FALSE(bug->case_sha256.has_value());
  EXPECT_EQ(bug->details.Find("report")->Find("text")->string_value(),
            "add is wrong\nmore detail");
}

TEST_F(ApiEndpointsTest, HloReportStoresTheCase) {
  const std::string body = R"({"title": "nan in add", "hlo": )" + Q(kHlo) +
                           R"(, "inputs": )" + Inputs() + "}";
  HttpReply r = Call("POST", "/api/v1/reports", body, kToken);
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string sha = Sha256Hex(kHlo);
  EXPECT_EQ(r.json().Find("case")->string_value(), sha);
  auto bug = check_->GetBug(r.json().Find("id")->int64_value());
  ASSERT_TRUE(bug.ok());
  EXPECT_EQ(bug->title, "nan in add");
  EXPECT_EQ(bug->case_sha256, sha);
  EXPECT_EQ(bug->details.Find("report")->Find("inputs")->size(), 2u);
  auto c = check_->GetCase(sha);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(std::filesystem::exists(c->path + "module.hlo"));
  // The same module again reuses the case and opens a second bug.
  r = Call("POST", "/api/v1/reports", R"({"hlo": )" + Q(kHlo) + "}", kToken);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Snapshot().cases, 1);
  EXPECT_EQ(Snapshot().bugs.size(), 2u);
}

TEST_F(ApiEndpointsTest, MalformedJsonNamesLineAndColumn) {
  ExpectBadReport("{\"text\": \"x\",\n  oops}", 400,
                  "malformed JSON in request body: 2:3");
  ExpectBadReport("", 400, "malformed JSON");
  ExpectBadReport("[1, 2]", 400, "must be a JSON object, got array");
}

TEST_F(ApiEndpointsTest, WrongTypesNameTheField) {
  ExpectBadReport(R"({"text": 5})", 400,
                  "field 'text' must be a string, got number");
  ExpectBadReport(R"({"hlo": ["x"]})", 400, "field 'hlo' must be a string");
  ExpectBadReport(R"({"text": "x", "colour": 1})", 400,
                  "unknown field 'colour'");
  ExpectBadReport(R"({})", 400, "needs 'text' or 'hlo'");
  ExpectBadReport(R"({"text": "x", "inputs": []})", 400,
                  "field 'inputs' needs 'hlo'");
  ExpectBadReport(R"({"hlo": )" + std::string(Q(kHlo)) + R"(, "inputs": {}})",
                  400, "field 'inputs' must be an array, got object");
}

TEST_F(ApiEndpointsTest, InvalidHloGivesLineAndColumn) {
  const std::string bad =
      "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n"
      "  ROOT c = f32[2] add(a, \n}";
  ExpectBadReport(R"({"hlo": )" + Q(bad) + "}", 400,
                  "field 'hlo' is not a valid HLO module: 5:");
}

// Issue 18: HLO the verifier refuses used to get 201 and a bug that never
// moved; it gets 400 with the verifier's message naming the instruction.
TEST_F(ApiEndpointsTest, HloThatDoesNotVerifyIsRefused) {
  const std::string wrong_shape =
      "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
      "  ROOT a = f32[5] add(p, p)\n}\n";
  ExpectBadReport(R"({"text": "it crashes", "hlo": )" + Q(wrong_shape) + "}",
                  400,
                  "field 'hlo' does not verify: 4:8: in computation %e: %a: "
                  "add declared shape f32[5] is not compatible with inferred "
                  "shape f32[4]");
  const std::string wrong_arity =
      "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
      "  ROOT n = f32[4] negate(p, p)\n}\n";
  ExpectBadReport(R"({"hlo": )" + Q(wrong_arity) + "}", 400,
                  "field 'hlo' does not verify: 4:8: in computation %e: %n: "
                  "negate expects 1 operand(s), has 2");
  // The same module with a declared shape that verifies is taken.
  const std::string fixed =
      "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
      "  ROOT a = f32[4] add(p, p)\n}\n";
  EXPECT_EQ(
      Call("POST", "/api/v1/reports", R"({"hlo": )" + Q(fixed) + "}", kToken)
          .status,
      201);
}

TEST_F(ApiEndpointsTest, UnknownHloAttributesAreRefused) {
  for (const std::string attr : {"bogus_attr=1", "custom_Kall_target=\"f\""}) {
    const std::string hlo =
        "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
        "  ROOT n = f32[4] negate(p), " +
        attr + "\n}\n";
    ExpectBadReport(R"({"hlo": )" + Q(hlo) + "}", 400,
                    "field 'hlo' is not a valid HLO module: 4:30: unknown "
                    "attribute '" +
                        attr.substr(0, attr.find('=')) + "'");
  }
}

TEST_F(ApiEndpointsTest, InputsMustMatchTheEntry) {
  const std::string hlo = Q(kHlo);
  ExpectBadReport(R"({"hlo": )" + hlo + R"(, "inputs": []})", 400,
                  "has 0 literals, the HLO entry takes 2");
  ExpectBadReport(
      R"({"hlo": )" + hlo +
          R"(, "inputs": [{"dtype": "f32", "shape": [3], "values": [1,2,3]},
                          {"dtype": "f32", "shape": [2], "values": [1,2]}]})",
      400, "field 'inputs[0]' has shape f32[3], the parameter is f32[2]");
  ExpectBadReport(
      R"({"hlo": )" + hlo +
          R"(, "inputs": [{"dtype": "f32", "shape": [2], "values": [1]},
                          {"dtype": "f32", "shape": [2], "values": [1,2]}]})",
      400, "field 'inputs[0]'");
}

TEST_F(ApiEndpointsTest, ListBugsFiltersByState) {
  const int64_t proposed = ProposedBug();
  ASSERT_EQ(Call("POST", "/api/v1/reports", R"({"text": "a"})", kToken).status,
            201);
  HttpReply r = Call("GET", "/api/v1/bugs");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json().Find("bugs")->size(), 2u);
  r = Call("GET", "/api/v1/bugs?state=proposed");
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.json().Find("bugs")->size(), 1u);
  EXPECT_EQ(r.json().Find("bugs")->array()[0].Find("id")->int64_value(),
            proposed);
  r = Call("GET", "/api/v1/bugs?limit=1&after=" + std::to_string(proposed));
  EXPECT_EQ(r.json().Find("bugs")->size(), 1u);
  r = Call("GET", "/api/v1/bugs?state=bogus");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.error_message().find("unknown bug state 'bogus'"),
            std::string::npos);
  EXPECT_EQ(Call("GET", "/api/v1/bugs?limit=x").status, 400);
}

TEST_F(ApiEndpointsTest, GetBugHasItsEvents) {
  const int64_t id = ProposedBug();
  HttpReply r = Call("GET", "/api/v1/bugs/" + std::to_string(id));
  ASSERT_EQ(r.status, 200) << r.body;
  Json j = r.json();
  EXPECT_EQ(j.Find("bug")->Find("state")->string_value(), "proposed");
  const Json& events = *j.Find("events");
  ASSERT_EQ(events.size(), 8u);  // Creation + 7 moves.
  EXPECT_TRUE(events.array()[0].Find("from")->is_null());
  EXPECT_EQ(events.array()[7].Find("to")->string_value(), "proposed");
  EXPECT_EQ(Call("GET", "/api/v1/bugs/999").status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/bugs/abc").status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/bugs/-1").status, 404);
}

// Issue 18 item 8: a parked or failed step shows on its bug (kind, state,
// attempts, crashes, last error, parked reason) and a human can queue it
// again over the API; ids are checked, and a bug with nothing to retry is
// a 409 that changes nothing.
TEST_F(ApiEndpointsTest, ParkedStepsShowOnTheBugAndAreRetryable) {
  auto id = check_->CreateBug({"sig", "t", std::nullopt, Json::MakeObject()},
                              "test", Json());
  ASSERT_TRUE(id.ok());
  const std::string retry = "/api/v1/bugs/" + std::to_string(*id) + "/retry";
  EXPECT_EQ(Call("POST", retry, "{}", kToken).status, 409);
  // Its reproduce step lost 2 leases to crashes, then failed for good.
  JobQueue queue(check_.get(), {.max_crashes = 50});
  JobOptions o;
  o.max_attempts = 2;
  o.dedup_key = "bug:" + std::to_string(*id) + ":reproduce";
  auto job = queue.Enqueue("reproduce", Json::MakeObject(), o);
  ASSERT_TRUE(job.ok());
  for (int crash = 0; crash < 2; ++crash) {
    ASSERT_EQ(queue.Lease("daemon", 1, 60000)->size(), 1u);
    ASSERT_EQ(*queue.RequeueOwner("daemon"), 1);
  }
  for (int failure = 0; failure < 2; ++failure) {
    clock_.Advance(10'000'000);
    auto leased = queue.Lease("daemon", 1, 60000);
    ASSERT_EQ(leased->size(), 1u);
    ASSERT_TRUE(
        queue.Fail(LeaseOf((*leased)[0]), "hlo-diff\x1b]0;x", true).ok());
  }
  HttpReply r = Call("GET", "/api/v1/bugs/" + std::to_string(*id));
  ASSERT_EQ(r.status, 200) << r.body;
  const Json body = r.json();
  const Json* jobs = body.Find("jobs");
  ASSERT_NE(jobs, nullptr) << r.body;
  ASSERT_EQ(jobs->size(), 1u);
  const Json& shown = jobs->array()[0];
  EXPECT_EQ(shown.Find("id")->int64_value(), job->id);
  EXPECT_EQ(shown.Find("kind")->string_value(), "reproduce");
  EXPECT_EQ(shown.Find("state")->string_value(), "parked");
  EXPECT_EQ(shown.Find("attempts")->int64_value(), 4);
  EXPECT_EQ(shown.Find("crashes")->int64_value(), 2);
  EXPECT_EQ(shown.Find("max_attempts")->int64_value(), 2);
  EXPECT_EQ(shown.Find("last_error")->string_value(), "hlo-diff\x1b]0;x");
  EXPECT_EQ(shown.Find("parked_reason")->string_value(),
            "failed 2 of 2 attempts: hlo-diff\x1b]0;x");
  // Writes need the token; ids are checked.
  EXPECT_EQ(Call("POST", retry, "{}").status, 401);
  EXPECT_EQ(Call("GET", retry).status, 405);
  EXPECT_EQ(Call("POST", "/api/v1/bugs/999/retry", "{}", kToken).status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/bugs/x/retry", "{}", kToken).status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/bugs/-1/retry", "{}", kToken).status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/bugs//retry", "{}", kToken).status, 404);
  EXPECT_EQ(StateOfJob(job->id), JobState::kParked);
  r = Call("POST", retry, "{}", kToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().Find("bug")->int64_value(), *id);
  ASSERT_EQ(r.json().Find("retried")->size(), 1u);
  EXPECT_EQ(r.json().Find("retried")->array()[0].int64_value(), job->id);
  EXPECT_EQ(StateOfJob(job->id), JobState::kQueued);
  // Queued again: nothing left to retry.
  r = Call("POST", retry, "{}", kToken);
  EXPECT_EQ(r.status, 409);
  EXPECT_NE(r.error_message().find("no parked or failed step"),
            std::string::npos)
      << r.body;
}

TEST_F(ApiEndpointsTest, ReviewApprovesAProposedPatch) {
  const int64_t id = ProposedBug();
  const std::string target =
      "/api/v1/patches/" + std::to_string(id) + "/review";
  HttpReply r = Call("POST", target,
                     R"({"decision": "approve", "comment": "lgtm"})", kToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().Find("bug")->Find("state")->string_value(), "approved");
  auto events = check_->ListEvents(id, 0, 100);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->back().actor, "api:review");
  EXPECT_EQ(events->back().evidence.Find("comment")->string_value(), "lgtm");
  // A second review is an illegal move: 409 with the lifecycle's message.
  StoreSnapshot before = Snapshot();
  r = Call("POST", target, R"({"decision": "reject"})", kToken);
  EXPECT_EQ(r.status, 409);
  EXPECT_NE(r.error_message().find("illegal bug transition approved -> "
                                   "rejected"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(ApiEndpointsTest, ReviewRejectsAndBadReviews) {
  const int64_t id = ProposedBug();
  const std::string target =
      "/api/v1/patches/" + std::to_string(id) + "/review";
  StoreSnapshot before = Snapshot();
  struct Bad {
    std::string target, body;
    int status;
    std::string message;
  } cases[] = {
      {target, R"({"decision": "maybe"})", 400, "\"approve\" or \"reject\""},
      {target, R"({"decision": 1})", 400, "field 'decision' must be a string"},
      {target, R"({"decision": "approve", "comment": []})", 400,
       "field 'comment'"},
      {target, "{", 400, "malformed JSON in request body: 1:2"},
      {"/api/v1/patches/999/review", R"({"decision": "approve"})", 404,
       "no bug 999"},
      {"/api/v1/patches/x/review", R"({"decision": "approve"})", 404,
       "no bug 'x'"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.body);
    HttpReply r = Call("POST", b.target, b.body, kToken);
    EXPECT_EQ(r.status, b.status) << r.body;
    EXPECT_NE(r.error_message().find(b.message), std::string::npos) << r.body;
    EXPECT_EQ(Snapshot(), before);
  }
  HttpReply r = Call("POST", target, R"({"decision": "reject"})", kToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(check_->GetBug(id)->state, BugState::kRejected);
}

TEST_F(ApiEndpointsTest, EventsPageBySince) {
  ProposedBug();  // 8 events.
  HttpReply r = Call("GET", "/api/v1/events?limit=3");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json().Find("events")->size(), 3u);
  const int64_t next = r.json().Find("next")->int64_value();
  r = Call("GET", "/api/v1/events?since=" + std::to_string(next));
  EXPECT_EQ(r.json().Find("events")->size(), 5u);
  r = Call("GET", "/api/v1/events?since=1000");
  EXPECT_EQ(r.json().Find("events")->size(), 0u);
  EXPECT_EQ(r.json().Find("next")->int64_value(), 1000);
  r = Call("GET", "/api/v1/events?since=-5");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.error_message().find("'since'"), std::string::npos);
}

// commit_landed / build_ready rows join the bugs' events in one feed, in
// id order, and page with it; bug= and commit= pick one kind.
TEST_F(ApiEndpointsTest, CommitEventsJoinTheEventFeed) {
  const std::string sha(40, 'a');
  ASSERT_TRUE(check_
                  ->RecordCommitEvent(sha, CommitEventKind::kCommitLanded,
                                      "orchestrator", Json::MakeObject())
                  .ok());
  const int64_t bug = ProposedBug();  // 8 events.
  Json built = Json::MakeObject();
  built["built"] = true;
  ASSERT_TRUE(check_
                  ->RecordCommitEvent(sha, CommitEventKind::kBuildReady,
                                      "orchestrator", built)
                  .ok());
  HttpReply r = Call("GET", "/api/v1/events");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json feed = r.json();
  const Json* events = feed.Find("events");
  ASSERT_EQ(events->size(), 10u) << r.body;
  const Json& first = events->array()[0];
  EXPECT_EQ(*first.Find("kind"), Json("commit"));
  EXPECT_EQ(*first.Find("event"), Json("commit_landed"));
  EXPECT_EQ(*first.Find("commit"), Json(sha));
  EXPECT_EQ(*events->array()[1].Find("kind"), Json("bug"));
  EXPECT_EQ(*events->array()[1].Find("bug_id"), Json(bug));
  const Json& last = events->array()[9];
  EXPECT_EQ(*last.Find("event"), Json("build_ready"));
  EXPECT_EQ(*last.Find("evidence"), built);
  for (size_t i = 1; i < events->size(); ++i) {
    EXPECT_LT(events->array()[i - 1].Find("id")->int64_value(),
              events->array()[i].Find("id")->int64_value());
  }
  // Pages cut across both kinds.
  r = Call("GET", "/api/v1/events?limit=2");
  ASSERT_EQ(r.json().Find("events")->size(), 2u);
  const int64_t next = r.json().Find("next")->int64_value();
  EXPECT_EQ(next, events->array()[1].Find("id")->int64_value());
  r = Call("GET", "/api/v1/events?since=" + std::to_string(next));
  EXPECT_EQ(r.json().Find("events")->size(), 8u);
  // One kind.
  r = Call("GET", "/api/v1/events?bug=" + std::to_string(bug));
  EXPECT_EQ(r.json().Find("events")->size(), 8u);
  r = Call("GET", "/api/v1/events?commit=" + sha);
  ASSERT_EQ(r.json().Find("events")->size(), 2u);
  EXPECT_EQ(r.json().Find("next")->int64_value(),
            last.Find("id")->int64_value());
  r = Call("GET", "/api/v1/events?commit=" + std::string(40, 'b'));
  EXPECT_EQ(r.json().Find("events")->size(), 0u);
  r = Call("GET", "/api/v1/events?bug=1&commit=" + sha);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.error_message().find("not both"), std::string::npos);
}

TEST_F(ApiEndpointsTest, MetricsCountTheStore) {
  ProposedBug();
  ASSERT_EQ(Call("POST", "/api/v1/reports", R"({"text": "a"})", kToken).status,
            201);
  JobQueue jobs(check_.get());
  ASSERT_TRUE(jobs.Enqueue("reproduce", Json::MakeObject()).ok());
  const std::string sha = Sha256Hex("minimized");
  ASSERT_TRUE(check_->AddRun(sha, std::nullopt, "c1", Json(), 0.5).ok());
  auto session = check_->StartAgentSession(std::nullopt, "minimizer", "llm");
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(check_->AddAgentMessage(*session, "assistant", "hi", 10, 5).ok());
  // Two finished fuzz campaigns: 300 programs in 20 s, then 100 in 8 s.
  for (auto [programs, seconds] : {std::pair{300, 20.0}, std::pair{100, 8.0}}) {
    ASSERT_TRUE(jobs.Enqueue("fuzz", Json::MakeObject()).ok());
    StatusOr<std::vector<Job>> fuzz = jobs.Lease("w", 1, 60000, {"fuzz"});
    ASSERT_TRUE(fuzz.ok() && fuzz->size() == 1);
    Json result = Json::MakeObject();
    result["programs"] = programs;
    result["seconds"] = seconds;
    ASSERT_TRUE(jobs.Complete(LeaseOf((*fuzz)[0]), result).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  HttpReply r = Call("GET", "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"],
            "text/plain; version=0.0.4; charset=utf-8");
  for (const char* line :
       {"# TYPE trench_bugs gauge\n", "trench_bugs{state=\"new\"} 1\n",
        "trench_bugs{state=\"proposed\"} 1\n",
        "trench_bugs{state=\"fixed\"} 0\n",
        "trench_jobs{kind=\"reproduce\",state=\"queued\"} 1\n",
        "trench_jobs{kind=\"reproduce\",state=\"leased\"} 0\n",
        "trench_target_runs_total 1\n",
        "trench_agent_tokens_total{role=\"minimizer\",backend=\"llm\","
        "direction=\"input\"} 10\n",
        "trench_agent_tokens_total{role=\"minimizer\",backend=\"llm\","
        "direction=\"output\"} 5\n",
        "trench_fuzz_programs_total 400\n", "trench_fuzz_seconds_total 28\n",
        "# TYPE trench_fuzz_rate gauge\n", "trench_fuzz_rate 12.5\n"}) {
    EXPECT_NE(r.body.find(line), std::string::npos) << line << r.body;
  }
}

// The sandboxed tool runs are the ToolRunner's counters, apart from the
// target runs of the store; a leased job is documented as running.
TEST_F(ApiEndpointsTest, MetricsCountTheToolRuns) {
  HttpReply r = Call("GET", "/metrics");
  ASSERT_EQ(r.status, 200);
  for (const char* line :
       {"trench_tool_runs_total 0\n", "trench_tool_runs_running 0\n",
        "# TYPE trench_tool_runs_total counter\n",
        "# TYPE trench_tool_runs_running gauge\n"}) {
    EXPECT_NE(r.body.find(line), std::string::npos) << line << r.body;
  }
  EXPECT_NE(r.body.find("# HELP trench_jobs "), std::string::npos);
  EXPECT_NE(r.body.find("leased (running now"), std::string::npos) << r.body;

  // The runner spawns on the server's loop (ioc_, run by thread_).
  ToolRunner runner(ioc_, 2);
  handlers_->SetExecutor(&runner);
  std::filesystem::permissions(dir_, std::filesystem::perms(0755));
  const std::string work = dir_ + "/work";
  std::filesystem::create_directories(work);
  auto options = [&](std::vector<std::string> argv) {
    sandbox::Options o;
    o.argv = std::move(argv);
    o.env = {"PATH=/usr/bin:/bin"};
    o.work_dir = work;
    o.limits.wall_seconds = 600;
    o.limits.cpu_seconds = 600;
    o.limits.processes = 1024;
    return o;
  };
  for (int i = 0; i < 2; ++i) {
    StatusOr<sandbox::Result> done = runner.Run(options({"true"}));
    ASSERT_TRUE(done.ok()) << done.status().ToString();
    EXPECT_TRUE(done->exited);
  }
  // One run held open: counted as running until it is killed.
  std::thread held([&] { (void)runner.Run(options({"sleep", "600"})); });
  while (runner.running() == 0) std::this_thread::yield();
  r = Call("GET", "/metrics");
  EXPECT_NE(r.body.find("trench_tool_runs_total 3\n"), std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("trench_tool_runs_running 1\n"), std::string::npos)
      << r.body;
  runner.KillAll();
  held.join();
  r = Call("GET", "/metrics");
  EXPECT_NE(r.body.find("trench_tool_runs_running 0\n"), std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("trench_target_runs_total 0\n"), std::string::npos);
  handlers_->SetExecutor(nullptr);
}

TEST_F(ApiEndpointsTest, ConcurrentReportsAllLand) {
  constexpr int kClients = 8, kEach = 5;
  std::vector<std::thread> clients;
  std::atomic<int> created{0};
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      HttpClient client(server_->port());  // Keep-alive connection.
      for (int i = 0; i < kEach; ++i) {
        const std::string text = "report " + std::to_string(c * kEach + i);
        HttpReply r = client.Request("POST", "/api/v1/reports",
                                     R"({"text": )" + Q(text) + "}", kToken);
        if (r.status == 201) ++created;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(created.load(), kClients * kEach);
  StoreSnapshot s = Snapshot();
  EXPECT_EQ(s.bugs.size(), size_t{kClients * kEach});
  EXPECT_EQ(s.events.size(), size_t{kClients * kEach});
}

}  // namespace
}  // namespace trench::orchestrator::testing
