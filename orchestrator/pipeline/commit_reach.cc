#include "orchestrator/pipeline/commit_reach.h"

#include <fstream>

#include "git/git_repo.h"
#include "git/patch_apply.h"

namespace trench::orchestrator {

StatusOr<std::string> CommitDiffText(StepContext& ctx, const std::string& sha) {
  ASSIGN_OR_RETURN(auto mirror, hlo_bisect::GitRepo::Open(ctx.paths->mirror));
  return agents::DiffOfCommit(*mirror, sha);
}

StatusOr<std::string> WriteDiffFile(const std::string& dir,
                                    const std::string& diff) {
  const std::string path = dir + "/commit.diff";
  std::ofstream out(path, std::ios::binary);
  out << diff;
  if (!out.flush()) return IoError("cannot write " + path);
  return path;
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
