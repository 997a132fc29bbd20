// Zero-size arrays whose other dimensions are huge (XLA hlo_evaluator_test
// ZeroSizedIotaWithHugeDimension): zero bytes, a valid executable (the
// element count is 0 whatever the other dims multiply to), outputs with
// the value's dims.
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"
#include "tpu/executable.h"

namespace trench::codegen {
namespace {

// Compiles `text` with Compile(), runs it on RandomArguments(0) and
// returns the output buffers (expects success).
std::vector<tpu::OutputBuffer> RunBoth(const std::string& text) {
  std::unique_ptr<HloModule> m = testing::Parse(text);
  if (m == nullptr) return {};
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), 0);
  auto expected = Evaluate(*m, args);
  EXPECT_TRUE(expected.ok()) << expected.status().ToString();
  testing::ExpectMatchesOracle(text, 0, ComparisonOptions::Exact());
  auto compiled = Compile(*m, CompileOptions());
  EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
  if (!compiled.ok()) return {};
  tpu::RunResult r = testing::Run(compiled->executable, args);
  EXPECT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  return r.outputs;
}

TEST(ZeroSizeTest, IotaWithHugeDimension) {
  std::vector<tpu::OutputBuffer> outs = RunBoth(R"(
HloModule m
ENTRY e {
  ROOT i = f32[1000000000000,0] iota(), iota_dimension=0
}
)");
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].dims, (std::vector<int64_t>{1000000000000, 0}));
  EXPECT_TRUE(outs[0].bytes.empty());
}

TEST(ZeroSizeTest, HugeZeroSizeParameterThroughOps) {
  std::vector<tpu::OutputBuffer> outs = RunBoth(R"(
HloModule m
ENTRY e {
  p = s64[0,4000000000000] parameter(0)
  n = s64[0,4000000000000] negate(p)
  t = s64[4000000000000,0] transpose(n), dimensions={1,0}
  q = f64[3] parameter(1)
  ROOT r = (s64[4000000000000,0], f64[3]) tuple(t, q)
}
)");
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].dims, (std::vector<int64_t>{4000000000000, 0}));
  EXPECT_TRUE(outs[0].bytes.empty());
  EXPECT_EQ(outs[1].bytes.size(), 24u);
}

// The machine's executable check: a zero-size buffer has 0 bytes whatever
// its other dims; a nonempty buffer whose size overflows is still refused.
TEST(ZeroSizeTest, ExecutableAcceptsZeroSizeBuffersWithHugeDims) {
  tpu::Executable exe;
  tpu::BufferDecl out;
  out.name = "out0";
  out.role = tpu::BufferRole::kOutput;
  out.index = 0;
  out.dtype = "f32";
  out.dims = {1000000000000, 0};
  out.bytes = 0;
  exe.buffers.push_back(out);
  EXPECT_TRUE(tpu::ValidateExecutable(exe).ok());
  exe.buffers[0].dims = {1000000000000, 1000000000000};
  EXPECT_FALSE(tpu::ValidateExecutable(exe).ok());
  exe.buffers[0].dims = {1000000000000, -1};
  EXPECT_FALSE(tpu::ValidateExecutable(exe).ok());
}

}  // namespace
}  // namespace trench::codegen
