#include "orchestrator/demo/demo_repo.h"

#include <git2.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "base/json.h"
#include "git/git_repo.h"
#include "git/patch_apply.h"
#include "orchestrator/demo/target_history.h"

namespace trench::orchestrator {
namespace fs = std::filesystem;
using hlo_bisect::FileChange;
using hlo_bisect::GitRepo;

namespace {

// The target side, as DESIGN.md draws it: what TRENCH_TARGET_ONLY builds.
constexpr const char* kTargetDirs[] = {
    "base",         "compiler",      "tpu",          "tools/hloc",
    "tools/tpusim", "tools/hlo-run", "tools/hlo-fmt"};

StatusOr<std::string> ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return NotFound("cannot read " + p.string());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

StatusOr<std::vector<FileChange>> TargetFiles(const fs::path& source) {
  std::vector<FileChange> files;
  auto add = [&](const fs::path& p) -> Status {
    ASSIGN_OR_RETURN(std::string text, ReadFile(p));
    struct stat st {};
    ::stat(p.c_str(), &st);
    files.push_back({fs::relative(p, source).generic_string(), std::move(text),
                     (st.st_mode & S_IXUSR) != 0});
    return Status::Ok();
  };
  RETURN_IF_ERROR(add(source / "CMakeLists.txt"));
  for (const char* dir : kTargetDirs) {
    std::error_code ec;
    if (!fs::is_directory(source / dir, ec)) {
      return NotFound("target sources: no directory " +
                      (source / dir).string());
    }
    for (const auto& e : fs::recursive_directory_iterator(source / dir, ec)) {
      if (e.is_regular_file()) RETURN_IF_ERROR(add(e.path()));
    }
  }
  return files;
}

// An ordinary commit: a file of the tree with some text appended (or a new
// file), under a summary a developer would write.
struct Ordinary {
  const char* summary;
  const char* path;
  const char* text;
};

constexpr Ordinary kOrdinary[] = {
    {"tpu: note how DMA descriptors are validated", "tpu/ISA.md",
     "\nNote: DMA descriptors are checked before any byte moves; a "
     "descriptor that leaves its memory faults as a whole.\n"},
    {"hloc: say where the compile report goes", "tools/hloc/main.cc",
     "\n// The compile report goes to stdout as JSON (see hloc.h).\n"},
    {"docs: a short guide to the target side", "docs/target.md",
     "# The target side\n\ncompiler/ optimizes HLO and emits kernels for the "
     "simulated TPU in tpu/.\nBuild it alone with "
     "-DTRENCH_TARGET_ONLY=ON.\n"},
    {"tpusim: document the exit codes", "tools/tpusim/main.cc",
     "\n// Exit codes: see tpusim.h.\n"},
    {"hlo-run: point at the serve protocol", "tools/hlo-run/main.cc",
     "\n// The --serve protocol is described in hlo_run.h.\n"},
};

StatusOr<std::string> CommitOrdinary(GitRepo& repo, const std::string& parent,
                                     const Ordinary& o, int round,
                                     const std::string& ref) {
  std::string text;
  if (StatusOr<std::string> old = agents::ReadFileAt(repo, parent, o.path);
      old.ok()) {
    text = *old;
  }
  text += o.text;
  std::string summary = o.summary;
  if (round > 0) summary += " (part " + std::to_string(round + 1) + ")";
  return repo.CommitFiles(parent, {{o.path, text}}, summary + "\n", ref);
}

// One commit of the replayed chain.
struct ChainCommit {
  std::string sha;
  std::string message;
  std::vector<FileChange> changes;
  bool broken = false;  // Does not compile (the next commit repairs it).
};

// The paths a unified diff changes ("--- X" and "+++ Y" lines, git's
// "a/" and "b/" prefixes taken off, a tab-separated date dropped).
std::set<std::string> PathsOfDiff(const std::string& diff) {
  std::set<std::string> paths;
  std::istringstream in(diff);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("--- ") && !line.starts_with("+++ ")) continue;
    std::string path = line.substr(4, line.find('\t', 4) - 4);
    if (path == "/dev/null") continue;
    if (path.starts_with("a/") || path.starts_with("b/")) path = path.substr(2);
    paths.insert(path);
  }
  return paths;
}

