#include "triage/fuzz/fuzz_flags.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string_view>

#include "compiler/ir/dtype.h"
#include "compiler/ir/opcode.h"

namespace trench::fuzz {
namespace {

std::vector<std::string> SplitCommas(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = std::min(s.find(',', start), s.size());
    if (comma > start) out.emplace_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

template <typename T>
StatusOr<T> ParseNumber(std::string_view flag, std::string_view v) {
  T out{};
  const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size()) {
    return InvalidArgument(std::string(flag) + ": expected a number, got '" +
                           std::string(v) + "'");
  }
  return out;
}

// Opcode texts and group names the generator knows.
const std::set<std::string>& KnownFocusNames() {
  static const std::set<std::string> names = [] {
    std::set<std::string> n;
    for (HloOpcode op : SyntheticOps()) {
      n.insert(std::string(OpcodeName(op)));
      n.insert(OpGroup(op));
    }
    return n;
  }();
  return names;
}

Status ApplyTargetMode(std::string_view v, hlo_diff::TargetSpec* t) {
  if (v == "serve") {
    t->mode = hlo_diff::TargetMode::kServe;
  } else if (v == "hlo-run") {
    t->mode = hlo_diff::TargetMode::kHloRun;
  } else if (v == "hloc-tpusim") {
    t->mode = hlo_diff::TargetMode::kHlocTpusim;
  } else {
    return InvalidArgument(
        "--target: expected serve, hlo-run or "
        "hloc-tpusim, got '" +
        std::string(v) + "'");
  }
  return Status::Ok();
}

Status ApplyDtypes(std::string_view v, GeneratorOptions* g) {
  g->dtypes.clear();
  for (const std::string& name : SplitCommas(v)) {
    std::optional<PrimitiveType> t = PrimitiveTypeFromName(name);
    if (!t)
      return InvalidArgument("--dtypes: unknown element type '" + name + "'");
    g->dtypes.push_back(*t);
  }
  if (g->dtypes.empty()) return InvalidArgument("--dtypes: empty list");
  return Status::Ok();
}

StatusOr<GeneratorOptions> ReadGeneratorOptions(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open");
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  StatusOr<Json> j = ParseJson(text);
  if (!j.ok()) return InvalidArgument(path + ":" + j.status().message());
  StatusOr<GeneratorOptions> o = GeneratorOptions::FromJson(*j);
  if (!o.ok()) return InvalidArgument(path + ": " + o.status().message());
  return o;
}

// Applies one flag with a value; false when `name` is not such a flag.
StatusOr<bool> ApplyValueFlag(std::string_view name, std::string_view value,
                              FuzzFlags* f) {
  CampaignOptions& c = f->campaign;
  hlo_diff::TargetSpec& t = c.target;
  if (name == "--budget") {
    ASSIGN_OR_RETURN(c.budget_seconds, ParseDuration(std::string(value)));
  } else if (name == "--jobs") {
    ASSIGN_OR_RETURN(c.jobs, ParseNumber<int>(name, value));
    if (c.jobs < 1) return InvalidArgument("--jobs must be at least 1");
  } else if (name == "--corpus") {
    c.corpus.emplace_back(value);
  } else if (name == "--focus") {
    ASSIGN_OR_RETURN(c.generator.focus, ParseFocus(std::string(value)));
  } else if (name == "--out") {
    c.out_dir = std::string(value);
  } else if (name == "--seed") {
    ASSIGN_OR_RETURN(c.seed, ParseNumber<uint64_t>(name, value));
  } else if (name == "--linger") {
    ASSIGN_OR_RETURN(c.linger_seconds, ParseDuration(std::string(value)));
  } else if (name == "--max-programs") {
    ASSIGN_OR_RETURN(c.max_programs, ParseNumber<int64_t>(name, value));
  } else if (name == "--instructions") {
    ASSIGN_OR_RETURN(c.generator.instructions, ParseNumber<int>(name, value));
  } else if (name == "--dtypes") {
    RETURN_IF_ERROR(ApplyDtypes(value, &c.generator));
  } else if (name == "--trace-share") {
    ASSIGN_OR_RETURN(c.trace_share, ParseNumber<double>(name, value));
    if (c.trace_share < 0 || c.trace_share > 1) {
      return InvalidArgument("--trace-share must lie in [0, 1]");
    }
  } else if (name == "--special-values" || name == "--zero-dims" ||
             name == "--long-rows") {
    ASSIGN_OR_RETURN(double p, ParseNumber<double>(name, value));
    if (!(p >= 0 && p <= 1)) {
      return InvalidArgument(std::string(name) + " must lie in [0, 1]");
    }
    GeneratorOptions& g = c.generator;
    (name == "--special-values" ? g.special_values
     : name == "--zero-dims"    ? g.zero_dim_probability
                                : g.long_row_probability) = p;
  } else if (name == "--generator-options") {
    const std::vector<std::string> focus = c.generator.focus;
    ASSIGN_OR_RETURN(c.generator, ReadGeneratorOptions(std::string(value)));
    if (c.generator.focus.empty()) c.generator.focus = focus;
  } else if (name == "--target") {
    RETURN_IF_ERROR(ApplyTargetMode(value, &t));
  } else if (name == "--hlo-run") {
    t.hlo_run = std::string(value);
  } else if (name == "--hloc") {
    t.hloc = std::string(value);
  } else if (name == "--tpusim") {
    t.tpusim = std::string(value);
  } else if (name == "--timeout") {
    ASSIGN_OR_RETURN(t.timeout_seconds, ParseDuration(std::string(value)));
  } else if (name == "--target-flag") {
    t.extra_compile_flags.emplace_back(value);
  } else {
    return false;
  }
  return true;
}

}  // namespace

const char* FuzzUsage() {
  return "usage: hlo-fuzz [--budget 60s] [--jobs N] [--corpus DIR|FILE ...]\n"
         "                [--focus ops:a,b|passes:p,q] [--out DIR] [--seed N]\n"
         "                [target and generator flags]\n"
         "\n"
         "Runs a differential fuzzing campaign: synthetic programs and\n"
         "programs cut from the corpus' HLO traces go through the target and\n"
         "the oracle; each distinct finding (by signature) is written as a\n"
         "case to DIR/<sig>/, and DIR/summary.json sums up the campaign (it\n"
         "is also printed on stdout).\n"
         "\n"
         "  --budget T          wall time (90, 90s, 5m, 1h; default 60s)\n"
         "  --jobs N            parallel workers, each with its own target\n"
         "                      process (default 1)\n"
         "  --corpus P          trace file or directory (repeatable); without\n"
         "                      one only synthetic programs are made\n"
         "  --trace-share F     share of trace-derived programs (default 0.5)\n"
         "  --focus SPEC        ops:dot,reduction (opcodes or op groups) or\n"
         "                      passes:fusion,algsimp (the ops those passes\n"
         "                      rewrite)\n"
         "  --out DIR           findings directory (default ./findings)\n"
         "  --seed N            campaign seed (default 1); program i is\n"
         "                      reproducible from (seed, i)\n"
         "  --max-programs N    stop after N programs\n"
         "  --linger T          stop T after the first finding (0: at once)\n"
         "  --instructions N    random ops per synthetic program (default 20)\n"
         "  --dtypes a,b        element types to draw from (default all)\n"
         "  --special-values F  share of synthetic programs whose float\n"
         "                      inputs hold inf, NaN, -0 and subnormals\n"
         "                      (default 0.08)\n"
         "  --zero-dims F       probability of a size-0 dim in a new array\n"
         "                      (default 0.03)\n"
         "  --long-rows F       probability of a 1024..3000-element minor\n"
         "                      dim in a new array (default 0.12)\n"
         "  --generator-options F  generator settings as JSON (flags given\n"
         "                      before it are overridden)\n"
         "  --target MODE       serve (default: hlo-run --serve workers),\n"
         "                      hlo-run (a process per program) or\n"
         "                      hloc-tpusim (two processes per program)\n"
         "  --hlo-run P, --hloc P, --tpusim P   target binaries (default: "
         "next\n"
         "                      to hlo-fuzz)\n"
         "  --timeout T         per program (default 60s)\n"
         "  --target-flag F     extra compile flag for the target "
         "(repeatable)\n"
         "  --progress, --no-progress   progress line on stderr (default: on\n"
         "                      a terminal)\n"
         "  --fail-on-finding   exit 10 when anything was found\n"
         "  --keep-unsupported  also keep one case per reason the target or\n"
         "                      the oracle refused a program, under\n"
         "                      DIR/unsupported/<sig>/\n"
         "  --no-localize       deduplicate findings by their coarse\n"
         "                      signature, without localizing them\n"
         "\n"
         "Ctrl-C (SIGINT) or SIGTERM ends the campaign early; running\n"
         "programs finish and the summary is still written.\n"
         "\n"
         "exit: 0 done, 2 usage, 3 campaign error, 10 findings (with\n"
         "--fail-on-finding)\n";
}

StatusOr<double> ParseDuration(const std::string& text) {
  std::string_view v = text;
  double unit = 1;
  if (!v.empty() && (v.back() == 's' || v.back() == 'm' || v.back() == 'h')) {
    unit = v.back() == 'h' ? 3600 : v.back() == 'm' ? 60 : 1;
    v.remove_suffix(1);
  }
  double value = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), value);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() ||
      !(value >= 0)) {
    return InvalidArgument("expected a duration like 90, 90s, 5m or 1h, got '" +
                           text + "'");
  }
  return value * unit;
}

