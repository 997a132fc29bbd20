// The daemon end to end (issue "The service", must-show 1 and 2): a
// target repository made from our own compiler, a commit bringing zoo bug
// 07 (CSE merges compares of different directions) lands, and the daemon
// alone finds the bug, reproduces, minimizes, localizes and bisects it,
// and drafts, verifies and proposes a patch on trench/bug-<id>; once a
// reviewer approves it and the branch is merged, the daemon verifies the
// fix. Then the same with the daemon killed (SIGKILL) at many points.
// Slow (it builds the compiler): suite DaemonE2E is labelled "slow", and
// ctest runs it whole, in one process, so that the second test can reuse
// the first one's builds (tests/CMakeLists.txt).
#include <git2.h>

#include <iostream>
#include <map>
#include <random>
#include <set>

#include "agents/http_client.h"
#include "git/git_repo.h"
#include "git/patch_apply.h"
#include "orchestrator/demo/demo_repo.h"
#include "orchestrator/pipeline/pipeline.h"
#include "tests/orchestrator/daemon/daemon_test_util.h"

namespace trench::orchestrator::testing {
namespace {

constexpr char kBug[] = "07-cse-compare-direction";
constexpr char kToken[] = "e2e-token";

// The zoo's build: Release at -O1 (quicker to build, same code paths).
constexpr char kBuildCommand[] =
    "gen=; command -v ninja >/dev/null 2>&1 && gen='-G Ninja'; "
    "cc=; command -v ccache >/dev/null 2>&1 && "
    "cc=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache; "
    "cmake -S \"$TRENCH_WORKTREE\" -B \"$TRENCH_BUILD_DIR\" $gen "
    "-DTRENCH_TARGET_ONLY=ON -DCMAKE_BUILD_TYPE=Release "
    "'-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG' $cc && "
    "cmake --build \"$TRENCH_BUILD_DIR\" -j \"$TRENCH_JOBS\" "
    "--target hloc tpusim hlo-run";

class DaemonE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string templ = ::testing::TempDir() + "trench-e2e-XXXXXX";
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    root_ = new std::string(templ);
    ::chmod(root_->c_str(), 0755);  // The sandbox's uid walks through it.
    DemoRepoOptions o;
    o.source_dir = TRENCH_SOURCE_DIR;
    o.bug_dir = std::string(TRENCH_SOURCE_DIR) + "/tests/bugzoo/" + kBug;
    o.commits_before = 2;
    o.commits_after = 1;
    StatusOr<DemoRepo> repo = MakeDemoRepo(*root_ + "/repo", o);
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    repo_ = new DemoRepo(*repo);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (root_) fs::remove_all(*root_, ec);
    delete root_;
    delete repo_;
  }

  // A config for a daemon on var dir `var`.
  static std::string WriteConfig(const std::string& var, int max_crashes = 50) {
    Json c = Json::MakeObject();
    c["var_dir"] = var;
    c["repo"] = repo_->path;
    c["tools_dir"] = TRENCH_BINARY_DIR;
    c["build_command"] = kBuildCommand;
    c["poll_seconds"] = 1;
    Json fuzz = Json::MakeObject();
    fuzz["budget_seconds"] = 20;
    fuzz["jobs"] = 2;
    fuzz["seed"] = 7;
    // The landed commit's campaign must find the bug by itself.
    fuzz["continuous"] = false;
    c["fuzz"] = fuzz;
    c["reproduce_runs"] = 2;
    c["reduce_seconds"] = 90;
    c["verify_fuzz_seconds"] = 8;
    Json regression = Json::MakeArray();
    regression.push_back(std::string(TRENCH_SOURCE_DIR) + "/tests/bugzoo");
    c["regression"] = regression;
    c["drain_seconds"] = 20;
    c["max_crashes"] = max_crashes;
    Json http = Json::MakeObject();
    http["port"] = 0;
    http["token_env"] = "TRENCH_E2E_TOKEN";
    c["http"] = http;
    Json log = Json::MakeObject();
    log["format"] = "json";
    c["log"] = log;
    const std::string path = var + ".json";
    std::ofstream(path) << c.DumpPretty();
    return path;
  }

