#include "orchestrator/pipeline/commit_reach.h"

#include <spdlog/spdlog.h>

#include <fstream>

#include "git/commit_builder.h"
#include "git/git_repo.h"
#include "git/patch_apply.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "orchestrator/pipeline/step_util.h"

namespace trench::orchestrator {

StatusOr<std::string> CommitDiffText(StepContext& ctx, const std::string& sha) {
  ASSIGN_OR_RETURN(auto mirror, hlo_bisect::GitRepo::Open(ctx.paths->mirror));
  return agents::DiffOfCommit(*mirror, sha);
}

StatusOr<std::string> RoundDiffText(StepContext& ctx, const std::string& head) {
  ASSIGN_OR_RETURN(std::string good, KnownGoodCommit(ctx));
  if (good.empty() || good == head) return std::string();
  ASSIGN_OR_RETURN(auto mirror, hlo_bisect::GitRepo::Open(ctx.paths->mirror));
  return agents::DiffBetween(*mirror, good, head);
}

StatusOr<std::string> WriteDiffFile(const std::string& dir,
                                    const std::string& diff) {
  const std::string path = dir + "/commit.diff";
  std::ofstream out(path, std::ios::binary);
  out << diff;
  if (!out.flush()) return IoError("cannot write " + path);
  return path;
}

StatusOr<std::string> CoverageBinOf(StepContext& ctx, const std::string& sha,
                                    const std::string& scratch, Json* note) {
  *note = Json::MakeObject();
  auto skipped = [&](const std::string& why) {
    (*note)["skipped"] = why;
    return FailedPrecondition("no coverage build of " + sha.substr(0, 12) +
                              ": " + why);
  };
  StatusOr<hlo_diff::TargetDescription> described =
      TargetOfBuild(ctx, sha, scratch);
  if (!described.ok()) {
    (*note)["skipped"] = described.status().message();
    return described.status();
  }
  const hlo_diff::TargetDescription& target = *described;
  if (!target.offers_coverage) {
    return skipped("the target's description offers no coverage flavour");
  }
  std::string command = ctx.config->fuzz_coverage_build_command;
  if (command.empty()) {
    if (!ctx.config->build_command.empty()) {
      return skipped(
          "the daemon builds with build_command and "
          "fuzz.coverage_build_command is not set");
    }
    command = hlo_bisect::DefaultBuildCommand(target.coverage_cmake_flags);
  }
  StatusOr<hlo_bisect::BuildResult> b =
      BuildFlavour(ctx, sha, "coverage", command);
  if (!b.ok()) {
    (*note)["skipped"] = b.status().message();
    return b.status();
  }
  Json j = b->ToJson();
  for (const char* key : {"key", "built", "cached", "seconds", "reason"}) {
    if (const Json* v = j.Find(key)) (*note)[key] = *v;
  }
  if (!b->built) {
    return FailedPrecondition("the coverage flavour of " + sha.substr(0, 12) +
                              " does not build: " + b->reason);
  }
  return b->bin_dir;
}

Json BriefReach(const Json& reach) {
  Json brief = Json::MakeObject();
  for (const char* key : {"lines", "reached", "no_code", "unreached"}) {
    if (const Json* v = reach.Find(key)) brief[key] = *v;
  }
  return brief;
}

Json ChangedLinesTask(const std::string& diff, const Json& reach) {
  Json t = Json::MakeObject();
  if (diff.size() > kTaskDiffChars) {
    t["diff"] = diff.substr(0, kTaskDiffChars);
    t["truncated"] = true;
  } else {
    t["diff"] = diff;
  }
  const Json* unreached = reach.is_object() ? reach.Find("unreached") : nullptr;
  if (unreached && unreached->is_array()) {
    t["unreached"] = *unreached;
  } else {
    t["reach"] =
        "not measured (the build is not the target's coverage flavour)";
  }
  return t;
}

}  // namespace trench::orchestrator
