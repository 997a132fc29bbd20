#include "compiler/passes/all_reduce_combiner.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/ir/hlo_equal.h"
#include "compiler/ir/hlo_text_file.h"
#include "compiler/passes/pass_registry.h"
#include "compiler/passes/pipeline.h"
#include "oracle/spmd.h"
#include "tests/compiler/passes/pass_test_util.h"
#include "tests/traces_dir.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

using testing::Find;
using testing::Parse;
using testing::Root;
using testing::RunPass;

constexpr char kReductions[] = R"(
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sum.clone {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
isum {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
imax {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
)";

// "HloModule m", the reductions above, then `entry`.
std::string WithReductions(const std::string& entry) {
  return std::string("HloModule m\n") + kReductions + entry;
}

std::vector<HloInstruction*> AllReduces(const HloModule& m) {
  std::vector<HloInstruction*> out;
  for (HloComputation* c : m.computations()) {
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kAllReduce) out.push_back(i);
    }
  }
  return out;
}

// The operand counts of the module's all-reduces, sorted.
std::vector<int64_t> Widths(const HloModule& m) {
  std::vector<int64_t> out;
  for (const HloInstruction* ar : AllReduces(m)) {
    out.push_back(ar->operand_count());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Raw(const HloInstruction& i, const std::string& key) {
  const std::string* v = i.attrs().FindRaw(key);
  return v ? *v : "<absent>";
}

// Two all-reduces of p0 (f32[4]) and p1 (f32[8]) with the given attribute
// texts, both results in the root tuple.
std::string Pair(const std::string& first, const std::string& second) {
  return WithReductions(R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[8] parameter(1)
  ar0 = f32[4] all-reduce(p0), )" +
                        first + R"(
  ar1 = f32[8] all-reduce(p1), )" +
                        second + R"(
  ROOT t = (f32[4], f32[8]) tuple(ar0, ar1)
}
)");
}

TEST(AllReduceCombinerTest, CombinesTwoIntoOneVariadicAllReduce) {
  auto m = Parse(Pair("replica_groups={}, to_apply=sum",
                      "replica_groups={}, to_apply=sum"));
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass;
  PassContext ctx;
  EXPECT_TRUE(RunPass(pass, m.get(), &ctx));
  std::vector<HloInstruction*> ars = AllReduces(*m);
  ASSERT_EQ(ars.size(), 1u);
  const HloInstruction* ar = ars[0];
  EXPECT_EQ(ar->shape().ToString(false), "(f32[4], f32[8])");
  ASSERT_EQ(ar->operand_count(), 2);
  EXPECT_EQ(ar->operand(0)->name(), "p0");
  EXPECT_EQ(ar->operand(1)->name(), "p1");
  EXPECT_EQ(ar->to_apply()->name(), "sum");
  EXPECT_EQ(Raw(*ar, "replica_groups"), "{}");
  EXPECT_EQ(Raw(*ar, "channel_id"), "<absent>");
  // Each original's users now read its element of the combined value.
  const HloInstruction* t = Root(*m);
  for (int64_t i = 0; i < 2; ++i) {
    const HloInstruction* gte = t->operand(i);
    EXPECT_EQ(gte->opcode(), HloOpcode::kGetTupleElement);
    EXPECT_EQ(gte->tuple_index(), i);
    EXPECT_EQ(gte->operand(0), ar);
  }
  EXPECT_EQ(Find(*m, "ar0"), nullptr);
  EXPECT_EQ(Find(*m, "ar1"), nullptr);
  ASSERT_EQ(ctx.decisions().size(), 1u);
  EXPECT_EQ(ctx.decisions()[0].pass, "all-reduce-combiner");
  EXPECT_EQ(ctx.decisions()[0].site, "combine");
  EXPECT_EQ(ctx.decisions()[0].instruction, "ar0");
  EXPECT_TRUE(ctx.decisions()[0].allowed);
  // A variadic all-reduce is never combined again (as in XLA).
  EXPECT_FALSE(RunPass(pass, m.get()));
}

