// The callee level on real miscompiles inside called computations (suite
// BugZooCallee, label "slow"): a target-only copy of the tree (as
// tests/bugzoo/zoo_build.h makes it) patched with called_faults/bug.patch,
// whose faults sit in the lowering of single ops (s32 compare GT emitted as
// LT, s32 abs as negate, f32 minimum as maximum) and in the emitter of
// called computations of reduce/scatter (subtract with swapped operands).
// Each case uses its op only inside a called computation: the graph level
// lands on the call site, and the callee level must name the op inside
// (or, for the emitter fault, name none and leave the call site).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "compiler/ir/random_inputs.h"
#include "tests/bugzoo/zoo_build.h"
#include "triage/localize/localization_record.h"
#include "triage/localize/localization_report.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = TRENCH_SOURCE_DIR;

// A sort whose comparator's compare GT (s32) the patch breaks; the graph
// level sees it through the get-tuple-element of the sort's tuple.
constexpr char kSortModule[] = R"(HloModule sort_desc

greater {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  x = f32[] parameter(2)
  y = f32[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
}

ENTRY main {
  k = s32[4,16] parameter(0)
  v = f32[4,16] parameter(1)
  s = (s32[4,16], f32[4,16]) sort(k, v), dimensions={1}, to_apply=greater
  keys = s32[4,16] get-tuple-element(s), index=0
  vals = f32[4,16] get-tuple-element(s), index=1
  ROOT out = (s32[4,16], f32[4,16]) tuple(keys, vals)
}
)";

// An L1 norm: the body's abs (s32) is broken.
constexpr char kReduceModule[] = R"(HloModule l1_norm

l1 {
  acc = s32[] parameter(0)
  x = s32[] parameter(1)
  ax = s32[] abs(x)
  ROOT sum = s32[] add(acc, ax)
}

ENTRY main {
  p = s32[8,32] parameter(0)
  zero = s32[] constant(0)
  ROOT r = s32[8] reduce(p, zero), dimensions={1}, to_apply=l1
}
)";

// A map whose to_apply's abs (s32) is broken.
constexpr char kMapModule[] = R"(HloModule map_abs

f {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ax = s32[] abs(x)
  ROOT s = s32[] add(ax, y)
}

ENTRY main {
  a = s32[8,16] parameter(0)
  b = s32[8,16] parameter(1)
  ROOT m = s32[8,16] map(a, b), dimensions={0,1}, to_apply=f
}
)";

// A scatter whose combiner's minimum (f32) is broken.
constexpr char kScatterMinModule[] = R"(HloModule scatter_min

combine {
  old = f32[] parameter(0)
  new = f32[] parameter(1)
  ROOT m = f32[] minimum(old, new)
}

ENTRY main {
  operand = f32[16,8] parameter(0)
  indices = s32[6,1] parameter(1)
  updates = f32[6,8] parameter(2)
  ROOT s = f32[16,8] scatter(operand, indices, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
}
)";

// A scatter whose combiner's subtract is right on its own: the scatter's
// emitter swaps its operands.
constexpr char kScatterSubModule[] = R"(HloModule scatter_sub

combine {
  old = s32[] parameter(0)
  new = s32[] parameter(1)
  ROOT d = s32[] subtract(old, new)
}

ENTRY main {
  operand = s32[16,8] parameter(0)
  indices = s32[6,1] parameter(1)
  updates = s32[6,8] parameter(2)
  ROOT s = s32[16,8] scatter(operand, indices, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
}
)";

struct Expected {
  const char* name;
  const char* module;
  const char* call_site;    // The graph level's instruction.
  const char* computation;  // The callee level's; "" when it names none.
  const char* op;
  const char* opcode;  // The refined signature's.
};

hlo_diff::Case RandomCase(const char* text) {
  auto m = hlo_diff::ParseCaseModule(text, "module.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return {};
  StatusOr<hlo_diff::Case> c =
      hlo_diff::MakeCase(text, RandomArguments(*(*m)->entry_computation(), 0));
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : hlo_diff::Case();
}

TEST(BugZooCallee, NamesTheOpInsideTheCalledComputation) {
  ASSERT_TRUE(bugzoo::HasTool("git") && bugzoo::HasTool("cmake"))
      << "git and cmake are needed";
  char tmpl[] = "/tmp/bisect-callee-test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path tmp = tmpl;
  const bugzoo::ZooBuild zoo(kSource, tmp);
  ASSERT_TRUE(zoo.Configure()) << "see " << zoo.log();
  ASSERT_TRUE(
      zoo.Patch(kSource / "tests" / "triage" / "localize" / "called_faults"));
  ASSERT_TRUE(zoo.Build()) << "see " << zoo.log();
  hlo_diff::TargetSpec spec = hlo_diff::TargetSpec::FromBinaryDir(
      zoo.build_dir().string(), hlo_diff::TargetMode::kServe);
  spec.timeout_seconds = 120;
  LocalizeOptions options;
  options.pass = options.rewrite = false;  // Not what this test is about.
  bool failed = false;
  for (const Expected& e : {
           Expected{"sort", kSortModule, "s", "greater", "gt", "compare"},
           Expected{"reduce", kReduceModule, "r", "l1", "ax", "abs"},
           Expected{"map", kMapModule, "m", "f", "ax", "abs"},
           Expected{"scatter-min", kScatterMinModule, "s", "combine", "m",
                    "minimum"},
           Expected{"scatter-emitter", kScatterSubModule, "s", "", "",
                    "scatter"},
       }) {
    SCOPED_TRACE(e.name);
    const hlo_diff::Case c = RandomCase(e.module);
    TargetProber prober(c, spec, (tmp / "runs" / e.name).string());
    StatusOr<Localization> l = Localize(c, prober, options);
    ASSERT_TRUE(l.ok()) << l.status().message();
    const std::string text = LocalizationText(*l, e.name);
    std::printf("%s", text.c_str());
    EXPECT_EQ(l->findings.instruction, e.call_site) << text;
    EXPECT_EQ(l->findings.called_computation, e.computation) << text;
    EXPECT_EQ(l->findings.called_instruction, e.op) << text;
    const LevelResult& callee = l->levels.back();
    EXPECT_EQ(callee.level, "callee");
    EXPECT_EQ(callee.result, *e.computation ? "found" : "none") << text;
    EXPECT_EQ(callee.runs, 1);
    // The report carries the op, its computation and the call site.
    StatusOr<LocalizationReport> report =
        ParseLocalizationReport(LocalizationJson(*l, e.name).Dump());
    ASSERT_TRUE(report.ok()) << report.status().message();
    EXPECT_EQ(report->signature.opcode, std::optional<std::string>(e.opcode));
    if (*e.computation) {
      EXPECT_EQ(report->findings.called_instruction,
                std::optional<std::string>(e.op));
      const JsonDoc& ev = report->levels.back().evidence;
      EXPECT_EQ(ev.at("call_site").at("name"), e.call_site);
      EXPECT_EQ(ev.at("op").at("name"), e.op);
      EXPECT_FALSE(ev.at("op").at("check").at("ok").get<bool>());
      EXPECT_TRUE(ev.at("op").at("arguments").is_object()) << ev.dump();
    } else {
      EXPECT_FALSE(report->findings.called_instruction.has_value());
    }
    failed |= ::testing::Test::HasFailure();
  }
  if (!failed) fs::remove_all(tmp);
}

}  // namespace
}  // namespace trench::hlo_bisect
