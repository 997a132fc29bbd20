// `trench demo [--bug X|--random|--all] [--dir D] [--config F] [--source DIR]
// [--timeout S] [--give-up S] [--reuse BUILDER_DIR] [--history replay|short]
// [--commits N] [--broken N] [--seed N]`:
// the service end to end on a target repository made from our own
// compiler, with built-in brains (orchestrator/demo/demo.h).
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <streambuf>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/progress.h"
#include "orchestrator/daemon/logging.h"
#include "orchestrator/demo/demo.h"
#include "triage/case/target_flags.h"

namespace trench::cli {
namespace fs = std::filesystem;

namespace {

// The checkout `trench` was built from: the parent of its build directory
// when that holds tests/bugzoo, else the current directory.
std::string DefaultSource() {
  std::error_code ec;
  fs::path exe = hlo_diff::ExecutableDir();
  for (fs::path p = exe; !p.empty() && p != p.root_path();
       p = p.parent_path()) {
    if (fs::exists(p / "tests/bugzoo", ec)) return p.string();
  }
  return fs::current_path(ec).string();
}

void PrintOne(const Context& ctx, const orchestrator::DemoResult& r) {
  std::ostream& out = *ctx.out;
  out << "\n== triage report\n" << r.report << "\n";
  if (!r.failure.empty())
    out << "The demo stopped short: " << r.failure << "\n";
  out << "== how to review\n";
  if (!r.branch.empty()) {
    out << "  git -C " << r.dir << "/repo log -1 " << r.branch
        << "      # the proposed commit and its message (the report)\n"
        << "  git -C " << r.dir << "/repo diff main " << r.branch
        << "  # the patch\n";
  }
  out << "  trench serve --config " << r.dir
      << "/var.json &   # the daemon "
         "again, then:\n"
      << "  trench show " << r.bug_id << "   trench review " << r.bug_id
      << " --approve|--reject --comment '...'\n";
}

// An ostream buffer that hands each complete line to progress.Print, so
// that the demo's own lines and the status line share a terminal.
class LinesThroughProgress : public std::streambuf {
 public:
  LinesThroughProgress(Progress* progress, std::ostream* out)
      : progress_(progress), out_(out) {}
  ~LinesThroughProgress() override { sync(); }

 protected:
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    line_ += static_cast<char>(c);
    if (c == '\n') sync();
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i) overflow(s[i]);
    return n;
  }
  int sync() override {
    if (!line_.empty()) progress_->Print(*out_, line_);
    line_.clear();
    return 0;
  }

 private:
  Progress* progress_;
  std::ostream* out_;
  std::string line_;
};

}  // namespace

