#include "git/build_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "base/sha256.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxResultBytes = 1 << 20;

// An owned file descriptor.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

std::string Errno() { return std::strerror(errno); }

// `name` under directory `dir`, never through a link: a directory, or a
// regular file (opened non-blocking, so that a FIFO cannot stall us, and
// checked with fstat). `what` names it in errors. kNotFound when absent;
// kFailedPrecondition when it is something else.
StatusOr<Fd> OpenDirAt(int dir, const std::string& name,
                       const std::string& what) {
  Fd fd(::openat(dir, name.c_str(),
                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.ok()) return fd;
  if (errno == ENOENT) return NotFound(what + " does not exist");
  return FailedPrecondition(what + " is not a directory (" + Errno() + ")");
}

StatusOr<Fd> OpenFileAt(int dir, const std::string& name,
                        const std::string& what, uint64_t max_bytes,
                        uint64_t* size) {
  Fd fd(::openat(dir, name.c_str(),
                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.ok()) {
    if (errno == ENOENT) return NotFound(what + " is missing");
    return FailedPrecondition(what + " cannot be opened (" + Errno() +
                              "; a link?)");
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return FailedPrecondition(what + " is not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return FailedPrecondition(what + " is larger than " +
                              std::to_string(max_bytes) + " bytes");
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

StatusOr<std::string> ReadAll(int fd, uint64_t max_bytes,
                              const std::string& what) {
  std::string out;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("cannot read " + what + ": " + Errno());
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      return FailedPrecondition(what + " grew past " +
                                std::to_string(max_bytes) + " bytes");
    }
  }
}

// Copies `in` to a new file `to` (0755) while hashing it; returns the hex
// SHA-256 (of what was written). `to` is ours (the cache's staging).
StatusOr<std::string> CopyHashing(int in, const fs::path& to,
                                  uint64_t max_bytes, const std::string& what) {
  Fd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755));
  if (!out.ok())
    return IoError("cannot create " + to.string() + ": " + Errno());
  Sha256 h;
  uint64_t total = 0;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("cannot read " + what + ": " + Errno());
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    if (total > max_bytes) {
      return FailedPrecondition(what + " grew past " +
                                std::to_string(max_bytes) + " bytes");
    }
    h.Update(buf, static_cast<size_t>(n));
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(out.get(), buf + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return IoError("cannot write " + to.string() + ": " + Errno());
      done += w;
    }
  }
  if (::fchmod(out.get(), 0755) != 0) {
    return IoError("cannot chmod " + to.string() + ": " + Errno());
  }
  return h.HexDigest();
}

StatusOr<std::string> HashFd(int fd, const std::string& what) {
  Sha256 h;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("cannot read " + what + ": " + Errno());
    if (n == 0) return h.HexDigest();
    h.Update(buf, static_cast<size_t>(n));
  }
}

