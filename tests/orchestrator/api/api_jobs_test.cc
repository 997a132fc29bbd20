// GET /api/v1/jobs, GET /api/v1/jobs/{id}, POST /api/v1/jobs/{id}/retry
// over a real socket, and the bug page's jobs with their whole last error.
#include <gtest/gtest.h>

#include "orchestrator/store/job_queue.h"
#include "tests/orchestrator/api/api_test_util.h"

namespace trench::orchestrator::testing {
namespace {

class ApiJobsTest : public ApiTest {
 protected:
  // A job of `kind` for `bug` (its step key), failed for good with `error`.
  int64_t FailedJob(int64_t bug, const std::string& kind,
                    const std::string& error) {
    JobQueue queue(check_.get());
    JobOptions o;
    o.dedup_key = "bug:" + std::to_string(bug) + ":" + kind;
    Json payload = Json::MakeObject();
    payload["bug"] = bug;
    auto job = queue.Enqueue(kind, payload, o);
    EXPECT_TRUE(job.ok());
    auto leased = queue.Lease("daemon", 1, 60000, {kind});
    EXPECT_TRUE(leased.ok() && leased->size() == 1u);
    if (leased.ok() && leased->size() == 1u) {
      EXPECT_TRUE(queue.Fail(LeaseOf((*leased)[0]), error, false).ok());
    }
    return job.ok() ? job->id : -1;
  }
  JobState StateOf(int64_t id) { return JobQueue(check_.get()).Get(id)->state; }
  std::vector<int64_t> Ids(const HttpReply& r) {
    std::vector<int64_t> ids;
    const Json body = r.json();
    const Json* jobs = body.Find("jobs");
    for (size_t i = 0; jobs != nullptr && i < jobs->size(); ++i) {
      ids.push_back(jobs->array()[i].Find("id")->int64_value());
    }
    return ids;
  }
};

TEST_F(ApiJobsTest, ListsFiltersAndPagesJobs) {
  const int64_t a = FailedJob(3, "reproduce", "no build");
  JobQueue queue(check_.get());
  const int64_t b = queue.Enqueue("fuzz", Json::MakeObject())->id;
  const int64_t c = queue.Enqueue("scan", Json::MakeObject())->id;
  ASSERT_EQ(queue.Lease("daemon", 1, 60000, {"scan"})->size(), 1u);

  HttpReply r = Call("GET", "/api/v1/jobs");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Ids(r), (std::vector<int64_t>{c, b, a}));
  const Json listed = r.json();
  const Json& first = listed.Find("jobs")->array()[2];
  EXPECT_EQ(first.Find("state")->string_value(), "failed");
  EXPECT_EQ(first.Find("bug")->int64_value(), 3);
  EXPECT_EQ(first.Find("last_error")->string_value(), "no build");
  EXPECT_EQ(r.json().Find("next"), nullptr);  // One page.

  EXPECT_EQ(Ids(Call("GET", "/api/v1/jobs?state=running")),
            (std::vector<int64_t>{c}));
  EXPECT_EQ(Ids(Call("GET", "/api/v1/jobs?state=failed")),
            (std::vector<int64_t>{a}));
  EXPECT_EQ(Ids(Call("GET", "/api/v1/jobs?kind=fuzz")),
            (std::vector<int64_t>{b}));
  EXPECT_EQ(Ids(Call("GET", "/api/v1/jobs?bug=3")), (std::vector<int64_t>{a}));
  EXPECT_TRUE(Ids(Call("GET", "/api/v1/jobs?bug=4")).empty());
  r = Call("GET", "/api/v1/jobs?limit=2");
  EXPECT_EQ(Ids(r), (std::vector<int64_t>{c, b}));
  ASSERT_NE(r.json().Find("next"), nullptr) << r.body;
  EXPECT_EQ(r.json().Find("next")->int64_value(), b);
  EXPECT_EQ(
      Ids(Call("GET", "/api/v1/jobs?limit=2&before=" + std::to_string(b))),
      (std::vector<int64_t>{a}));

  // Every parameter is checked, and the message names it.
  r = Call("GET", "/api/v1/jobs?state=leased");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_message(),
            "query parameter 'state': unknown job state 'leased' (valid: "
            "queued, running, done, failed, parked)");
  for (const std::string q :
       {"bug=0", "bug=x", "limit=0", "before=-1", "before=abc", "kind="}) {
    r = Call("GET", "/api/v1/jobs?" + q);
    EXPECT_EQ(r.status, 400) << q;
    EXPECT_NE(r.error_message().find("'" + q.substr(0, q.find('=')) + "'"),
              std::string::npos)
        << q << ": " << r.body;
  }
  EXPECT_EQ(Call("POST", "/api/v1/jobs", "{}", kToken).status, 405);
}

