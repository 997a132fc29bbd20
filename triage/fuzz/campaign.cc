#include "triage/fuzz/campaign.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "base/json_nlohmann.h"
#include "triage/case/case_bundle.h"
#include "triage/case/verdict.h"
#include "triage/fuzz/reach_steering.h"
#include "triage/localize/localization_report.h"
#include "triage/localize/localize.h"

namespace trench::fuzz {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// SplitMix64: program i's seed and source choice from the campaign seed.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string StringOr(const Json& j, std::string_view key) {
  const Json* v = j.is_object() ? j.Find(key) : nullptr;
  return v != nullptr && v->is_string() ? v->string_value() : "";
}

// State shared by the jobs; `mu` guards everything but the counters.
struct Shared {
  const CampaignOptions* options = nullptr;
  const TraceCorpus* corpus = nullptr;
  Clock::time_point start;
  std::atomic<int64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  CampaignSummary summary;
  std::map<std::string, size_t> by_sig;          // sig -> index in findings.
  std::map<std::string, size_t> refusal_by_sig;  // sig -> in refusals.
  // Coarse sig -> the signature findings of it are counted under (null
  // while its first case is being localized; `localized` is notified).
  std::map<std::string, Json> dedup_of;
  std::condition_variable localized;
  // With CampaignOptions::changed_lines.
  std::unique_ptr<LineReach> reach;
  std::unique_ptr<ReachSteering> steering;
  std::atomic<int64_t> mutants{0};
  std::atomic<bool> reach_done{false};
};

// The summary's "reach" (null without changed lines).
Json ReachJson(const Shared& s) {
  if (!s.reach) return Json();
  Json j = s.reach->ToJson();
  j["steering"] = s.steering->ToJson();
  j["mutants"] = s.mutants.load();
  j["ended_early"] = s.reach_done.load();
  return j;
}

// Attributes program `c`'s coverage to the changed lines; a program that
// reached some becomes a seed candidate. Ends the campaign once every line
// has its reach_stop_programs programs and nothing was found.
void CountReach(Shared& s, const hlo_diff::Case& c,
                const hlo_diff::Verdict& v) {
  // Seeds are single-device programs (reach_steering.h mutates those).
  if (!s.reach || !v.target || v.target->coverage_hits.empty() ||
      c.mesh.size() > 1) {
    return;
  }
  const std::vector<int> ids = s.reach->map().Reached(v.target->coverage_hits);
  const int fresh = s.reach->Add(ids);
  s.steering->Offer(c.module_text, c.inputs, c.origin, ids, fresh);
  const int64_t n = s.options->reach_stop_programs;
  if (n > 0 && s.reach->AllReachedAtLeast(n)) {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.summary.findings.empty()) {
      s.reach_done = true;
      s.stop = true;
    }
  }
}

bool TakeProgram(Shared& s, int64_t* i) {
  if (s.stop.load()) return false;
  const double now = Since(s.start);
  if (now >= s.options->budget_seconds) return false;
  if (s.options->linger_seconds >= 0) {
    std::lock_guard<std::mutex> lock(s.mu);
    const std::vector<Finding>& f = s.summary.findings;
    if (!f.empty() &&
        now >= f.front().first_seconds + s.options->linger_seconds) {
      return false;
    }
  }
  *i = s.next.fetch_add(1) * s.options->shard_count + s.options->shard_index;
  const int64_t max = s.options->max_programs;
  return max <= 0 || *i < max;
}

// Program i of the campaign: which source and which generator seed.
StatusOr<GeneratedCase> MakeProgram(const Shared& s, int64_t i,
                                    bool* from_trace) {
  const CampaignOptions& o = *s.options;
  const uint64_t h = Mix(o.seed ^ Mix(static_cast<uint64_t>(i)));
  const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
  *from_trace = s.corpus != nullptr && u < o.trace_share;
  const uint64_t program_seed = Mix(h);
  if (s.steering && s.steering->has_seeds()) {
    const double w = static_cast<double>(Mix(h ^ 0x5eed) >> 11) * 0x1.0p-53;
    if (w < o.steer_share) {
      StatusOr<GeneratedCase> m = s.steering->Mutant(program_seed);
      if (m.ok()) {
        *from_trace = false;
        return m;
      }
    }
  }
  if (*from_trace) return s.corpus->Sample(program_seed, o.mutation);
  return GenerateSynthetic(program_seed, o.generator);
}

