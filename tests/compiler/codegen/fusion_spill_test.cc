// Register spilling in fused kernels (emit_fusion_eval.cc): a fusion that
// keeps more values alive than v0..v27 hold spills the least recently used
// ones to VMEM and reloads them, and still computes the oracle's values.
#include <cctype>
#include <string>
#include <tuple>

#include "tests/compiler/codegen/codegen_test_util.h"
#include "tpu/assembler.h"

namespace trench::codegen {
namespace {

// A loop fusion (as XLA writes them into traces; our fusion pass bounds
// the live values of what it fuses) with x_0 = -p, x_i = x_{i-1} + p,
// y = x_0 * ... * x_{n-1} left to right and z = x_{n-1} - ... - x_0:
// every x_i is alive from y's chain until z's.
std::string ManyLiveValues(const std::string& t, int n) {
  const std::string shape = t + "[16,256]";
  std::string body =
      "  p = " + shape + " parameter(0)\n  x0 = " + shape + " negate(p)\n";
  for (int i = 1; i < n; ++i) {
    body += "  x" + std::to_string(i) + " = " + shape + " add(x" +
            std::to_string(i - 1) + ", p)\n";
  }
  std::string y = "x0", z = "x" + std::to_string(n - 1);
  for (int i = 1; i < n; ++i) {
    const std::string yi = "y" + std::to_string(i);
    body += "  " + yi + " = " + shape + " multiply(" + y + ", x" +
            std::to_string(i) + ")\n";
    y = yi;
  }
  for (int i = n - 2; i >= 0; --i) {
    const std::string zi = "z" + std::to_string(i);
    body += "  " + zi + " = " + shape + " subtract(" + z + ", x" +
            std::to_string(i) + ")\n";
    z = zi;
  }
  body += "  ROOT r = " + shape + " add(" + y + ", " + z + ")\n";
  return "HloModule m\nfused {\n" + body + "}\nENTRY e {\n  a = " + shape +
         " parameter(0)\n  ROOT f = " + shape +
         " fusion(a), kind=kLoop, calls=fused\n}\n";
}

// The spill stores of a compiled module: vst to an absolute VMEM address.
int SpillStores(const tpu::Executable& exe) {
  int n = 0;
  for (const tpu::Kernel& k : exe.kernels) {
    const std::string text = tpu::PrintKernel(k);
    for (size_t at = text.find("vst.u"); at != std::string::npos;
         at = text.find("vst.u", at + 1)) {
      const size_t open = text.find("vmem[", at);
      if (open != std::string::npos && open < text.find('\n', at) &&
          std::isdigit(static_cast<unsigned char>(text[open + 5]))) {
        ++n;
      }
    }
  }
  return n;
}

TEST(FusionSpillTest, MoreLiveValuesThanRegistersAreSpilledAndReloaded) {
  // 40 live f32 values need 40 registers; 20 f64 values 40 (pairs); 6
  // live f32 values fit and spill nothing.
  for (const auto& [t, n, spills] :
       {std::tuple<std::string, int, bool>{"f32", 40, true},
        {"f64", 20, true},
        {"s32", 40, true},
        {"f32", 6, false}}) {
    SCOPED_TRACE(t + " x" + std::to_string(n));
    const std::string text = ManyLiveValues(t, n);
    std::unique_ptr<HloModule> m = testing::Parse(text);
    ASSERT_NE(m, nullptr);
    StatusOr<tpu::Executable> exe = CompileModule(*m, CompileOptions());
    ASSERT_TRUE(exe.ok()) << exe.status().ToString();
    EXPECT_EQ(SpillStores(*exe) > 0, spills);
    testing::ExpectMatchesOracle(text, 7);
  }
}

}  // namespace
}  // namespace trench::codegen
