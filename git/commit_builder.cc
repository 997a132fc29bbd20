#include "git/commit_builder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/subprocess.h"
#include "git/build_failure.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The last `bytes` bytes of file `p`, starting at a line boundary.
std::string Tail(const fs::path& p, size_t bytes) {
  std::string text = ReadText(p);
  if (text.size() <= bytes) return text;
  text = text.substr(text.size() - bytes);
  const size_t nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

// An exclusive flock on a file, held while alive (-1: none).
class FileLock {
 public:
  explicit FileLock(const std::string& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace

std::string DefaultBuildCommand(const std::vector<std::string>& cmake_flags) {
  std::string extra;
  for (const std::string& f : cmake_flags) extra += " '" + f + "'";
  return "gen=; command -v ninja >/dev/null 2>&1 && gen='-G Ninja'; "
         "cc=; command -v ccache >/dev/null 2>&1 && "
         "cc=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache; "
         "cmake -S \"$TRENCH_WORKTREE\" -B \"$TRENCH_BUILD_DIR\" $gen "
         "-DTRENCH_TARGET_ONLY=ON -DCMAKE_BUILD_TYPE=Release $cc" +
         extra +
         " && cmake --build \"$TRENCH_BUILD_DIR\" -j \"$TRENCH_JOBS\" "
         "--target hloc tpusim hlo-run";
}

bool IsValidFlavour(const std::string& flavour) {
  if (flavour.empty() || flavour.size() > 32) return false;
  for (unsigned char c : flavour) {
    if (!(std::isdigit(c) || (c >= 'a' && c <= 'z'))) return false;
  }
  return true;
}

CommitBuilder::CommitBuilder(GitRepo* repo, BuilderOptions options)
    : repo_(repo), options_(std::move(options)) {
  if (options_.build_command.empty()) {
    options_.build_command = DefaultBuildCommand();
  }
}

std::string CommitBuilder::StagingDir() const {
  return options_.output_dir.empty()
             ? (fs::absolute(options_.work_dir) / "out").string()
             : fs::absolute(options_.output_dir).string();
}

StatusOr<BuildResult> CommitBuilder::Lookup(const std::string& key) const {
  StatusOr<BuildResult> hit = LookupBuild(options_.cache_dir, key);
  if (hit.ok() || options_.output_dir.empty()) return hit;
  // This run's own entries (the daemon installs them after the run).
  StatusOr<BuildResult> own = LookupBuild(options_.output_dir, key);
  return own.ok() ? own : hit;
}

StatusOr<BuildResult> CommitBuilder::Build(const std::string& rev) {
  ASSIGN_OR_RETURN(std::string sha, repo_->Resolve(rev));
  return BuildAs(sha, sha);
}

StatusOr<BuildResult> CommitBuilder::BuildAs(const std::string& rev,
                                             const std::string& key) {
  if (!IsValidBuildKey(key)) {
    return InvalidArgument("bad cache key '" + key + "'");
  }
  std::string cache_problem;
  if (StatusOr<BuildResult> hit = Lookup(key); hit.ok()) {
    ++cache_hits_;
    return hit;
  } else if (hit.status().code() != StatusCode::kNotFound) {
    cache_problem = hit.status().message();
  }
  ASSIGN_OR_RETURN(std::string sha, repo_->Resolve(rev));
  const fs::path work = fs::absolute(options_.work_dir);
  if (!options_.flavour.empty() && !IsValidFlavour(options_.flavour)) {
    return InvalidArgument("bad build flavour '" + options_.flavour + "'");
  }
  const fs::path src = work / "src",
                 build = work / (options_.flavour.empty()
                                     ? std::string("build")
                                     : "build-" + options_.flavour),
                 log = work / "build.log";
  std::error_code ec;
  fs::create_directories(build, ec);
  if (ec) {
    return IoError("cannot create " + build.string() + ": " + ec.message());
  }
  // One build at a time per work directory (other runs wait).
  FileLock lock((work / "lock").string());
  if (!lock.ok()) return IoError("cannot lock " + (work / "lock").string());
  if (StatusOr<BuildResult> hit = Lookup(key); hit.ok()) {
    ++cache_hits_;  // Built by another run meanwhile.
    return hit;
  }
  RETURN_IF_ERROR(repo_->CheckoutTo(sha, src.string()));

  hlo_diff::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "cd \"$TRENCH_WORKTREE\" || exit 125\n"
               "exec /bin/sh -c \"$TRENCH_BUILD_COMMAND\" "
               ">\"$TRENCH_BUILD_LOG\" 2>&1"};
  spec.env = {{"TRENCH_WORKTREE", src.string()},
              {"TRENCH_BUILD_DIR", build.string()},
              {"TRENCH_COMMIT", sha},
              {"TRENCH_JOBS", std::to_string(std::max(
                                  1u, std::thread::hardware_concurrency()))},
              {"TRENCH_BUILD_COMMAND", options_.build_command},
              {"TRENCH_BUILD_LOG", log.string()}};
  if (!getenv("CCACHE_BASEDIR")) {
    spec.env.push_back({"CCACHE_BASEDIR", work.string()});
  }
  if (!getenv("CCACHE_NOHASHDIR"))
    spec.env.push_back({"CCACHE_NOHASHDIR", "1"});
  spec.timeout_seconds = options_.timeout_seconds;
  ++builds_;
  ASSIGN_OR_RETURN(hlo_diff::ProcessResult p, hlo_diff::RunProcess(spec));

  BuildResult r;
  r.key = key;
  r.commit = sha;
  r.cache_problem = cache_problem;
  r.seconds = p.seconds;
  r.exit_code = p.exit_code;
  r.timed_out = p.timed_out;
  const std::string_view marker = FindInfraMarkerInFile(log.string());
  // A timeout or a signal says nothing about the commit on a loaded
  // machine (the OOM killer, a run next to it): infrastructure.
  if (p.timed_out) {
    r.infra = true;
    r.reason = "the build timed out after " +
               std::to_string(static_cast<int>(options_.timeout_seconds)) +
               " s";
  } else if (p.signal != 0) {
    r.infra = true;
    r.reason = "the build command died of signal " + std::to_string(p.signal);
  } else if (p.exit_code != 0) {
    r.reason = "the build command exited with " + std::to_string(p.exit_code);
    if (!marker.empty()) {
      r.infra = true;
      r.reason += " (the log says \"" + std::string(marker) +
                  "\": a failure of the machine, not of the commit)";
    } else if (ShellReportsKillSignal(p.exit_code)) {
      r.infra = true;
      r.reason += " (128 + signal " + std::to_string(p.exit_code - 128) +
                  ": the command it ran was killed, not failed by the commit)";
    }
  } else {
    for (const std::string& b : TargetBinaries()) {
      if (!fs::exists(build / b, ec)) {
        r.reason =
            "the build command succeeded but left no " + (build / b).string();
        break;
      }
    }
  }
  if (p.exit_code != 0 && !r.infra && FileSystemFull(work.string())) {
    r.infra = true;
    r.reason += " (the file system of " + work.string() +
                " is full: a failure of the machine, not of the commit)";
  }
  r.built = r.reason.empty();
  if (!r.built) r.log_tail = Tail(log, options_.log_tail_bytes);
  if (r.infra) return r;  // Neither staged nor cached: build again later.

  // Staged (the work directory's own), then installed where we own C.
  const fs::path staging = StagingDir();
  const fs::path staged = staging / key;
  fs::create_directories(staging, ec);
  fs::remove_all(staged, ec);
  fs::create_directories(staged / "bin", ec);
  if (ec) {
    return IoError("cannot create " + staged.string() + ": " + ec.message());
  }
  if (r.built) {
    for (const std::string& b : TargetBinaries()) {
      fs::copy_file(build / b, staged / "bin" / b,
                    fs::copy_options::overwrite_existing, ec);
      if (ec) {
        return IoError("cannot copy " + (build / b).string() + " to " +
                       staged.string() + ": " + ec.message());
      }
      ASSIGN_OR_RETURN(r.sha256[b], FileSha256((staged / "bin" / b).string()));
    }
  }
  Json j = r.ToJson();
  std::erase_if(j.mutable_object(),
                [](const auto& kv) { return kv.first == "cached"; });
  {
    std::ofstream out(staged / "result.json", std::ios::binary);
    out << j.DumpPretty() << "\n";
    out.close();
    if (!out) return IoError("cannot write " + staged.string());
  }
  if (!options_.output_dir.empty()) {
    if (r.built) r.bin_dir = (staged / "bin").string();
    return r;
  }
  ASSIGN_OR_RETURN(BuildResult installed,
                   InstallBuild(staging.string(), key, options_.cache_dir));
  installed.cache_problem = cache_problem;
  fs::remove_all(staged, ec);
  return installed;
}

}  // namespace trench::hlo_bisect
