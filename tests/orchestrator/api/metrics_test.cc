// GET /metrics over a real socket: the exposition is valid text format
// 0.0.4 (checked by an in-test validator, and by promtool when installed),
// the HTTP series are labelled by route pattern (never the raw path), jobs
// by kind and state, and the pipeline's durations come from the store's
// event rows.
#include "orchestrator/api/metrics.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "orchestrator/api/http_metrics.h"
#include "orchestrator/pipeline/executor.h"
#include "orchestrator/store/job_queue.h"
#include "tests/orchestrator/api/api_test_util.h"

namespace trench::orchestrator {
namespace {

// ---- A validator of the Prometheus text exposition format (0.0.4). ----

struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // Unescaped.
  double value = 0;
};

bool IsName(std::string_view s, bool label) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       c == '_' || (!label && c == ':');
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::optional<double> ParseValue(const std::string& s) {
  if (s == "+Inf") return INFINITY;
  if (s == "-Inf") return -INFINITY;
  if (s == "NaN") return NAN;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0') return std::nullopt;
  return v;
}

// Parses one sample line; "" or the problem.
std::string ParseSample(const std::string& line, Sample* out) {
  size_t i = 0;
  while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
  out->name = line.substr(0, i);
  if (!IsName(out->name, false)) return "bad metric name";
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      const size_t eq = line.find('=', i);
      if (eq == std::string::npos) return "label without '='";
      const std::string name = line.substr(i, eq - i);
      if (!IsName(name, true)) return "bad label name '" + name + "'";
      i = eq + 1;
      if (i >= line.size() || line[i] != '"') return "unquoted label value";
      ++i;
      std::string value;
      for (; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] != '\\') {
          value += line[i];
          continue;
        }
        if (++i >= line.size()) return "dangling backslash";
        if (line[i] == 'n') {
          value += '\n';
        } else if (line[i] == '\\' || line[i] == '"') {
          value += line[i];
        } else {
          return "bad escape \\" + std::string(1, line[i]);
        }
      }
      if (i >= line.size()) return "unterminated label value";
      ++i;  // The closing quote.
      for (const auto& [n, v] : out->labels) {
        if (n == name) return "label " + name + " twice";
      }
      out->labels.emplace_back(name, value);
      if (i < line.size() && line[i] == ',') ++i;
    }
    if (i >= line.size()) return "unterminated label set";
    ++i;  // '}'
  }
  if (i >= line.size() || line[i] != ' ') return "no value";
  std::optional<double> v = ParseValue(line.substr(i + 1));
  if (!v) return "bad value '" + line.substr(i + 1) + "'";
  out->value = *v;
  return "";
}

