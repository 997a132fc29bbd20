// A fuzz campaign in shards (config fuzz.shards): N runs of hlo-fuzz with
// one seed and `--shard k/N`, which together run the programs of one
// campaign, and the merge of their summaries into the summary one
// unsharded campaign would print.
#pragma once

#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace trench::orchestrator {

// The hlo-fuzz arguments of shard `k` of `n`: {"--shard", "k/n"} (none for
// n == 1).
std::vector<std::string> ShardFlags(int k, int n);

// One summary from the shards' (each an hlo-fuzz summary object):
// - programs, synthetic, traces, generator_errors and every count under
//   statuses add up; seconds is the longest shard's;
// - findings are concatenated in shard order, one per signature ("sig"):
//   a signature found by two shards is one finding (the first shard's);
//   distinct_findings counts them;
// - reach adds up each changed line's programs (per_line) and recomputes
//   reached and unreached (at most 50 listed) from the sums.
// Errors: kInvalidArgument for no summaries or one that is not an object.
StatusOr<Json> MergeFuzzSummaries(const std::vector<Json>& shards);

}  // namespace trench::orchestrator
