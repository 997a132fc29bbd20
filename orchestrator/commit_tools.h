// Building and fuzzing the target's commits, and filing what the fuzzer
// finds: what the commit steps, the stress-test author and patch
// verification share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "orchestrator/pipeline.h"

namespace trench::orchestrator {

// Builds `rev` (of the mirror) in the sandbox and records the build of
// (sha, patch_hash); the cache key is sha, or "<sha>-p<patch_hash>".
StatusOr<Json> BuildCommit(StepContext& ctx, const std::string& rev,
                           const std::string& sha,
                           const std::string& patch_hash);
// Files a fuzz finding ({"case": dir, "sig", "status", ...}) found at
// `commit`: attached to the open bug with signature "sig:<sig>", or a new
// bug (its reproduction queued). Returns what was done.
StatusOr<Json> FileFinding(StepContext& ctx, const std::string& commit,
                           const Json& finding);
// What a commit's diff touches: the passes of compiler/passes/ files (by
// the registry's names) and the opcodes of compiler/codegen/emit_<op>*.cc.
struct ChangedArea {
  std::vector<std::string> passes, ops;
  // Adds `other`'s names not yet present (order kept).
  void Add(const ChangedArea& other);
};
ChangedArea ChangedAreaOf(const std::string& diff);
// A hlo-fuzz campaign on the build in `bin_dir`: its summary JSON.
StatusOr<Json> FuzzBuild(StepContext& ctx, int64_t job_id,
                         const std::string& bin_dir, double seconds,
                         const std::vector<std::string>& extra_flags);

}  // namespace trench::orchestrator