// The problems of `text` (empty: valid): HELP and TYPE of a family before
// its samples, each family once, samples of the family being described,
// label syntax and escapes, no series twice, and for histograms: buckets
// with ascending le ending in +Inf, cumulative counts, _sum and _count
// (equal to the +Inf bucket).
std::vector<std::string> Validate(const std::string& text) {
  std::vector<std::string> problems;
  if (text.empty() || text.back() != '\n') problems.push_back("no final \\n");
  std::set<std::string> families, series;
  std::string family, type;
  bool has_help = false;
  // Histogram label set (without le) -> its buckets, sum, count.
  struct H {
    std::vector<std::pair<double, double>> buckets;
    bool sum = false;
    std::optional<double> count;
  };
  std::map<std::string, H> histograms;
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    const std::string where = "line " + std::to_string(n) + " (" + line + "): ";
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) {
      const bool help = line[2] == 'H';
      const size_t sp = line.find(' ', 7);
      const std::string name = line.substr(7, sp - 7);
      if (sp == std::string::npos) {
        problems.push_back(where + "no text");
        continue;
      }
      if (name != family) {
        if (!families.insert(name).second) {
          problems.push_back(where + "family " + name + " again");
        }
        family = name;
        type.clear();
        has_help = false;
      }
      if (help) {
        if (has_help) problems.push_back(where + "second HELP");
        has_help = true;
      } else {
        if (!type.empty()) problems.push_back(where + "second TYPE");
        type = line.substr(sp + 1);
        if (type != "counter" && type != "gauge" && type != "histogram" &&
            type != "summary" && type != "untyped") {
          problems.push_back(where + "unknown type");
        }
      }
      continue;
    }
    if (line.starts_with("#")) continue;
    Sample s;
    if (std::string p = ParseSample(line, &s); !p.empty()) {
      problems.push_back(where + p);
      continue;
    }
    if (type.empty() || !has_help) {
      problems.push_back(where + "sample before its HELP and TYPE");
    }
    std::string suffix;
    if (s.name != family) {
      for (const char* sfx : {"_bucket", "_sum", "_count"}) {
        if (type == "histogram" && s.name == family + sfx) suffix = sfx;
        // A summary without quantiles: _sum and _count only.
        if (type == "summary" && std::string(sfx) != "_bucket" &&
            s.name == family + sfx) {
          suffix = sfx;
        }
      }
      if (suffix.empty()) {
        problems.push_back(where + "not of family " + family);
        continue;
      }
    } else if (type == "histogram") {
      problems.push_back(where + "histogram sample without a suffix");
    }
    auto sorted = s.labels;
    std::sort(sorted.begin(), sorted.end());
    std::string key = s.name;
    for (const auto& [k, v] : sorted) key += "|" + k + "=" + v;
    if (!series.insert(key).second) {
      problems.push_back(where + "duplicate series");
    }
    if (type != "histogram") continue;
    std::string group = family;
    std::optional<double> le;
    for (const auto& [k, v] : sorted) {
      if (k == "le") {
        le = ParseValue(v);
        if (!le) problems.push_back(where + "bad le");
      } else {
        group += "|" + k + "=" + v;
      }
    }
    H& h = histograms[group];
    if (suffix == "_bucket") {
      if (!le) {
        problems.push_back(where + "bucket without le");
        continue;
      }
      h.buckets.emplace_back(*le, s.value);
    } else if (suffix == "_sum") {
      h.sum = true;
    } else {
      h.count = s.value;
    }
  }
  for (const auto& [group, h] : histograms) {
    const std::string where = "histogram " + group + ": ";
    if (h.buckets.empty() || !std::isinf(h.buckets.back().first)) {
      problems.push_back(where + "no +Inf bucket last");
    }
    for (size_t i = 1; i < h.buckets.size(); ++i) {
      if (!(h.buckets[i].first > h.buckets[i - 1].first)) {
        problems.push_back(where + "le not ascending");
      }
      if (h.buckets[i].second < h.buckets[i - 1].second) {
        problems.push_back(where + "counts not cumulative");
      }
    }
    if (!h.sum) problems.push_back(where + "no _sum");
    if (!h.count) {
      problems.push_back(where + "no _count");
    } else if (!h.buckets.empty() && *h.count != h.buckets.back().second) {
      problems.push_back(where + "_count is not the +Inf bucket");
    }
  }
  return problems;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += s + "\n";
  return out;
}

// promtool's verdict on `text`, or nullopt when promtool is not installed.
std::optional<std::string> Promtool(const std::string& text,
                                    const std::string& dir) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    return std::nullopt;
  }
  const std::string in = dir + "/metrics.txt", out = dir + "/promtool.txt";
  std::ofstream(in) << text;
  const int rc = std::system(
      ("promtool check metrics < '" + in + "' > '" + out + "' 2>&1").c_str());
  std::ifstream f(out);
  std::string said((std::istreambuf_iterator<char>(f)),
                   std::istreambuf_iterator<char>());
  return rc == 0 ? "" : "exit " + std::to_string(rc) + ": " + said;
}

TEST(MetricsValidatorTest, RefusesBrokenExpositions) {
  const std::string good =
      "# HELP a_total A.\n# TYPE a_total counter\na_total{k=\"x\\\"\\n\"} 1\n"
      "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\n"
      "h_bucket{le=\"+Inf\"} 2\nh_sum 3.5\nh_count 2\n";
  EXPECT_EQ(Joined(Validate(good)), "");
  for (const char* bad : {
           "a_total 1\n# HELP a_total A.\n# TYPE a_total counter\n",
           "# HELP a A.\n# TYPE a gauge\na{k=\"1\"} 1\na{k=\"1\"} 2\n",
           "# HELP a A.\n# TYPE a gauge\na{k=\"\\t\"} 1\n",
           "# HELP a A.\n# TYPE a gauge\na{k=\"x} 1\n",
           "# HELP a A.\n# TYPE a gauge\nb 1\n",
           "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\n"
           "h_count 1\n",
           "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"2\"} 1\n"
           "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\n"
           "h_count 1\n",
           "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\n"
           "h_sum 1\nh_count 1\n",
           "# HELP a A.\n# TYPE a gauge\na 1\n# HELP a A.\n# TYPE a gauge\n",
       }) {
    EXPECT_NE(Joined(Validate(bad)), "") << bad;
  }
}

