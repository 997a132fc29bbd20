#include "triage/fuzz/fuzz_flags.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "base/subprocess.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/opcode.h"
#include "triage/case/target_description.h"

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

// Opcode texts and group names the generator knows.
const std::set<std::string>& KnownFocusNames() {
  static const std::set<std::string> names = [] {
    std::set<std::string> n;
    // The device ops too: a focus on them makes every program SPMD (the
    // daemon aims at them when a commit changes their emitters).
    for (const auto* ops : {&SyntheticOps(), &SpmdOps()}) {
      for (HloOpcode op : *ops) {
        n.insert(std::string(OpcodeName(op)));
        n.insert(OpGroup(op));
      }
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

// A probability flag's value, in [0, 1].
StatusOr<double> ParseShare(const std::string& v) {
  ASSIGN_OR_RETURN(double p, ParseFlagNumber<double>(v));
  if (!(p >= 0 && p <= 1)) return InvalidArgument("must lie in [0, 1]");
  return p;
}

// A setter storing ParseDuration(v) into *out.
FlagParser::Setter Duration(double* out) {
  return [out](const std::string& v) -> Status {
    ASSIGN_OR_RETURN(*out, ParseDuration(v));
    return Status::Ok();
  };
}

FlagParser::Setter Share(double* out) {
  return [out](const std::string& v) -> Status {
    ASSIGN_OR_RETURN(*out, ParseShare(v));
    return Status::Ok();
  };
}

void RegisterCampaignFlags(FlagParser* p, CampaignOptions* c) {
  p->Custom("budget", "T", "wall time (90, 90s, 5m, 1h; default 60s)",
            Duration(&c->budget_seconds));
  p->Custom("jobs", "N",
            "parallel workers, each with its own target\nprocess (default 1)",
            [c](const std::string& v) -> Status {
              ASSIGN_OR_RETURN(c->jobs, ParseFlagNumber<int>(v));
              if (c->jobs < 1) return InvalidArgument("must be at least 1");
              return Status::Ok();
            });
  p->Strings("corpus", "P", &c->corpus,
             "trace file or directory; without one only\nsynthetic programs "
             "are made");
  p->Custom("trace-share", "F", "share of trace-derived programs (default 0.5)",
            Share(&c->trace_share));
  p->Custom("focus", "SPEC",
            "ops:dot,reduction (opcodes or op groups) or\npasses:fusion,"
            "algsimp (the ops those passes rewrite)",
            [c](const std::string& v) -> Status {
              ASSIGN_OR_RETURN(c->generator.focus, ParseFocus(v));
              return Status::Ok();
            });
  p->String("out", "DIR", &c->out_dir,
            "findings directory (default ./findings)");
  p->Number("seed", "N", &c->seed,
            "campaign seed (default 1); program i is\nreproducible from "
            "(seed, i)");
  p->Number("max-programs", "N", &c->max_programs, "stop after N programs");
  p->Custom("shard", "K/N",
            "run programs K, K+N, K+2N... of the campaign\n(0 <= K < N): N "
            "shards of one seed run\nthe programs of one campaign; "
            "--max-programs\ncounts the whole campaign's",
            [c](const std::string& v) -> Status {
              const size_t slash = v.find('/');
              int64_t k = -1, n = 0;
              if (slash != std::string::npos) {
                auto a = std::from_chars(v.data(), v.data() + slash, k);
                auto b = std::from_chars(v.data() + slash + 1,
                                         v.data() + v.size(), n);
                if (a.ptr != v.data() + slash || b.ptr != v.data() + v.size()) {
                  k = -1;
                }
              }
              if (k < 0 || n < 1 || k >= n || n > 1 << 20) {
                return InvalidArgument(
                    "--shard: expected K/N with 0 <= K < "
                    "N, got '" +
                    v + "'");
              }
              c->shard_index = k;
              c->shard_count = n;
              return Status::Ok();
            });
  p->Custom("linger", "T", "stop T after the first finding (0: at once)",
            Duration(&c->linger_seconds));
  p->Bool("keep-unsupported", &c->keep_unsupported,
          "also keep one case per reason the target or\nthe oracle refused "
          "a program, under\nDIR/unsupported/<sig>/");
  p->Switch(
      "no-localize", [c] { c->localize = false; },
      "deduplicate findings by their coarse\nsignature, without "
      "localizing them");
}

void RegisterGeneratorFlags(FlagParser* p, GeneratorOptions* g) {
  p->Group("generator flags");
  p->Number("instructions", "N", &g->instructions,
            "random ops per synthetic program (default 20)");
  p->Custom("dtypes", "a,b", "element types to draw from (default all)",
            [g](const std::string& v) { return ApplyDtypes(v, g); });
  p->Custom("special-values", "F",
            "share of synthetic programs whose float\ninputs hold inf, NaN, "
            "-0 and subnormals\n(default 0.08)",
            Share(&g->special_values));
  p->Custom("zero-dims", "F",
            "probability of a size-0 dim in a new array\n(default 0.03)",
            Share(&g->zero_dim_probability));
  p->Custom("long-rows", "F",
            "probability of a 1024..3000-element minor\ndim in a new array "
            "(default 0.12)",
            Share(&g->long_row_probability));
  p->Custom("large-share", "F",
            "share of large synthetic programs, whose\nfirst input has about "
            "--large-elements\nelements (default 0.01)",
            Share(&g->large_probability));
  p->Custom("large-elements", "N",
            "the size of large programs' first input\n(default: twice the "
            "largest size boundary;\nthe target's \"large_arrays\" "
            "from_elements)",
            [g](const std::string& v) -> Status {
              ASSIGN_OR_RETURN(g->large_elements, ParseFlagNumber<int64_t>(v));
              if (g->large_elements < 1 ||
                  g->large_elements > GeneratorOptions::kMaxLargeElements) {
                return InvalidArgument(
                    "must be from 1 to " +
                    std::to_string(GeneratorOptions::kMaxLargeElements));
              }
              return Status::Ok();
            });
  p->Custom("large-attribute", "NAME=VALUE",
            "a module attribute of large programs\n(frontend_attributes; "
            "repeatable)",
            [g](const std::string& v) -> Status {
              ASSIGN_OR_RETURN(auto attribute,
                               hlo_diff::ParseFrontendAttribute(v));
              g->large_attributes.push_back(std::move(attribute));
              return Status::Ok();
            });
  p->Custom("generator-options", "F",
            "generator settings as JSON (flags given\nbefore it are "
            "overridden)",
            [g](const std::string& v) -> Status {
              const std::vector<std::string> focus = g->focus;
              ASSIGN_OR_RETURN(*g, ReadGeneratorOptions(v));
              if (g->focus.empty()) g->focus = focus;
              return Status::Ok();
            });
}

void RegisterTargetFlags(FlagParser* p, hlo_diff::TargetSpec* t) {
  p->Group("target flags");
  p->Custom("target", "MODE",
            "serve (default: hlo-run --serve workers),\nhlo-run (a process "
            "per program) or\nhloc-tpusim (two processes per program)",
            [t](const std::string& v) { return ApplyTargetMode(v, t); });
  p->String("hlo-run", "P", &t->hlo_run,
            "target binaries (default: next to hlo-fuzz)");
  p->String("hloc", "P", &t->hloc, "");
  p->String("tpusim", "P", &t->tpusim, "");
  p->Custom("timeout", "T", "per program (default 60s)",
            Duration(&t->timeout_seconds));
  p->Strings("target-flag", "F", &t->extra_compile_flags,
             "extra compile flag for the target");
}

}  // namespace

void RegisterFuzzFlags(FlagParser* p, FuzzFlags* f) {
  RegisterCampaignFlags(p, &f->campaign);
  p->Switch(
      "progress", [f] { f->progress = 1; },
      "progress line on stderr (default: on a\nterminal)");
  p->Switch(
      "no-progress", [f] { f->progress = 0; }, "no progress line");
  p->Bool("fail-on-finding", &f->fail_on_finding,
          "fail (hlo-fuzz: exit 10) when anything was\nfound");
  RegisterGeneratorFlags(p, &f->campaign.generator);
  p->Custom("spmd", "F",
            "share of synthetic programs that are SPMD\nprograms with "
            "collectives over a 1x2, 2x1,\n2x2 or 1x4 mesh (default: 0.25 "
            "when the\ntarget's hloc --capabilities lists\ncollectives, "
            "else 0)",
            [f](const std::string& v) -> Status {
              f->spmd_set = true;
              return Share(&f->campaign.generator.spmd_share)(v);
            });
  p->Switch(
      "trace-collectives", [f] { f->campaign.trace_collectives = true; },
      "keep collectives in the corpus' cuts,\nscaling the mesh down "
      "(default: when the\ntarget lists collectives)");
  RegisterTargetFlags(p, &f->campaign.target);
  p->Group("changed-line reach (a coverage build of the target)");
  p->String("changed-lines", "DIFF", &f->changed_lines,
            "a unified diff (git show); report the reach\non its added lines "
            "and steer toward them");
  p->Number("reach-stop", "N", &f->campaign.reach_stop_programs,
            "end once every changed line was reached\nby N programs and "
            "nothing was found");
  p->Custom("steer-share", "F",
            "share of programs mutated from seeds that\nreached changed "
            "lines (default 0.5)",
            Share(&f->campaign.steer_share));
  p->Group("");
}

Status PrepareSpmd(FuzzFlags* f, std::string* note) {
  note->clear();
  const std::string& hloc = f->campaign.target.hloc;
  if (hloc.empty() || !std::filesystem::exists(hloc)) return Status::Ok();
  hlo_diff::ProcessSpec spec;
  spec.argv = {hloc, "--capabilities"};
  spec.timeout_seconds = 30;
  spec.capture_bytes = hlo_diff::kMaxDescriptionBytes;
  StatusOr<hlo_diff::ProcessResult> run = hlo_diff::RunProcess(spec);
  if (!run.ok() || run->exit_code != 0) {
    *note = "hloc --capabilities failed; programs stay single-device";
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(
      hlo_diff::TargetDescription d,
      hlo_diff::ParseTargetDescriptionText(run->out, "hloc --capabilities"));
  const std::vector<std::string>& ops = d.slice.collectives;
  if (ops.empty()) return Status::Ok();
  if (d.slice.chips < 4) {
    // The generator's meshes have up to 4 devices; the target would
    // refuse the larger ones.
    *note = "the target lists collectives on " + std::to_string(d.slice.chips) +
            " chips; programs stay single-device (meshes need 4)";
    return Status::Ok();
  }
  if (!f->spmd_set) f->campaign.generator.spmd_share = kDefaultSpmdShare;
  f->campaign.trace_collectives = true;
  std::string list;
  for (const std::string& op : ops) list += (list.empty() ? "" : ",") + op;
  *note = "the target runs collectives (" + list +
          "): " + std::to_string(f->campaign.generator.spmd_share) +
          " of the synthetic programs are SPMD; trace cuts keep collectives";
  return Status::Ok();
}

Status PrepareReach(FuzzFlags* f, std::string* note) {
  note->clear();
  if (f->changed_lines.empty()) return Status::Ok();
  std::ifstream in(f->changed_lines, std::ios::binary);
  if (!in) return IoError(f->changed_lines + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  StatusOr<ChangedLines> lines = ChangedLinesOfDiff(text.str());
  if (!lines.ok()) {
    return InvalidArgument(f->changed_lines + ": " + lines.status().message());
  }
  if (lines->empty()) {
    *note = "the diff adds no line: no reach to measure";
    return Status::Ok();
  }
  const hlo_diff::TargetSpec& t = f->campaign.target;
  StatusOr<LineCoverageMap> map = LineCoverageMap::OfBinary(t.hlo_run, *lines);
  if (!map.ok()) {
    *note = "no changed-line reach: " + map.status().message();
    return Status::Ok();
  }
  if (t.mode != hlo_diff::TargetMode::kServe) {
    return InvalidArgument(
        "--changed-lines: a coverage build reports per program only in "
        "--target serve");
  }
  f->campaign.changed_lines =
      std::make_shared<const LineCoverageMap>(std::move(map).value());
  return Status::Ok();
}

FuzzFlags DefaultFuzzFlags(const std::string& binary_dir) {
  FuzzFlags f;
  f.campaign.target = hlo_diff::TargetSpec::FromBinaryDir(
      binary_dir, hlo_diff::TargetMode::kServe);
  return f;
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
        "select", "constant", "convert", "reduction", "contraction"}},
      {"constant-folding",
       {"constant", "elementwise_unary", "elementwise_binary", "convert"}},
      {"cse", {"elementwise_binary", "compare", "data_movement"}},
      {"dce", {"control", "data_movement"}},
      {"dot-decomposer", {"contraction"}},
      // Only all-reduces (and their helpers): every program is an SPMD
      // program with several of them to combine.
      {"all-reduce-combiner", {"all-reduce"}},
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
  FuzzFlags f = DefaultFuzzFlags(
      argc > 0 ? std::filesystem::path(argv[0]).parent_path().string() : "");
  FlagParser p("hlo-fuzz", kFuzzSynopsis);
  RegisterFuzzFlags(&p, &f);
  RETURN_IF_ERROR(p.Parse(argc, argv));
  f.help = p.help_requested();
  return f;
}

}  // namespace trench::fuzz