// A result record, strictly: BuildResult's members only, each of its type.
StatusOr<BuildResult> ParseResult(const Json& j, const std::string& what) {
  auto bad = [&](const std::string& m) {
    return FailedPrecondition(what + ": " + m);
  };
  if (!j.is_object()) return bad("expected an object");
  static const std::set<std::string> kMembers = {
      "key",       "commit", "built",  "cached",   "seconds",      "exit_code",
      "timed_out", "infra",  "reason", "log_tail", "cache_problem"};
  std::set<std::string> seen;
  BuildResult r;
  bool has_built = false;
  for (const auto& [name, v] : j.object()) {
    if (!seen.insert(name).second) return bad("member " + name + " twice");
    if (name == "sha256") {
      if (!v.is_object()) return bad("sha256: expected an object");
      for (const auto& [bin, hex] : v.object()) {
        if (!hex.is_string() || !IsLowerHex(hex.string_value(), 64)) {
          return bad("sha256." + bin + ": expected 64 hex digits");
        }
        r.sha256[bin] = hex.string_value();
      }
      continue;
    }
    if (!kMembers.count(name)) return bad("unexpected member " + name);
    if (name == "built" || name == "timed_out" || name == "infra" ||
        name == "cached") {
      if (!v.is_bool()) return bad(name + ": expected a bool");
      if (name == "built") r.built = v.bool_value(), has_built = true;
      if (name == "timed_out") r.timed_out = v.bool_value();
      if (name == "infra") r.infra = v.bool_value();
    } else if (name == "seconds") {
      if (!v.is_number() || v.number_value() < 0) {
        return bad("seconds: expected a number >= 0");
      }
      r.seconds = v.number_value();
    } else if (name == "exit_code") {
      StatusOr<int64_t> e = v.GetInt64();
      if (!e.ok() || *e < -1 || *e > 255) {
        return bad("exit_code: expected an integer in [-1, 255]");
      }
      r.exit_code = static_cast<int>(*e);
    } else {
      if (!v.is_string()) return bad(name + ": expected a string");
      if (name == "key") r.key = v.string_value();
      if (name == "commit") r.commit = v.string_value();
      if (name == "reason") r.reason = v.string_value();
      if (name == "log_tail") r.log_tail = v.string_value();
    }
  }
  if (!has_built) return bad("no \"built\"");
  if (r.infra) return bad("an infrastructure failure is not cached");
  if (!IsLowerHex(r.commit, 40)) return bad("commit: expected a 40-digit sha");
  return r;
}

}  // namespace

const std::vector<std::string>& TargetBinaries() {
  static const std::vector<std::string> kBinaries = {"hloc", "tpusim",
                                                     "hlo-run"};
  return kBinaries;
}

bool IsValidBuildKey(const std::string& key) {
  if (key.empty() || key.size() > 200 || key[0] == '-') return false;
  for (char c : key) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-')) {
      return false;
    }
  }
  return true;
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
  j["infra"] = infra;
  j["reason"] = reason;
  j["log_tail"] = log_tail;
  if (!sha256.empty()) {
    Json h = Json::MakeObject();
    for (const auto& [bin, hex] : sha256) h[bin] = hex;
    j["sha256"] = std::move(h);
  }
  if (!cache_problem.empty()) j["cache_problem"] = cache_problem;
  return j;
}

StatusOr<std::string> FileSha256(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!fd.ok() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return IoError(path + " is not a readable regular file");
  }
  return HashFd(fd.get(), path);
}