TEST(HttpMetricsTest, RoutesArePatternsNeverRawPaths) {
  EXPECT_EQ(RouteOf("/api/v1/bugs"), "/api/v1/bugs");
  EXPECT_EQ(RouteOf("/api/v1/bugs/12"), "/api/v1/bugs/{id}");
  EXPECT_EQ(RouteOf("/api/v1/bugs/x\"y"), "/api/v1/bugs/{id}");
  EXPECT_EQ(RouteOf("/api/v1/bugs/12/retry"), "/api/v1/bugs/{id}/retry");
  EXPECT_EQ(RouteOf("/api/v1/patches/3/review"), "/api/v1/patches/{id}/review");
  EXPECT_EQ(RouteOf("/api/v1/bugs/"), "other");
  EXPECT_EQ(RouteOf("/api/v1/bugs/1/2"), "other");
  EXPECT_EQ(RouteOf("/wp-admin/../../etc/passwd"), "other");
  EXPECT_EQ(RouteOf(""), "other");
  EXPECT_EQ(MethodLabel("GET"), "GET");
  EXPECT_EQ(MethodLabel("BREW"), "other");
}

class MetricsTest : public testing::ApiTest {
 protected:
  std::string Metrics() {
    testing::HttpReply r = Call("GET", "/metrics");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(Joined(Validate(r.body)), "") << r.body;
    if (std::optional<std::string> p = Promtool(r.body, dir_)) {
      EXPECT_EQ(*p, "") << r.body;
    }
    return r.body;
  }

  static void Has(const std::string& body, const std::string& line) {
    EXPECT_NE(body.find("\n" + line + "\n"), std::string::npos) << line << "\n"
                                                                << body;
  }

  // A job of `kind` taken to `state` (done with `result`, failed, parked).
  void JobIn(JobQueue& q, const std::string& kind, JobState state,
             const Json& result = Json::MakeObject()) {
    JobOptions o;
    o.max_attempts = 1;
    ASSERT_TRUE(q.Enqueue(kind, Json::MakeObject(), o).ok());
    StatusOr<std::vector<Job>> jobs = q.Lease("w", 1, 60'000, {kind});
    ASSERT_TRUE(jobs.ok() && jobs->size() == 1);
    const JobLease lease = LeaseOf(jobs->front());
    if (state == JobState::kDone) {
      ASSERT_TRUE(q.Complete(lease, result).ok());
    } else {
      ASSERT_TRUE(q.Fail(lease, "no", state == JobState::kParked).ok());
    }
  }
};

TEST_F(MetricsTest, HttpRequestsByRoutePatternMethodAndCode) {
  ASSERT_EQ(Call("POST", "/api/v1/reports", R"({"text": "a"})", testing::kToken)
                .status,
            201);
  EXPECT_EQ(Call("GET", "/api/v1/bugs/1").status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/bugs/1").status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/bugs/999").status, 404);
  EXPECT_EQ(Call("POST", "/healthz").status, 405);
  EXPECT_EQ(Call("GET", "/secret-probe-4711/x%22y").status, 404);
  EXPECT_EQ(Call("BREW", "/api/v1/bugs").status, 405);
  const std::string body = Metrics();
  Has(body,
      R"(trench_http_requests_total{route="/api/v1/reports",method="POST",code="201"} 1)");
  Has(body,
      R"(trench_http_requests_total{route="/api/v1/bugs/{id}",method="GET",code="200"} 2)");
  Has(body,
      R"(trench_http_requests_total{route="/api/v1/bugs/{id}",method="GET",code="404"} 1)");
  Has(body,
      R"(trench_http_requests_total{route="/healthz",method="POST",code="405"} 1)");
  Has(body,
      R"(trench_http_requests_total{route="other",method="GET",code="404"} 1)");
  Has(body,
      R"(trench_http_requests_total{route="/api/v1/bugs",method="other",code="405"} 1)");
  Has(body,
      R"(trench_http_request_duration_seconds_count{route="/api/v1/bugs/{id}"} 3)");
  Has(body,
      R"(trench_http_request_duration_seconds_bucket{route="/api/v1/bugs/{id}",le="+Inf"} 3)");
  EXPECT_EQ(body.find("secret-probe"), std::string::npos);
  EXPECT_EQ(body.find("/api/v1/bugs/999"), std::string::npos);
  // The scrape itself is counted (seen on the next one).
  Has(Metrics(),
      R"(trench_http_requests_total{route="/metrics",method="GET",code="200"} 1)");
}