std::vector<std::string> FocusGroupsForPass(const std::string& pass) {
  static const std::map<std::string, std::vector<std::string>> kPasses = {
      {"conv-expander", {"convolution"}},
      {"algsimp",
       {"elementwise_unary", "elementwise_binary", "data_movement", "compare",
        "select", "constant"}},
      {"constant-folding",
       {"constant", "elementwise_unary", "elementwise_binary", "convert"}},
      {"cse", {"elementwise_binary", "compare", "data_movement"}},
      {"dce", {"control", "data_movement"}},
      {"dot-decomposer", {"contraction"}},
      {"layout-assignment", {"data_movement", "contraction"}},
      {"fusion",
       {"elementwise_unary", "elementwise_binary", "transcendental",
        "reduction", "data_movement", "contraction"}},
      {"buffer-assignment", {"indexing", "elementwise_binary", "control"}},
  };
  auto it = kPasses.find(pass);
  return it == kPasses.end() ? std::vector<std::string>{} : it->second;
}

StatusOr<std::vector<std::string>> ParseFocus(const std::string& spec) {
  std::string_view v = spec;
  std::vector<std::string> out;
  if (v.substr(0, 7) == "passes:") {
    for (const std::string& pass : SplitCommas(v.substr(7))) {
      std::vector<std::string> groups = FocusGroupsForPass(pass);
      if (groups.empty()) {
        return InvalidArgument("--focus: unknown pass '" + pass + "'");
      }
      out.insert(out.end(), groups.begin(), groups.end());
    }
  } else {
    if (v.substr(0, 4) == "ops:") v.remove_prefix(4);
    for (const std::string& name : SplitCommas(v)) {
      if (!KnownFocusNames().contains(name)) {
        return InvalidArgument("--focus: '" + name +
                               "' is neither an opcode the generator draws "
                               "nor an op group");
      }
      out.push_back(name);
    }
  }
  if (out.empty()) return InvalidArgument("--focus: empty list");
  return out;
}

