// A sandboxed run as files (run_files.h).
#include "sandbox/run_files.h"

#include <stdio.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json_reader.h"

namespace trench::sandbox {
namespace {

constexpr size_t kMaxJsonBytes = 1 << 20;

Status WriteFileAtomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << bytes;
    if (!f.flush()) return IoError("cannot write " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return IoError("cannot rename " + tmp + " to " + path);
  }
  return Status::Ok();
}

// At most `limit` bytes of `path`; *dropped gets the rest's size.
StatusOr<std::string> ReadBounded(const std::string& path, uint64_t limit,
                                  uint64_t* dropped) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return IoError("cannot read " + path);
  if (limit == 0) limit = 64 << 20;  // "No limit": still bounded here.
  std::string bytes(limit, '\0');
  f.read(bytes.data(), static_cast<std::streamsize>(limit));
  bytes.resize(static_cast<size_t>(f.gcount()));
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  *dropped = !ec && size > bytes.size() ? size - bytes.size() : 0;
  return bytes;
}

StatusOr<Json> ReadJsonFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound(path + " is not there");
  std::string text(kMaxJsonBytes + 1, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(f.gcount()));
  if (text.size() > kMaxJsonBytes) {
    return InvalidArgument(path + " is larger than 1 MiB");
  }
  StatusOr<Json> j = ParseJson(text);
  if (!j.ok()) return InvalidArgument(path + ": " + j.status().message());
  return j;
}

template <typename E>
StatusOr<E> EnumFrom(const JsonReader& r, const char* key,
                     std::initializer_list<E> values, const char* (*name)(E)) {
  ASSIGN_OR_RETURN(std::string s, r.String(key));
  for (E e : values) {
    if (s == name(e)) return e;
  }
  return r.Error(key, "unknown value '" + s + "'");
}

StatusOr<Isolation> IsolationFrom(const JsonReader& r) {
  return EnumFrom<Isolation>(r, "isolation",
                             {Isolation::kAuto, Isolation::kBuiltin,
                              Isolation::kBwrap, Isolation::kNone},
                             IsolationName);
}

}  // namespace

Json OptionsToJson(const Options& o) {
  Json l = Json::MakeObject();
  l["wall_seconds"] = o.limits.wall_seconds;
  l["cpu_seconds"] = o.limits.cpu_seconds;
  l["address_space_bytes"] = o.limits.address_space_bytes;
  l["file_size_bytes"] = o.limits.file_size_bytes;
  l["open_files"] = o.limits.open_files;
  l["processes"] = o.limits.processes;
  l["memory_bytes"] = o.limits.memory_bytes;
  l["total_processes"] = o.limits.total_processes;
  l["stdout_bytes"] = o.limits.stdout_bytes;
  l["stderr_bytes"] = o.limits.stderr_bytes;
  Json j = Json::MakeObject();
  j["argv"] = Json::MakeStringArray(o.argv);
  j["env"] = Json::MakeStringArray(o.env);
  j["work_dir"] = o.work_dir;
  j["read_only_paths"] = Json::MakeStringArray(o.read_only_paths);
  j["masked_paths"] = Json::MakeStringArray(o.masked_paths);
  j["limits"] = l;
  j["uid"] = static_cast<uint64_t>(o.uid);
  j["gid"] = static_cast<uint64_t>(o.gid);
  j["chown_work_dir"] = o.chown_work_dir;
  j["use_namespaces"] = o.use_namespaces;
  j["isolation"] = IsolationName(o.isolation);
  j["tmp_size_bytes"] = o.tmp_size_bytes;
  j["seccomp"] = SeccompModeName(o.seccomp);
  return j;
}

StatusOr<Options> OptionsFromJson(const Json& j) {
  const JsonReader r(j, "request");
  RETURN_IF_ERROR(r.Check());
  Options o;
  ASSIGN_OR_RETURN(o.argv, r.Strings("argv"));
  if (o.argv.empty()) return r.Error("argv", "empty");
  ASSIGN_OR_RETURN(o.env, r.Strings("env"));
  ASSIGN_OR_RETURN(o.work_dir, r.String("work_dir"));
  ASSIGN_OR_RETURN(o.read_only_paths, r.Strings("read_only_paths"));
  ASSIGN_OR_RETURN(o.masked_paths, r.Strings("masked_paths"));
  ASSIGN_OR_RETURN(const Json* lj, r.Get("limits"));
  const JsonReader l = r.Sub(*lj, "limits");
  RETURN_IF_ERROR(l.Check());
  ASSIGN_OR_RETURN(o.limits.wall_seconds, l.NonNegative("wall_seconds"));
  ASSIGN_OR_RETURN(o.limits.cpu_seconds, l.Uint("cpu_seconds"));
  ASSIGN_OR_RETURN(o.limits.address_space_bytes, l.Uint("address_space_bytes"));
  ASSIGN_OR_RETURN(o.limits.file_size_bytes, l.Uint("file_size_bytes"));
  ASSIGN_OR_RETURN(o.limits.open_files, l.Uint("open_files"));
  ASSIGN_OR_RETURN(o.limits.processes, l.Uint("processes"));
  ASSIGN_OR_RETURN(o.limits.memory_bytes, l.Uint("memory_bytes"));
  ASSIGN_OR_RETURN(o.limits.total_processes, l.Uint("total_processes"));
  ASSIGN_OR_RETURN(o.limits.stdout_bytes, l.Uint("stdout_bytes"));
  ASSIGN_OR_RETURN(o.limits.stderr_bytes, l.Uint("stderr_bytes"));
  ASSIGN_OR_RETURN(uint64_t uid, r.Uint("uid"));
  ASSIGN_OR_RETURN(uint64_t gid, r.Uint("gid"));
  if (uid > UINT32_MAX - 1 || gid > UINT32_MAX - 1) {
    return r.Error("uid", "out of range");
  }
  o.uid = static_cast<uid_t>(uid);
  o.gid = static_cast<gid_t>(gid);
  ASSIGN_OR_RETURN(o.chown_work_dir, r.Bool("chown_work_dir"));
  ASSIGN_OR_RETURN(o.use_namespaces, r.Bool("use_namespaces"));
  ASSIGN_OR_RETURN(o.isolation, IsolationFrom(r));
  ASSIGN_OR_RETURN(o.tmp_size_bytes, r.Uint("tmp_size_bytes"));
  ASSIGN_OR_RETURN(
      o.seccomp, EnumFrom<SeccompMode>(r, "seccomp",
                                       {SeccompMode::kOff, SeccompMode::kErrno,
                                        SeccompMode::kKill},
                                       SeccompModeName));
  return o;
}

