// Helpers of the SandboxToolBox: scratch dirs, sandboxed runs of the tool
// binaries, and the case store (sandbox_toolbox_internal.h).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "agents/claims.h"
#include "agents/json_schema.h"
#include "agents/sandbox_toolbox_internal.h"
#include "base/lines.h"
#include "triage/case/case_bundle.h"

namespace trench::agents::internal {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxErrorChars = 4000;

void ReplaceAll(std::string& s, const std::string& from,
                const std::string& to) {
  if (from.empty()) return;
  for (size_t p = s.find(from); p != std::string::npos;
       p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
}

}  // namespace

StatusOr<ScopedTempDir> MakeScratchDir(const ToolContext& ctx,
                                       const std::string& tool, int n) {
  // mkdtemp: unique across the sessions of this process and others; the
  // sandbox uid must reach it (0755).
  return ScopedTempDir::Make(ctx.scratch_dir, tool + "-" + std::to_string(n),
                             0755);
}

StatusOr<sandbox::Result> RunToolBinary(const ToolContext& ctx,
                                        const ToolDef& def,
                                        const std::vector<std::string>& args,
                                        const std::string& work_dir,
                                        double wall_seconds) {
  const std::string binary = ctx.tools_dir + "/" + std::string(def.runner);
  if (::access(binary.c_str(), X_OK) != 0) {
    return Internal(std::string(def.name) + ": tool binary " + binary +
                    " is missing or not executable");
  }
  sandbox::Options o;
  o.argv.push_back(binary);
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + work_dir,
           "TMPDIR=/tmp", "LC_ALL=C"};
  o.work_dir = work_dir;
  for (const std::string* p :
       {&ctx.tools_dir, &ctx.bin_dir, &ctx.cases_dir, &ctx.fuzz_corpus}) {
    if (!p->empty()) o.read_only_paths.push_back(*p);
  }
  o.limits.wall_seconds = wall_seconds;
  o.limits.cpu_seconds = static_cast<uint64_t>(wall_seconds * 2) + 10;
  o.limits.address_space_bytes =
      ctx.memory_bytes != 0 ? ctx.memory_bytes : def.memory_bytes;
  o.limits.stdout_bytes = 8 << 20;
  o.uid = ctx.uid;
  o.gid = ctx.gid;
  o.use_namespaces = ctx.namespaces;
  o.tmp_size_bytes = 512 << 20;
  StatusOr<sandbox::Result> r = ctx.run ? ctx.run(o) : sandbox::Run(o);
  // The sandbox could not start the tool: a set-up problem, not the model's.
  if (!r.ok()) {
    return Internal(std::string(def.name) +
                    ": sandbox: " + r.status().message());
  }
  return r;
}

StatusOr<Json> ParseToolOutput(const ToolDef& def, const sandbox::Result& r) {
  const std::string name(def.runner);
  if (r.stdout_truncated > 0) {
    return InvalidArgument(name + " printed more than " +
                           std::to_string(r.stdout_data.size()) +
                           " bytes of output");
  }
  StatusOr<Json> j = ParseJson(r.stdout_data);
  if (!j.ok()) {
    return InvalidArgument(name +
                           " printed malformed JSON: " + j.status().message());
  }
  if (!j->is_object()) {
    return InvalidArgument(name + " printed " + ShortJson(*j) +
                           ", not a JSON object");
  }
  return j;
}

std::string FailureText(const ToolDef& def, const sandbox::Result& r,
                        const std::string& work_dir) {
  std::string how;
  if (r.timed_out) {
    how = "timed out after " +
          std::to_string(static_cast<int>(r.wall_seconds + 0.5)) + "s";
  } else if (!r.exited) {
    how = "killed by " + sandbox::SignalName(r.signal);
  } else {
    how = "exited with code " + std::to_string(r.exit_code);
  }
  std::string err(TrimWhitespace(r.stderr_data));
  ReplaceAll(err, work_dir + "/", "");
  ReplaceAll(err, std::string(def.runner) + ": ", "");
  if (err.size() > kMaxErrorChars) {
    err = err.substr(0, kMaxErrorChars) + "... (cut)";
  }
  return std::string(def.runner) + " " + how + (err.empty() ? "" : ": " + err);
}

StatusOr<std::string> CaseDir(const ToolContext& ctx, const std::string& id) {
  if (!IsCaseId(id)) {
    return InvalidArgument("case '" + id +
                           "' is not a case id (64 lowercase hex digits)");
  }
  const std::string dir = ctx.cases_dir + "/" + id;
  std::error_code ec;
  if (!fs::exists(dir + "/module.hlo", ec)) {
    return InvalidArgument("no stored case " + id);
  }
  return dir;
}

StatusOr<std::string> StoreCaseDir(const ToolContext& ctx,
                                   const std::string& dir, const Json& origin,
                                   int64_t* instructions) {
  StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(dir);
  if (!c.ok()) {
    std::string msg = c.status().message();
    ReplaceAll(msg, dir + "/", "");
    return InvalidArgument("the tool wrote an unreadable case: " + msg);
  }
  if (!origin.is_null()) c->origin = origin;
  if (instructions != nullptr) {
    auto module = hlo_diff::ParseCaseModule(c->module_text, "module.hlo");
    *instructions = module.ok() ? (*module)->instruction_count() : -1;
  }
  const std::string sha = hlo_diff::CaseSha256(*c);
  const std::string dest = ctx.cases_dir + "/" + sha;
  std::error_code ec;
  if (fs::exists(dest + "/module.hlo", ec)) return sha;
  Status s = hlo_diff::WriteCase(dest, *c);
  // Another session may have stored the same case meanwhile.
  if (!s.ok() && !fs::exists(dest + "/module.hlo", ec)) {
    return IoError("cannot store the case: " + s.message());
  }
  return sha;
}

bool IsInside(const std::string& path, const std::string& root) {
  const fs::path p = fs::path(path).lexically_normal();
  const fs::path r = fs::path(root).lexically_normal();
  auto [ri, pi] = std::mismatch(r.begin(), r.end(), p.begin(), p.end());
  // A trailing separator of root shows up as an empty last element.
  return ri == r.end() || (std::next(ri) == r.end() && ri->empty());
}

Json VerdictForModel(Json verdict) {
  if (!verdict.is_object()) return verdict;
  Json::Object& members = verdict.mutable_object();
  for (auto it = members.begin(); it != members.end(); ++it) {
    if (it->first != "error_maps") continue;
    const size_t n = it->second.is_array() ? it->second.size() : 0;
    members.erase(it);
    verdict["error_maps_left_out"] = n;
    break;
  }
  return verdict;
}

}  // namespace trench::agents::internal