  static std::vector<std::string> Env() {
    return {std::string("TRENCH_E2E_TOKEN=") + kToken};
  }

  // Waits until the daemon watched the base commit and fuzzed it.
  static void WaitForBase(DaemonProcess& daemon, const std::string& var,
                          const std::string& log) {
    ASSERT_TRUE(WaitFor(
        [&] {
          auto s = OpenForReading(var + "/store.db");
          return !daemon.Running() ||
                 (s && CountJobs(*s, JobState::kDone, "fuzz") >= 1);
        },
        std::chrono::minutes(20)))
        << Diagnose(var + "/store.db", log);
    ASSERT_TRUE(daemon.Running()) << "the daemon exited\n"
                                  << Diagnose(var + "/store.db", log);
  }

  // The bug the pipeline carries to the end: not a duplicate.
  static std::optional<Bug> MainBug(Store& store) {
    for (const Bug& b : AllBugs(store)) {
      if (b.state != BugState::kDuplicate && b.state != BugState::kNew &&
          b.culprit_commit) {
        return b;
      }
    }
    return std::nullopt;
  }

  static bool Proposed(const std::string& var) {
    auto s = OpenForReading(var + "/store.db");
    if (!s) return false;
    std::optional<Bug> b = MainBug(*s);
    return b && b->state == BugState::kProposed;
  }

  // What both tests check at the end: the fix on its branch, the events.
  static void ExpectProposedFix(const std::string& var, const Bug& bug) {
    EXPECT_EQ(bug.culprit_commit.value_or(""), repo_->bug_commit);
    const Json* loc = bug.details.Find("localization");
    ASSERT_NE(loc, nullptr);
    const Json* sig = loc->Find("signature");
    ASSERT_NE(sig, nullptr);
    EXPECT_EQ(sig->Find("pass") ? sig->Find("pass")->Dump() : "", "\"cse\"")
        << loc->Dump();
    ASSERT_TRUE(bug.minimized_sha256.has_value());
    // The branch: the patch on top of the head, cse.cc as before the bug.
    auto repo = hlo_bisect::GitRepo::Open(repo_->path);
    ASSERT_TRUE(repo.ok());
    const std::string branch = "trench/bug-" + std::to_string(bug.id);
    StatusOr<std::string> tip = (*repo)->Resolve("refs/heads/" + branch);
    ASSERT_TRUE(tip.ok()) << tip.status().ToString();
    StatusOr<std::string> fixed =
        agents::ReadFileAt(**repo, *tip, "compiler/passes/cse.cc");
    ASSERT_TRUE(fixed.ok());
    EXPECT_EQ(*fixed, ReadAll(std::string(TRENCH_SOURCE_DIR) +
                              "/compiler/passes/cse.cc"));
    StatusOr<hlo_bisect::CommitInfo> info = (*repo)->Describe(*tip);
    ASSERT_TRUE(info.ok());
    EXPECT_NE(info->summary.find("fix bug"), std::string::npos);
    // The watched branch is never written.
    EXPECT_EQ(*(*repo)->Resolve("refs/heads/main"), repo_->history.back());
    auto store = OpenForReading(var + "/store.db");
    ASSERT_NE(store, nullptr);
    // Every state of the main line is on record, once each, in order.
    StatusOr<std::vector<Event>> events = store->ListEvents(bug.id, 0, 100);
    ASSERT_TRUE(events.ok());
    std::vector<std::string> path;
    for (const Event& e : *events) path.emplace_back(BugStateName(e.to));
    EXPECT_EQ(path, (std::vector<std::string>{"new", "reproduced", "minimized",
                                              "localized", "culprit_found",
                                              "patch_drafted", "patch_verified",
                                              "proposed"}));
    StatusOr<std::vector<Patch>> patches = store->ListPatches(bug.id);
    ASSERT_TRUE(patches.ok());
    bool verified = false;
    for (const Patch& p : *patches) verified |= p.verified;
    EXPECT_TRUE(verified);
  }

