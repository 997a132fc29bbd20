#include "git/commit_builder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/subprocess.h"

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

Status WriteText(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return IoError("cannot write " + p.string());
  return Status::Ok();
}

StatusOr<BuildResult> FromJson(const Json& j) {
  BuildResult r;
  auto str = [&](const char* k) -> std::string {
    const Json* v = j.Find(k);
    return v && v->is_string() ? v->string_value() : "";
  };
  const Json* built = j.Find("built");
  if (!j.is_object() || !built || !built->is_bool()) {
    return InvalidArgument("result.json: expected {\"built\": bool, ...}");
  }
  r.key = str("key");
  r.commit = str("commit");
  r.built = built->bool_value();
  r.reason = str("reason");
  r.log_tail = str("log_tail");
  if (const Json* s = j.Find("seconds"); s && s->is_number()) {
    r.seconds = s->number_value();
  }
  if (const Json* e = j.Find("exit_code"); e && e->is_integer()) {
    r.exit_code = static_cast<int>(e->int64_value());
  }
  if (const Json* t = j.Find("timed_out"); t && t->is_bool()) {
    r.timed_out = t->bool_value();
  }
  return r;
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

const std::vector<std::string>& TargetBinaries() {
  static const std::vector<std::string> kBinaries = {"hloc", "tpusim",
                                                     "hlo-run"};
  return kBinaries;
}

std::string DefaultBuildCommand() {
  return "gen=; command -v ninja >/dev/null 2>&1 && gen='-G Ninja'; "
         "cc=; command -v ccache >/dev/null 2>&1 && "
         "cc=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache; "
         "cmake -S \"$TRENCH_WORKTREE\" -B \"$TRENCH_BUILD_DIR\" $gen "
         "-DTRENCH_TARGET_ONLY=ON -DCMAKE_BUILD_TYPE=Release $cc && "
         "cmake --build \"$TRENCH_BUILD_DIR\" -j \"$TRENCH_JOBS\" "
         "--target hloc tpusim hlo-run";
}

Json BuildResult::ToJson() const {
  Json j = Json::MakeObject();
  j["key"] = key;
  j["commit"] = commit;
  j["built"] = built;
  j["cached"] = cached;
  j["seconds"] = seconds;
  j["exit_code"] = exit_code;
  j["timed_out"] = timed_out;
  j["reason"] = reason;
  j["log_tail"] = log_tail;
  return j;
}

CommitBuilder::CommitBuilder(GitRepo* repo, BuilderOptions options)
    : repo_(repo), options_(std::move(options)) {
  if (options_.build_command.empty()) {
    options_.build_command = DefaultBuildCommand();
  }
}

StatusOr<BuildResult> CommitBuilder::Lookup(const std::string& key) const {
  const fs::path entry = fs::path(options_.cache_dir) / key;
  std::error_code ec;
  if (!fs::exists(entry / "result.json", ec)) {
    return NotFound("no cache entry " + entry.string());
  }
  StatusOr<Json> j = ParseJson(ReadText(entry / "result.json"));
  if (!j.ok()) return NotFound(entry.string() + ": unreadable result.json");
  ASSIGN_OR_RETURN(BuildResult r, FromJson(*j));
  r.key = key;
  r.cached = true;
  if (r.built) {
    r.bin_dir = (entry / "bin").string();
    for (const std::string& b : TargetBinaries()) {
      if (!fs::exists(entry / "bin" / b, ec)) {
        return NotFound(entry.string() + ": binary " + b + " missing");
      }
    }
  }
  return r;
}

StatusOr<BuildResult> CommitBuilder::Build(const std::string& rev) {
  ASSIGN_OR_RETURN(std::string sha, repo_->Resolve(rev));
  return BuildAs(sha, sha);
}

StatusOr<BuildResult> CommitBuilder::BuildAs(const std::string& rev,
                                             const std::string& key) {
  if (key.empty() || key.find('/') != std::string::npos || key[0] == '.') {
    return InvalidArgument("bad cache key '" + key + "'");
  }
  if (StatusOr<BuildResult> hit = Lookup(key); hit.ok()) {
    ++cache_hits_;
    return hit;
  }
  ASSIGN_OR_RETURN(std::string sha, repo_->Resolve(rev));
  const fs::path work = fs::absolute(options_.work_dir);
  const fs::path src = work / "src", build = work / "build",
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
  r.seconds = p.seconds;
  r.exit_code = p.exit_code;
  r.timed_out = p.timed_out;
  if (p.timed_out) {
    r.reason = "the build timed out after " +
               std::to_string(static_cast<int>(options_.timeout_seconds)) +
               " s";
  } else if (p.signal != 0) {
    r.reason = "the build command died of signal " + std::to_string(p.signal);
  } else if (p.exit_code != 0) {
    r.reason = "the build command exited with " + std::to_string(p.exit_code);
  } else {
    for (const std::string& b : TargetBinaries()) {
      if (!fs::exists(build / b, ec)) {
        r.reason =
            "the build command succeeded but left no " + (build / b).string();
        break;
      }
    }
  }
  r.built = r.reason.empty();
  if (!r.built) r.log_tail = Tail(log, options_.log_tail_bytes);

  // The entry is assembled aside and renamed into place.
  const fs::path cache = fs::absolute(options_.cache_dir);
  const fs::path entry = cache / key;
  const fs::path tmp =
      cache / (".tmp-" + key + "-" + std::to_string(::getpid()));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) return IoError("cannot create " + tmp.string() + ": " + ec.message());
  if (r.built) {
    fs::create_directories(tmp / "bin", ec);
    for (const std::string& b : TargetBinaries()) {
      fs::copy_file(build / b, tmp / "bin" / b,
                    fs::copy_options::overwrite_existing, ec);
      if (ec) {
        return IoError("cannot copy " + (build / b).string() +
                       " to the cache: " + ec.message());
      }
    }
  }
  Json j = r.ToJson();
  std::erase_if(j.mutable_object(),
                [](const auto& kv) { return kv.first == "cached"; });
  RETURN_IF_ERROR(WriteText(tmp / "result.json", j.DumpPretty() + "\n"));
  fs::remove_all(entry, ec);
  fs::rename(tmp, entry, ec);
  if (ec) {
    return IoError("cannot move " + tmp.string() + " to " + entry.string() +
                   ": " + ec.message());
  }
  if (r.built) r.bin_dir = (entry / "bin").string();
  return r;
}

}  // namespace trench::hlo_bisect
