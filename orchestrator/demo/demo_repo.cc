#include "orchestrator/demo/demo_repo.h"

#include <git2.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "git/patch_apply.h"
#include "base/json.h"
#include "git/git_repo.h"

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
  ASSIGN_OR_RETURN(std::vector<FileChange> files,
                   TargetFiles(options.source_dir));
  ASSIGN_OR_RETURN(std::unique_ptr<GitRepo> repo, GitRepo::Init(dir));
  DemoRepo out;
  out.path = dir;
  const std::string branch = "refs/heads/" + options.branch;
  const std::string incoming = "refs/heads/trench-demo/incoming";
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
