// config/trench.json -> DaemonConfig (daemon_config.h). A small table-free
// reader: each section names its fields, and anything else is refused.
#include "orchestrator/config/daemon_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace trench::orchestrator {
namespace fs = std::filesystem;

const std::vector<std::string>& SwarmRoles() {
  static const std::vector<std::string> roles = {
      "stress_test_author", "reproducer", "minimizer", "patch_drafter"};
  return roles;
}

const std::vector<std::string>& LlmBackends() {
  static const std::vector<std::string> backends = {"anthropic", "openai"};
  return backends;
}

namespace {

// Reads the members of one JSON object, each through its own reader, and
// refuses members nobody asked for.
class Section {
 public:
  Section(const Json& object, std::string path, std::string file)
      : object_(object), path_(std::move(path)), file_(std::move(file)) {}

  Status Check() const {
    if (!object_.is_object()) return Error("", "expected an object");
    for (const auto& [key, value] : object_.object()) {
      if (!known_.count(key)) {
        return InvalidArgument(file_ + ": " + Name(key) +
                               ": unknown field (a typo?)");
      }
    }
    return Status::Ok();
  }
  Status Error(const std::string& key, const std::string& what) const {
    std::string name = key.empty() ? path_ : Name(key);
    return InvalidArgument(file_ + ": " + (name.empty() ? "" : name + ": ") +
                           what);
  }
  const Json* Get(const std::string& key) {
    known_.insert(key);
    return object_.is_object() ? object_.Find(key) : nullptr;
  }
  const std::string& file() const { return file_; }
  // An array of non-empty strings.
  Status StringList(const std::string& key, std::vector<std::string>* out) {
    const Json* v = Get(key);
    if (!v) return Status::Ok();
    if (!v->is_array()) return Error(key, "expected an array of strings");
    out->clear();
    for (const Json& e : v->array()) {
      if (!e.is_string() || e.string_value().empty()) {
        return Error(key,
                     "expected an array of non-empty strings, got " + e.Dump());
      }
      out->push_back(e.string_value());
    }
    return Status::Ok();
  }
  std::string Name(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  Status String(const std::string& key, std::string* out) {
    const Json* v = Get(key);
    if (!v) return Status::Ok();
    if (!v->is_string())
      return Error(key, "expected a string, got " + v->Dump());
    *out = v->string_value();
    return Status::Ok();
  }
  Status Path(const std::string& key, const std::string& base,
              std::string* out) {
    RETURN_IF_ERROR(String(key, out));
    if (!out->empty() && fs::path(*out).is_relative()) {
      *out = (fs::path(base) / *out).lexically_normal().string();
    }
    return Status::Ok();
  }
  Status PathList(const std::string& key, const std::string& base,
                  std::vector<std::string>* out) {
    const Json* v = Get(key);
    if (!v) return Status::Ok();
    if (!v->is_array()) return Error(key, "expected an array of paths");
    out->clear();
    for (const Json& e : v->array()) {
      if (!e.is_string() || e.string_value().empty()) {
        return Error(key, "expected an array of paths, got " + e.Dump());
      }
      fs::path p(e.string_value());
      out->push_back((p.is_relative() ? fs::path(base) / p : p)
                         .lexically_normal()
                         .string());
    }
    return Status::Ok();
  }
  Status Bool(const std::string& key, bool* out) {
    const Json* v = Get(key);
    if (!v) return Status::Ok();
    if (!v->is_bool())
      return Error(key, "expected true or false, got " + v->Dump());
    *out = v->bool_value();
    return Status::Ok();
  }
  template <typename T>
  Status Int(const std::string& key, int64_t min, int64_t max, T* out) {
    const Json* v = Get(key);
    if (!v) return Status::Ok();
    if (!v->is_integer() || !v->GetInt64().ok() || *v->GetInt64() < min ||
        *v->GetInt64() > max) {
      return Error(key, "expected an integer in [" + std::to_string(min) +
                            ", " + std::to_string(max) + "], got " + v->Dump());
    }
    *out = static_cast<T>(*v->GetInt64());
    return Status::Ok();
  }
  Status Seconds(const std::string& key, double* out) {
    const Json* v = Get(key);
    if (!v) return Status::Ok();
    if (!v->is_number() || v->number_value() < 0) {
      return Error(key, "expected a number of seconds >= 0, got " + v->Dump());
    }
    *out = v->number_value();
    return Status::Ok();
  }
  Status Amount(const std::string& key, double* out) {
    const Json* v = Get(key);
    if (!v) return Status::Ok();
    if (!v->is_number() || v->number_value() < 0) {
      return Error(key, "expected an amount >= 0, got " + v->Dump());
    }
    *out = v->number_value();
    return Status::Ok();
  }
  Status OneOf(const std::string& key, const std::set<std::string>& values,
               std::string* out) {
    RETURN_IF_ERROR(String(key, out));
    if (Get(key) && !values.count(*out)) {
      std::string list;
      for (const std::string& s : values)
        list += (list.empty() ? "" : ", ") + s;
      return Error(key, "expected one of " + list + ", got \"" + *out + "\"");
    }
    return Status::Ok();
  }
  // A nested object member, read by `body` (absent: nothing to read).
  Status Object(const std::string& key,
                const std::function<Status(Section&)>& body) {
    const Json* v = Get(key);
    if (!v) return Status::Ok();
    Section inner(*v, Name(key), file_);
    if (!v->is_object()) return inner.Error("", "expected an object");
    RETURN_IF_ERROR(body(inner));
    return inner.Check();
  }

 private:
  const Json& object_;
  std::string path_, file_;
  std::set<std::string> known_;
};

// Names that reach a Slurm command line: 1-64 of [A-Za-z0-9_.-], not
// starting with '-' (the Slurm client checks them again).
bool IsSlurmName(const std::string& s) {
  if (s.empty() || s.size() > 64 || s[0] == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' ||
           ch == '.' || ch == '-';
  });
}

Status ReadExecutor(Section& e, const std::string& base_dir, DaemonConfig* c) {
  ExecutorConfig& x = c->executor;
  RETURN_IF_ERROR(e.OneOf("kind", {"local", "slurm"}, &x.kind));
  RETURN_IF_ERROR(e.String("partition", &x.partition));
  RETURN_IF_ERROR(e.String("account", &x.account));
  RETURN_IF_ERROR(e.Int("max_jobs", 1, 100000, &x.max_jobs));
  RETURN_IF_ERROR(e.Int("time_limit", 0, 525600, &x.time_limit_minutes));
  RETURN_IF_ERROR(e.String("shared_dir", &x.shared_dir));
  RETURN_IF_ERROR(e.StringList("extra_args", &x.extra_args));
  RETURN_IF_ERROR(e.Path("slurm_bin_dir", base_dir, &x.slurm_bin_dir));
  RETURN_IF_ERROR(e.Path("slurm_conf", base_dir, &x.slurm_conf));
  RETURN_IF_ERROR(e.Seconds("poll_seconds", &x.poll_seconds));
  RETURN_IF_ERROR(e.Check());  // A typo first: "partiton" is not missing.
  if (x.poll_seconds < 0.05 || x.poll_seconds > 60) {
    return e.Error("poll_seconds", "expected 0.05 to 60 seconds");
  }
  for (const std::string& a : x.extra_args) {
    const bool printable = std::all_of(
        a.begin(), a.end(), [](char ch) { return ch > ' ' && ch < 127; });
    if (a.rfind("--", 0) != 0 || a.size() < 3 || !printable) {
      return e.Error("extra_args",
                     "expected sbatch options such as "
                     "\"--qos=low\" (\"--\", printable, no "
                     "spaces), got " +
                         Json(a).Dump());
    }
  }
  if (!x.account.empty() && !IsSlurmName(x.account)) {
    return e.Error("account",
                   "expected a Slurm name (letters, digits, _ . "
                   "-), got " +
                       Json(x.account).Dump());
  }
  if (!x.partition.empty() && !IsSlurmName(x.partition)) {
    return e.Error("partition",
                   "expected a Slurm name (letters, digits, _ "
                   ". -), got " +
                       Json(x.partition).Dump());
  }
  if (x.kind != "slurm") return Status::Ok();
  if (x.partition.empty()) {
    return e.Error("partition", "required with kind \"slurm\"");
  }
  if (x.shared_dir.empty() || fs::path(x.shared_dir).is_relative()) {
    return e.Error("shared_dir",
                   "required with kind \"slurm\": an absolute path every "
                   "node mounts, got " +
                       Json(x.shared_dir).Dump());
  }
  x.shared_dir = fs::path(x.shared_dir).lexically_normal().string();
  while (x.shared_dir.size() > 1 && x.shared_dir.back() == '/') {
    x.shared_dir.pop_back();
  }
  return Status::Ok();
}

Status ReadSwarm(Section& swarm, DaemonConfig* c) {
  std::set<std::string> brains = {"builtin"};
  for (const std::string& b : LlmBackends()) brains.insert(b);
  for (const std::string& role : SwarmRoles()) {
    RETURN_IF_ERROR(swarm.Object(role, [&](Section& r) {
      RoleConfig& rc = c->swarm[role];
      RETURN_IF_ERROR(r.Int("count", 0, 64, &rc.count));
      return r.OneOf("brain", brains, &rc.brain);
    }));
  }
  return Status::Ok();
}

// llm.<backend>: LlmBackendConfig (daemon_config.h).
Status ReadLlmBackend(Section& s, LlmBackendConfig* b) {
  RETURN_IF_ERROR(s.String("base_url", &b->base_url));
  if (b->base_url.rfind("http://", 0) != 0 &&
      b->base_url.rfind("https://", 0) != 0) {
    return s.Error("base_url", "required: an http:// or https:// URL, got \"" +
                                   b->base_url + "\"");
  }
  RETURN_IF_ERROR(s.String("model", &b->model));
  if (b->model.empty()) return s.Error("model", "required (the model name)");
  RETURN_IF_ERROR(s.String("api_key_env", &b->api_key_env));
  RETURN_IF_ERROR(s.Bool("stream", &b->stream));
  RETURN_IF_ERROR(s.Seconds("timeout_seconds", &b->timeout_seconds));
  if (!(b->timeout_seconds > 0)) {
    return s.Error("timeout_seconds", "expected a number of seconds > 0");
  }
  RETURN_IF_ERROR(s.Int("max_retries", 0, 100, &b->max_retries));
  RETURN_IF_ERROR(
      s.Seconds("max_retry_after_seconds", &b->max_retry_after_seconds));
  RETURN_IF_ERROR(s.Amount("input_usd_per_mtok", &b->input_usd_per_mtok));
  return s.Amount("output_usd_per_mtok", &b->output_usd_per_mtok);
}

Status ReadLlm(Section& llm, DaemonConfig* c) {
  for (const std::string& backend : LlmBackends()) {
    RETURN_IF_ERROR(llm.Object(backend, [&](Section& s) {
      return ReadLlmBackend(s, &c->llm[backend]);
    }));
  }
  return Status::Ok();
}

// notify: NotifyConfig (notify_config.h).
Status ReadNotify(Section& n, NotifyConfig* c) {
  if (const Json* hooks = n.Get("webhooks")) {
    if (!hooks->is_array()) {
      return n.Error("webhooks", "expected an array of objects");
    }
    for (size_t i = 0; i < hooks->array().size(); ++i) {
      Section h(hooks->array()[i],
                n.Name("webhooks[" + std::to_string(i) + "]"), n.file());
      if (!hooks->array()[i].is_object()) {
        return h.Error("", "expected an object");
      }
      NotifyWebhookConfig w;
      RETURN_IF_ERROR(h.String("url", &w.url));
      if (w.url.rfind("http://", 0) != 0 && w.url.rfind("https://", 0) != 0) {
        return h.Error("url", "required: an http:// or https:// URL, got \"" +
                                  w.url + "\"");
      }
      RETURN_IF_ERROR(h.String("secret_env", &w.secret_env));
      if (w.secret_env.empty()) {
        return h.Error("secret_env",
                       "required: the variable holding the signing secret");
      }
      RETURN_IF_ERROR(h.StringList("events", &w.events));
      RETURN_IF_ERROR(h.Check());
      c->webhooks.push_back(std::move(w));
    }
  }
  RETURN_IF_ERROR(n.Object("email", [&](Section& e) {
    NotifyEmailConfig& m = c->email;
    RETURN_IF_ERROR(e.String("smtp_url", &m.smtp_url));
    if (m.smtp_url.rfind("smtp://", 0) != 0 &&
        m.smtp_url.rfind("smtps://", 0) != 0) {
      return e.Error(
          "smtp_url",
          "required: an smtp:// or smtps:// URL, got \"" + m.smtp_url + "\"");
    }
    RETURN_IF_ERROR(e.String("from", &m.from));
    if (m.from.empty()) return e.Error("from", "required (an address)");
    RETURN_IF_ERROR(e.StringList("to", &m.to));
    if (m.to.empty()) return e.Error("to", "required (at least one address)");
    RETURN_IF_ERROR(e.String("username_env", &m.username_env));
    RETURN_IF_ERROR(e.String("password_env", &m.password_env));
    return e.OneOf("starttls", {"none", "try", "require"}, &m.starttls);
  }));
  RETURN_IF_ERROR(n.Int("max_attempts", 1, 1000, &c->max_attempts));
  RETURN_IF_ERROR(n.Seconds("backoff_seconds", &c->backoff_seconds));
  return n.Seconds("max_age_seconds", &c->max_age_seconds);
}

// Every role's brain is built in or has its llm section.
Status CheckBrains(const DaemonConfig& c, const std::string& file) {
  for (const auto& [role, rc] : c.swarm) {
    if (rc.brain != "builtin" && !c.llm.count(rc.brain)) {
      return InvalidArgument(file + ": swarm." + role + ".brain: \"" +
                             rc.brain + "\" has no llm." + rc.brain +
                             " section (base_url, model, api_key_env)");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<DaemonConfig> ParseDaemonConfig(std::string_view text,
                                         const std::string& file_name,
                                         const std::string& base_dir) {
  StatusOr<Json> parsed = ParseJson(text);
  if (!parsed.ok()) {
    return InvalidArgument(file_name + ":" + parsed.status().message());
  }
  DaemonConfig c;
  for (const std::string& role : SwarmRoles()) c.swarm[role] = RoleConfig{};
  Section top(*parsed, "", file_name);
  if (!parsed->is_object()) return top.Error("", "expected a JSON object");
  RETURN_IF_ERROR(top.Path("var_dir", base_dir, &c.var_dir));
  RETURN_IF_ERROR(top.Path("repo", base_dir, &c.repo));
  RETURN_IF_ERROR(top.String("branch", &c.branch));
  RETURN_IF_ERROR(top.String("good_commit", &c.good_commit));
  RETURN_IF_ERROR(top.String("build_command", &c.build_command));
  RETURN_IF_ERROR(top.Path("tools_dir", base_dir, &c.tools_dir));
  RETURN_IF_ERROR(top.Path("prompts_dir", base_dir, &c.prompts_dir));
  RETURN_IF_ERROR(top.Seconds("poll_seconds", &c.poll_seconds));
  RETURN_IF_ERROR(top.Object("fuzz", [&](Section& f) {
    RETURN_IF_ERROR(f.Seconds("budget_seconds", &c.fuzz_budget_seconds));
    RETURN_IF_ERROR(f.Int("jobs", 1, 256, &c.fuzz_jobs));
    RETURN_IF_ERROR(f.Int("shards", 1, 1024, &c.fuzz_shards));
    RETURN_IF_ERROR(f.Int("seed", 0, INT64_MAX, &c.fuzz_seed));
    RETURN_IF_ERROR(f.Bool("continuous", &c.fuzz_continuous));
    RETURN_IF_ERROR(f.Int("reach_stop_programs", 0, INT64_MAX,
                          &c.fuzz_reach_stop_programs));
    RETURN_IF_ERROR(f.OneOf("coverage", {"auto", "off"}, &c.fuzz_coverage));
    RETURN_IF_ERROR(
        f.String("coverage_build_command", &c.fuzz_coverage_build_command));
    return f.Path("corpus", base_dir, &c.fuzz_corpus);
  }));
  RETURN_IF_ERROR(top.Int("reproduce_runs", 1, 1000, &c.reproduce_runs));
  RETURN_IF_ERROR(top.Seconds("reduce_seconds", &c.reduce_seconds));
  RETURN_IF_ERROR(top.PathList("regression", base_dir, &c.regression));
  RETURN_IF_ERROR(top.Seconds("verify_fuzz_seconds", &c.verify_fuzz_seconds));
  RETURN_IF_ERROR(top.Int("max_draft_rounds", 1, 100, &c.max_draft_rounds));
  RETURN_IF_ERROR(
      top.Seconds("build_timeout_seconds", &c.build_timeout_seconds));
  RETURN_IF_ERROR(top.Object("builder", [&](Section& b) {
    RETURN_IF_ERROR(b.Int("disk_bytes", 0, INT64_MAX, &c.builder_disk_bytes));
    RETURN_IF_ERROR(b.Int("inodes", 1024, int64_t{1} << 31, &c.builder_inodes));
    return b.Bool("clean", &c.builder_clean);
  }));
  RETURN_IF_ERROR(top.Seconds("step_timeout_seconds", &c.step_timeout_seconds));
  RETURN_IF_ERROR(
      top.Int("max_concurrent_runs", 1, 1024, &c.max_concurrent_runs));
  RETURN_IF_ERROR(top.Object(
      "executor", [&](Section& e) { return ReadExecutor(e, base_dir, &c); }));
  RETURN_IF_ERROR(top.Seconds("drain_seconds", &c.drain_seconds));
  RETURN_IF_ERROR(top.Int("max_crashes", 1, 1'000'000, &c.max_crashes));
  RETURN_IF_ERROR(top.Object("http", [&](Section& h) {
    RETURN_IF_ERROR(h.String("address", &c.http_address));
    RETURN_IF_ERROR(h.Int("port", 0, 65535, &c.http_port));
    RETURN_IF_ERROR(h.String("token_env", &c.token_env));
    RETURN_IF_ERROR(h.String("read_token_env", &c.read_token_env));
    RETURN_IF_ERROR(h.Int("body_limit", 1, int64_t{1} << 34, &c.body_limit));
    return h.Int("max_connections", 1, 1 << 20, &c.http_max_connections);
  }));
  RETURN_IF_ERROR(top.Object("sandbox", [&](Section& s) {
    RETURN_IF_ERROR(s.Bool("namespaces", &c.sandbox_namespaces));
    RETURN_IF_ERROR(s.Int("uid", 1, 0x7fffffff, &c.sandbox_uid));
    RETURN_IF_ERROR(s.Int("gid", 1, 0x7fffffff, &c.sandbox_gid));
    RETURN_IF_ERROR(s.Object("uid_range", [&](Section& r) {
      RETURN_IF_ERROR(r.Int("first", 1, 0x7fffffff, &c.sandbox_uid_first));
      return r.Int("count", 0, 65536, &c.sandbox_uid_count);
    }));
    RETURN_IF_ERROR(
        s.Int("run_memory_bytes", 0, INT64_MAX, &c.sandbox_run_memory_bytes));
    RETURN_IF_ERROR(
        s.Int("run_processes", 0, 1 << 22, &c.sandbox_run_processes));
    RETURN_IF_ERROR(
        s.Int("scratch_bytes", 1 << 20, INT64_MAX, &c.sandbox_scratch_bytes));
    RETURN_IF_ERROR(
        s.Int("scratch_inodes", 64, 1 << 30, &c.sandbox_scratch_inodes));
    return s.Int("memory_bytes", 0, INT64_MAX, &c.sandbox_memory_bytes);
  }));
  if (c.sandbox_uid_count > 0 &&
      c.sandbox_uid_count < static_cast<uint32_t>(c.max_concurrent_runs))
    return InvalidArgument(file_name + ": sandbox.uid_range.count: expected " +
                           "at least max_concurrent_runs (" +
                           std::to_string(c.max_concurrent_runs) +
                           ") uids, got " +
                           std::to_string(c.sandbox_uid_count));
  if (uint64_t{c.sandbox_uid_first} + c.sandbox_uid_count > 0x7fffffffu)
    return InvalidArgument(file_name +
                           ": sandbox.uid_range: first + count passes 2^31");
  RETURN_IF_ERROR(top.Object("log", [&](Section& l) {
    RETURN_IF_ERROR(l.OneOf("format", {"human", "json"}, &c.log_format));
    return l.OneOf("level", {"trace", "debug", "info", "warn", "error"},
                   &c.log_level);
  }));
  RETURN_IF_ERROR(
      top.Object("swarm", [&](Section& s) { return ReadSwarm(s, &c); }));
  RETURN_IF_ERROR(
      top.Object("llm", [&](Section& l) { return ReadLlm(l, &c); }));
  RETURN_IF_ERROR(top.Object("budgets", [&](Section& b) {
    RETURN_IF_ERROR(b.Int("turns", 1, 10000, &c.budget_turns));
    RETURN_IF_ERROR(b.Int("tokens", 1, INT64_MAX, &c.budget_tokens));
    RETURN_IF_ERROR(b.Int("bug_tokens", 1, INT64_MAX, &c.budget_bug_tokens));
    RETURN_IF_ERROR(b.Amount("bug_cost_usd", &c.budget_bug_cost_usd));
    return b.Seconds("wall_seconds", &c.budget_wall_seconds);
  }));
  RETURN_IF_ERROR(top.Object("review", [&](Section& r) {
    RETURN_IF_ERROR(
        r.OneOf("on_approve", {"none", "push"}, &c.review_on_approve));
    RETURN_IF_ERROR(r.String("push_token_env", &c.review_push_token_env));
    RETURN_IF_ERROR(r.String("push_remote", &c.review_push_remote));
    if (c.review_push_remote.find("://") == std::string::npos) {
      RETURN_IF_ERROR(r.Path("push_remote", base_dir, &c.review_push_remote));
    }
    if (c.review_on_approve == "push" && c.review_push_remote.empty()) {
      return r.Error("push_remote", "required when on_approve is \"push\"");
    }
    return Status::Ok();
  }));
  RETURN_IF_ERROR(top.Object(
      "notify", [&](Section& n) { return ReadNotify(n, &c.notify); }));
  RETURN_IF_ERROR(top.Check());
  RETURN_IF_ERROR(CheckBrains(c, file_name));
  if (c.repo.empty())
    return top.Error("repo", "required (the target repository)");
  if (c.var_dir.empty())
    return top.Error("var_dir", "required (the state directory)");
  return c;
}

StatusOr<DaemonConfig> LoadDaemonConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot read config " + path);
  std::stringstream text;
  text << in.rdbuf();
  std::string base = fs::absolute(path).parent_path().string();
  return ParseDaemonConfig(text.str(), path, base);
}

}  // namespace trench::orchestrator