// A commit that does not compile and the one that repairs it, on the .cc
// file of compiler/ or tpu/ the latest commit of `chain` wrote (none the
// bug touches, so that both rebase over it): code that uses a member
// nobody declared, as an unfinished change would. kNotFound when no
// commit wrote such a file.
StatusOr<std::pair<ChainCommit, ChainCommit>> BrokenPair(
    GitRepo& repo, const std::string& head,
    const std::vector<ChainCommit>& chain,
    const std::set<std::string>& touched) {
  std::string path;
  for (auto c = chain.rbegin(); c != chain.rend() && path.empty(); ++c) {
    for (const FileChange& f : c->changes) {
      if (f.content && f.path.ends_with(".cc") && !touched.count(f.path) &&
          (f.path.starts_with("compiler/") || f.path.starts_with("tpu/"))) {
        path = f.path;
        break;
      }
    }
  }
  if (path.empty()) return NotFound("no source file to break the build in");
  ASSIGN_OR_RETURN(std::string text, agents::ReadFileAt(repo, head, path));
  const std::string dir = path.substr(0, path.rfind('/'));
  ChainCommit broken, fix;
  broken.message = dir + ": count the rewrites still pending\n";
  broken.changes = {{path,
                     text + "\nnamespace {\n[[maybe_unused]] int "
                            "PendingRewrites() { return pending_rewrites_; "
                            "}\n}  // namespace\n",
                     false}};
  broken.broken = true;
  fix.message =
      dir + ": back out the pending-rewrite count; it broke the build\n";
  fix.changes = {{path, text, false}};
  return std::make_pair(std::move(broken), std::move(fix));
}

// kReplay (see demo_repo.h): the history, then the bug at a random point
// where it and the later commits apply.
Status ReplayHistory(GitRepo& repo, const DemoRepoOptions& options,
                     const std::string& patch, const std::string& summary,
                     const std::string& branch, const std::string& incoming,
                     DemoRepo& out) {
  ASSIGN_OR_RETURN(TargetHistory h, ReadTargetHistory(options.source_dir,
                                                      options.replay_commits));
  ASSIGN_OR_RETURN(
      out.base,
      repo.CommitFiles("", h.base_files,
                       "Import the compiler and the TPU model\n", branch));
  std::mt19937_64 rng(options.seed);
  const std::set<std::string> touched = PathsOfDiff(patch);
  const int n = static_cast<int>(h.commits.size());
  // Broken builds go after distinct commits 1..n-2, never first or last.
  std::set<int> broken_after;
  for (int tries = 0; static_cast<int>(broken_after.size()) <
                          std::min(options.broken_builds, std::max(0, n - 2)) &&
                      tries < 1000;
       ++tries) {
    broken_after.insert(1 + static_cast<int>(rng() % std::max(1, n - 2)));
  }
  std::vector<ChainCommit> chain;
  std::string head = out.base;
  auto commit = [&](ChainCommit c) -> Status {
    ASSIGN_OR_RETURN(c.sha,
                     repo.CommitFiles(head, c.changes, c.message, incoming));
    head = c.sha;
    chain.push_back(std::move(c));
    return Status::Ok();
  };
  for (int i = 0; i < n; ++i) {
    RETURN_IF_ERROR(commit({"", h.commits[i].message, h.commits[i].changes}));
    if (broken_after.count(i)) {
      auto pair = BrokenPair(repo, head, chain, touched);
      if (!pair.ok()) continue;  // Fewer commits that do not build.
      RETURN_IF_ERROR(commit(std::move(pair->first)));
      RETURN_IF_ERROR(commit(std::move(pair->second)));
    }
  }
  // The bug goes after chain[i]: one that builds, with at least three
  // commits after it.
  std::vector<int> points;
  for (int i = 0; i + 3 < static_cast<int>(chain.size()); ++i) {
    if (!chain[i].broken) points.push_back(i);
  }
  std::shuffle(points.begin(), points.end(), rng);
  std::string last_refusal = "no point has three commits after it";
  for (int i : points) {
    StatusOr<std::string> bug =
        agents::ApplyPatchOnto(repo, chain[i].sha, patch, summary, "", branch);
    if (!bug.ok()) {
      last_refusal = bug.status().message();
      continue;
    }
    std::vector<std::string> history, unbuildable;
    for (int j = 0; j <= i; ++j) {
      history.push_back(chain[j].sha);
      if (chain[j].broken) unbuildable.push_back(chain[j].sha);
    }
    history.push_back(*bug);
    std::string top = *bug;
    Status rebased = Status::Ok();
    for (int j = i + 1; j < static_cast<int>(chain.size()) && rebased.ok();
         ++j) {
      const ChainCommit& c = chain[j];
      bool overlaps = false;
      for (const FileChange& f : c.changes) overlaps |= touched.count(f.path);
      // Rebased as git would: a commit that touches the bug's files has
      // its diff applied onto the bug's tree; others keep their files.
      StatusOr<std::string> diff = std::string();
      if (overlaps) diff = agents::DiffOfCommit(repo, c.sha);
      StatusOr<std::string> sha =
          !diff.ok() ? StatusOr<std::string>(diff.status())
          : overlaps
              ? agents::ApplyPatchOnto(repo, top, *diff, c.message, "", branch)
              : repo.CommitFiles(top, c.changes, c.message, "");
      if (!sha.ok()) {
        rebased = sha.status();
        break;
      }
      top = *sha;
      history.push_back(top);
      if (c.broken) unbuildable.push_back(top);
    }
    if (!rebased.ok()) {
      last_refusal = rebased.message();
      continue;
    }
    out.bug_commit = *bug;
    out.history = std::move(history);
    out.unbuildable = std::move(unbuildable);
    return Land(out.path, "trench-demo/incoming", top);
  }
  return FailedPrecondition(
      "the bug's patch goes in at no point of the replayed history where "
      "the later commits rebase onto it (last: " +
      last_refusal + ")");
}

}  // namespace

