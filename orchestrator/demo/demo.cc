#include "orchestrator/demo/demo.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "orchestrator/api/api_handlers.h"
#include "orchestrator/daemon/daemon.h"
#include "orchestrator/demo/demo_repo.h"
#include "orchestrator/pipeline/step_util.h"
#include "orchestrator/pipeline/triage_report.h"
#include "orchestrator/store/job_queue.h"
#include "orchestrator/store/store_clock.h"
#include "triage/case/case_bundle.h"
#include "triage/reduce/reduction_pass.h"

namespace trench::orchestrator {
namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

StatusOr<std::vector<std::string>> ZooBugs(const std::string& source_dir) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& e :
       fs::directory_iterator(fs::path(source_dir) / "tests/bugzoo", ec)) {
    if (e.is_directory() && fs::exists(e.path() / "bug.patch", ec)) {
      ids.push_back(e.path().filename().string());
    }
  }
  if (ids.empty()) {
    return NotFound("no bugzoo under " + source_dir + "/tests/bugzoo");
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

StatusOr<std::string> ResolveZooBug(const std::string& source_dir,
                                    const std::string& bug) {
  ASSIGN_OR_RETURN(std::vector<std::string> ids, ZooBugs(source_dir));
  if (bug.empty()) {
    std::random_device rd;
    return ids[rd() % ids.size()];
  }
  std::string number = bug;
  if (number.size() == 1) number = "0" + number;
  for (const std::string& id : ids) {
    if (id == bug || id.rfind(number + "-", 0) == 0) return id;
  }
  std::string list;
  for (const std::string& id : ids) list += " " + id;
  return NotFound("no zoo bug '" + bug + "'; there are:" + list);
}

namespace {

// How long a settled demo waits for the findings held for its bug to be
// checked against the bug's patch.
constexpr double kLingerSeconds = 300;

double Since(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

std::string Str(const Json& j, const char* key) {
  const Json* v = j.Find(key);
  return v && v->is_string() ? v->string_value() : "";
}

int64_t Instructions(const std::string& case_dir) {
  StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(case_dir);
  return c.ok() ? hlo_reduce::MeasureCase(*c).instructions : 0;
}

// The bug the pipeline carries furthest (not a duplicate).
std::optional<Bug> MainBug(Store& store, const std::string& bug_commit) {
  StatusOr<std::vector<Bug>> bugs = store.ListBugs(std::nullopt, 0, 1000);
  if (!bugs.ok()) return std::nullopt;
  return ChooseMainBug(*bugs, bug_commit);
}

// Prints what happened since the last call: finished commit jobs and
// bug events.
class ProgressPrinter {
 public:
  ProgressPrinter(std::ostream& out, SteadyClock::time_point start)
      : out_(out), start_(start) {}

  void Print(Store& store) {
    JobQueue q(&store);
    if (StatusOr<std::vector<Job>> running = q.List(JobState::kLeased, 100);
        running.ok()) {
      for (const Job& j : *running) {
        if (!started_.insert(j.id).second) continue;
        if (j.kind == "build" || j.kind == "fuzz") {
          Line() << j.kind << " " << Str(j.payload, "commit").substr(0, 12)
                 << ": started\n";
        } else if (const Json* bug = j.payload.Find("bug")) {
          Line() << "bug " << bug->Dump() << ": " << j.kind << "...\n";
        }
      }
    }
    for (JobState s : {JobState::kDone, JobState::kFailed}) {
      StatusOr<std::vector<Job>> jobs = q.List(s, 10000);
      if (!jobs.ok()) continue;
      for (const Job& j : *jobs) {
        if (!jobs_.insert(j.id).second) continue;
        if (j.kind != "build" && j.kind != "fuzz") continue;
        const std::string sha = Str(j.payload, "commit").substr(0, 12);
        std::string what;
        if (s == JobState::kFailed) {
          what = "failed: " + j.last_error;
        } else if (j.kind == "build") {
          const Json* built = j.result.Find("built");
          what = built && built->is_bool() && built->bool_value()
                     ? "built"
                     : "does not build";
        } else {
          const Json* p = j.result.Find("programs");
          const Json* f = j.result.Find("filed");
          what = (p ? p->number_text() : "?") + " programs, " +
                 std::to_string(f ? f->size() : 0) + " findings";
        }
        Line() << j.kind << " " << sha << ": " << what << "\n";
      }
    }
    StatusOr<std::vector<Event>> events =
        store.ListEvents(std::nullopt, last_event_, 1000);
    if (!events.ok()) return;
    for (const Event& e : *events) {
      last_event_ = e.id;
      Line() << "bug " << e.bug_id << ": "
             << (e.from ? std::string(BugStateName(*e.from)) + " -> " : "")
             << BugStateName(e.to) << Detail(e) << "\n";
    }
    out_.flush();
  }

 private:
  std::ostream& Line() {
    return out_ << "[" << std::fixed << std::setprecision(0) << std::setw(5)
                << Since(start_) << " s] ";
  }
  static std::string Detail(const Event& e) {
    const Json& v = e.evidence;
    if (e.to == BugState::kReproduced || e.to == BugState::kFlaky) {
      const Json* f = v.Find("failures");
      const Json* r = v.Find("runs");
      if (f && r) {
        return "  (" + f->number_text() + "/" + r->number_text() +
               " runs fail)";
      }
    }
    if (e.to == BugState::kLocalized) {
      const Json* s = v.Find("signature");
      if (s) return "  (" + s->Dump() + ")";
    }
    if (e.to == BugState::kCulpritFound) {
      const Json* c = v.Find("culprit");
      if (c) return "  (" + Str(*c, "short") + " " + Str(*c, "summary") + ")";
    }
    if (e.to == BugState::kPatchDrafted) {
      return "  (" + Str(v, "strategy") + ")";
    }
    if (e.to == BugState::kProposed)
      return "  (branch " + Str(v, "branch") + ")";
    if (e.to == BugState::kDuplicate) {
      const Json* d = v.Find("duplicate_of");
      if (d) return "  (of bug " + d->number_text() + ")";
    }
    if (e.to == BugState::kCulpritFound && e.from &&
        *e.from == BugState::kPatchDrafted) {
      return "  (" + Str(v, "reason") + ")";
    }
    return "";
  }

  std::ostream& out_;
  SteadyClock::time_point start_;
  std::set<int64_t> jobs_, started_;
  int64_t last_event_ = 0;
};

StatusOr<DaemonConfig> DemoConfig(const DemoOptions& o, const DemoRepo& repo,
                                  const std::string& played) {
  DaemonConfig c;
  if (!o.config_path.empty()) {
    ASSIGN_OR_RETURN(c, LoadDaemonConfig(o.config_path));
  } else {
    for (const std::string& role : SwarmRoles()) c.swarm[role] = RoleConfig{};
  }
  // The trace corpus (config/demo.json: corpus/traces) is optional:
  // without it the campaigns are synthetic only.
  std::error_code ec;
  if (!c.fuzz_corpus.empty() && !fs::is_directory(c.fuzz_corpus, ec)) {
    spdlog::warn("demo: no trace corpus at {}; fuzzing synthetic programs only",
                 c.fuzz_corpus);
    c.fuzz_corpus.clear();
  }
  c.var_dir = o.dir + "/var";
  c.repo = repo.path;
  c.branch = "main";
  c.tools_dir = o.tools_dir;
  // The regression set: every zoo witness but the played bug's own (the
  // demo must not know the bug it plays).
  c.regression.clear();
  ASSIGN_OR_RETURN(std::vector<std::string> zoo, ZooBugs(o.source_dir));
  for (const std::string& id : zoo) {
    if (id != played)
      c.regression.push_back(o.source_dir + "/tests/bugzoo/" + id);
  }
  c.http_port = 0;
  return c;
}

void FillResult(Store& store, const DemoRepo& repo, DemoResult& r) {
  std::optional<Bug> bug = MainBug(store, repo.bug_commit);
  if (!bug) return;
  r.bug_id = bug->id;
  r.state = std::string(BugStateName(bug->state));
  StatusOr<std::vector<Event>> events = store.ListEvents(bug->id, 0, 1000);
  if (events.ok()) {
    for (const Event& e : *events) {
      r.reproduced |= e.to == BugState::kReproduced || e.to == BugState::kFlaky;
    }
  }
  auto case_dir = [&](const std::optional<std::string>& sha) {
    if (!sha) return std::string();
    StatusOr<Case> c = store.GetCase(*sha);
    return c.ok() ? c->path : std::string();
  };
  r.instructions_before = Instructions(case_dir(bug->case_sha256));
  r.instructions_after = Instructions(case_dir(bug->minimized_sha256));
  if (std::optional<hlo_bisect::LocalizationReport> loc =
          BugLocalization(*bug)) {
    r.pass = loc->signature.pass.value_or("");
    r.site = loc->signature.site.value_or("");
    r.opcode = loc->signature.opcode.value_or("");
  }
  r.culprit = bug->culprit_commit.value_or("");
  r.culprit_right = r.culprit == repo.bug_commit;
  // The culprit search's own report (hlo-bisect commits), kept in the
  // bug's details: the range it searched and the builds it made.
  if (const Json* c = bug->details.Find("culprit"); c && c->is_object()) {
    const Json* commits = c->Find("commits");
    const Json* builds = c->Find("builds");
    if (commits && commits->is_number()) {
      r.search_commits = static_cast<int>(commits->number_value());
    }
    if (builds && builds->is_number()) {
      r.search_builds = static_cast<int>(builds->number_value());
    }
  }
  if (StatusOr<std::vector<Bug>> all = store.ListBugs(std::nullopt, 0, 1 << 20);
      all.ok()) {
    FiledBugs filed = ClassifyFiledBugs(*all, *bug, repo.bug_commit);
    r.held_merged = filed.held_merged;
    r.held_waiting = filed.held_waiting;
    r.bugs_filed =
        static_cast<int>(all->size()) - r.held_merged - r.held_waiting;
    for (const Bug& b : *all) r.duplicates += b.state == BugState::kDuplicate;
    r.duplicates -= r.held_merged;
    r.copies = filed.copies;
    r.other_bugs = std::move(filed.others);
  }
  StatusOr<std::vector<Patch>> patches = store.ListPatches(bug->id);
  if (patches.ok()) {
    for (const Patch& p : *patches) {
      if (!p.verified) continue;
      r.patch_verified = true;
      r.branch = p.branch;
      const Json* set = p.verification.Find("regression_set");
      r.gated_by = 0;
      r.own_witness_gated = false;
      if (set && set->is_array()) {
        for (const Json& c : set->array()) {
          if (!c.is_string()) continue;
          ++r.gated_by;
          r.own_witness_gated |=
              c.string_value().find("/" + r.zoo_bug + "/") != std::string::npos;
        }
      }
    }
  }
  Json full = Json::MakeObject();
  full["bug"] = BugToJson(*bug);
  Json ev = Json::MakeArray();
  if (events.ok()) {
    for (const Event& e : *events) ev.push_back(EventToJson(e));
  }
  full["events"] = ev;
  Json ps = Json::MakeArray();
  if (patches.ok()) {
    for (const Patch& p : *patches) ps.push_back(PatchToJson(p));
  }
  full["patches"] = ps;
  StatusOr<std::string> report = BugReportText(full);
  r.report = report.ok() ? *report : report.status().message();
}

}  // namespace

StatusOr<DemoResult> RunDemo(const DemoOptions& o, std::ostream& progress) {
  const SteadyClock::time_point start = SteadyClock::now();
  DemoResult r;
  ASSIGN_OR_RETURN(r.zoo_bug, ResolveZooBug(o.source_dir, o.bug));
  r.dir = o.dir;
  std::error_code ec;
  fs::create_directories(o.dir, ec);
  if (ec) return IoError("cannot create " + o.dir + ": " + ec.message());
  ::chmod(o.dir.c_str(), 0755);  // The sandbox's uid walks through it.
  DemoRepoOptions ro;
  ro.source_dir = o.source_dir;
  ro.bug_dir = o.source_dir + "/tests/bugzoo/" + r.zoo_bug;
  ro.history = o.history;
  ro.replay_commits = o.replay_commits;
  ro.broken_builds = o.broken_builds;
  ro.seed = o.seed;
  ASSIGN_OR_RETURN(DemoRepo repo, MakeDemoRepo(o.dir + "/repo", ro));
  r.history_commits = static_cast<int>(repo.history.size());
  progress << "demo: target repository " << repo.path << " (base "
           << repo.base.substr(0, 12) << ", " << repo.history.size()
           << " commits to land, " << repo.unbuildable.size()
           << " of them do not build; one brings zoo bug " << r.zoo_bug
           << ")\n";
  ASSIGN_OR_RETURN(DaemonConfig config, DemoConfig(o, repo, r.zoo_bug));
  {
    // For `trench serve --config DIR/var.json` on the demo's state later:
    // the demo's whole config, so that serve asks a killed demo's Slurm
    // jobs for the same runs (with other settings it would submit them
    // again), on serve's default port (where `trench show` looks).
    DaemonConfig serve = config;
    serve.http_port = DaemonConfig().http_port;
    std::ofstream(o.dir + "/var.json")
        << DaemonConfigToJson(serve).DumpPretty() << "\n";
  }
  if (!o.reuse_builder.empty()) {
    const std::string builder =
        (config.executor.kind == "slurm" ? config.executor.shared_dir
                                         : config.var_dir) +
        "/builder";
    for (const char* d : {"cache", "ccache"}) {
      fs::create_directories(builder, ec);
      fs::copy(o.reuse_builder + "/" + d, builder + "/" + d,
               fs::copy_options::recursive | fs::copy_options::skip_existing,
               ec);
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Daemon> daemon, Daemon::Create(config));
  progress << "demo: daemon on " << config.var_dir
           << ", API on 127.0.0.1:" << daemon->api_port() << "\n";
  Status run_status = Status::Ok();
  std::atomic<bool> daemon_ended{false};
  std::thread loop([&] {
    run_status = daemon->Run();
    daemon_ended = true;
  });
  StoreOptions so;
  ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                   Store::Open(config.var_dir + "/store.db", so));
  ProgressPrinter printer(progress, start);
  JobQueue q(store.get());
  auto stop = [&] {
    daemon->RequestStop();
    loop.join();
  };
  auto deadline = start + std::chrono::milliseconds(
                              static_cast<int64_t>(o.timeout_seconds * 1000));
  // Phase 1: the base is built and fuzzed.
  while (true) {
    printer.Print(*store);
    StatusOr<std::vector<Job>> done = q.List(JobState::kDone, 10000);
    bool fuzzed = false;
    if (done.ok()) {
      for (const Job& j : *done) fuzzed |= j.kind == "fuzz";
    }
    if (fuzzed) break;
    if (daemon_ended || SteadyClock::now() > deadline) {
      stop();
      r.failure = daemon_ended
                      ? "the daemon stopped before the base was fuzzed"
                      : "the base commit was not built and fuzzed in time";
      r.wall_seconds = Since(start);
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  // Phase 2: the commits land; the daemon takes it from there.
  RETURN_IF_ERROR(Land(repo.path, "main", repo.history.back()));
  const SteadyClock::time_point landed = SteadyClock::now();
  progress << "demo: " << repo.history.size() << " commits landed on main\n";
  // The table's time to the finding is the main bug's, from its filing.
  const int64_t landed_ms = SystemClock::Get()->NowMillis();
  while (true) {
    printer.Print(*store);
    std::optional<Bug> bug = MainBug(*store, repo.bug_commit);
    if (bug) {
      r.found_seconds = static_cast<double>(
                            std::max<int64_t>(bug->created_ms - landed_ms, 0)) /
                        1000;
    }
    // Done when the main bug is proposed, or closed after its culprit
    // search named the bug's commit (fixed, or rejected by a reviewer). A
    // main bug that is closed otherwise is no open bug at all: fuzzing goes
    // on until the give-up time.
    const bool settled =
        bug && (bug->state == BugState::kProposed ||
                (!IsOpen(bug->state) &&
                 bug->culprit_commit.value_or("") == repo.bug_commit));
    if (settled) {
      // Findings that waited for it are checked against its patch: give
      // them up to kLingerSeconds to be merged or to start the pipeline.
      const SteadyClock::time_point linger = SteadyClock::now();
      while (Since(linger) < kLingerSeconds && !daemon_ended &&
             SteadyClock::now() < deadline) {
        StatusOr<std::vector<Bug>> fresh =
            store->ListBugs(BugState::kNew, 0, 1);
        if (!fresh.ok() || fresh->empty()) break;
        printer.Print(*store);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
      break;
    }
    const bool open = bug && IsOpen(bug->state);
    if (open) {
      const Json* h = bug->details.Find("needs_human");
      if (h && h->is_bool() && h->bool_value()) {
        r.failure = "bug " + std::to_string(bug->id) + " needs a human: " +
                    Str(bug->details, "last_draft_failure");
        break;
      }
    }
    StatusOr<int64_t> queued = q.Count(JobState::kQueued);
    StatusOr<int64_t> leased = q.Count(JobState::kLeased);
    if (queued.ok() && leased.ok() && *queued == 0 && *leased == 0 &&
        Since(landed) > 30) {
      // Nothing left to do; one more poll tick may queue follow-ups.
      std::this_thread::sleep_for(std::chrono::seconds(3));
      if (*q.Count(JobState::kQueued) == 0 &&
          *q.Count(JobState::kLeased) == 0) {
        r.failure = bug ? "the pipeline stopped at " +
                              std::string(BugStateName(bug->state))
                        : "fuzzing found no bug";
        break;
      }
    }
    if (daemon_ended) {
      r.failure = "the daemon stopped (a signal, or an error)";
      break;
    }
    // Give up when nothing was found S seconds after the landing, or S
    // seconds after the pipeline closed the last bug it had.
    const double quiet = bug ? static_cast<double>(std::max<int64_t>(
                                   SystemClock::Get()->NowMillis() -
                                       std::max(bug->updated_ms, landed_ms),
                                   0)) /
                                   1000
                             : Since(landed);
    if (!open && quiet > o.give_up_seconds) {
      r.failure = (bug ? "fuzzing found no bug that stayed open in "
                       : "fuzzing found no bug in ") +
                  std::to_string(static_cast<int>(Since(landed))) + " s";
      break;
    }
    if (SteadyClock::now() > deadline) {
      r.failure = "timed out";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  printer.Print(*store);
  stop();
  FillResult(*store, repo, r);
  r.wall_seconds = Since(start);
  if (!run_status.ok() && r.failure.empty()) r.failure = run_status.message();
  return r;
}

std::optional<Bug> ChooseMainBug(const std::vector<Bug>& bugs,
                                 const std::string& bug_commit) {
  auto rank = [&](const Bug& b) {
    return std::make_tuple(b.culprit_commit.value_or("") == bug_commit,
                           IsOpen(b.state), static_cast<int>(b.state));
  };
  std::optional<Bug> best;
  for (const Bug& b : bugs) {
    if (b.state == BugState::kDuplicate) continue;
    if (!best || rank(b) > rank(*best)) best = b;
  }
  return best;
}

FiledBugs ClassifyFiledBugs(const std::vector<Bug>& bugs, const Bug& main,
                            const std::string& bug_commit) {
  std::set<int64_t> played = {main.id};
  auto waits_for = [](const Bug& b) -> std::optional<int64_t> {
    const Json* w = b.details.Find("waiting_for");
    const Json* id = w && w->is_object() ? w->Find("bug") : nullptr;
    if (!id || !id->is_integer()) return std::nullopt;
    return id->int64_value();
  };
  auto of_played = [&](const Bug& b) {
    const std::optional<int64_t> waited = waits_for(b);
    return (b.culprit_commit && *b.culprit_commit == bug_commit) ||
           b.signature == main.signature ||
           (b.duplicate_of && played.count(*b.duplicate_of) > 0) ||
           (waited && played.count(*waited) > 0);
  };
  // Twice: a duplicate may point at a copy listed after it.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Bug& b : bugs) {
      if (of_played(b)) played.insert(b.id);
    }
  }
  FiledBugs out;
  for (const Bug& b : bugs) {
    if (b.id == main.id) continue;
    if (played.count(b.id) > 0) {
      const Json* check = b.details.Find("patch_check");
      const Json* fixed = check ? check->Find("fixed") : nullptr;
      if (b.state == BugState::kDuplicate && fixed && fixed->is_bool() &&
          fixed->bool_value()) {
        ++out.held_merged;
      } else if (b.state == BugState::kNew && waits_for(b)) {
        ++out.held_waiting;
      } else {
        ++out.copies;
      }
      continue;
    }
    std::string line = "bug " + std::to_string(b.id) + " (" +
                       std::string(BugStateName(b.state));
    if (b.culprit_commit)
      line += ", culprit " + b.culprit_commit->substr(0, 12);
    out.others.push_back(line + ")");
  }
  return out;
}

Json DemoResult::ToJson() const {
  Json j = Json::MakeObject();
  j["zoo_bug"] = zoo_bug;
  j["bug"] = bug_id;
  j["state"] = state;
  j["found_seconds"] = found_seconds;
  j["reproduced"] = reproduced;
  j["instructions_before"] = instructions_before;
  j["instructions_after"] = instructions_after;
  j["pass"] = pass;
  j["site"] = site;
  j["opcode"] = opcode;
  j["history_commits"] = history_commits;
  j["culprit"] = culprit;
  j["culprit_right"] = culprit_right;
  j["search_commits"] = search_commits;
  j["search_builds"] = search_builds;
  j["bugs_filed"] = bugs_filed;
  j["duplicates"] = duplicates;
  j["copies"] = copies;
  j["held_merged"] = held_merged;
  j["held_waiting"] = held_waiting;
  Json others = Json::MakeArray();
  for (const std::string& o : other_bugs) others.push_back(o);
  j["other_bugs"] = others;
  j["gated_by"] = gated_by;
  j["own_witness_gated"] = own_witness_gated;
  j["patch_verified"] = patch_verified;
  j["branch"] = branch;
  j["wall_seconds"] = wall_seconds;
  j["failure"] = failure;
  return j;
}

std::string DemoTable(const std::vector<DemoResult>& results) {
  std::ostringstream t;
  t << "| zoo bug | found | reproduced | minimized (instr.) | localized (pass "
       "/ rewrite / op) | culprit commit (of N, builds) | patch verified "
       "(gated by) | bugs filed | wall |\n"
       "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const DemoResult& r : results) {
    std::string others;
    for (const std::string& o : r.other_bugs) {
      others += (others.empty() ? ", other: " : "; ") + o;
    }
    std::ostringstream held;
    if (r.held_merged + r.held_waiting > 0) {
      held << "; " << r.held_merged << " more findings held and merged by "
           << "its patch";
      if (r.held_waiting > 0) held << " (" << r.held_waiting << " waiting)";
    }
    std::ostringstream found;
    if (r.found_seconds >= 0) {
      found << "yes (" << std::fixed << std::setprecision(0) << r.found_seconds
            << " s)";
    } else {
      found << "no";
    }
    t << "| " << r.zoo_bug << " | " << found.str() << " | "
      << (r.reproduced ? "yes" : "no") << " | " << r.instructions_before
      << " -> " << r.instructions_after << " | "
      << (r.pass.empty() ? "-" : r.pass) << " / "
      << (r.site.empty() ? "-" : r.site) << " / "
      << (r.opcode.empty() ? "-" : r.opcode) << " | "
      << (r.culprit.empty() ? "-" : r.culprit.substr(0, 12)) << " ("
      << (r.culprit_right ? "right" : "wrong") << ", of " << r.history_commits
      << ", " << r.search_builds << " builds) | "
      << (r.patch_verified ? "yes" : "no") << " (" << r.gated_by
      << " other zoo witnesses" << (r.own_witness_gated ? ", its own too" : "")
      << ") | " << r.bugs_filed << ": the bug, " << r.copies << " copies ("
      << r.duplicates << " marked duplicate)" << held.str() << others << " | "
      << std::fixed << std::setprecision(0) << r.wall_seconds << " s |"
      << (r.failure.empty() ? "" : " " + r.failure) << "\n";
  }
  return t.str();
}

}  // namespace trench::orchestrator
