// SPMD programs of the fuzzer's synthetic generator through the target on
// a slice: compile for the program's mesh (passes + codegen), run every
// device, and compare each device's outputs with the SPMD oracle under
// the numerics contract. Focused on all-reduce, whose groups may differ in
// size, on all-to-all, whose tuple form has no split dimension, and on
// collective-permute, whose combined form permutes several operands; those
// programs must be among them and must agree. A refusal (Unimplemented:
// an element type the emitter has no lanes for) is not a failure.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "compiler/codegen/compile.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_parser.h"
#include "oracle/numerics_contract.h"
#include "oracle/spmd.h"
#include "tests/compiler/codegen/codegen_test_util.h"
#include "tpu/slice.h"
#include "triage/fuzz/generator.h"

namespace trench::codegen::testing {
namespace {

// True when one of m's all-reduces has groups of different sizes.
bool HasUnevenAllReduce(const HloModule& m, const DeviceMesh& mesh) {
  for (const HloInstruction* i : m.entry_computation()->instructions()) {
    if (i->opcode() != HloOpcode::kAllReduce) continue;
    auto groups = DeviceGroups(*i, mesh);
    if (!groups.ok()) continue;
    for (const auto& g : *groups) {
      if (g.size() != groups->front().size()) return true;
    }
  }
  return false;
}

struct Tally {
  int agree = 0, refused = 0, marked = 0;  // marked: `mark` held.
};

// Programs of 40 seeds focused on `op`: each compiles and agrees on every
// device, or is refused. `mark` counts the programs of interest.
Tally RunFocused(
    const std::string& op,
    const std::function<bool(const HloModule&, const DeviceMesh&)>& mark) {
  Tally t;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    fuzz::GeneratorOptions o;
    o.spmd_share = 1;
    o.focus = {op};
    o.instructions = 6;
    o.max_elements = 1024;
    auto c = fuzz::GenerateSynthetic(seed, o);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) continue;
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + c->hlo_text);
    auto m = ParseHloModule(c->hlo_text);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (!m.ok()) continue;
    const int64_t devices = c->mesh.size();
    EXPECT_GT(devices, 1);
    // The inputs are device-major: device d's are the d-th run of them.
    const size_t per = c->inputs.size() / static_cast<size_t>(devices);
    std::vector<std::vector<Literal>> args(devices);
    std::vector<std::vector<std::vector<uint8_t>>> bytes;
    for (int64_t d = 0; d < devices; ++d) {
      for (size_t k = 0; k < per; ++k) {
        args[d].push_back(c->inputs[d * per + k]);
      }
      bytes.push_back(InputBytes(args[d]));
    }
    NumericsOptions no;
    no.evaluator.threads = 1;
    auto expected = EvaluateSpmdWithBounds(**m, args, c->mesh, no);
    EXPECT_TRUE(expected.ok()) << expected.status().ToString();
    if (!expected.ok()) continue;
    CompileOptions co;
    co.mesh = c->mesh;
    auto compiled = Compile(**m, co);
    if (!compiled.ok() &&
        (compiled.status().code() == StatusCode::kUnimplemented ||
         compiled.status().code() == StatusCode::kResourceExhausted)) {
      ++t.refused;  // A refusal (c64 all-reduce, ...), not a wrong answer.
      continue;
    }
    EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
    if (!compiled.ok()) continue;
    auto run = tpu::RunSliceExecutable(compiled->executable, bytes);
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    if (!run.ok()) continue;
    EXPECT_EQ(run->report.status, tpu::RunStatus::kOk) << run->report.message;
    if (run->report.status != tpu::RunStatus::kOk) continue;
    bool all = true;
    for (int64_t d = 0; d < devices; ++d) {
      std::vector<Literal> leaves;
      for (const tpu::OutputBuffer& b : run->chips[d].outputs) {
        leaves.push_back(ToLiteral(b));
      }
      const BoundedResult& want = (*expected)[d];
      Literal actual = want.nominal.shape().IsTuple()
                           ? Literal::Tuple(std::move(leaves))
                           : std::move(leaves.at(0));
      ComparisonResult cmp = CompareWithBounds(actual, want);
      EXPECT_TRUE(cmp.ok()) << "device " << d << ": " << cmp.ToText();
      all &= cmp.ok();
    }
    if (!all) continue;
    ++t.agree;
    t.marked += mark(**m, c->mesh);
  }
  std::printf("  %s: agreeing %d (marked %d), refused %d\n", op.c_str(),
              t.agree, t.marked, t.refused);
  return t;
}

TEST(GeneratorSpmdTargetTest, AllReduceProgramsAgreeOnEveryDevice) {
  const Tally t = RunFocused("all-reduce", HasUnevenAllReduce);
  EXPECT_EQ(t.agree + t.refused, 40);
  EXPECT_GE(t.agree, 30);
  EXPECT_GT(t.marked, 0) << "no all-reduce with groups of different sizes";
}

// The tuple form (no dimensions) among them.
TEST(GeneratorSpmdTargetTest, AllToAllProgramsAgreeOnEveryDevice) {
  const Tally t =
      RunFocused("all-to-all", [](const HloModule& m, const DeviceMesh&) {
        for (const HloInstruction* i : m.entry_computation()->instructions()) {
          if (i->opcode() == HloOpcode::kAllToAll && i->dimensions().empty()) {
            return true;
          }
        }
        return false;
      });
  EXPECT_EQ(t.agree + t.refused, 40);
  EXPECT_GE(t.agree, 30);
  EXPECT_GT(t.marked, 0) << "no tuple all-to-all";
}

// The combined form (several operands, a tuple result) among them.
TEST(GeneratorSpmdTargetTest, CollectivePermuteProgramsAgreeOnEveryDevice) {
  const Tally t = RunFocused(
      "collective-permute", [](const HloModule& m, const DeviceMesh&) {
        for (const HloInstruction* i : m.entry_computation()->instructions()) {
          if (i->opcode() == HloOpcode::kCollectivePermute &&
              i->operand_count() > 1) {
            return true;
          }
        }
        return false;
      });
  EXPECT_EQ(t.agree + t.refused, 40);
  EXPECT_GE(t.agree, 30);
  EXPECT_GT(t.marked, 0) << "no combined collective-permute";
}

}  // namespace
}  // namespace trench::codegen::testing