// The case of a generated program (an SPMD case for an SPMD program);
// *module receives its parsed module.
StatusOr<hlo_diff::Case> CaseOf(GeneratedCase g,
                                std::unique_ptr<HloModule>* module) {
  if (g.mesh.size() <= 1) {
    return hlo_diff::MakeCase(std::move(g.hlo_text), std::move(g.inputs), {},
                              g.origin, module);
  }
  const size_t devices = static_cast<size_t>(g.mesh.size());
  if (g.inputs.size() % devices != 0) {
    return Internal("a program for " + std::to_string(devices) +
                    " devices came with " + std::to_string(g.inputs.size()) +
                    " inputs");
  }
  const size_t per = g.inputs.size() / devices;
  std::vector<std::vector<Literal>> lists(devices);
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    lists[k / per].push_back(std::move(g.inputs[k]));
  }
  ASSIGN_OR_RETURN(*module, hlo_diff::ParseCaseModule(g.hlo_text, "program"));
  return hlo_diff::MakeSpmdCase(std::move(g.hlo_text), g.mesh, std::move(lists),
                                {}, g.origin);
}

// The oracle or the target refused the program (not judgeable, but not
// the generator's fault either, as invalid_input is).
bool IsRefusal(hlo_diff::VerdictStatus status) {
  return !hlo_diff::IsJudgeable(status) &&
         status != hlo_diff::VerdictStatus::kInvalidInput;
}

// The signature a finding is counted under (CampaignOptions::localize).
// The first case of a coarse signature is localized in `work` (its report
// goes to *report); later ones wait for that and reuse the result.
Json DedupSignature(Shared& s, const hlo_diff::Case& c,
                    std::shared_ptr<const HloModule> module,
                    const hlo_diff::Signature& coarse, const std::string& work,
                    Json* report) {
  const std::string& coarse_sig = coarse.sig;
  if (!s.options->localize || coarse_sig.empty()) return coarse.ToJson();
  {
    std::unique_lock<std::mutex> lock(s.mu);
    auto it = s.dedup_of.find(coarse_sig);
    if (it != s.dedup_of.end()) {
      s.localized.wait(lock, [&] { return !s.dedup_of[coarse_sig].is_null(); });
      return s.dedup_of[coarse_sig];
    }
    s.dedup_of[coarse_sig] = Json();  // Localizing.
  }
  Json refined = coarse.ToJson();
  std::error_code ec;
  const std::string dir =
      (fs::path(work) / ("localize-" + coarse_sig)).string();
  {
    const HloModule& m = *module;
    hlo_bisect::TargetProber prober(c, std::move(module), s.options->target,
                                    dir);
    StatusOr<hlo_bisect::Localization> l = hlo_bisect::Localize(c, m, prober);
    if (l.ok()) {
      const hlo_bisect::LocalizationReport r =
          hlo_bisect::MakeLocalizationReport(*l, "");
      refined = FromJsonDoc(hlo_bisect::ToJson(r.signature));
      *report = FromJsonDoc(hlo_bisect::ToJson(r));
    } else {
      *report = Json::MakeObject();
      (*report)["error"] = Json(l.status().ToString());
    }
  }
  fs::remove_all(dir, ec);
  std::lock_guard<std::mutex> lock(s.mu);
  s.dedup_of[coarse_sig] = refined;
  s.localized.notify_all();
  return refined;
}