StatusOr<DemoRepo> MakeDemoRepo(const std::string& dir,
                                const DemoRepoOptions& options) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    return FailedPrecondition("demo repository " + dir + " already exists");
  }
  ASSIGN_OR_RETURN(std::string patch,
                   ReadFile(fs::path(options.bug_dir) / "bug.patch"));
  ASSIGN_OR_RETURN(std::string meta_text,
                   ReadFile(fs::path(options.bug_dir) / "meta.json"));
  ASSIGN_OR_RETURN(Json meta, ParseJson(meta_text));
  const Json* summary = meta.Find("commit");
  if (!summary || !summary->is_string()) {
    return InvalidArgument(options.bug_dir + "/meta.json: no \"commit\"");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<GitRepo> repo, GitRepo::Init(dir));
  DemoRepo out;
  out.path = dir;
  const std::string branch = "refs/heads/" + options.branch;
  const std::string incoming = "refs/heads/trench-demo/incoming";
  if (options.history == DemoHistory::kReplay) {
    RETURN_IF_ERROR(ReplayHistory(*repo, options, patch,
                                  summary->string_value() + "\n", branch,
                                  incoming, out));
    return out;
  }
  ASSIGN_OR_RETURN(std::vector<FileChange> files,
                   TargetFiles(options.source_dir));
  ASSIGN_OR_RETURN(
      out.base,
      repo->CommitFiles("", files, "Import the compiler and the TPU model\n",
                        branch));
  std::string head = out.base;
  int next = 0;
  auto ordinary = [&]() -> Status {
    const int n = static_cast<int>(std::size(kOrdinary));
    ASSIGN_OR_RETURN(head, CommitOrdinary(*repo, head, kOrdinary[next % n],
                                          next / n, incoming));
    out.history.push_back(head);
    ++next;
    return Status::Ok();
  };
  for (int i = 0; i < options.commits_before; ++i) RETURN_IF_ERROR(ordinary());
  ASSIGN_OR_RETURN(
      out.bug_commit,
      agents::ApplyPatchOnto(*repo, head, patch, summary->string_value() + "\n",
                             incoming, branch));
  head = out.bug_commit;
  out.history.push_back(head);
  for (int i = 0; i < options.commits_after; ++i) RETURN_IF_ERROR(ordinary());
  return out;
}

Status Land(const std::string& dir, const std::string& branch,
            const std::string& sha) {
  ASSIGN_OR_RETURN(std::unique_ptr<GitRepo> repo, GitRepo::Open(dir));
  git_oid oid;
  if (git_oid_fromstr(&oid, sha.c_str()) != 0) {
    return InvalidArgument("not a commit sha: " + sha);
  }
  git_reference* ref = nullptr;
  const std::string name = "refs/heads/" + branch;
  if (git_reference_create(&ref, repo->raw(), name.c_str(), &oid, 1,
                           "trench demo: land") != 0) {
    const git_error* e = git_error_last();
    return IoError("cannot move " + name + " to " + sha +
                   " (libgit2: " + (e && e->message ? e->message : "?") + ")");
  }
  git_reference_free(ref);
  return Status::Ok();
}

}  // namespace trench::orchestrator
