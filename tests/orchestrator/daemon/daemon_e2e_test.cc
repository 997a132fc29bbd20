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

#include <set>

#include "git/patch_apply.h"
#include "agents/http_client.h"
#include "orchestrator/demo/demo_repo.h"
#include "tests/orchestrator/daemon/daemon_test_util.h"
#include "git/git_repo.h"

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
  static std::string WriteConfig(const std::string& var) {
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
  WaitForBase(daemon, var, log);
  {
    auto s = OpenForReading(var + "/store.db");
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(AllBugs(*s).empty()) << "a finding on the clean base";
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
  StatusOr<std::vector<AgentSession>> sessions =
      store->ListAgentSessions(std::nullopt);
  ASSERT_TRUE(sessions.ok());
  bool aimed = false;
  for (const AgentSession& s : *sessions) {
    if (s.role != "stress_test_author" || s.bug_id) continue;
    StatusOr<std::vector<AgentMessage>> m = store->ListAgentMessages(s.id);
    ASSERT_TRUE(m.ok() && !m->empty());
    aimed |= (*m)[0].content.find(repo_->bug_commit) != std::string::npos &&
             (*m)[0].content.find("\"cse\"") != std::string::npos;
  }
  EXPECT_TRUE(aimed) << Diagnose(var + "/store.db", log);

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
// graceful exit 0 that leaves no job leased). Nothing is lost or duplicated:
// the bug ends proposed with the same culprit and branch, its history has each
// step once, no job is left leased or failed, and no two live bugs share a
// signature. The builds of the first test are reused (the build cache and
// ccache), so the kills fall on the pipeline's steps rather than on one long
// build.
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
  int kills = 0, sigterms = 0;
  int64_t seen = progress();
  while (kills < 12 && !Proposed(var)) {
    const bool changed = WaitFor(
        [&] {
          return progress() != seen || Proposed(var) || !daemon.Running();
        },
        std::chrono::minutes(20));
    ASSERT_TRUE(changed) << Diagnose(var + "/store.db", log);
    ASSERT_TRUE(daemon.Running()) << "the daemon exited by itself\n"
                                  << Diagnose(var + "/store.db", log);
    if (Proposed(var)) break;
    if (kills % 2 == 1) std::this_thread::sleep_for(std::chrono::seconds(2));
    if (kills % 4 == 3) {
      // Graceful stop inside a step: running steps finish or are parked
      // back in the queue, the daemon exits 0, no lease is left behind.
      const int status = daemon.Kill(SIGTERM);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << "status " << status << "\n"
          << Diagnose(var + "/store.db", log);
      auto s = OpenForReading(var + "/store.db");
      ASSERT_NE(s, nullptr);
      EXPECT_EQ(CountJobs(*s, JobState::kLeased, ""), 0)
          << "SIGTERM left a job leased\n"
          << Diagnose(var + "/store.db", log);
      ++sigterms;
    } else {
      daemon.Kill(SIGKILL);
    }
    ++kills;
    seen = progress();
    daemon.Start(Env());
  }
  ASSERT_TRUE(WaitFor([&] { return Proposed(var) || !daemon.Running(); },
                      std::chrono::minutes(40), std::chrono::seconds(2)) &&
              Proposed(var))
      << Diagnose(var + "/store.db", log);
  EXPECT_GE(kills, 6) << "the pipeline had fewer steps than expected";
  EXPECT_GE(sigterms, 1);
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
}

}  // namespace
}  // namespace trench::orchestrator::testing