TEST(AllReduceCombinerTest, CombinesThreeWithEqualReductionsAndGroupForms) {
  // sum and sum.clone are one reduction; [2,2]<=[4] is {{0,1},{2,3}}.
  auto m = Parse(WithReductions(R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[2,2] parameter(1)
  p2 = f32[] parameter(2)
  ar0 = f32[4] all-reduce(p0), channel_id=3, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=sum
  ar1 = f32[2,2] all-reduce(p1), channel_id=4, replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=sum.clone
  ar2 = f32[] all-reduce(p2), channel_id=5, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=sum
  n = f32[] negate(ar2)
  ROOT t = (f32[4], f32[2,2], f32[]) tuple(ar0, ar1, n)
}
)"));
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass;
  EXPECT_TRUE(RunPass(pass, m.get()));
  std::vector<HloInstruction*> ars = AllReduces(*m);
  ASSERT_EQ(ars.size(), 1u);
  const HloInstruction* ar = ars[0];
  EXPECT_EQ(ar->shape().ToString(false), "(f32[4], f32[2,2], f32[])");
  EXPECT_EQ(Raw(*ar, "channel_id"), "3");
  EXPECT_EQ(Raw(*ar, "replica_groups"), "{{0,1},{2,3}}");
  EXPECT_EQ(Raw(*ar, "use_global_device_ids"), "true");
  EXPECT_EQ(ar->to_apply()->name(), "sum");
  const HloInstruction* n = Find(*m, "n");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->operand(0)->opcode(), HloOpcode::kGetTupleElement);
  EXPECT_EQ(n->operand(0)->tuple_index(), 2);
}

struct Apart {
  const char* why;
  const char* first;
  const char* second;
};

TEST(AllReduceCombinerTest, KeepsApartWhatDiffers) {
  const Apart cases[] = {
      {"groups", "replica_groups={{0,1},{2,3}}, to_apply=sum",
       "replica_groups={{0,2},{1,3}}, to_apply=sum"},
      {"group order", "replica_groups={{0,1},{2,3}}, to_apply=sum",
       "replica_groups={{2,3},{0,1}}, to_apply=sum"},
      {"iota groups", "replica_groups={{0,1},{2,3}}, to_apply=sum",
       "replica_groups=[2,2]<=[2,2]T(1,0), to_apply=sum"},
      {"reduction op", "replica_groups={}, to_apply=sum",
       "replica_groups={}, to_apply=max"},
      {"channel_id presence", "channel_id=1, replica_groups={}, to_apply=sum",
       "replica_groups={}, to_apply=sum"},
      {"use_global_device_ids",
       "channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, "
       "to_apply=sum",
       "channel_id=2, replica_groups={{0,1,2,3}}, to_apply=sum"},
      {"constrain_layout",
       "replica_groups={}, constrain_layout=true, to_apply=sum",
       "replica_groups={}, to_apply=sum"},
  };
  for (const Apart& c : cases) {
    SCOPED_TRACE(c.why);
    auto m = Parse(Pair(c.first, c.second));
    ASSERT_NE(m, nullptr);
    AllReduceCombiner pass;
    PassContext ctx;
    EXPECT_FALSE(RunPass(pass, m.get(), &ctx));
    EXPECT_EQ(AllReduces(*m).size(), 2u);
    EXPECT_TRUE(ctx.decisions().empty());
  }
  // Equal groups, channels and modes combine: the cases above differ in
  // one thing each.
  auto m = Parse(Pair(
      "channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, "
      "to_apply=sum",
      "channel_id=2, replica_groups=[2,2]<=[4], use_global_device_ids=true, "
      "to_apply=sum.clone"));
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass;
  EXPECT_TRUE(RunPass(pass, m.get()));
}

TEST(AllReduceCombinerTest, KeepsElementTypesApart) {
  // XLA keys on the reduction's element type: f32 and s32 sums never mix.
  auto m = Parse(WithReductions(R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = s32[4] parameter(1)
  ar0 = f32[4] all-reduce(p0), replica_groups={}, to_apply=sum
  ar1 = s32[4] all-reduce(p1), replica_groups={}, to_apply=isum
  ROOT t = (f32[4], s32[4]) tuple(ar0, ar1)
}
)"));
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass;
  EXPECT_FALSE(RunPass(pass, m.get()));
}

