#include "triage/reduce/interestingness.h"

#include <algorithm>
#include <filesystem>

#include "base/subprocess.h"
#include "triage/case/verdict.h"
#include "triage/reduce/ddmin.h"

namespace trench::hlo_reduce {
namespace {

namespace fs = std::filesystem;
using hlo_diff::Case;

std::string StringField(const Json& j, std::string_view key) {
  const Json* v = j.Find(key);
  return v && v->is_string() ? v->string_value() : "";
}

std::string WorkerDir(const std::string& root, int w) {
  return (fs::path(root) / ("w" + std::to_string(w))).string();
}

Status MakeDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create: " + ec.message());
  return Status();
}

}  // namespace

// ---- Interestingness ----

Status Interestingness::SetRepeats(int repeats, double min_rate) {
  if (repeats < 1) return InvalidArgument("--repeats expects an integer >= 1");
  if (!(min_rate > 0) || min_rate > 1) {
    return InvalidArgument("--min-rate expects a rate in (0, 1]");
  }
  repeats_ = repeats;
  min_rate_ = min_rate;
  return Status();
}

StatusOr<bool> Interestingness::IsInteresting(const Case& c, int worker) {
  if (repeats_ == 1) return RunOnce(c, worker);
  ASSIGN_OR_RETURN(ddmin::Outcome o,
                   ddmin::RepeatTest([&] { return RunOnce(c, worker); },
                                     repeats_, min_rate_));
  return o == ddmin::Outcome::kInteresting;
}

StatusOr<double> Interestingness::MeasureRate(const Case& c, int worker) {
  int hits = 0;
  for (int i = 0; i < repeats_; ++i) {
    ASSIGN_OR_RETURN(bool yes, RunOnce(c, worker));
    hits += yes;
  }
  return double(hits) / repeats_;
}

// ---- Fingerprint ----

Fingerprint Fingerprint::FromSignature(const hlo_diff::Signature& sig) {
  Fingerprint f;
  f.status = hlo_diff::VerdictStatusName(sig.status);
  if (hlo_diff::IsValueFailure(sig.status)) {
    if (sig.dtype) f.dtype = *sig.dtype;
  } else if (hlo_diff::IsCrash(sig.status)) {
    f.stage = sig.stage;
    f.message = sig.message;
    if (sig.status == hlo_diff::VerdictStatus::kCompileCrash) {
      f.pass = sig.pass.value_or("");
    }
  }
  return f;
}

bool Fingerprint::Matches(const Fingerprint& o) const {
  return status == o.status && dtype == o.dtype && stage == o.stage &&
         message == o.message && pass == o.pass;
}

Json Fingerprint::ToJson() const {
  Json j = Json::MakeObject();
  j["status"] = status;
  if (hlo_diff::IsValueFailureStatus(status)) j["dtype"] = dtype;
  if (!stage.empty()) j["stage"] = stage;
  if (!message.empty()) j["message"] = message;
  if (!pass.empty()) j["pass"] = pass;
  return j;
}

std::string CulpritFromSignature(const Json& sig) {
  if (!sig.is_object() || sig.Find("site") == nullptr) return "";
  return StringField(sig, "pass");
}

// ---- SameBugTest ----

SameBugTest::SameBugTest(SameBugOptions options)
    : options_(std::move(options)) {
  for (int w = 0; w < options_.jobs; ++w) {
    runners_.push_back(
        std::make_unique<hlo_diff::TargetRunner>(options_.target));
  }
}

SameBugTest::~SameBugTest() = default;

StatusOr<Fingerprint> SameBugTest::Run(const Case& c, int w,
                                       const std::string& sub,
                                       hlo_diff::Verdict* verdict) {
  if (w < 0 || w >= int(runners_.size())) {
    return InvalidArgument("worker index out of range");
  }
  ++runs_;
  const std::string dir =
      (fs::path(WorkerDir(options_.work_dir, w)) / sub).string();
  // One parse of the candidate's module, shared by the oracle and the
  // target run (ComputeVerdict).
  ASSIGN_OR_RETURN(hlo_diff::Verdict v,
                   hlo_diff::ComputeVerdict(c, *runners_[w], dir));
  Fingerprint f = Fingerprint::FromSignature(v.signature);
  if (f.status.empty()) f.status = v.status_name();
  if (verdict) *verdict = std::move(v);
  return f;
}

StatusOr<bool> SameBugTest::CulpritHolds(const Case& c, int w) {
  if (!check_culprit_) return true;
  Case variant = c;
  const std::string& p = options_.culprit_pass;
  if (p == "codegen") {
    variant.options.pass_limit = 0;
  } else if (std::find(variant.options.disable_passes.begin(),
                       variant.options.disable_passes.end(),
                       p) == variant.options.disable_passes.end()) {
    variant.options.disable_passes.push_back(p);
  }
  ASSIGN_OR_RETURN(Fingerprint f, Run(variant, w, "culprit"));
  const bool same = f.Matches(reference_);
  return p == "codegen" ? same : !same;
}