// An executor with fixed counters (what a Slurm executor reports).
class FixedExecutor : public Executor {
 public:
  std::string kind() const override { return "slurm"; }
  bool RunsOnThisHost() const override { return false; }
  StatusOr<sandbox::Result> Run(const sandbox::Options&,
                                const RunLabel&) override {
    return Internal("not for running");
  }
  void KillAll() override {}
  int running() const override { return 2; }
  int64_t total_runs() const override { return 9; }
  ExecutorStats Stats() const override {
    ExecutorStats s;
    s.kind = "slurm";
    s.runs_by_state = {
        {"PENDING", 1}, {"RUNNING", 1}, {"COMPLETED", 6}, {"NODE_FAIL", 1}};
    s.queue_wait_seconds_sum = 13.5;
    s.queue_wait_count = 8;
    s.runtime_seconds_sum = 120.25;
    s.runtime_count = 7;
    s.requeued = 1;
    s.restart_runs = {{"reattached", 3}, {"changed", 1}, {"finished", 0}};
    return s;
  }
};

TEST_F(MetricsTest, ExecutorRunsByStateQueueWaitRuntimeRequeuesAndRestarts) {
  FixedExecutor executor;
  handlers_->SetExecutor(&executor);
  const std::string body = Metrics();
  Has(body, R"(trench_executor_runs{executor="slurm",state="PENDING"} 1)");
  Has(body, R"(trench_executor_runs{executor="slurm",state="COMPLETED"} 6)");
  Has(body, R"(trench_executor_runs{executor="slurm",state="NODE_FAIL"} 1)");
  Has(body, R"(trench_executor_queue_wait_seconds_sum{executor="slurm"} 13.5)");
  Has(body, R"(trench_executor_queue_wait_seconds_count{executor="slurm"} 8)");
  Has(body, R"(trench_executor_runtime_seconds_sum{executor="slurm"} 120.25)");
  Has(body, R"(trench_executor_runtime_seconds_count{executor="slurm"} 7)");
  Has(body, R"(trench_executor_requeues_total{executor="slurm"} 1)");
  Has(body,
      R"(trench_executor_restart_runs_total{executor="slurm",outcome="reattached"} 3)");
  Has(body,
      R"(trench_executor_restart_runs_total{executor="slurm",outcome="changed"} 1)");
  Has(body,
      R"(trench_executor_restart_runs_total{executor="slurm",outcome="finished"} 0)");
  Has(body, "trench_tool_runs_total 9");
  Has(body, "trench_tool_runs_running 2");
  handlers_->SetExecutor(nullptr);
}

TEST_F(MetricsTest, JobsByKindAndStateEscapedAndComplete) {
  JobQueue q(check_.get());
  JobIn(q, "reproduce", JobState::kParked);
  JobIn(q, "localize", JobState::kFailed);
  JobIn(q, "odd \"kind\"\\\nx", JobState::kFailed);
  ASSERT_TRUE(q.Enqueue("build", Json::MakeObject()).ok());
  const std::string body = Metrics();
  Has(body, R"(trench_jobs{kind="reproduce",state="parked"} 1)");
  Has(body, R"(trench_jobs{kind="reproduce",state="failed"} 0)");
  Has(body, R"(trench_jobs{kind="localize",state="failed"} 1)");
  Has(body, R"(trench_jobs{kind="build",state="queued"} 1)");
  Has(body, R"(trench_jobs{kind="propose",state="parked"} 0)");
  Has(body, R"(trench_jobs{kind="odd \"kind\"\\\nx",state="failed"} 1)");
}