TEST_F(ApiJobsTest, GetsOneJob) {
  const int64_t a = FailedJob(5, "localize", "bisect: exit 3");
  HttpReply r = Call("GET", "/api/v1/jobs/" + std::to_string(a));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().Find("id")->int64_value(), a);
  EXPECT_EQ(r.json().Find("kind")->string_value(), "localize");
  EXPECT_EQ(r.json().Find("last_error")->string_value(), "bisect: exit 3");
  EXPECT_EQ(Call("GET", "/api/v1/jobs/999").status, 404);
  r = Call("GET", "/api/v1/jobs/x");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.error_message().find("no job 'x'"), std::string::npos);
  EXPECT_EQ(Call("GET", "/api/v1/jobs/1/other").status, 404);
}

TEST_F(ApiJobsTest, RetryQueuesAFailedJobAndRefusesLiveOnes) {
  const int64_t a = FailedJob(5, "localize", "bisect: exit 3");
  const std::string retry = "/api/v1/jobs/" + std::to_string(a) + "/retry";
  EXPECT_EQ(Call("POST", retry, "{}").status, 401);
  EXPECT_EQ(Call("GET", retry).status, 405);
  EXPECT_EQ(Call("POST", "/api/v1/jobs/999/retry", "{}", kToken).status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/jobs/0/retry", "{}", kToken).status, 404);
  EXPECT_EQ(StateOf(a), JobState::kFailed);
  HttpReply r = Call("POST", retry, "{}", kToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().Find("job")->Find("state")->string_value(), "queued");
  EXPECT_EQ(StateOf(a), JobState::kQueued);
  r = Call("POST", retry, "{}", kToken);
  EXPECT_EQ(r.status, 409);
  EXPECT_NE(r.error_message().find("is queued, not parked or failed"),
            std::string::npos)
      << r.body;
  ASSERT_EQ(JobQueue(check_.get()).Lease("daemon", 1, 60000)->size(), 1u);
  r = Call("POST", retry, "{}", kToken);
  EXPECT_EQ(r.status, 409);
  EXPECT_NE(r.error_message().find("is running"), std::string::npos) << r.body;
}

TEST_F(ApiJobsTest, RetryHonoursIdempotencyKey) {
  const int64_t a = FailedJob(5, "localize", "e1");
  const int64_t b = FailedJob(6, "localize", "e2");
  const std::string retry = "/api/v1/jobs/" + std::to_string(a) + "/retry";
  HttpClient client(server_->port());
  HttpReply r =
      client.Request("POST", retry, "{}", kToken, "Idempotency-Key: k-1\r\n");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers.count("idempotent-replayed"), 0u);
  // The job runs and fails again; the client's retry of its request must
  // not queue it once more.
  JobQueue queue(check_.get());
  auto leased = queue.Lease("daemon", 1, 60000);
  ASSERT_EQ(leased->size(), 1u);
  ASSERT_TRUE(queue.Fail(LeaseOf((*leased)[0]), "e3", false).ok());
  r = client.Request("POST", retry, "{}", kToken, "Idempotency-Key: k-1\r\n");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers["idempotent-replayed"], "true");
  EXPECT_EQ(StateOf(a), JobState::kFailed);
  // The same key for another job: 409, nothing changes.
  r = client.Request("POST", "/api/v1/jobs/" + std::to_string(b) + "/retry",
                     "{}", kToken, "Idempotency-Key: k-1\r\n");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(StateOf(b), JobState::kFailed);
  r = client.Request("POST", retry, "{}", kToken,
                     "Idempotency-Key: has space\r\n");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.error_message().find("Idempotency-Key"), std::string::npos);
}

TEST_F(ApiJobsTest, BugPageShowsEachJobsWholeLastError) {
  auto id = check_->CreateBug({"sig", "t", std::nullopt, Json::MakeObject()},
                              "test", Json());
  ASSERT_TRUE(id.ok());
  const std::string error =
      "hlo-diff failed: " + std::string(300, 'x') + " \x1b[31mred\x1b[0m end";
  const int64_t a = FailedJob(*id, "reproduce", error);
  HttpReply r = Call("GET", "/api/v1/bugs/" + std::to_string(*id));
  ASSERT_EQ(r.status, 200) << r.body;
  const Json page = r.json();
  const Json& job = page.Find("jobs")->array()[0];
  EXPECT_EQ(job.Find("id")->int64_value(), a);
  EXPECT_EQ(job.Find("last_error")->string_value(), error);
  EXPECT_EQ(job.Find("bug")->int64_value(), *id);
}

}  // namespace
}  // namespace trench::orchestrator::testing