// Counts the verdict under its signature in `list` (findings or refusals)
// and writes the case of a new signature to <dir>/<sig>/ (findings: with
// the localization report of their first coarse signature).
void Record(Shared& s, int64_t i, hlo_diff::Case c,
            std::shared_ptr<const HloModule> module,
            const hlo_diff::Verdict& verdict, bool refusal,
            const std::string& work) {
  const std::string status = verdict.status_name();
  const hlo_diff::Signature& coarse = verdict.signature;
  Json report;
  Json signature;
  if (!refusal) {
    signature = DedupSignature(s, c, std::move(module), coarse, work, &report);
  } else {
    signature = Json::MakeObject();
    signature["status"] = Json(status);
    signature["message"] = Json(hlo_diff::NormalizeMessage(verdict.message));
    signature = hlo_diff::WithSignatureHash(std::move(signature));
  }
  std::string sig = StringOr(signature, "sig");
  if (sig.empty()) sig = status;
  std::vector<Finding>& list =
      refusal ? s.summary.refusals : s.summary.findings;
  std::map<std::string, size_t>& index = refusal ? s.refusal_by_sig : s.by_sig;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = index.find(sig);
    const std::string& coarse_sig = coarse.sig;
    if (it != index.end()) {
      Finding& f = list[it->second];
      ++f.count;
      if (!refusal && std::find(f.coarse_sigs.begin(), f.coarse_sigs.end(),
                                coarse_sig) == f.coarse_sigs.end()) {
        f.coarse_sigs.push_back(coarse_sig);
      }
      return;
    }
    Finding f;
    f.sig = sig;
    f.signature = signature;
    f.status = status;
    f.count = 1;
    f.first_program = i;
    f.first_seconds = Since(s.start);
    f.origin = c.origin;
    if (!refusal) f.coarse_sigs.push_back(coarse_sig);
    index[sig] = list.size();
    list.push_back(std::move(f));
  }
  // Written outside the lock; only this job writes this directory.
  c.signature = signature;
  c.verdict = verdict;
  fs::path dir = fs::path(s.options->out_dir);
  if (refusal) dir /= "unsupported";
  dir /= sig;
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);
  fs::remove_all(dir, ec);  // A previous campaign's case of the same sig.
  Status written = hlo_diff::WriteCase(dir.string(), c);
  if (written.ok() && !report.is_null()) {
    std::ofstream((dir / "localization.json").string())
        << report.DumpPretty() << "\n";
  }
  std::lock_guard<std::mutex> lock(s.mu);
  list[index[sig]].case_dir = written.ok() ? dir.string() : "";
}

// A timeout may be the machine's load rather than the target: the program
// runs once more on a fresh runner with kTimeoutRetryFactor times the
// limit, and a verdict other than a second timeout replaces the first.
// Once the campaign is ending (its budget spent, or cancelled) there is no
// time for that: returns true, and the timeout is unconfirmed, not a
// finding.
bool RetryTimeout(Shared& s, const hlo_diff::Case& c, const HloModule& module,
                  const std::string& work, hlo_diff::Verdict* verdict) {
  const hlo_diff::TargetSpec& spec = s.options->target;
  if (verdict->status != hlo_diff::VerdictStatus::kTimeout ||
      spec.timeout_seconds <= 0) {
    return false;
  }
  if (s.stop.load() || Since(s.start) >= s.options->budget_seconds) {
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.summary.timeouts_unconfirmed;
    return true;
  }
  hlo_diff::TargetSpec longer = spec;
  longer.timeout_seconds *= kTimeoutRetryFactor;
  hlo_diff::TargetRunner runner(longer);
  StatusOr<hlo_diff::Verdict> again =
      hlo_diff::ComputeVerdict(c, module, runner, work);
  const bool finished =
      again.ok() && again->status != hlo_diff::VerdictStatus::kTimeout;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.summary.timeouts_retried;
    if (finished) ++s.summary.timeouts_finished_on_retry;
  }
  if (finished) *verdict = *std::move(again);
  return false;
}