StatusOr<FuzzFlags> ParseFuzzFlags(int argc, char** argv) {
  FuzzFlags f;
  const std::filesystem::path self =
      argc > 0 ? std::filesystem::path(argv[0]).parent_path() : "";
  f.campaign.target = hlo_diff::TargetSpec::FromBinaryDir(
      self.string(), hlo_diff::TargetMode::kServe);
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.substr(0, 2) != "--") {
      return InvalidArgument("unexpected argument '" + std::string(arg) + "'");
    }
    std::string_view name = arg, value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (name == "--help" || name == "--progress" || name == "--no-progress" ||
        name == "--fail-on-finding" || name == "--keep-unsupported" ||
        name == "--no-localize") {
      if (has_value)
        return InvalidArgument(std::string(name) + " takes no value");
      if (name == "--help") f.help = true;
      if (name == "--progress") f.progress = 1;
      if (name == "--no-progress") f.progress = 0;
      if (name == "--fail-on-finding") f.fail_on_finding = true;
      if (name == "--keep-unsupported") f.campaign.keep_unsupported = true;
      if (name == "--no-localize") f.campaign.localize = false;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        return InvalidArgument(std::string(name) + " needs a value");
      }
      value = argv[++i];
    }
    ASSIGN_OR_RETURN(bool known, ApplyValueFlag(name, value, &f));
    if (!known) return InvalidArgument("unknown flag " + std::string(name));
  }
  return f;
}

}  // namespace trench::fuzz