int CmdDemo(const Context& ctx) {
  orchestrator::DemoOptions o;
  std::string bug, dir, config, source, reuse;
  bool all = false, random = false, json = false;
  FlagParser p = CommandParser("demo");
  p.String("bug", "X", &bug, "the zoo bug (its id or number, e.g. 07)");
  // Without arguments the demo does not start: --random is the explicit
  // "any bug" (also what --bug-less flags get).
  p.Bool("random", &random, "a random zoo bug (the default with other flags)");
  p.Bool("all", &all, "every zoo bug, then a table");
  p.String("dir", "D", &dir, "the demo's directory (default: a new /tmp one)");
  p.String("config", "F", &config,
           "the daemon's config (default: SOURCE/config/demo.json)");
  p.String("source", "DIR", &source,
           "the checkout with tests/bugzoo (default: this build's)");
  p.Custom("timeout", "S", "give up after S seconds (default 3600)",
           hlo_diff::SecondsFlag("timeout", &o.timeout_seconds));
  p.Custom("give-up", "S",
           "give up when no bug was found S seconds after\nthe landing, or "
           "after the last bug was closed\n(default 600)",
           hlo_diff::SecondsFlag("give-up", &o.give_up_seconds));
  p.String("reuse", "BUILDER_DIR", &reuse,
           "an earlier demo's var/builder (its build cache)");
  p.Custom("history", "replay|short",
           "the target repository's history: the checkout's own\n"
           "target-side commits with the bug at a random point\n"
           "(replay, the default) or comment-only commits around\n"
           "it (short: quick)",
           [&o](const std::string& v) -> Status {
             if (v == "replay") {
               o.history = orchestrator::DemoHistory::kReplay;
             } else if (v == "short") {
               o.history = orchestrator::DemoHistory::kShort;
             } else {
               return InvalidArgument(
                   "--history: expected replay or short, got '" + v + "'");
             }
             return Status::Ok();
           });
  p.Number("commits", "N", &o.replay_commits,
           "replay: the real commits replayed (default 32)");
  p.Number("broken", "N", &o.broken_builds,
           "replay: commits that do not build (default 2)");
  p.Number("seed", "N", &o.seed, "replay: where the bug goes (default 1)");
  p.Bool("json", &json, "also print the results as JSON");
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  // The demo prints its own progress; the daemon's log says only warnings.
  if (Status s = orchestrator::SetUpLogging("human", "warn"); !s.ok()) {
    return Fail(ctx, s.message());
  }
  o.source_dir = source.empty() ? DefaultSource() : source;
  o.tools_dir = hlo_diff::ExecutableDir();
  o.config_path = config;
  // --reuse DIR: an earlier demo's var/builder (its build cache, ccache).
  o.reuse_builder = reuse;
  if (o.config_path.empty() && fs::exists(o.source_dir + "/config/demo.json")) {
    o.config_path = o.source_dir + "/config/demo.json";
  }
  if (dir.empty()) {
    std::string templ = "/tmp/trench-demo-XXXXXX";
    if (!::mkdtemp(templ.data())) return Fail(ctx, "cannot create a work dir");
    dir = templ;
  }
  std::vector<std::string> bugs;
  if (all) {
    StatusOr<std::vector<std::string>> all =
        orchestrator::ZooBugs(o.source_dir);
    if (!all.ok()) return Fail(ctx, all.status().message());
    bugs = *all;
  } else {
    StatusOr<std::string> one =
        orchestrator::ResolveZooBug(o.source_dir, random ? "" : bug);
    if (!one.ok()) return Fail(ctx, one.status().message());
    bugs = {*one};
  }
  std::vector<orchestrator::DemoResult> results;
  // On a terminal: "demo: zoo bug 07 (1 of 3), 42 s" under the demo's
  // lines; else quiet.
  Progress progress(ctx.err, ctx.err_is_terminal);
  for (size_t i = 0; i < bugs.size(); ++i) {
    const std::string& bug = bugs[i];
    o.bug = bug;
    o.dir = bugs.size() == 1 ? dir : dir + "/" + bug;
    *ctx.out << "== trench demo: zoo bug " << bug << " in " << o.dir << "\n";
    StatusOr<orchestrator::DemoResult> r = [&] {
      if (!progress.enabled()) return orchestrator::RunDemo(o, *ctx.out);
      LinesThroughProgress lines(&progress, ctx.out);
      std::ostream demo_out(&lines);
      const auto start = std::chrono::steady_clock::now();
      const std::string what =
          "demo: zoo bug " + bug +
          (bugs.size() > 1 ? " (" + std::to_string(i + 1) + " of " +
                                 std::to_string(bugs.size()) + ")"
                           : std::string());
      ProgressTicker ticker(&progress, [&] {
        return what + ", " +
               std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::steady_clock::now() - start)
                                  .count()) +
               " s";
      });
      StatusOr<orchestrator::DemoResult> result =
          orchestrator::RunDemo(o, demo_out);
      demo_out.flush();
      return result;
    }();
    progress.Finish();
    if (!r.ok()) return Fail(ctx, bug + ": " + r.status().message());
    if (bugs.size() == 1) {
      PrintOne(ctx, *r);
    } else {
      *ctx.out << orchestrator::DemoTable({*r}) << std::flush;
    }
    // Each later demo reuses the builds (build cache, ccache) of the one
    // before it, which hold this checkout's code: incremental builds.
    o.reuse_builder = o.dir + "/var/builder";
    results.push_back(*r);
  }
  if (bugs.size() > 1) {
    *ctx.out << "\n" << orchestrator::DemoTable(results);
  }
  if (json) {
    Json all = Json::MakeArray();
    for (const auto& r : results) all.push_back(r.ToJson());
    *ctx.out << all.DumpPretty() << "\n";
  }
  bool ok = true;
  for (const auto& r : results) ok &= r.patch_verified && r.culprit_right;
  return ok ? kExitOk : kExitFailure;
}

}  // namespace trench::cli
