// The callee level on real miscompiles inside called computations (suite
// BugZooCallee, label "slow"): a target-only copy of the tree (as
// tests/bugzoo/zoo_build.h makes it) patched with called_faults/bug.patch,
// whose faults sit in the lowering of single ops (s32 compare GT emitted as
// LT, s32 abs as negate, f32 minimum as maximum) and in the emitter of
// called computations of reduce/scatter (subtract with swapped operands).
// Each case uses its op only inside a called computation: the graph level
// lands on the call site, and the callee level must name the op inside
// (or, for the emitter fault, name none and leave the call site). The
// branch level likewise inside a conditional's branch, a while body and a
// call's callee, and inside the body of a loop on 2 replicas whose body
// runs an all-reduce (run on the whole mesh); then, with zoo bug 16 patched in
// as well, it must leave a conditional that picks the wrong branch named.
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

// A conditional whose taken branch's abs (s32) is broken; the conditional
// returns a tuple, which the graph level sees through a
// get-tuple-element. Input 0 (the index) is set to 1.
constexpr char kConditionalModule[] = R"(HloModule cond_abs

plain {
  p = (s32[8,16], s32[8,16]) parameter(0)
  a = s32[8,16] get-tuple-element(p), index=0
  b = s32[8,16] get-tuple-element(p), index=1
  ROOT t = (s32[8,16], s32[8,16]) tuple(b, a)
}

absolute {
  p = (s32[8,16], s32[8,16]) parameter(0)
  a = s32[8,16] get-tuple-element(p), index=0
  b = s32[8,16] get-tuple-element(p), index=1
  aa = s32[8,16] abs(a)
  s = s32[8,16] add(aa, b)
  ROOT t = (s32[8,16], s32[8,16]) tuple(s, b)
}

ENTRY main {
  i = s32[] parameter(0)
  x = s32[8,16] parameter(1)
  y = s32[8,16] parameter(2)
  xy = (s32[8,16], s32[8,16]) tuple(x, y)
  c = (s32[8,16], s32[8,16]) conditional(i, xy, xy), branch_computations={plain, absolute}
  r0 = s32[8,16] get-tuple-element(c), index=0
  ROOT out = s32[8,16] multiply(r0, r0)
}
)";

// A loop whose body's abs (s32) is broken; the loop's counter compares LT,
// which the patch leaves alone.
constexpr char kWhileModule[] = R"(HloModule loop_abs

cond {
  s = (s32[], s32[8,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], s32[8,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = s32[8,16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ax = s32[8,16] abs(x)
  ROOT t = (s32[], s32[8,16]) tuple(i1, ax)
}

ENTRY main {
  x = s32[8,16] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[8,16]) tuple(zero, x)
  w = (s32[], s32[8,16]) while(init), condition=cond, body=body
  ROOT r = s32[8,16] get-tuple-element(w), index=1
}
)";

// The loop above on 2 replicas, its body summing the state over the
// devices (an all-reduce) before the broken abs: the body exchanges data,
// so the branch level runs it on the whole mesh.
std::string SpmdWhileModule() {
  std::string t = kWhileModule;
  const std::string head = "HloModule loop_abs\n";
  const std::string abs = "  ax = s32[8,16] abs(x)\n";
  t.replace(t.find(head), head.size(),
            "HloModule loop_abs_spmd\n\nadd {\n  a = s32[] parameter(0)\n"
            "  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\n");
  t.replace(t.find(abs), abs.size(),
            "  sx = s32[8,16] all-reduce(x), replica_groups={}, "
            "to_apply=add\n  ax = s32[8,16] abs(sx)\n");
  return t;
}

// A call whose callee's minimum (f32) is broken.
constexpr char kCallModule[] = R"(HloModule call_min

clip {
  a = f32[8,16] parameter(0)
  b = f32[8,16] parameter(1)
  m = f32[8,16] minimum(a, b)
  ROOT n = f32[8,16] negate(m)
}

ENTRY main {
  x = f32[8,16] parameter(0)
  y = f32[8,16] parameter(1)
  ROOT c = f32[8,16] call(x, y), to_apply=clip
}
)";