TEST(AllReduceCombinerTest, SkipsReductionsThatAreNotOneScalarOp) {
  const std::string text = R"(HloModule m
sum1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT n = f32[] negate(s)
}
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[8] parameter(1)
  ar0 = f32[4] all-reduce(p0), replica_groups={}, to_apply=sum1
  ar1 = f32[8] all-reduce(p1), replica_groups={}, to_apply=sum1
  ROOT t = (f32[4], f32[8]) tuple(ar0, ar1)
}
)";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass;
  EXPECT_FALSE(RunPass(pass, m.get()));
}

TEST(AllReduceCombinerTest, LeavesComputationsWithDomainsAlone) {
  const std::string entry = R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[8] parameter(1)
  d = f32[8] domain(p1), domain={kind="sharding", entry={replicated}, exit={maximal device=0}}
  ar0 = f32[4] all-reduce(p0), replica_groups={}, to_apply=sum
  ar1 = f32[8] all-reduce(d), replica_groups={}, to_apply=sum
  ROOT t = (f32[4], f32[8]) tuple(ar0, ar1)
}
)";
  auto m = Parse(WithReductions(entry));
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass;
  EXPECT_FALSE(RunPass(pass, m.get()));
  // Without the domain the two combine.
  std::string plain = entry;
  plain.replace(plain.find("  d = "),
                plain.find("  ar0") - plain.find("  d = "), "");
  plain.replace(plain.find("all-reduce(d)"), 13, "all-reduce(p1)");
  auto n = Parse(WithReductions(plain));
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(RunPass(pass, n.get()));
}

TEST(AllReduceCombinerTest, DependentAllReducesAreNotCombined) {
  const char* const entries[] = {
      // Through an operand.
      R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  ar0 = f32[4] all-reduce(p0), replica_groups={}, to_apply=sum
  n = f32[4] negate(ar0)
  ROOT ar1 = f32[4] all-reduce(n), replica_groups={}, to_apply=sum
}
)",
      // Through a control edge.
      R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ar0 = f32[4] all-reduce(p0), replica_groups={}, to_apply=sum
  ar1 = f32[4] all-reduce(p1), replica_groups={}, to_apply=sum, control-predecessors={ar0}
  ROOT t = (f32[4], f32[4]) tuple(ar0, ar1)
}
)",
      // Through a control edge and then an operand.
      R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ar0 = f32[4] all-reduce(p0), replica_groups={}, to_apply=sum
  n = f32[4] negate(p1), control-predecessors={ar0}
  ar1 = f32[4] all-reduce(n), replica_groups={}, to_apply=sum
  ROOT t = (f32[4], f32[4]) tuple(ar0, ar1)
}
)",
  };
  for (const char* entry : entries) {
    SCOPED_TRACE(entry);
    auto m = Parse(WithReductions(entry));
    ASSERT_NE(m, nullptr);
    AllReduceCombiner pass;
    EXPECT_FALSE(RunPass(pass, m.get()));
    EXPECT_EQ(AllReduces(*m).size(), 2u);
  }
}

TEST(AllReduceCombinerTest, ADependentMemberEndsTheSetAsInXla) {
  // Post order ar0, ar1 (depends on ar0), ar2: the first set stops at ar1
  // and holds ar0 alone; the next starts at ar1 and takes ar2.
  auto m = Parse(WithReductions(R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p2 = f32[2] parameter(1)
  ar0 = f32[4] all-reduce(p0), replica_groups={}, to_apply=sum
  n = f32[4] negate(ar0)
  ar1 = f32[4] all-reduce(n), replica_groups={}, to_apply=sum
  ar2 = f32[2] all-reduce(p2), replica_groups={}, to_apply=sum
  ROOT t = (f32[4], f32[4], f32[2]) tuple(ar0, ar1, ar2)
}
)"));
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass;
  PassContext ctx;
  EXPECT_TRUE(RunPass(pass, m.get(), &ctx));
  EXPECT_NE(Find(*m, "ar0"), nullptr);
  ASSERT_EQ(Widths(*m), (std::vector<int64_t>{1, 2}));
  for (const HloInstruction* ar : AllReduces(*m)) {
    if (ar->operand_count() != 2) continue;
    EXPECT_EQ(ar->shape().ToString(false), "(f32[4], f32[2])");
    EXPECT_EQ(ar->operand(0)->name(), "n");
  }
  ASSERT_EQ(ctx.decisions().size(), 1u);
  EXPECT_EQ(ctx.decisions()[0].instruction, "ar1");
}