  // The API of the daemon now running (its daemon.json names it), once
  // the daemon `pid` wrote it: after it took back its dead incarnation's
  // leases, so that the store shows only live leases from then on.
  static std::string ServerOf(const std::string& var, pid_t pid) {
    std::string server;
    WaitFor(
        [&] {
          StatusOr<Json> info = ParseJson(ReadAll(var + "/daemon.json"));
          const Json* p = info.ok() ? info->Find("pid") : nullptr;
          if (!p || p->int64_value() != pid) return false;
          server = "http://127.0.0.1:" + info->Find("port")->number_text();
          return true;
        },
        std::chrono::minutes(2), std::chrono::milliseconds(20));
    return server;
  }

  // POSTs a report of a correct module (nothing to reproduce): its id.
  static int64_t FileReport(const std::string& server,
                            const std::string& title) {
    agents::HttpRequest post;
    post.method = "POST";
    post.url = server + "/api/v1/reports";
    post.headers = {{"Authorization", std::string("Bearer ") + kToken}};
    Json body = Json::MakeObject();
    body["title"] = title;
    body["hlo"] =
        "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = "
        "f32[4] add(a, a)\n}\n";
    post.body = body.Dump();
    StatusOr<agents::HttpResponse> r = agents::HttpFetch(post);
    EXPECT_TRUE(r.ok() && r->status == 201)
        << (r.ok() ? r->body : r.status().ToString());
    if (!r.ok()) return 0;
    StatusOr<Json> j = ParseJson(r->body);
    return j.ok() && j->Find("id") ? j->Find("id")->int64_value() : 0;
  }

  // The newest job of `kind` of bug `bug`, if any.
  static std::optional<Job> BugJob(const std::string& var, int64_t bug,
                                   const std::string& kind) {
    auto s = OpenForReading(var + "/store.db");
    if (!s) return std::nullopt;
    JobQueue q(s.get());
    StatusOr<std::optional<Job>> j = q.Latest(BugJobKey(bug, kind));
    return j.ok() ? *j : std::nullopt;
  }

  // The kinds of the jobs leased now.
  static std::set<std::string> LeasedKinds(const std::string& var) {
    std::set<std::string> kinds;
    auto s = OpenForReading(var + "/store.db");
    if (!s) return kinds;
    StatusOr<std::vector<Job>> jobs =
        JobQueue(s.get()).List(JobState::kLeased, 1000);
    for (const Job& j : jobs.ok() ? *jobs : std::vector<Job>()) {
      kinds.insert(j.kind);
    }
    return kinds;
  }

  // The repository's trench/* branches.
  static std::set<std::string> TrenchBranches(const std::string& path) {
    std::set<std::string> names;
    git_libgit2_init();
    git_repository* repo = nullptr;
    git_reference_iterator* it = nullptr;
    if (git_repository_open(&repo, path.c_str()) == 0 &&
        git_reference_iterator_glob_new(&it, repo, "refs/heads/trench/*") ==
            0) {
      git_reference* ref = nullptr;
      while (git_reference_next(&ref, it) == 0) {
        names.insert(git_reference_name(ref));
        git_reference_free(ref);
      }
    }
    git_reference_iterator_free(it);
    git_repository_free(repo);
    git_libgit2_shutdown();
    return names;
  }

  static std::string* root_;
  static DemoRepo* repo_;
};

std::string* DaemonE2E::root_ = nullptr;
DemoRepo* DaemonE2E::repo_ = nullptr;