StatusOr<BuildResult> LookupBuild(const std::string& cache_dir,
                                  const std::string& key) {
  if (!IsValidBuildKey(key)) return NotFound("bad cache key '" + key + "'");
  const std::string entry = cache_dir + "/" + key;
  Fd cache(::open(cache_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cache.ok()) return NotFound("no cache " + cache_dir);
  ASSIGN_OR_RETURN(Fd dir, OpenDirAt(cache.get(), key, entry));
  uint64_t size = 0;
  ASSIGN_OR_RETURN(Fd rf,
                   OpenFileAt(dir.get(), "result.json", entry + "/result.json",
                              kMaxResultBytes, &size));
  StatusOr<std::string> text =
      ReadAll(rf.get(), kMaxResultBytes, entry + "/result.json");
  if (!text.ok()) return FailedPrecondition(text.status().message());
  StatusOr<Json> j = ParseJson(*text);
  if (!j.ok()) {
    return FailedPrecondition(entry + "/result.json: " + j.status().message());
  }
  ASSIGN_OR_RETURN(BuildResult r, ParseResult(*j, entry));
  if (r.key != key) return FailedPrecondition(entry + ": key " + r.key);
  r.cached = true;
  if (!r.built) return r;
  ASSIGN_OR_RETURN(Fd bin, OpenDirAt(dir.get(), "bin", entry + "/bin"));
  for (const std::string& b : TargetBinaries()) {
    const std::string what = entry + "/bin/" + b;
    auto want = r.sha256.find(b);
    if (want == r.sha256.end()) {
      return FailedPrecondition(what + ": no SHA-256 recorded");
    }
    StatusOr<Fd> f = OpenFileAt(bin.get(), b, what, UINT64_MAX, &size);
    if (!f.ok()) return FailedPrecondition(f.status().message());
    StatusOr<std::string> hex = HashFd(f->get(), what);
    if (!hex.ok()) return FailedPrecondition(hex.status().message());
    if (*hex != want->second) {
      return FailedPrecondition(what +
                                " does not match its recorded SHA-256 (changed "
                                "after it was installed)");
    }
  }
  r.bin_dir = entry + "/bin";
  return r;
}

StatusOr<BuildResult> InstallBuild(const std::string& staging_dir,
                                   const std::string& key,
                                   const std::string& cache_dir,
                                   uint64_t max_binary_bytes) {
  if (!IsValidBuildKey(key)) {
    return InvalidArgument("bad cache key '" + key + "'");
  }
  const std::string staged = staging_dir + "/" + key;
  Fd stage(::open(staging_dir.c_str(),
                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!stage.ok()) {
    if (errno == ENOENT) return NotFound(staging_dir + " does not exist");
    return FailedPrecondition(staging_dir + " is not a directory");
  }
  ASSIGN_OR_RETURN(Fd dir, OpenDirAt(stage.get(), key, staged));
  uint64_t size = 0;
  StatusOr<Fd> rf = OpenFileAt(dir.get(), "result.json",
                               staged + "/result.json", kMaxResultBytes, &size);
  if (!rf.ok()) {
    return rf.status().code() == StatusCode::kNotFound
               ? NotFound(rf.status().message())
               : rf.status();
  }
  ASSIGN_OR_RETURN(std::string text,
                   ReadAll(rf->get(), kMaxResultBytes, staged));
  StatusOr<Json> j = ParseJson(text);
  if (!j.ok()) {
    return FailedPrecondition(staged + "/result.json: " + j.status().message());
  }
  ASSIGN_OR_RETURN(BuildResult r, ParseResult(*j, staged));
  if (r.key != key) {
    return FailedPrecondition(staged + ": the record names key '" + r.key +
                              "'");
  }
  r.cached = false;
  r.cache_problem.clear();
  r.sha256.clear();  // Ours, of the copies, below.

  // The entry is assembled aside (ours alone) and renamed into place.
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  const fs::path entry = fs::path(cache_dir) / key;
  const fs::path tmp =
      fs::path(cache_dir) / (".tmp-" + key + "-" + std::to_string(::getpid()));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp / "bin", ec);
  if (ec) return IoError("cannot create " + tmp.string() + ": " + ec.message());
  auto fail = [&](Status s) {
    fs::remove_all(tmp, ec);
    return s;
  };
  if (r.built) {
    StatusOr<Fd> bin = OpenDirAt(dir.get(), "bin", staged + "/bin");
    if (!bin.ok()) return fail(FailedPrecondition(bin.status().message()));
    for (const std::string& b : TargetBinaries()) {
      const std::string what = staged + "/bin/" + b;
      StatusOr<Fd> f = OpenFileAt(bin->get(), b, what, max_binary_bytes, &size);
      if (!f.ok()) return fail(FailedPrecondition(f.status().message()));
      StatusOr<std::string> hex =
          CopyHashing(f->get(), tmp / "bin" / b, max_binary_bytes, what);
      if (!hex.ok()) return fail(hex.status());
      r.sha256[b] = *hex;
    }
  }
  Json out = r.ToJson();
  std::erase_if(out.mutable_object(), [](const auto& kv) {
    return kv.first == "cached" || kv.first == "infra";
  });
  {
    const fs::path rp = tmp / "result.json";
    Fd w(::open(rp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    const std::string body = out.DumpPretty() + "\n";
    if (!w.ok() || ::write(w.get(), body.data(), body.size()) !=
                       static_cast<ssize_t>(body.size())) {
      return fail(IoError("cannot write " + rp.string()));
    }
  }
  fs::remove_all(entry, ec);
  fs::rename(tmp, entry, ec);
  if (ec) {
    return fail(IoError("cannot move " + tmp.string() + " to " +
                        entry.string() + ": " + ec.message()));
  }
  if (r.built) r.bin_dir = entry.string() + "/bin";
  return r;
}

}  // namespace trench::hlo_bisect