// `n` independent f32[elements] all-reduces (ar0...) of one key.
std::string Independent(int n, int64_t elements) {
  std::string params, ars, root_shapes, root_ops;
  const std::string shape = "f32[" + std::to_string(elements) + "]";
  for (int i = 0; i < n; ++i) {
    const std::string k = std::to_string(i);
    params += "  p" + k + " = " + shape + " parameter(" + k + ")\n";
    ars += "  ar" + k + " = " + shape + " all-reduce(p" + k +
           "), replica_groups={}, to_apply=sum\n";
    root_shapes += (i ? ", " : "") + shape;
    root_ops += (i ? ", ar" : "ar") + k;
  }
  return WithReductions("ENTRY e {\n" + params + ars + "  ROOT t = (" +
                        root_shapes + ") tuple(" + root_ops + ")\n}\n");
}

TEST(AllReduceCombinerTest, RespectsTheByteThreshold) {
  // 1 KiB each, 2 KiB per set: two sets of two.
  auto m = Parse(Independent(4, 256));
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass(/*threshold_bytes=*/2048, /*threshold_count=*/256);
  EXPECT_TRUE(RunPass(pass, m.get()));
  EXPECT_EQ(Widths(*m), (std::vector<int64_t>{2, 2}));

  // One above the threshold by itself is never combined.
  auto big = Parse(Pair("replica_groups={}, to_apply=sum",
                        "replica_groups={}, to_apply=sum"));
  ASSERT_NE(big, nullptr);
  AllReduceCombiner small(/*threshold_bytes=*/24, /*threshold_count=*/256);
  EXPECT_FALSE(RunPass(small, big.get()));
  AllReduceCombiner exact(/*threshold_bytes=*/48, /*threshold_count=*/256);
  EXPECT_TRUE(RunPass(exact, big.get()));  // 16 + 32 bytes fit exactly.
}

TEST(AllReduceCombinerTest, DefaultThresholdIsXlas30MiB) {
  EXPECT_EQ(AllReduceCombiner::kDefaultThresholdBytes, 30 * 1024 * 1024);
  EXPECT_EQ(AllReduceCombiner::kDefaultThresholdCount, 256);
  // Two of 16 MiB exceed it, two of 8 MiB do not (no data is allocated:
  // the pass only reads shapes).
  auto large = Parse(Independent(2, int64_t{4} << 20));
  ASSERT_NE(large, nullptr);
  AllReduceCombiner pass;
  EXPECT_FALSE(RunPass(pass, large.get()));
  auto fits = Parse(Independent(2, int64_t{2} << 20));
  ASSERT_NE(fits, nullptr);
  EXPECT_TRUE(RunPass(pass, fits.get()));
}

TEST(AllReduceCombinerTest, RespectsTheCountThreshold) {
  auto m = Parse(Independent(5, 4));
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass(AllReduceCombiner::kDefaultThresholdBytes,
                         /*threshold_count=*/2);
  EXPECT_TRUE(RunPass(pass, m.get()));
  EXPECT_EQ(Widths(*m), (std::vector<int64_t>{1, 2, 2}));

  auto all = Parse(Independent(5, 4));
  ASSERT_NE(all, nullptr);
  AllReduceCombiner wide;
  EXPECT_TRUE(RunPass(wide, all.get()));
  EXPECT_EQ(Widths(*all), (std::vector<int64_t>{5}));
}

TEST(AllReduceCombinerTest, NonPositiveThresholdsDisableThePass) {
  auto m = Parse(Independent(3, 4));
  ASSERT_NE(m, nullptr);
  AllReduceCombiner no_bytes(0, 256), no_count(1024, 0);
  EXPECT_FALSE(RunPass(no_bytes, m.get()));
  EXPECT_FALSE(RunPass(no_count, m.get()));
}

