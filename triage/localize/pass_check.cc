#include "triage/localize/pass_check.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>

#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;

// A dump file's place in the pipeline: (execution number, kind), kind 0
// for the input, 1 for an optional pass, 2 for a required one (written
// with the number of executions so far, so after that execution).
struct DumpKey {
  int64_t n = 0;
  int kind = 0;
  bool operator<(const DumpKey& o) const {
    return n != o.n ? n < o.n : kind < o.kind;
  }
};

// The dumps of dir/passes by their place: "NN.input.hlo",
// "NN.<pass>.hlo", "NN.required.<pass>.hlo". The value is (pass name or
// "" for the input, path).
std::map<DumpKey, std::pair<std::string, fs::path>> Dumps(
    const std::string& dir) {
  std::map<DumpKey, std::pair<std::string, fs::path>> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "passes", ec)) {
    std::string name = e.path().filename().string();
    if (name.size() < 5 || name.substr(name.size() - 4) != ".hlo") continue;
    name.resize(name.size() - 4);
    const size_t dot = name.find('.');
    if (dot == std::string::npos) continue;
    DumpKey k;
    const auto r = std::from_chars(name.data(), name.data() + dot, k.n);
    if (r.ec != std::errc() || r.ptr != name.data() + dot) continue;
    std::string rest = name.substr(dot + 1);
    if (rest == "input") {
      k.kind = 0;
      rest.clear();
    } else if (rest.rfind("required.", 0) == 0) {
      k.kind = 2;
      rest = rest.substr(9);
    } else {
      k.kind = 1;
    }
    out[k] = {rest, e.path()};
  }
  return out;
}

}  // namespace

StatusOr<PassCheck> CheckPassWithoutRunning(const hlo_diff::Case& c,
                                            const hlo_diff::TargetSpec& spec,
                                            const std::string& pass,
                                            const std::string& work_dir,
                                            const NumericsOptions& numerics) {
  PassCheck check;
  // One device's compile: the pass pipeline does not depend on the mesh,
  // and a target without a slice compiles for one chip only.
  hlo_diff::Case one = c;
  one.mesh = DeviceMesh{};
  const size_t devices =
      static_cast<size_t>(std::max<int64_t>(1, c.mesh.size()));
  one.inputs.resize(c.inputs.size() / devices);
  // The run's own result does not matter (a refusal in the back end is
  // expected): only the dumps the passes wrote before it.
  TargetProber prober(one, spec, work_dir);
  ASSIGN_OR_RETURN(Probe run, prober.Run(one.options, /*dump=*/true));
  const auto dumps = Dumps(run.dump_dir);
  const std::pair<std::string, fs::path>* before = nullptr;
  const std::pair<std::string, fs::path>* after = nullptr;
  for (const auto& [key, d] : dumps) {
    if (key.kind == 1 && d.first == pass) {
      after = &d;
      break;
    }
    before = &d;
  }
  if (dumps.empty() || dumps.begin()->first.kind != 0) {
    check.summary = "the target dumped no input module";
    return check;
  }
  if (after == nullptr) {
    check.changes = false;
    check.summary = "pass '" + pass + "' does not run here";
    return check;
  }
  auto parse = [](const fs::path& p) -> StatusOr<std::unique_ptr<HloModule>> {
    ASSIGN_OR_RETURN(std::string text, ReadTextFile(p.string()));
    return hlo_diff::ParseCaseModule(text, p.filename().string());
  };
  StatusOr<std::unique_ptr<HloModule>> in = parse(before->second);
  StatusOr<std::unique_ptr<HloModule>> out = parse(after->second);
  if (!in.ok() || !out.ok()) {
    check.summary = "a dump does not parse: " +
                    (in.ok() ? out.status() : in.status()).message();
    return check;
  }
  // Both modules on every device of the case, the one before the pass
  // with its bounds.
  StatusOr<std::vector<BoundedResult>> want =
      EvaluateCaseWithBounds(c, **in, numerics);
  StatusOr<std::vector<BoundedResult>> got =
      EvaluateCaseWithBounds(c, **out, numerics);
  if (!want.ok() || !got.ok()) {
    check.summary =
        "oracle: " + (want.ok() ? got.status() : want.status()).message();
    return check;
  }
  check.changes = false;
  for (size_t d = 0; d < want->size() && d < got->size(); ++d) {
    const auto& w = (*want)[d].outputs;
    const auto& g = (*got)[d].outputs;
    for (size_t i = 0; i < w.size() && i < g.size(); ++i) {
      ValueCheck v = CheckValue(g[i].nominal, w[i]);
      if (!v.ok && !check.changes.value()) {
        check.changes = true;
        check.summary = "pass '" + pass + "' (" +
                        after->second.filename().string() +
                        ") changes output " + std::to_string(i) +
                        " on device " + std::to_string(d) + ": max error " +
                        std::to_string(v.max_abs_error) + ", allowed " +
                        std::to_string(v.max_allowed);
      }
    }
  }
  if (!check.changes.value()) {
    check.summary = "pass '" + pass + "' (" +
                    after->second.filename().string() +
                    ") keeps the result on every device";
  }
  return check;
}

}  // namespace trench::hlo_bisect
