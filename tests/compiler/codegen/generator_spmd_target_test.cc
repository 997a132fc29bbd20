// SPMD programs of the fuzzer's synthetic generator through the target on
// a slice: compile for the program's mesh (passes + codegen), run every
// device, and compare each device's outputs with the SPMD oracle under
// the numerics contract. Focused on all-reduce, whose groups may differ in
// size; those programs must be among them and must agree. A refusal
// (Unimplemented: an element type the emitter has no lanes for) is not a
// failure.
#include <gtest/gtest.h>

#include <cstdio>
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

TEST(GeneratorSpmdTargetTest, AllReduceProgramsAgreeOnEveryDevice) {
  int agree = 0, refused = 0, uneven = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    fuzz::GeneratorOptions o;
    o.spmd_share = 1;
    o.focus = {"all-reduce"};
    o.instructions = 6;
    o.max_elements = 1024;
    auto c = fuzz::GenerateSynthetic(seed, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + c->hlo_text);
    auto m = ParseHloModule(c->hlo_text);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const int64_t devices = c->mesh.size();
    ASSERT_GT(devices, 1);
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
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    CompileOptions co;
    co.mesh = c->mesh;
    auto compiled = Compile(**m, co);
    if (!compiled.ok() &&
        (compiled.status().code() == StatusCode::kUnimplemented ||
         compiled.status().code() == StatusCode::kResourceExhausted)) {
      ++refused;  // A refusal (c64 all-reduce, ...), not a wrong answer.
      continue;
    }
    ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
    auto run = tpu::RunSliceExecutable(compiled->executable, bytes);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ASSERT_EQ(run->report.status, tpu::RunStatus::kOk) << run->report.message;
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
    }
    ++agree;
    uneven += HasUnevenAllReduce(**m, c->mesh);
  }
  EXPECT_EQ(agree + refused, 40);
  EXPECT_GE(agree, 30);
  EXPECT_GT(uneven, 0) << "no all-reduce with groups of different sizes";
  std::printf(
      "  programs agreeing: %d (with groups of different sizes: %d), "
      "refused: %d\n",
      agree, uneven, refused);
}

}  // namespace
}  // namespace trench::codegen::testing