// Three sets of two, one per key: f32 sums, f32 maxima, s32 sums.
constexpr char kThreeSets[] = R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = s32[4] parameter(1)
  a0 = f32[4] all-reduce(p0), replica_groups={}, to_apply=sum
  a1 = f32[4] all-reduce(p0), replica_groups={}, to_apply=sum.clone
  b0 = f32[4] all-reduce(p0), replica_groups={}, to_apply=max
  b1 = f32[4] all-reduce(p0), replica_groups={}, to_apply=max
  c0 = s32[4] all-reduce(p1), replica_groups={}, to_apply=isum
  c1 = s32[4] all-reduce(p1), replica_groups={}, to_apply=isum
  ROOT t = (f32[4], f32[4], f32[4], f32[4], s32[4], s32[4]) tuple(a0, a1, b0, b1, c0, c1)
}
)";

TEST(AllReduceCombinerTest, RewriteLimitStopsAfterNCombines) {
  const std::string text = WithReductions(kThreeSets);
  {
    auto m = Parse(text);
    ASSERT_NE(m, nullptr);
    AllReduceCombiner pass;
    PassContext ctx;
    EXPECT_TRUE(RunPass(pass, m.get(), &ctx));
    EXPECT_EQ(Widths(*m), (std::vector<int64_t>{2, 2, 2}));
    ASSERT_EQ(ctx.decisions().size(), 3u);
    EXPECT_EQ(ctx.decisions()[0].instruction, "a0");
    EXPECT_EQ(ctx.decisions()[1].instruction, "b0");
    EXPECT_EQ(ctx.decisions()[2].instruction, "c0");
  }
  for (int64_t limit : {0, 1, 2, 3}) {
    SCOPED_TRACE(limit);
    auto m = Parse(text);
    ASSERT_NE(m, nullptr);
    AllReduceCombiner pass;
    PassContext ctx(limit);
    EXPECT_EQ(RunPass(pass, m.get(), &ctx), limit > 0);
    // Every set still asks; only the first `limit` combine.
    ASSERT_EQ(ctx.decisions().size(), 3u);
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(ctx.decisions()[i].pass, "all-reduce-combiner");
      EXPECT_EQ(ctx.decisions()[i].site, "combine");
      EXPECT_EQ(ctx.decisions()[i].allowed, i < limit);
    }
    EXPECT_EQ(ctx.rewrites_allowed(), limit);
    std::vector<int64_t> widths = Widths(*m);
    EXPECT_EQ(std::count(widths.begin(), widths.end(), 2), limit);
    EXPECT_EQ(widths.size(), static_cast<size_t>(6 - limit));
    if (limit > 0) {
      ASSERT_NE(ctx.LastAllowed(), nullptr);
      EXPECT_EQ(ctx.LastAllowed()->instruction,
                std::string(1, "abc"[limit - 1]) + "0");
    } else {
      EXPECT_EQ(ctx.LastAllowed(), nullptr);
    }
  }
}

TEST(AllReduceCombinerTest, DeterministicOutput) {
  const std::string text = WithReductions(kThreeSets);
  auto a = Parse(text), b = Parse(text);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  AllReduceCombiner pass;
  RunPass(pass, a.get());
  RunPass(pass, b.get());
  EXPECT_EQ(PrintHloModule(*a), PrintHloModule(*b));
}

TEST(AllReduceCombinerTest, ModuleWithoutAllReduceIsUntouched) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)");
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass;
  PassContext ctx;
  EXPECT_FALSE(RunPass(pass, m.get(), &ctx));
  EXPECT_TRUE(ctx.decisions().empty());
  EXPECT_TRUE(ctx.log().empty());
}