StatusOr<std::unique_ptr<SameBugTest>> SameBugTest::Create(
    const Case& reference, SameBugOptions options) {
  if (options.jobs < 1) return InvalidArgument("--jobs expects N >= 1");
  RETURN_IF_ERROR(MakeDir(options.work_dir));
  std::unique_ptr<SameBugTest> t(new SameBugTest(std::move(options)));
  ASSIGN_OR_RETURN(t->reference_,
                   t->Run(reference, 0, "reference", &t->reference_verdict_));
  const std::string& status = t->reference_.status;
  if (!hlo_diff::IsFailureStatus(status)) {
    return FailedPrecondition(
        "the case does not fail with a bug the reducer can keep (verdict " +
        status + ": " + t->reference_verdict_.message + ")");
  }
  const std::string& p = t->options_.culprit_pass;
  if (p.empty()) return t;
  t->check_culprit_ = true;
  Case variant = reference;
  if (p == "codegen") {
    variant.options.pass_limit = 0;
  } else {
    variant.options.disable_passes.push_back(p);
  }
  hlo_diff::Verdict v;
  ASSIGN_OR_RETURN(Fingerprint f, t->Run(variant, 0, "culprit", &v));
  if (p != "codegen" && v.status == hlo_diff::VerdictStatus::kInvalidInput) {
    // The target refuses to disable it (required pass, or unknown name).
    t->check_culprit_ = false;
    t->culprit_note_ =
        "skipped: the target does not run with "
        "--disable-passes=" +
        p + " (" + v.message + ")";
    return t;
  }
  const bool same = f.Matches(t->reference_);
  if (p == "codegen" && !same) {
    // A pass exposes this back-end bug (hlo-bisect's "trigger"): the
    // unoptimized module does not reach the buggy code, so no pass-based
    // check tells this bug from another.
    t->check_culprit_ = false;
    t->culprit_note_ =
        "skipped: the back-end failure needs optimized input (verdict " +
        f.status + " with --pass-limit=0)";
    return t;
  }
  if (p != "codegen" && same) {
    return FailedPrecondition(
        "culprit " + p + ": the failure remains with --disable-passes=" + p);
  }
  t->culprit_note_ = "checked";
  return t;
}

StatusOr<bool> SameBugTest::RunOnce(const Case& c, int w) {
  ASSIGN_OR_RETURN(Fingerprint f, Run(c, w, "candidate"));
  if (!f.Matches(reference_)) return false;
  return CulpritHolds(c, w);
}

Json SameBugTest::Describe() const {
  Json j = Json::MakeObject();
  j["kind"] = "same_bug";
  j["reference"] = reference_.ToJson();
  j["culprit_pass"] =
      options_.culprit_pass.empty() ? Json() : Json(options_.culprit_pass);
  j["culprit_check"] = culprit_note_;
  return j;
}

// ---- ExternalCommandTest ----

std::string ShellQuoteArg(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') {
      out += "'\\''";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

StatusOr<std::unique_ptr<ExternalCommandTest>> ExternalCommandTest::Create(
    ExternalCommandOptions options) {
  if (options.command.empty()) return InvalidArgument("--test: empty command");
  if (options.jobs < 1) return InvalidArgument("--jobs expects N >= 1");
  if (!(options.timeout_seconds > 0)) {
    return InvalidArgument("--timeout expects seconds > 0");
  }
  RETURN_IF_ERROR(MakeDir(options.work_dir));
  return std::unique_ptr<ExternalCommandTest>(
      new ExternalCommandTest(std::move(options)));
}

StatusOr<bool> ExternalCommandTest::RunOnce(const Case& c, int w) {
  if (w < 0 || w >= options_.jobs) {
    return InvalidArgument("worker index out of range");
  }
  ++runs_;
  const fs::path dir = fs::path(WorkerDir(options_.work_dir, w)) / "case";
  std::error_code ec;
  fs::remove_all(dir, ec);
  RETURN_IF_ERROR(hlo_diff::WriteCase(dir.string(), c));
  const std::string path =
      options_.module_path ? (dir / "module.hlo").string() : dir.string();
  hlo_diff::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", options_.command + " " + ShellQuoteArg(path)};
  spec.timeout_seconds = options_.timeout_seconds;
  spec.capture_bytes = 4 << 10;
  ASSIGN_OR_RETURN(hlo_diff::ProcessResult r, hlo_diff::RunProcess(spec));
  return !r.timed_out && r.signal == 0 && r.exit_code == 0;
}

Json ExternalCommandTest::Describe() const {
  Json j = Json::MakeObject();
  j["kind"] = "command";
  j["command"] = options_.command;
  j["argument"] = options_.module_path ? "module.hlo" : "case_dir";
  j["timeout_seconds"] = options_.timeout_seconds;
  return j;
}

}  // namespace trench::hlo_reduce