void RunJob(Shared& s, int job) {
  const CampaignOptions& o = *s.options;
  hlo_diff::TargetRunner runner(o.target);
  const std::string work =
      (fs::path(o.out_dir) / ".work" / std::to_string(job)).string();
  int64_t i = 0;
  while (TakeProgram(s, &i)) {
    const auto t0 = Clock::now();
    bool from_trace = false;
    StatusOr<GeneratedCase> g = MakeProgram(s, i, &from_trace);
    const double generate = Since(t0);
    std::unique_ptr<HloModule> module;
    StatusOr<hlo_diff::Case> c = g.ok() ? CaseOf(*std::move(g), &module)
                                        : StatusOr<hlo_diff::Case>(g.status());
    std::optional<hlo_diff::Verdict> verdict;
    bool unconfirmed = false;  // A timeout there was no time to re-run.
    std::string error;
    if (c.ok()) {
      c->origin["campaign"] = Json::MakeObject();
      c->origin["campaign"]["seed"] = Json(static_cast<int64_t>(o.seed));
      c->origin["campaign"]["program"] = Json(i);
      // A target starved of CPU by other work on the machine gave no
      // verdict: it runs again (a few times, after a pause) before the
      // program is counted as a harness error; never a finding.
      StatusOr<hlo_diff::Verdict> v =
          hlo_diff::ComputeVerdict(*c, *module, runner, work);
      for (int again = 0; again < kStarvedRetries && !v.ok() &&
                          v.status().code() == StatusCode::kResourceExhausted &&
                          !s.stop.load();
           ++again) {
        {
          std::lock_guard<std::mutex> lock(s.mu);
          ++s.summary.starved_retries;
        }
        std::this_thread::sleep_for(std::chrono::seconds(1 << again));
        v = hlo_diff::ComputeVerdict(*c, *module, runner, work);
      }
      if (v.ok()) {
        verdict = std::move(*v);
        unconfirmed = RetryTimeout(s, *c, *module, work, &*verdict);
      } else {
        error = v.status().ToString();
      }
    } else {
      error = c.status().ToString();
    }
    const std::string status =
        verdict ? verdict->status_name() : "harness_error";
    {
      std::lock_guard<std::mutex> lock(s.mu);
      CampaignSummary& sum = s.summary;
      ++sum.programs;
      ++(from_trace ? sum.traces : sum.synthetic);
      ++sum.statuses[status];
      sum.generate_seconds += generate;
      if (verdict) {
        sum.oracle_seconds += verdict->oracle.seconds;
        sum.target_seconds += verdict->target ? verdict->target->seconds : 0;
      }
      if (verdict && IsRefusal(verdict->status)) {
        ++sum.unsupported[status][hlo_diff::NormalizeMessage(verdict->message)];
      }
      if (!verdict ||
          verdict->status == hlo_diff::VerdictStatus::kInvalidInput) {
        ++sum.generator_errors;
        if (sum.first_generator_error.empty()) {
          sum.first_generator_error = verdict ? verdict->message : error;
        }
      }
    }
    if (verdict && c.ok()) {
      if (StringOr(c->origin, "kind") == "reach_mutant") ++s.mutants;
      CountReach(s, *c, *verdict);
    }
    if (verdict && hlo_diff::IsFailure(verdict->status) && !unconfirmed) {
      Record(s, i, std::move(*c), std::move(module), *verdict,
             /*refusal=*/false, work);
    } else if (verdict && IsRefusal(verdict->status) && o.keep_unsupported) {
      Record(s, i, std::move(*c), std::move(module), *verdict,
             /*refusal=*/true, work);
    }
  }
  std::lock_guard<std::mutex> lock(s.mu);
  s.summary.worker_restarts += runner.restarts();
}

}  // namespace