TEST(AllReduceCombinerTest, CarriesControlEdgesShardingAndMetadata) {
  auto m = Parse(WithReductions(R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[8] parameter(1)
  before = f32[4] negate(p0)
  ar0 = f32[4] all-reduce(p0), replica_groups={}, to_apply=sum, control-predecessors={before}, sharding={replicated}, metadata={op_name="g0"}
  ar1 = f32[8] all-reduce(p1), replica_groups={}, to_apply=sum, metadata={op_name="g1"}
  after = f32[8] negate(p1), control-predecessors={ar1}
  ROOT t = (f32[4], f32[8], f32[4], f32[8]) tuple(ar0, ar1, before, after)
}
)"));
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass;
  EXPECT_TRUE(RunPass(pass, m.get()));
  std::vector<HloInstruction*> ars = AllReduces(*m);
  ASSERT_EQ(ars.size(), 1u);
  HloInstruction* ar = ars[0];
  HloInstruction* before = Find(*m, "before");
  HloInstruction* after = Find(*m, "after");
  ASSERT_NE(before, nullptr);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(ar->control_predecessors(), std::vector<HloInstruction*>{before});
  EXPECT_EQ(after->control_predecessors(), std::vector<HloInstruction*>{ar});
  EXPECT_TRUE(ar->control_successors() == std::vector<HloInstruction*>{after});
  EXPECT_EQ(Raw(*ar, "sharding"), "{{replicated}, {replicated}}");
  EXPECT_EQ(Raw(*ar, "metadata"), "<absent>");
  const HloInstruction* t = Root(*m);
  EXPECT_EQ(Raw(*t->operand(0), "metadata"), "{op_name=\"g0\"}");
  EXPECT_EQ(Raw(*t->operand(0), "sharding"), "{replicated}");
  EXPECT_EQ(Raw(*t->operand(1), "metadata"), "{op_name=\"g1\"}");
  EXPECT_EQ(Raw(*t->operand(1), "sharding"), "<absent>");
  // The result prints as text that reads back equal.
  auto back = ParseHloModule(PrintHloModule(*m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  std::string diff;
  EXPECT_TRUE(ModulesEqual(**back, *m, &diff)) << diff;
}

TEST(AllReduceCombinerTest, CombinesInCalledComputationsToo) {
  auto m = Parse(WithReductions(R"(
body {
  q0 = f32[4] parameter(0)
  q1 = f32[4] parameter(1)
  r0 = f32[4] all-reduce(q0), replica_groups={}, to_apply=sum
  r1 = f32[4] all-reduce(q1), replica_groups={}, to_apply=sum
  ROOT s = f32[4] add(r0, r1)
}
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT c = f32[4] call(p0, p1), to_apply=body
}
)"));
  ASSERT_NE(m, nullptr);
  AllReduceCombiner pass;
  EXPECT_TRUE(RunPass(pass, m.get()));
  std::vector<HloInstruction*> ars = AllReduces(*m);
  ASSERT_EQ(ars.size(), 1u);
  EXPECT_EQ(ars[0]->parent()->name(), "body");
}

TEST(AllReduceCombinerTest, RegisteredLateBeforeLayoutAssignment) {
  const auto& passes = RegisteredPasses();
  auto index = [&](std::string_view name) {
    for (size_t i = 0; i < passes.size(); ++i) {
      if (passes[i].name == name) return static_cast<int>(i);
    }
    return -1;
  };
  const int me = index("all-reduce-combiner");
  ASSERT_GE(me, 0);
  EXPECT_EQ(passes[me].stage, PassStage::kOnce);
  for (const PassInfo& p : passes) {
    if (p.stage == PassStage::kSimplify) {
      EXPECT_LT(index(p.name), me) << p.name;
    }
  }
  EXPECT_LT(me, index("layout-assignment"));
  EXPECT_LT(me, index("fusion"));
  auto created = CreatePass("all-reduce-combiner");
  ASSERT_TRUE(created.ok());
  EXPECT_EQ((*created)->name(), "all-reduce-combiner");
}

// Several all-reduces valid on any mesh of four devices: flattened ids in
// list and iota form, cross-replica-and-partition, cross-replica over
// every replica, f32 and s32, one depending on another.
constexpr char kSpmdEntry[] = R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[2,3] parameter(1)
  p2 = s32[5] parameter(2)
  p3 = s32[3] parameter(3)
  a0 = f32[4] all-reduce(p0), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=sum
  a1 = f32[2,3] all-reduce(p1), channel_id=2, replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=sum.clone
  a2 = f32[4] all-reduce(p0), channel_id=3, replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, to_apply=sum
  a3 = f32[2,3] all-reduce(p1), channel_id=4, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=sum
  b0 = s32[5] all-reduce(p2), replica_groups={}, to_apply=isum
  b1 = s32[3] all-reduce(p3), replica_groups={}, to_apply=isum
  c0 = s32[5] all-reduce(p2), channel_id=5, replica_groups={}, to_apply=imax
  nc = s32[5] negate(c0)
  c1 = s32[5] all-reduce(nc), channel_id=6, replica_groups={}, to_apply=imax
  d0 = f32[4] all-reduce(p0), channel_id=7, replica_groups={}, to_apply=max
  d1 = f32[2,3] all-reduce(p1), channel_id=8, replica_groups={}, to_apply=max
  ROOT t = (f32[4], f32[2,3], f32[4], f32[2,3], s32[5], s32[3], s32[5], f32[4], f32[2,3]) tuple(a0, a1, a2, a3, b0, b1, c1, d0, d1)
}
)";

