// `trench demo`: the whole service on one machine, with no network and no
// API key. It makes a target repository from the project's own compiler
// (demo_repo.h) in which a commit brings a bugzoo bug, starts the daemon
// in-process with built-in brains against it, lands the commits, shows the
// pipeline's progress, and ends with the triage report and the proposed
// branch trench/bug-<id>.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "orchestrator/demo/demo_repo.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

struct DemoOptions {
  std::string source_dir;  // A trench checkout (sources, tests/bugzoo).
  std::string tools_dir;   // hlo-diff, hlo-reduce, hlo-bisect, hlo-fuzz.
  std::string dir;         // Work directory (created); repo/, var/.
  std::string bug;         // A zoo bug id or its number ("07").
  // The daemon's settings (config/demo.json); var_dir, repo, branch,
  // tools_dir, regression and the port (0) are replaced by the demo's.
  std::string config_path;
  // A var/builder/ of an earlier demo whose build cache and ccache are
  // reused ("" for none): later demos then build incrementally.
  std::string reuse_builder;
  double timeout_seconds = 3600;  // Gives up after this.
  // Gives up when no bug was found this long after the landing, or after
  // the pipeline closed the last bug it had (a false alarm that did not
  // reproduce); the daemon fuzzes the head continuously when config
  // fuzz.continuous is on.
  double give_up_seconds = 600;
  // The target repository's history (demo_repo.h): kReplay lands the bug
  // among the checkout's own target-side commits (replay_commits of them,
  // broken_builds that do not compile) at a point `seed` draws; kShort is
  // the quick one (comment-only commits around the bug).
  DemoHistory history = DemoHistory::kReplay;
  int replay_commits = 32;
  int broken_builds = 2;
  uint64_t seed = 1;
};

// The outcome of one demo, for the report and the --all table.
struct DemoResult {
  std::string zoo_bug;
  std::string dir;
  int64_t bug_id = 0;         // The bug carried to the end (0: none).
  std::string state;          // Its final state.
  double found_seconds = -1;  // From the landing to its filing.
  bool reproduced = false;
  int64_t instructions_before = 0, instructions_after = 0;
  std::string pass, site, opcode;  // Localization.
  int history_commits = 0;         // Landed after the base.
  std::string culprit;             // The culprit commit found.
  bool culprit_right = false;      // It is the commit that brought the bug.
  int search_commits = 0;          // The culprit search's range.
  int search_builds = 0;           // Builds it made (not from the cache).
  // Bugs in the store at the end that started the pipeline: all but the
  // held findings below.
  int bugs_filed = 0;
  int duplicates = 0;  // Of those, marked duplicate of another.
  // Of bugs_filed, the played bug's copies besides the judged bug (goal:
  // 0; ClassifyFiledBugs), and the others, one line each.
  int copies = 0;
  // Findings of the played root cause that waited for the judged bug
  // (root_cause.h) and never started the pipeline: merged by its verified
  // patch, or still waiting at the end.
  int held_merged = 0, held_waiting = 0;
  std::vector<std::string> other_bugs;
  // The regression cases the verified patch was checked against (the
  // played bug's own witness is never among them: nobody has it for a real
  // bug), and whether it was.
  int gated_by = 0;
  bool own_witness_gated = false;
  bool patch_verified = false;
  std::string branch;
  double wall_seconds = 0;
  std::string report;   // The triage report (text).
  std::string failure;  // Why it stopped short, if it did.
  Json ToJson() const;
};

// The zoo bug ids (tests/bugzoo/NN-name) under `source_dir`, sorted.
StatusOr<std::vector<std::string>> ZooBugs(const std::string& source_dir);
// The zoo id `bug` names (an id, or its number "7" / "07"); a random one
// when empty. kNotFound naming the ids for an unknown one.
StatusOr<std::string> ResolveZooBug(const std::string& source_dir,
                                    const std::string& bug);

// Runs one demo, printing progress lines on `progress`. A pipeline that
// stops short is a result with `failure` set; errors are set-up failures.
StatusOr<DemoResult> RunDemo(const DemoOptions& options,
                             std::ostream& progress);

// The bug a demo carries to the end among `bugs`, judged by the harness
// (the pipeline never sees `bug_commit`, the commit that brought the
// played bug): the bug whose culprit search named that commit; else the
// most advanced open bug, so that a finding the pipeline closed (a
// timeout of a loaded machine that did not reproduce, a bug of the
// replayed history's own) gives way to one still being worked on; else
// the most advanced closed one. Never a duplicate; nullopt when none.
std::optional<Bug> ChooseMainBug(const std::vector<Bug>& bugs,
                                 const std::string& bug_commit);

// The bugs of a demo's store besides the judged bug `main`. Those of the
// played bug's root cause (culprit `bug_commit`, the judged bug's coarse
// signature, a duplicate of one of these, or a finding waiting for one)
// are `held_merged` when the judged bug's patch check made them
// duplicates before any reproduction, `held_waiting` when they still
// wait, else `copies`. Every other bug gets a line in `others`: "bug N
// (STATE, culprit SHA12)" for a bug of the replayed history's own, "bug N
// (STATE)" else (e.g. a finding closed as not reproducible).
struct FiledBugs {
  int copies = 0;
  int held_merged = 0, held_waiting = 0;
  std::vector<std::string> others;
};
FiledBugs ClassifyFiledBugs(const std::vector<Bug>& bugs, const Bug& main,
                            const std::string& bug_commit);

// The --all table (one line per result).
std::string DemoTable(const std::vector<DemoResult>& results);

}  // namespace trench::orchestrator