namespace {

Json FindingsJson(const std::vector<Finding>& findings) {
  Json list = Json::MakeArray();
  for (const Finding& f : findings) {
    Json e = Json::MakeObject();
    e["sig"] = Json(f.sig);
    e["status"] = Json(f.status);
    e["count"] = Json(f.count);
    e["first_program"] = Json(f.first_program);
    e["first_seconds"] = Json(f.first_seconds);
    e["case"] = f.case_dir.empty() ? Json() : Json(f.case_dir);
    e["signature"] = f.signature;
    Json coarse = Json::MakeArray();
    for (const std::string& c : f.coarse_sigs) coarse.push_back(Json(c));
    e["coarse_signatures"] = std::move(coarse);
    e["origin"] = f.origin;
    list.push_back(std::move(e));
  }
  return list;
}

}  // namespace

int64_t CampaignSummary::findings_total() const {
  int64_t n = 0;
  for (const Finding& f : findings) n += f.count;
  return n;
}

Json CampaignSummary::ToJson() const {
  Json j = Json::MakeObject();
  j["programs"] = Json(programs);
  j["synthetic"] = Json(synthetic);
  j["traces"] = Json(traces);
  j["corpus_subgraphs"] = Json(corpus_subgraphs);
  j["seconds"] = Json(seconds);
  j["programs_per_second"] = Json(seconds > 0 ? programs / seconds : 0.0);
  j["generator_errors"] = Json(generator_errors);
  if (!first_generator_error.empty()) {
    j["first_generator_error"] = Json(first_generator_error);
  }
  Json st = Json::MakeObject();
  for (const auto& [k, v] : statuses) st[k] = Json(v);
  j["statuses"] = std::move(st);
  // The ten most frequent reasons per status.
  Json why = Json::MakeObject();
  for (const auto& [status, reasons] : unsupported) {
    std::vector<std::pair<int64_t, std::string>> top;
    for (const auto& [reason, n] : reasons) top.emplace_back(-n, reason);
    std::sort(top.begin(), top.end());
    if (top.size() > 10) top.resize(10);
    Json list = Json::MakeArray();
    for (const auto& [n, reason] : top) {
      Json e = Json::MakeObject();
      e["reason"] = Json(reason);
      e["count"] = Json(-n);
      list.push_back(std::move(e));
    }
    why[status] = std::move(list);
  }
  j["unsupported"] = std::move(why);
  const double busy = generate_seconds + oracle_seconds + target_seconds;
  Json time = Json::MakeObject();
  time["generate_seconds"] = Json(generate_seconds);
  time["oracle_seconds"] = Json(oracle_seconds);
  time["target_seconds"] = Json(target_seconds);
  time["oracle_share"] = Json(busy > 0 ? oracle_seconds / busy : 0.0);
  time["target_share"] = Json(busy > 0 ? target_seconds / busy : 0.0);
  j["time"] = std::move(time);
  j["worker_restarts"] = Json(static_cast<int64_t>(worker_restarts));
  Json timeouts = Json::MakeObject();
  timeouts["retried"] = timeouts_retried;
  timeouts["finished_on_retry"] = timeouts_finished_on_retry;
  timeouts["unconfirmed"] = timeouts_unconfirmed;
  timeouts["starved_retries"] = starved_retries;
  j["timeouts"] = std::move(timeouts);
  j["cancelled"] = Json(cancelled);
  j["distinct_findings"] = Json(static_cast<int64_t>(findings.size()));
  j["findings"] = FindingsJson(findings);
  if (!reach.is_null()) j["reach"] = reach;
  if (!refusals.empty()) j["refusals"] = FindingsJson(refusals);
  return j;
}

std::string ProgressLine(const CampaignSummary& s) {
  char head[160];
  std::snprintf(
      head, sizeof(head), "%6.1fs  %lld programs  %.1f/s  %zu findings",
      s.seconds, static_cast<long long>(s.programs),
      s.seconds > 0 ? s.programs / s.seconds : 0.0, s.findings.size());
  std::string line = head;
  if (!s.reach.is_null()) {
    const Json* a = s.reach.Find("reached");
    const Json* b = s.reach.Find("lines");
    if (a && b && a->is_integer() && b->is_integer()) {
      line += "  reach " + std::to_string(a->int64_value()) + "/" +
              std::to_string(b->int64_value()) + " lines";
    }
  }
  std::string mix;
  for (const auto& [k, v] : s.statuses) {
    mix += (mix.empty() ? "" : ", ") + k + " " + std::to_string(v);
  }
  if (!mix.empty()) line += "  (" + mix + ")";
  return line;
}