// Groups of replica ids, for meshes of two replicas.
constexpr char kTwoReplicaEntry[] = R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = s32[2] parameter(1)
  a0 = f32[4] all-reduce(p0), replica_groups={{0,1}}, to_apply=sum
  a1 = s32[2] all-reduce(p1), replica_groups={{0,1}}, to_apply=isum
  a2 = f32[4] all-reduce(p0), replica_groups={{0},{1}}, to_apply=sum
  a3 = f32[4] all-reduce(p0), replica_groups=[1,2]<=[2], to_apply=sum.clone
  a4 = s32[2] all-reduce(p1), channel_id=1, replica_groups={{0,1}}, to_apply=isum
  a5 = s32[2] all-reduce(p1), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=false, to_apply=isum
  ROOT t = (f32[4], s32[2], f32[4], f32[4], s32[2], s32[2]) tuple(a0, a1, a2, a3, a4, a5)
}
)";

// Device d's root value before and after the pass are equal (bitwise) on
// random arguments of seed 7 * d + seed.
void ExpectSameOnMesh(const HloModule& before, const HloModule& after,
                      DeviceMesh mesh, int seed) {
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < mesh.size(); ++d) {
    args.push_back(RandomArguments(*before.entry_computation(), 7 * d + seed));
  }
  SpmdOptions options;
  options.mesh = mesh;
  auto a = EvaluateSpmd(before, args, options);
  auto b = EvaluateSpmd(after, args, options);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(a->size(), b->size());
  for (size_t d = 0; d < a->size(); ++d) {
    ComparisonResult cmp =
        CompareLiterals((*b)[d], (*a)[d], ComparisonOptions::Exact());
    EXPECT_TRUE(cmp.ok()) << "device " << d << ": " << cmp.ToText();
  }
}

TEST(AllReduceCombinerTest, SpmdOracleComputesTheSameBeforeAndAfter) {
  struct Case {
    const char* entry;
    DeviceMesh mesh;
    std::vector<int64_t> widths;
  };
  const Case cases[] = {
      // a0+a1, a2+a3 (iota = list), b0+b1, c0 and c1 apart (dependent),
      // d0+d1.
      {kSpmdEntry, {1, 4}, {1, 1, 2, 2, 2, 2}},
      {kSpmdEntry, {2, 2}, {1, 1, 2, 2, 2, 2}},
      // a0+a3 (iota = list), a1 (s32), a2 (other groups), a4+a5 (channel,
      // use_global_device_ids absent = false).
      {kTwoReplicaEntry, {2, 2}, {1, 1, 2, 2}},
      {kTwoReplicaEntry, {2, 1}, {1, 1, 2, 2}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.mesh.replicas) + "x" +
                 std::to_string(c.mesh.partitions));
    auto m = Parse(WithReductions(c.entry));
    ASSERT_NE(m, nullptr);
    auto before = m->Clone();
    AllReduceCombiner pass;
    EXPECT_TRUE(RunPass(pass, m.get()));
    EXPECT_EQ(Widths(*m), c.widths) << PrintHloModule(*m);
    for (int seed : {1, 2, 3}) ExpectSameOnMesh(*before, *m, c.mesh, seed);
  }
}

