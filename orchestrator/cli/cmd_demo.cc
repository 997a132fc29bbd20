// `trench demo [--bug X | --all] [--dir D] [--config F] [--source DIR]
// [--timeout S] [--give-up S] [--reuse BUILDER_DIR]`:
// the service end to end on a target repository made from our own
// compiler, with built-in brains (orchestrator/demo/demo.h).
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>

#include "orchestrator/cli/cli.h"
#include "orchestrator/demo/demo.h"
#include "orchestrator/daemon/logging.h"
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
  StatusOr<Flags> flags = ParseFlags(
      ctx.args,
      {"bug", "dir", "config", "source", "timeout", "give-up", "reuse"},
      {"all", "json"});
  if (!flags.ok()) return UsageError(ctx, "demo", flags.status().message());
  if (!flags->positional.empty()) {
    return UsageError(ctx, "demo",
                      "unexpected argument '" + flags->positional[0] + "'");
  }
  // The demo prints its own progress; the daemon's log says only warnings.
  if (Status s = orchestrator::SetUpLogging("human", "warn"); !s.ok()) {
    return Fail(ctx, s.message());
  }
  orchestrator::DemoOptions o;
  o.source_dir = flags->Get("source", DefaultSource());
  o.tools_dir = hlo_diff::ExecutableDir();
  o.config_path = flags->Get("config");
  // --reuse DIR: an earlier demo's var/builder (its build cache, ccache).
  o.reuse_builder = flags->Get("reuse");
  if (o.config_path.empty() && fs::exists(o.source_dir + "/config/demo.json")) {
    o.config_path = o.source_dir + "/config/demo.json";
  }
  for (auto [name, out] : {std::pair{"timeout", &o.timeout_seconds},
                           std::pair{"give-up", &o.give_up_seconds}}) {
    if (!flags->Has(name)) continue;
    StatusOr<double> v = hlo_diff::ParseSeconds(name, flags->Get(name));
    if (!v.ok()) return UsageError(ctx, "demo", v.status().message());
    *out = *v;
  }
  std::string dir = flags->Get("dir");
  if (dir.empty()) {
    std::string templ = "/tmp/trench-demo-XXXXXX";
    if (!::mkdtemp(templ.data())) return Fail(ctx, "cannot create a work dir");
    dir = templ;
  }
  std::vector<std::string> bugs;
  if (flags->Has("all")) {
    StatusOr<std::vector<std::string>> all =
        orchestrator::ZooBugs(o.source_dir);
    if (!all.ok()) return Fail(ctx, all.status().message());
    bugs = *all;
  } else {
    StatusOr<std::string> one =
        orchestrator::ResolveZooBug(o.source_dir, flags->Get("bug"));
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
  if (flags->Has("json")) {
    Json all = Json::MakeArray();
    for (const auto& r : results) all.push_back(r.ToJson());
    *ctx.out << all.DumpPretty() << "\n";
  }
  bool ok = true;
  for (const auto& r : results) ok &= r.patch_verified && r.culprit_right;
  return ok ? kExitOk : kExitFailure;
}

}  // namespace trench::cli