TEST_F(DaemonE2E, FindsBisectsAndPatchesALandedBug) {
  const std::string var = *root_ + "/var";
  const std::string log = *root_ + "/daemon.log";
  DaemonProcess daemon(WriteConfig(var), log);
  daemon.Start(Env());
  // Issue 18 item 9: a report filed before the first build waits for it
  // (no attempt used, nothing parked), then moves on.
  const int64_t early =
      FileReport(ServerOf(var, daemon.pid()), "filed before any build");
  ASSERT_GT(early, 0);
  {
    auto s = OpenForReading(var + "/store.db");
    ASSERT_NE(s, nullptr);
    EXPECT_FALSE(s->GetMeta("head.built")->has_value())
        << "the base was built before the report: the test shows nothing";
  }
  WaitForBase(daemon, var, log);
  auto early_state = [&] {
    auto s = OpenForReading(var + "/store.db");
    StatusOr<Bug> b = s ? s->GetBug(early) : StatusOr<Bug>(NotFound(""));
    return b.ok() ? b->state : BugState::kNew;
  };
  ASSERT_TRUE(WaitFor([&] { return early_state() != BugState::kNew; },
                      std::chrono::minutes(5)))
      << Diagnose(var + "/store.db", log);
  EXPECT_EQ(early_state(), BugState::kNotReproducible);
  {
    auto s = OpenForReading(var + "/store.db");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(CountJobs(*s, JobState::kParked, ""), 0);
    EXPECT_EQ(BugJob(var, early, "reproduce")->attempts, 1);
    for (const Bug& b : AllBugs(*s)) {
      EXPECT_EQ(b.id, early) << "a finding on the clean base";
    }
  }
  ASSERT_TRUE(Land(repo_->path, "main", repo_->history.back()).ok());
  ASSERT_TRUE(WaitFor([&] { return Proposed(var) || !daemon.Running(); },
                      std::chrono::minutes(40), std::chrono::seconds(2)) &&
              Proposed(var))
      << Diagnose(var + "/store.db", log);
  auto store = OpenForReading(var + "/store.db");
  std::optional<Bug> bug = MainBug(*store);
  ASSERT_TRUE(bug.has_value());
  ExpectProposedFix(var, *bug);
  // The bug commit's campaign aimed at cse was the stress-test author's.
  // Commits that land together are fuzzed newest first: the tip's finding
  // may be proposed before the bug commit's own campaign has begun.
  auto aimed = [&] {
    auto s = OpenForReading(var + "/store.db");
    StatusOr<std::vector<AgentSession>> sessions =
        s ? s->ListAgentSessions(std::nullopt)
          : StatusOr<std::vector<AgentSession>>(NotFound(""));
    for (const AgentSession& a :
         sessions.ok() ? *sessions : std::vector<AgentSession>()) {
      if (a.role != "stress_test_author" || a.bug_id) continue;
      StatusOr<std::vector<AgentMessage>> m = s->ListAgentMessages(a.id);
      if (m.ok() && !m->empty() &&
          (*m)[0].content.find(repo_->bug_commit) != std::string::npos &&
          (*m)[0].content.find("\"cse\"") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(WaitFor(aimed, std::chrono::minutes(10), std::chrono::seconds(1)))
      << Diagnose(var + "/store.db", log);

  // The API over its socket, and `trench show`, report it all.
  const Json info = *ParseJson(ReadAll(var + "/daemon.json"));
  const std::string server =
      "http://127.0.0.1:" + info.Find("port")->number_text();
  agents::HttpRequest get;
  get.url = server + "/api/v1/bugs/" + std::to_string(bug->id);
  StatusOr<agents::HttpResponse> r = agents::HttpFetch(get);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  StatusOr<Json> body = ParseJson(r->body);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(body->Find("bug")->Find("state")->string_value(), "proposed");
  const std::string show_out = *root_ + "/show.txt";
  const std::string cmd = std::string(TRENCH_BINARY_DIR) + "/trench show " +
                          std::to_string(bug->id) + " --server " + server +
                          " > " + show_out + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << ReadAll(show_out);
  const std::string shown = ReadAll(show_out);
  EXPECT_NE(shown.find(repo_->bug_commit.substr(0, 12)), std::string::npos)
      << shown;
  EXPECT_NE(shown.find("cse"), std::string::npos) << shown;
  EXPECT_NE(shown.find("trench/bug-" + std::to_string(bug->id)),
            std::string::npos)
      << shown;

  // A reviewer approves; the branch is merged (main moves to its commit);
  // the daemon sees the fix land and verifies it.
  agents::HttpRequest review;
  review.method = "POST";
  review.url =
      server + "/api/v1/patches/" + std::to_string(bug->id) + "/review";
  review.headers = {{"Authorization", std::string("Bearer ") + kToken}};
  review.body = R"({"decision": "approve", "comment": "looks right"})";
  StatusOr<agents::HttpResponse> reviewed = agents::HttpFetch(review);
  ASSERT_TRUE(reviewed.ok()) << reviewed.status().ToString();
  EXPECT_EQ(reviewed->status, 200) << reviewed->body;
  auto repo = hlo_bisect::GitRepo::Open(repo_->path);
  ASSERT_TRUE(repo.ok());
  const std::string fix =
      *(*repo)->Resolve("refs/heads/trench/bug-" + std::to_string(bug->id));
  ASSERT_TRUE(Land(repo_->path, "main", fix).ok());
  auto state = [&] {
    auto s = OpenForReading(var + "/store.db");
    StatusOr<Bug> b = s ? s->GetBug(bug->id) : StatusOr<Bug>(NotFound(""));
    return b.ok() ? b->state : BugState::kNew;
  };
  ASSERT_TRUE(WaitFor([&] { return state() == BugState::kFixed; },
                      std::chrono::minutes(20), std::chrono::seconds(1)))
      << Diagnose(var + "/store.db", log);
  EXPECT_EQ(OpenForReading(var + "/store.db")->GetBug(bug->id)->fix_commit,
            fix);

  // Graceful stop.
  const int status = daemon.Kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << Tail(ReadAll(log));
}

// Must-show 2: SIGKILL at many points of the same pipeline, each followed
// by a restart (every fourth stop a SIGTERM inside a step instead: a
// graceful exit 0 that leaves no job leased), and SIGKILLs aimed inside the
// build, draft, verify_patch and propose steps (issue 18 "Tests"). Nothing
// is lost or duplicated: the bug ends proposed with the same culprit and
// branch, its history has each step once, no job is left leased, failed or
// parked (kills are not failures), exactly one proposal branch is written,
// and no two live bugs share a signature; the kill matrix (per step: kills
// inside, lost, duplicated) is printed. Then a crash loop: the daemon
// killed inside the same step at every start parks it after max_crashes,
// its bug says why, and `trench retry` runs it. The builds of the first test
// are reused (the build cache and ccache), so the kills fall on the pipeline's
// steps rather than on one long build.
TEST_F(DaemonE2E, SurvivesSigkillAtManyPoints) {
  const std::string var = *root_ + "/var-crash";
  const std::string log = *root_ + "/daemon-crash.log";
  std::error_code ec;
  fs::create_directories(var + "/builder", ec);
  for (const char* d : {"cache", "ccache"}) {
    fs::copy(*root_ + "/var/builder/" + d, var + "/builder/" + d,
             fs::copy_options::recursive, ec);
  }
  // The repository as before the landing: base only.
  ASSERT_TRUE(Land(repo_->path, "main", repo_->base).ok());
  const std::set<std::string> branches_before = TrenchBranches(repo_->path);
  // The default bound on lost leases: the landed commit's fuzz campaign
  // runs through most of the kills below.
  const std::string config = WriteConfig(var);
  DaemonProcess daemon(config, log);
  daemon.Start(Env());
  WaitForBase(daemon, var, log);
  ASSERT_TRUE(Land(repo_->path, "main", repo_->history.back()).ok());

  // Progress = events + finished jobs; kill on each change, alternately at
  // once and a little later (inside the next step), then restart.
  auto progress = [&] {
    auto s = OpenForReading(var + "/store.db");
    if (!s) return int64_t{0};
    StatusOr<std::vector<Event>> ev = s->ListEvents(std::nullopt, 0, 10000);
    return (ev.ok() ? static_cast<int64_t>(ev->size()) : 0) +
           CountJobs(*s, JobState::kDone, "");
  };
  // Besides, kill inside the steps that write outside the store or take
  // long (issue 18 "Tests"): whenever one of these is leased, until a kill
  // landed inside each twice, after a small random delay (none for the
  // short propose). One held read connection polls every 5 ms (a fresh
  // Store per poll is slow enough to miss a step of a second).
  std::unique_ptr<Store> watch = OpenForReading(var + "/store.db");
  ASSERT_NE(watch, nullptr);
  auto leased_now = [&] {
    std::set<std::string> kinds;
    StatusOr<Statement> st = watch->db()->Prepare(
        "SELECT DISTINCT kind FROM jobs WHERE state = 'leased'");
    while (st.ok()) {
      StatusOr<bool> row = st->Step();
      if (!row.ok() || !*row) break;
      kinds.insert(st->ColumnText(0));
    }
    return kinds;
  };
  const std::vector<std::string> targets = {"build", "draft", "verify_patch",
                                            "propose"};
  std::map<std::string, int> targeted;
  std::mt19937 rng(18);
  const auto start = std::chrono::steady_clock::now();
  int kills = 0, sigterms = 0, generic = 0;
  int64_t seen = progress();
  // A target step leased now that has had fewer than two kills inside.
  auto leased_target = [&] {
    for (const std::string& kind : leased_now()) {
      if (std::count(targets.begin(), targets.end(), kind) &&
          targeted[kind] < 2) {
        return kind;
      }
    }
    return std::string();
  };
  while (kills < 30 && !Proposed(var)) {
    std::string target;
    const bool changed = WaitFor(
        [&] {
          target = leased_target();
          if (!target.empty() || Proposed(var) || !daemon.Running()) {
            return true;
          }
          return generic < 12 && progress() != seen;
        },
        std::chrono::minutes(20), std::chrono::milliseconds(5));
    ASSERT_TRUE(changed) << Diagnose(var + "/store.db", log);
    ASSERT_TRUE(daemon.Running()) << "the daemon exited by itself\n"
                                  << Diagnose(var + "/store.db", log);
    if (target.empty() && Proposed(var)) break;
    if (target.empty()) {
      ++generic;
      if (generic % 2 == 0) {
        // A little later: inside the next step (or a target's).
        WaitFor(
            [&] {
              target = leased_target();
              return !target.empty();
            },
            std::chrono::seconds(2), std::chrono::milliseconds(5));
      }
    }
    if (!target.empty()) {
      const unsigned spread =
          target == "propose" ? 1 : (target == "build" ? 400 : 50);
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % spread));
      daemon.Kill(SIGKILL);
      // The dead daemon's leases stay in the store until the restart.
      const bool inside = leased_now().count(target) > 0;
      targeted[target] += inside;
      std::cout << "stop " << kills << ": SIGKILL aimed at " << target
                << (inside ? ", inside" : ", missed (the step had finished)")
                << "\n";
    } else {
      if (generic % 4 == 0) {
        // Graceful stop inside a step: running steps finish or are parked
        // back in the queue, the daemon exits 0, no lease is left behind.
        const int status = daemon.Kill(SIGTERM);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << "status " << status << "\n"
            << Diagnose(var + "/store.db", log);
        EXPECT_TRUE(LeasedKinds(var).empty())
            << "SIGTERM left a job leased\n"
            << Diagnose(var + "/store.db", log);
        ++sigterms;
      } else {
        daemon.Kill(SIGKILL);
      }
      std::cout << "stop " << kills << ": "
                << (generic % 4 == 0 ? "SIGTERM" : "SIGKILL")
                << " after progress, leased:";
      for (const std::string& kind : leased_now()) std::cout << " " << kind;
      std::cout << "\n";
    }
    ++kills;
    seen = progress();
    daemon.Start(Env());
    ASSERT_FALSE(ServerOf(var, daemon.pid()).empty())
        << Diagnose(var + "/store.db", log);
  }
  ASSERT_TRUE(WaitFor([&] { return Proposed(var) || !daemon.Running(); },
                      std::chrono::minutes(40), std::chrono::seconds(2)) &&
              Proposed(var))
      << Diagnose(var + "/store.db", log);
  EXPECT_GE(kills, 6) << "the pipeline had fewer steps than expected";
  EXPECT_GE(sigterms, 1);
  const double pipeline_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  daemon.Kill(SIGTERM);

  auto store = OpenForReading(var + "/store.db");
  std::optional<Bug> bug = MainBug(*store);
  ASSERT_TRUE(bug.has_value());
  ExpectProposedFix(var, *bug);
  // Nothing half-done or doubled.
  EXPECT_EQ(CountJobs(*store, JobState::kLeased, ""), 0);
  EXPECT_EQ(CountJobs(*store, JobState::kFailed, ""), 0)
      << Diagnose(var + "/store.db", log);
  EXPECT_EQ(CountJobs(*store, JobState::kParked, ""), 0)
      << Diagnose(var + "/store.db", log);
  std::set<std::string> live;
  for (const Bug& b : AllBugs(*store)) {
    if (b.state == BugState::kDuplicate || b.state == BugState::kNew) continue;
    EXPECT_TRUE(live.insert(b.signature).second)
        << "two bugs with signature " << b.signature;
  }
  StatusOr<std::vector<Patch>> patches = store->ListPatches(bug->id);
  ASSERT_TRUE(patches.ok());
  std::set<std::string> diffs;
  for (const Patch& p : *patches) {
    EXPECT_TRUE(diffs.insert(p.diff).second) << "the same patch stored twice";
  }
  // Exactly one proposal branch: the bug's, and no other.
  std::set<std::string> branches = branches_before;
  branches.insert("refs/heads/trench/bug-" + std::to_string(bug->id));
  EXPECT_EQ(TrenchBranches(repo_->path), branches);

  // The kill matrix: per step, the kills that landed inside it (the
  // queue's own count of lost leases), the runs lost (parked, failed or
  // left leased) and the effects doubled (a bug step's event twice, a
  // commit's build_ready twice, a second proposal branch).
  std::map<std::string, int> inside, lost, doubled;
  JobQueue q(store.get());
  for (JobState st : {JobState::kDone, JobState::kQueued, JobState::kLeased,
                      JobState::kParked, JobState::kFailed}) {
    StatusOr<std::vector<Job>> jobs = q.List(st, 100000);
    ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
    for (const Job& j : *jobs) {
      inside[j.kind] += j.crashes;
      lost[j.kind] += st == JobState::kParked || st == JobState::kFailed ||
                      st == JobState::kLeased;
    }
  }
  StatusOr<std::vector<Event>> events = store->ListEvents(bug->id, 0, 1000);
  ASSERT_TRUE(events.ok());
  for (const StepKind& step : Steps()) {
    if (!step.state) continue;
    int n = 0;
    for (const Event& e : *events) n += BugStateName(e.to) == step.event;
    doubled[step.kind] = std::max(doubled[step.kind], n - 1);
  }
  StatusOr<std::vector<CommitEvent>> commits =
      store->ListCommitEvents(std::nullopt, 0, 10000);
  ASSERT_TRUE(commits.ok());
  std::map<std::string, int> ready;
  for (const CommitEvent& c : *commits) {
    if (c.kind == CommitEventKind::kBuildReady) ++ready[c.commit_sha];
  }
  for (const auto& [sha, n] : ready) doubled["build"] += n - 1;
  doubled["propose"] +=
      static_cast<int>(TrenchBranches(repo_->path).size() - branches.size());
  std::cout << "kill matrix (" << kills << " stops, " << sigterms
            << " of them SIGTERM; pipeline " << pipeline_seconds << " s):\n"
            << "| step | kills inside | lost | duplicated |\n";
  std::set<std::string> kinds;
  for (const StepKind& step : Steps()) kinds.insert(step.kind);
  for (const StepKind& step : Steps()) {
    if (!kinds.erase(step.kind)) continue;
    std::cout << "| " << step.kind << " | " << inside[step.kind] << " | "
              << lost[step.kind] << " | " << doubled[step.kind] << " |\n";
    EXPECT_EQ(lost[step.kind], 0) << step.kind;
    EXPECT_EQ(doubled[step.kind], 0) << step.kind;
  }
  for (const std::string& kind : targets) {
    // propose lasts milliseconds: on a loaded machine the poll may not
    // see its lease before it ends. A miss there is reported, not failed
    // (the matrix above still checks that nothing of it was lost or
    // doubled); the longer steps must be hit.
    if (kind == "propose" && inside[kind] == 0) {
      std::cout << "note: no kill landed inside propose (it ended between "
                   "two polls)\n";
      continue;
    }
    EXPECT_GE(inside[kind], 1) << "no kill landed inside " << kind;
  }

  // A crash loop: a step that the daemon dies in at every start (killed
  // as soon as it leases the step) is parked after max_crashes (4 here)
  // lost leases, not retried for ever, and says so on its bug; the daemon
  // goes on with the rest; a human's retry runs it.
  const auto loop_start = std::chrono::steady_clock::now();
  ASSERT_EQ(WriteConfig(var, /*max_crashes=*/4), config);
  daemon.Start(Env());
  const int64_t looped = FileReport(ServerOf(var, daemon.pid()), "crash loop");
  ASSERT_GT(looped, 0);
  int last_attempt = 0;
  for (int crash = 0; crash < 4; ++crash) {
    ASSERT_TRUE(WaitFor(
        [&] {
          std::optional<Job> j = BugJob(var, looped, "reproduce");
          return j && j->state == JobState::kLeased &&
                 j->attempts > last_attempt;
        },
        std::chrono::minutes(2), std::chrono::milliseconds(20)))
        << "crash " << crash << "\n"
        << Diagnose(var + "/store.db", log);
    daemon.Kill(SIGKILL);
    last_attempt = BugJob(var, looped, "reproduce")->attempts;
    daemon.Start(Env());
  }
  const std::string server = ServerOf(var, daemon.pid());
  ASSERT_FALSE(server.empty());
  agents::HttpRequest get;
  get.url = server + "/api/v1/bugs/" + std::to_string(looped);
  StatusOr<agents::HttpResponse> page = agents::HttpFetch(get);
  ASSERT_TRUE(page.ok() && page->status == 200);
  StatusOr<Json> shown = ParseJson(page->body);
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ(shown->Find("bug")->Find("state")->string_value(), "new");
  const Json& job = shown->Find("jobs")->array().at(0);
  EXPECT_EQ(job.Find("state")->string_value(), "parked") << page->body;
  EXPECT_EQ(job.Find("crashes")->int64_value(), 4) << page->body;
  EXPECT_NE(
      job.Find("last_error")->string_value().find("crash loop: 4 leases lost"),
      std::string::npos)
      << page->body;
  std::this_thread::sleep_for(std::chrono::seconds(3));  // Reconcile ticks.
  EXPECT_EQ(BugJob(var, looped, "reproduce")->state, JobState::kParked)
      << "a parked step was queued again without a human";
  const std::string retry_out = *root_ + "/retry.txt";
  const std::string cmd = std::string("TRENCH_TOKEN=") + kToken + " " +
                          TRENCH_BINARY_DIR + "/trench retry " +
                          std::to_string(looped) + " --server " + server +
                          " > " + retry_out + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << ReadAll(retry_out);
  auto looped_state = [&] {
    auto s = OpenForReading(var + "/store.db");
    StatusOr<Bug> b = s ? s->GetBug(looped) : StatusOr<Bug>(NotFound(""));
    return b.ok() ? b->state : BugState::kNew;
  };
  EXPECT_TRUE(WaitFor([&] { return looped_state() != BugState::kNew; },
                      std::chrono::minutes(5)))
      << Diagnose(var + "/store.db", log);
  EXPECT_EQ(looped_state(), BugState::kNotReproducible);
  std::cout << "crash loop: parked after 4 lost leases, retried, done in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             loop_start)
                   .count()
            << " s\n";
  daemon.Kill(SIGTERM);
}

}  // namespace
}  // namespace trench::orchestrator::testing