// Zoo bug 16 (an index outside [0, N) runs branch 0, not N-1) with the
// conditional's tuple seen through a get-tuple-element: no op inside the
// branches is wrong, so the conditional itself is named. Input 0 is set
// to -1.
constexpr char kConditionalIndexModule[] = R"(HloModule cond_index

relu {
  p = (f32[8,16]) parameter(0)
  a = f32[8,16] get-tuple-element(p), index=0
  z = f32[] constant(0)
  zb = f32[8,16] broadcast(z), dimensions={}
  r = f32[8,16] maximum(a, zb)
  ROOT t = (f32[8,16]) tuple(r)
}

negated {
  p = (f32[8,16]) parameter(0)
  a = f32[8,16] get-tuple-element(p), index=0
  r = f32[8,16] negate(a)
  ROOT t = (f32[8,16]) tuple(r)
}

ENTRY main {
  i = s32[] parameter(0)
  x = f32[8,16] parameter(1)
  xt = (f32[8,16]) tuple(x)
  c = (f32[8,16]) conditional(i, xt, xt), branch_computations={relu, negated}
  g = f32[8,16] get-tuple-element(c), index=0
  ROOT out = f32[8,16] add(g, x)
}
)";

struct Expected {
  const char* name;
  const char* module;
  const char* call_site;    // The graph level's instruction.
  const char* computation;  // The callee level's; "" when it names none.
  const char* op;
  const char* opcode;            // The refined signature's.
  const char* level = "callee";  // The level that looks inside.
  int64_t index = 0;             // Input 0 of the case, when non-zero.
};