TEST(AllReduceCombinerTest, DefaultPipelineCombinesAndStaysEquivalent) {
  auto m = Parse(WithReductions(R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  x = f32[4] multiply(p0, p1)
  a0 = f32[4] all-reduce(x), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=sum
  a1 = f32[4] all-reduce(p1), channel_id=2, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=sum.clone
  ROOT r = f32[4] add(a0, a1)
}
)"));
  ASSERT_NE(m, nullptr);
  auto before = m->Clone();
  auto pipeline = PassPipeline::CreateDefault({});
  PassContext ctx = pipeline->MakeContext();
  auto r = pipeline->Run(m.get(), &ctx);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  bool combined = false;
  for (const PassRunStats& s : pipeline->stats()) {
    if (s.pass == "all-reduce-combiner") combined |= s.changed;
  }
  EXPECT_TRUE(combined);
  EXPECT_EQ(Widths(*m), (std::vector<int64_t>{2}));
  for (int seed : {1, 2}) ExpectSameOnMesh(*before, *m, {1, 4}, seed);

  // Disabled, it leaves them apart.
  auto kept = before->Clone();
  PipelineOptions o;
  o.disabled_passes = {"all-reduce-combiner"};
  auto p2 = PassPipeline::CreateDefault(o);
  PassContext ctx2 = p2->MakeContext();
  ASSERT_TRUE(p2->Run(kept.get(), &ctx2).ok());
  EXPECT_EQ(Widths(*kept), (std::vector<int64_t>{1, 1}));
}

// The .hlo files that hold an all-reduce: the trace corpus, the shared
// traces and conformance cases, and the files under tests/.
std::vector<fs::path> FilesWithAllReduce() {
  std::vector<fs::path> out;
  for (const fs::path& dir :
       {fs::path(TRENCH_TRACES_DIR), fs::path(TRENCH_SHARED_DIR) / "traces",
        fs::path(TRENCH_SHARED_DIR) / "conformance",
        fs::path(TRENCH_SOURCE_DIR) / "tests"}) {
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file() || e.path().extension() != ".hlo") continue;
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().find("all-reduce(") != std::string::npos) {
        out.push_back(e.path());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(AllReduceCombinerTest, RealModulesStayValidAndReadBack) {
  const std::vector<fs::path> files = FilesWithAllReduce();
  if (files.empty()) GTEST_SKIP() << "no module with an all-reduce";
  VerifyOptions vopts;
  vopts.allow_mixed_precision = true;
  int modules = 0, changed = 0;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    for (const HloTextPiece& piece : SplitHloTextFile(text.str())) {
      SCOPED_TRACE(file.string() + ":" + std::to_string(piece.first_line));
      auto parsed = ParseHloModule(piece.text, piece.first_line);
      if (!parsed.ok() || !VerifyModule(**parsed, nullptr, vopts).ok()) {
        continue;
      }
      std::unique_ptr<HloModule> m = std::move(*parsed);
      const size_t ars_before = AllReduces(*m).size();
      AllReduceCombiner pass;
      PassContext ctx;
      auto r = pass.Run(m.get(), &ctx);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ++modules;
      Status v = VerifyModule(*m, nullptr, vopts);
      ASSERT_TRUE(v.ok()) << v.ToString();
      const std::string printed = PrintHloModule(*m);
      auto back = ParseHloModule(printed);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      std::string diff;
      EXPECT_TRUE(ModulesEqual(**back, *m, &diff)) << diff;
      const size_t ars_after = AllReduces(*m).size();
      EXPECT_EQ(*r, ars_after < ars_before);
      changed += *r;
      // The same input gives the same output.
      auto again = ParseHloModule(piece.text, piece.first_line);
      ASSERT_TRUE(again.ok());
      ASSERT_TRUE(pass.Run(again->get(), &ctx).ok());
      EXPECT_EQ(PrintHloModule(**again), printed);
    }
  }
  EXPECT_GT(modules, 0);
  EXPECT_GT(changed, 0) << "no real module had all-reduces to combine";
}

}  // namespace
}  // namespace trench
