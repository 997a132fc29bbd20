// The rewrite level (localize.h): binary search on --rewrite-limit; the
// smallest failing limit's compile report names the decision.
#include <map>
#include <sstream>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

// Search ceiling when the full run gave no compile report.
constexpr int64_t kMaxRewriteLimit = int64_t{1} << 20;

// Decision `index` (0-based) of a dumped run at --rewrite-limit=`limit`,
// from its rewrites.log ("index allowed|denied pass site instruction").
StatusOr<Json> DecisionFromLog(const hlo_diff::Case& c, Prober& prober,
                               int64_t limit, int64_t* runs) {
  hlo_diff::CaseOptions o = c.options;
  o.rewrite_limit = limit;
  ++*runs;
  ASSIGN_OR_RETURN(Probe p, prober.Run(o, true));
  if (p.dump_dir.empty()) return NotFound("the target dumped nothing");
  ASSIGN_OR_RETURN(std::string log, ReadTextFile(p.dump_dir + "/rewrites.log"));
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    int64_t index = -1;
    std::string allowed, pass, site, instruction;
    if (!(f >> index >> allowed >> pass >> site >> instruction)) continue;
    if (index != limit) continue;
    Json d = Json::MakeObject();
    d["pass"] = pass;
    d["site"] = site;
    d["instruction"] = instruction;
    d["index"] = index;
    return d;
  }
  return NotFound("its rewrites.log has no decision " + std::to_string(limit));
}

}  // namespace

LevelResult LocalizeRewrite(const hlo_diff::Case& c, const HloModule& module,
                            const Probe& full, Prober& prober,
                            Findings* findings) {
  LevelResult r;
  r.level = "rewrite";
  Json& ev = r.evidence;
  ev["method"] = "binary search on --rewrite-limit";
  std::map<int64_t, Probe> probes;
  auto fails = [&](int64_t n) -> StatusOr<bool> {
    hlo_diff::CaseOptions o = c.options;
    o.rewrite_limit = n;
    ++r.runs;
    ASSIGN_OR_RETURN(Probe p, prober.Run(o, false));
    const bool f = SameFailure(full, p);
    probes[n] = std::move(p);
    return f;
  };
  int64_t hi = -1;
  const Json* allowed = full.compile.is_object()
                            ? full.compile.Find("rewrites_allowed")
                            : nullptr;
  if (allowed && allowed->is_integer()) {
    hi = allowed->int64_value();
    const Json* d = full.compile.Find("rewrite_decisions");
    ev["rewrite_decisions"] = d ? *d : Json();
    ev["rewrites_allowed"] = hi;
    r.linear_runs = hi;
  } else {
    // No report: find a failing limit by doubling.
    StatusOr<bool> f0 = fails(0);
    int64_t k = 1;
    StatusOr<bool> f = f0;
    while (f.ok() && !*f && k <= kMaxRewriteLimit) {
      f = fails(k);
      if (f.ok() && !*f) k *= 2;
    }
    if (!f.ok()) {
      r.result = "error";
      r.summary = f.status().message();
      return r;
    }
    if (!*f) {
      r.result = "none";
      r.summary = "no --rewrite-limit up to " +
                  std::to_string(kMaxRewriteLimit) + " fails";
      return r;
    }
    hi = k;
    r.linear_runs = k;
  }
  StatusOr<int64_t> n = FirstFailing(0, hi, [&](int64_t k) -> StatusOr<bool> {
    if (auto it = probes.find(k); it != probes.end()) {
      return SameFailure(full, it->second);
    }
    return fails(k);
  });
  Json a = Json::MakeArray();
  for (const auto& [k, p] : probes) {
    Json x = Json::MakeObject();
    x["rewrite_limit"] = k;
    x["status"] = p.status;
    a.push_back(std::move(x));
  }
  ev["probes"] = std::move(a);
  if (!n.ok()) {
    r.result = "error";
    r.summary = n.status().message();
    return r;
  }
  ev["first_failing_limit"] = *n;
  if (*n == 0) {
    r.result = "none";
    findings->rewrite = Json();
    r.summary = "fails with --rewrite-limit=0: no rewrite decision is involved";
    return r;
  }
  auto it = probes.find(*n);
  const Json& compile = it != probes.end() ? it->second.compile : full.compile;
  const Json* last =
      compile.is_object() ? compile.Find("last_rewrite") : nullptr;
  Json from_log;
  if (last == nullptr || !last->is_object()) {
    // The failing run has no report (its compile crashed): the decision is
    // the first one denied at limit n - 1, from that run's rewrites.log.
    StatusOr<Json> d = DecisionFromLog(c, prober, *n - 1, &r.runs);
    if (!d.ok()) {
      r.result = "error";
      r.summary = "the run at --rewrite-limit=" + std::to_string(*n) +
                  " reported no last_rewrite, and " + d.status().message();
      return r;
    }
    ++r.linear_runs;
    from_log = std::move(d).value();
    last = &from_log;
    ev["decision_source"] =
        "rewrites.log of --rewrite-limit=" + std::to_string(*n - 1) +
        " (first denied)";
  }
  r.result = "found";
  findings->rewrite = *last;
  ev["decision"] = *last;
  auto str = [&](const char* k) {
    const Json* v = last->Find(k);
    return v && v->is_string() ? v->string_value() : std::string();
  };
  const std::string instr = str("instruction");
  for (const HloComputation* comp : module.computations()) {
    if (const HloInstruction* i = comp->GetInstructionWithName(instr)) {
      findings->rewrite_opcode = std::string(OpcodeName(i->opcode()));
      ev["instruction_opcode"] = findings->rewrite_opcode;
      break;
    }
  }
  r.summary = "rewrite decision #" + std::to_string(*n) + ": pass '" +
              str("pass") + "', site '" + str("site") + "' on %" + instr;
  return r;
}

}  // namespace trench::hlo_bisect