hlo_diff::Case RandomCase(const char* text, int64_t index = 0) {
  auto m = hlo_diff::ParseCaseModule(text, "module.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return {};
  std::vector<Literal> args = RandomArguments(*(*m)->entry_computation(), 0);
  if (index != 0) args[0].SetFromInt64(0, index);
  StatusOr<hlo_diff::Case> c = hlo_diff::MakeCase(text, std::move(args));
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : hlo_diff::Case();
}

// The level called `name` (a failed expectation and an empty one if the
// localization has none).
const LevelResult& LevelNamed(const Localization& l, const std::string& name) {
  for (const LevelResult& r : l.levels) {
    if (r.level == name) return r;
  }
  ADD_FAILURE() << "no level " << name;
  static const LevelResult none;
  return none;
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
           Expected{"conditional", kConditionalModule, "c", "absolute", "aa",
                    "abs", "branch", 1},
           Expected{"while", kWhileModule, "w", "body", "ax", "abs", "branch"},
           Expected{"call", kCallModule, "c", "clip", "m", "minimum", "branch"},
       }) {
    SCOPED_TRACE(e.name);
    const hlo_diff::Case c = RandomCase(e.module, e.index);
    TargetProber prober(c, spec, (tmp / "runs" / e.name).string());
    StatusOr<Localization> l = Localize(c, prober, options);
    ASSERT_TRUE(l.ok()) << l.status().message();
    const std::string text = LocalizationText(*l, e.name);
    std::printf("%s", text.c_str());
    EXPECT_EQ(l->findings.instruction, e.call_site) << text;
    EXPECT_EQ(l->findings.called_computation, e.computation) << text;
    EXPECT_EQ(l->findings.called_instruction, e.op) << text;
    const LevelResult& inside = LevelNamed(*l, e.level);
    EXPECT_EQ(inside.result, *e.computation ? "found" : "none") << text;
    if (std::string(e.level) == "callee") {
      EXPECT_EQ(inside.runs, 1);
    }
    // The report carries the op, its computation and the call site.
    StatusOr<LocalizationReport> report =
        ParseLocalizationReport(LocalizationJson(*l, e.name).Dump());
    ASSERT_TRUE(report.ok()) << report.status().message();
    EXPECT_EQ(report->signature.opcode, std::optional<std::string>(e.opcode));
    if (*e.computation) {
      EXPECT_EQ(report->findings.called_instruction,
                std::optional<std::string>(e.op));
      const JsonDoc* ev = nullptr;
      for (const auto& level : report->levels) {
        if (level.level == e.level) ev = &level.evidence;
      }
      ASSERT_NE(ev, nullptr);
      EXPECT_EQ(ev->at("op").at("name"), e.op);
      if (std::string(e.level) == "callee") {
        EXPECT_EQ(ev->at("call_site").at("name"), e.call_site);
        EXPECT_FALSE(ev->at("op").at("check").at("ok").get<bool>());
        EXPECT_TRUE(ev->at("op").at("arguments").is_object()) << ev->dump();
      } else {
        EXPECT_EQ(ev->at("site").at("name"), e.call_site);
      }
    } else {
      EXPECT_FALSE(report->findings.called_instruction.has_value());
    }
    failed |= ::testing::Test::HasFailure();
  }
  // The SPMD loop: every device's inputs of their own; the body runs as
  // an SPMD case of its own, and the abs inside it is named.
  {
    const std::string module_text = SpmdWhileModule();
    auto m = hlo_diff::ParseCaseModule(module_text, "module.hlo");
    ASSERT_TRUE(m.ok()) << m.status().message();
    std::vector<std::vector<Literal>> per_device;
    for (uint64_t d = 0; d < 2; ++d) {
      per_device.push_back(RandomArguments(*(*m)->entry_computation(), 10 + d));
    }
    StatusOr<hlo_diff::Case> c = hlo_diff::MakeSpmdCase(
        module_text, DeviceMesh{2, 1}, std::move(per_device));
    ASSERT_TRUE(c.ok()) << c.status().message();
    TargetProber prober(*c, spec, (tmp / "runs" / "spmd-while").string());
    StatusOr<Localization> l = Localize(*c, prober, options);
    ASSERT_TRUE(l.ok()) << l.status().message();
    const std::string text = LocalizationText(*l, "spmd-while");
    std::printf("%s", text.c_str());
    EXPECT_EQ(l->findings.instruction, "w") << text;
    EXPECT_EQ(l->findings.called_computation, "body") << text;
    EXPECT_EQ(l->findings.called_instruction, "ax") << text;
    const LevelResult& branch = LevelNamed(*l, "branch");
    EXPECT_EQ(branch.result, "found") << text;
    const Json* on_mesh = branch.evidence.Find("on_mesh");
    ASSERT_NE(on_mesh, nullptr) << branch.evidence.Dump();
    EXPECT_TRUE(on_mesh->bool_value());
    EXPECT_NE(branch.summary.find("on all 2 devices"), std::string::npos)
        << branch.summary;
    failed |= ::testing::Test::HasFailure();
  }
  // Zoo bug 16 on top: the fault is in how the conditional picks its
  // branch, so the branch level runs the right branch alone, sees it
  // pass, and leaves the conditional named.
  ASSERT_TRUE(zoo.Patch(kSource / "tests" / "bugzoo" /
                        "16-conditional-branch-index-clamp"));
  ASSERT_TRUE(zoo.Build()) << "see " << zoo.log();
  const hlo_diff::Case c = RandomCase(kConditionalIndexModule, -1);
  TargetProber prober(c, spec, (tmp / "runs" / "zoo-16").string());
  StatusOr<Localization> l = Localize(c, prober, options);
  ASSERT_TRUE(l.ok()) << l.status().message();
  const std::string text = LocalizationText(*l, "zoo-16");
  std::printf("%s", text.c_str());
  EXPECT_EQ(l->findings.instruction, "c") << text;
  EXPECT_EQ(l->findings.opcode, "conditional") << text;
  EXPECT_EQ(l->findings.called_instruction, "") << text;
  const LevelResult& branch = LevelNamed(*l, "branch");
  EXPECT_EQ(branch.result, "none") << text;
  EXPECT_EQ(branch.runs, 1) << text;
  failed |= ::testing::Test::HasFailure();
  if (!failed) fs::remove_all(tmp);
}

}  // namespace
}  // namespace trench::hlo_bisect