Json ResultToJson(const Result& x) {
  Json j = Json::MakeObject();
  j["exited"] = x.exited;
  j["exit_code"] = x.exit_code;
  j["signal"] = x.signal;
  j["timed_out"] = x.timed_out;
  j["limits_hit"] = x.limits_hit;
  j["wall_seconds"] = x.wall_seconds;
  j["cpu_seconds"] = x.cpu_seconds;
  j["max_rss_bytes"] = x.max_rss_bytes;
  j["memory_peak_bytes"] = x.memory_peak_bytes;
  j["oom_killed"] = x.oom_killed;
  j["stdout_truncated"] = x.stdout_truncated;
  j["stderr_truncated"] = x.stderr_truncated;
  j["namespaced"] = x.namespaced;
  j["isolation"] = IsolationName(x.isolation);
  return j;
}

StatusOr<Result> ResultFromJson(const Json& j) {
  const JsonReader r(j, "result");
  RETURN_IF_ERROR(r.Check());
  Result x;
  ASSIGN_OR_RETURN(x.exited, r.Bool("exited"));
  ASSIGN_OR_RETURN(int64_t code, r.Int("exit_code"));
  ASSIGN_OR_RETURN(int64_t signal, r.Int("signal"));
  if (code < -1 || code > 255 || signal < 0 || signal > 64) {
    return r.Error("exit_code", "out of range");
  }
  x.exit_code = static_cast<int>(code);
  x.signal = static_cast<int>(signal);
  ASSIGN_OR_RETURN(x.timed_out, r.Bool("timed_out"));
  ASSIGN_OR_RETURN(uint64_t hit, r.Uint("limits_hit"));
  x.limits_hit = static_cast<unsigned>(hit);
  ASSIGN_OR_RETURN(x.wall_seconds, r.NonNegative("wall_seconds"));
  ASSIGN_OR_RETURN(x.cpu_seconds, r.NonNegative("cpu_seconds"));
  ASSIGN_OR_RETURN(x.max_rss_bytes, r.Uint("max_rss_bytes"));
  ASSIGN_OR_RETURN(x.memory_peak_bytes, r.Uint("memory_peak_bytes"));
  ASSIGN_OR_RETURN(x.oom_killed, r.Bool("oom_killed"));
  ASSIGN_OR_RETURN(x.stdout_truncated, r.Uint("stdout_truncated"));
  ASSIGN_OR_RETURN(x.stderr_truncated, r.Uint("stderr_truncated"));
  ASSIGN_OR_RETURN(x.namespaced, r.Bool("namespaced"));
  ASSIGN_OR_RETURN(x.isolation, IsolationFrom(r));
  return x;
}

Status WriteRunRequest(const std::string& dir, const Options& options) {
  return WriteFileAtomically(dir + "/request.json",
                             OptionsToJson(options).DumpPretty() + "\n");
}

StatusOr<Options> ReadRunRequest(const std::string& dir) {
  const std::string path = dir + "/request.json";
  ASSIGN_OR_RETURN(Json j, ReadJsonFile(path));
  StatusOr<Options> o = OptionsFromJson(j);
  if (!o.ok()) {
    return Status(o.status().code(), path + ": " + o.status().message());
  }
  return o;
}

Status WriteRunResult(const std::string& dir, const Result& result) {
  RETURN_IF_ERROR(WriteFileAtomically(dir + "/stdout", result.stdout_data));
  RETURN_IF_ERROR(WriteFileAtomically(dir + "/stderr", result.stderr_data));
  return WriteFileAtomically(dir + "/result.json",
                             ResultToJson(result).DumpPretty() + "\n");
}

StatusOr<Result> ReadRunResult(const std::string& dir, const Limits& limits) {
  ASSIGN_OR_RETURN(Json j, ReadJsonFile(dir + "/result.json"));
  ASSIGN_OR_RETURN(Result r, ResultFromJson(j));
  uint64_t dropped = 0;
  ASSIGN_OR_RETURN(r.stdout_data,
                   ReadBounded(dir + "/stdout", limits.stdout_bytes, &dropped));
  r.stdout_truncated += dropped;
  ASSIGN_OR_RETURN(r.stderr_data,
                   ReadBounded(dir + "/stderr", limits.stderr_bytes, &dropped));
  r.stderr_truncated += dropped;
  return r;
}

}  // namespace trench::sandbox