namespace {

// Writes <out>/summary.json atomically (temp file + rename).
void WriteSummary(const std::string& out_dir, const CampaignSummary& summary,
                  bool running) {
  Json j = summary.ToJson();
  j["running"] = Json(running);
  const std::string path = (fs::path(out_dir) / "summary.json").string();
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  if (std::FILE* f = std::fopen(tmp.c_str(), "w")) {
    const std::string text = j.DumpPretty() + "\n";
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) == 0 && ok) fs::rename(tmp, path, ec);
  }
}

}  // namespace

StatusOr<CampaignSummary> RunCampaign(const CampaignOptions& options,
                                      const ProgressFn& progress) {
  if (options.jobs < 1) return InvalidArgument("--jobs must be at least 1");
  if (!(options.budget_seconds >= 0)) {
    return InvalidArgument("--budget must not be negative");
  }
  if (options.trace_share < 0 || options.trace_share > 1) {
    return InvalidArgument("trace share must lie in [0, 1]");
  }
  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  if (ec) {
    return IoError(options.out_dir + ": cannot create: " + ec.message());
  }
  std::optional<TraceCorpus> corpus;
  if (!options.corpus.empty()) {
    TraceCorpusOptions corpus_options;
    corpus_options.collectives = options.trace_collectives;
    corpus.emplace(std::move(corpus_options));
    RETURN_IF_ERROR(corpus->Load(options.corpus));
    if (corpus->subgraphs().empty()) {
      return InvalidArgument(
          "--corpus: no runnable subgraph in the given "
          "files (" +
          std::to_string(corpus->stats().files) + " files read)");
    }
  }
  Shared s;
  s.options = &options;
  s.corpus = corpus ? &*corpus : nullptr;
  s.summary.corpus_subgraphs =
      corpus ? static_cast<int64_t>(corpus->subgraphs().size()) : 0;
  if (options.changed_lines) {
    s.reach = std::make_unique<LineReach>(options.changed_lines);
    s.steering = std::make_unique<ReachSteering>(
        s.reach.get(), std::max<int64_t>(1, options.reach_stop_programs));
  }
  s.start = Clock::now();
  std::vector<std::thread> jobs;
  for (int j = 0; j < options.jobs; ++j) {
    jobs.emplace_back([&s, j] { RunJob(s, j); });
  }
  // Until every job has drained: progress twice a second, the summary file
  // every few seconds, and the cancel flag.
  std::atomic<int> done{0};
  auto last_progress = Clock::now(), last_file = Clock::now();
  std::thread watcher([&] {
    for (std::thread& t : jobs) t.join();
    done = 1;
  });
  while (!done.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (options.cancel != nullptr && options.cancel->load()) s.stop = true;
    const bool want_progress = progress && Since(last_progress) >= 0.5;
    const bool want_file = Since(last_file) >= 5;
    if (!want_progress && !want_file) continue;
    CampaignSummary snapshot;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      snapshot = s.summary;
    }
    snapshot.seconds = Since(s.start);
    snapshot.reach = ReachJson(s);
    if (want_progress) {
      last_progress = Clock::now();
      progress(snapshot);
    }
    if (want_file) {
      last_file = Clock::now();
      WriteSummary(options.out_dir, snapshot, /*running=*/true);
    }
  }
  watcher.join();
  s.summary.seconds = Since(s.start);
  s.summary.cancelled = s.stop.load() && !s.reach_done.load();
  s.summary.reach = ReachJson(s);
  fs::remove_all(fs::path(options.out_dir) / ".work", ec);
  WriteSummary(options.out_dir, s.summary, /*running=*/false);
  if (progress) progress(s.summary);
  return std::move(s.summary);
}

}  // namespace trench::fuzz