// Bug 1 is reproduced after 2 min, localized after 10 min and proposed
// after 2 h; bug 2, flaky, counts as reproduced after 30 s. Commit c1
// landed 5 min before its first finding (a second one later does not
// count); c2 has none.
TEST_F(MetricsTest, PipelineDurationsFromTheStoresEvents) {
  const std::string c1(40, 'c'), c2(40, 'd');
  ASSERT_TRUE(check_
                  ->RecordCommitEvent(c1, CommitEventKind::kCommitLanded, "t",
                                      Json::MakeObject())
                  .ok());
  ASSERT_TRUE(check_
                  ->RecordCommitEvent(c2, CommitEventKind::kCommitLanded, "t",
                                      Json::MakeObject())
                  .ok());
  clock_.Advance(300'000);
  NewBug nb{"sig", "t", std::nullopt, Json::MakeObject()};
  nb.details["commit"] = c1;
  StatusOr<int64_t> bug = check_->CreateBug(nb, "test", Json());
  ASSERT_TRUE(bug.ok());
  clock_.Advance(60'000);
  ASSERT_TRUE(check_->CreateBug(nb, "test", Json()).ok());  // Not first.
  nb.details = Json::MakeObject();
  StatusOr<int64_t> flaky = check_->CreateBug(nb, "test", Json());
  ASSERT_TRUE(flaky.ok());
  clock_.Advance(-60'000);  // Back to bug 1's creation.
  const std::string sha = Sha256Hex("minimized");
  ASSERT_TRUE(check_->PutCase(sha, "", Json::MakeObject()).ok());
  TransitionFields f;
  f.minimized_sha256 = sha;
  f.culprit_commit = "abc";
  f.flaky_rate = 0.5;
  const std::pair<BugState, int64_t> moves[] = {
      {BugState::kReproduced, 120'000}, {BugState::kMinimized, 0},
      {BugState::kLocalized, 480'000},  {BugState::kCulpritFound, 0},
      {BugState::kPatchDrafted, 0},     {BugState::kPatchVerified, 0},
      {BugState::kProposed, 6'600'000}};
  for (const auto& [state, after_ms] : moves) {
    clock_.Advance(after_ms);
    ASSERT_TRUE(check_->TransitionBug(*bug, state, "test", Json(), f).ok())
        << BugStateName(state);
  }
  clock_.Advance(-7'200'000 + 60'000 + 30'000);  // The flaky one: 30 s.
  ASSERT_TRUE(
      check_->TransitionBug(*flaky, BugState::kFlaky, "test", Json(), f).ok());
  const std::string body = Metrics();
  Has(body, R"(trench_bug_stage_seconds_bucket{stage="reproduced",le="60"} 1)");
  Has(body,
      R"(trench_bug_stage_seconds_bucket{stage="reproduced",le="300"} 2)");
  Has(body, R"(trench_bug_stage_seconds_sum{stage="reproduced"} 150)");
  Has(body, R"(trench_bug_stage_seconds_count{stage="reproduced"} 2)");
  Has(body, R"(trench_bug_stage_seconds_bucket{stage="localized",le="300"} 0)");
  Has(body, R"(trench_bug_stage_seconds_bucket{stage="localized",le="900"} 1)");
  Has(body, R"(trench_bug_stage_seconds_sum{stage="localized"} 600)");
  Has(body, R"(trench_bug_stage_seconds_sum{stage="proposed"} 7200)");
  Has(body, R"(trench_bug_stage_seconds_bucket{stage="proposed",le="3600"} 0)");
  Has(body,
      R"(trench_bug_stage_seconds_bucket{stage="proposed",le="10800"} 1)");
  Has(body, R"(trench_commit_first_finding_seconds_bucket{le="300"} 1)");
  Has(body, R"(trench_commit_first_finding_seconds_bucket{le="60"} 0)");
  Has(body, R"(trench_commit_first_finding_seconds_sum 300)");
  Has(body, R"(trench_commit_first_finding_seconds_count 1)");
}

TEST_F(MetricsTest, BuildDurationsCacheHitsAndBuildInfo) {
  JobQueue q(check_.get());
  for (const char* result :
       {R"({"built": true, "cached": false, "seconds": 100})",
        R"({"built": false, "cached": false, "seconds": 700})",
        R"({"built": true, "cached": true, "seconds": 100})"}) {
    JobIn(q, "build", JobState::kDone, *ParseJson(result));
  }
  const std::string body = Metrics();
  Has(body, R"(trench_build_duration_seconds_bucket{le="60"} 0)");
  Has(body, R"(trench_build_duration_seconds_bucket{le="120"} 1)");
  Has(body, R"(trench_build_duration_seconds_bucket{le="900"} 2)");
  Has(body, R"(trench_build_duration_seconds_sum 800)");
  Has(body, R"(trench_build_duration_seconds_count 2)");
  Has(body, "trench_build_cache_hits_total 1");
  Has(body, "trench_build_cache_misses_total 2");
  const size_t info = body.find("\ntrench_build_info{version=\"");
  ASSERT_NE(info, std::string::npos) << body;
  const std::string line =
      body.substr(info + 1, body.find('\n', info + 1) - info - 1);
  EXPECT_NE(line.find("version=\"0.1\""), std::string::npos) << line;
  EXPECT_NE(line.find(",commit=\""), std::string::npos) << line;
  EXPECT_NE(line.find(",compiler=\""), std::string::npos) << line;
  EXPECT_TRUE(line.ends_with("} 1")) << line;
  EXPECT_EQ(line.find("commit=\"\""), std::string::npos) << line;
}

}  // namespace
}  // namespace trench::orchestrator
