// `trench demo [--bug X|--random|--all] [--dir D] [--config F] [--source DIR]
// [--timeout S] [--give-up S] [--reuse BUILDER_DIR]`:
// the service end to end on a target repository made from our own
// compiler, with built-in brains (orchestrator/demo/demo.h).
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>

#include "orchestrator/cli/cli.h"
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
           "give up when no bug was found S seconds after\nthe landing "
           "(default 600)",
           hlo_diff::SecondsFlag("give-up", &o.give_up_seconds));
  p.String("reuse", "BUILDER_DIR", &reuse,
           "an earlier demo's var/builder (its build cache)");
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
  for (const std::string& bug : bugs) {
    o.bug = bug;
    o.dir = bugs.size() == 1 ? dir : dir + "/" + bug;
    *ctx.out << "== trench demo: zoo bug " << bug << " in " << o.dir << "\n";
    StatusOr<orchestrator::DemoResult> r = orchestrator::RunDemo(o, *ctx.out);
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
