// Compile options carried by the module header (module_options.h): a
// smaller VMEM makes the streamed emitters run on small arrays, and the
// result is still right on the full-sized chip.
#include "compiler/driver/module_options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "compiler/driver/target_driver.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"

namespace trench::hloc {
namespace {

// A sort of 98,304 f32 keys (384 KiB): staged whole in 16 MiB of VMEM,
// streamed in 256 KiB.
std::string SortModule(const std::string& header) {
  return "HloModule m" + header + R"(

lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}

ENTRY main {
  p = f32[98304] parameter(0)
  ROOT s = f32[98304] sort(p), dimensions={0}, to_apply=lt
}
)";
}

StatusOr<int64_t> VmemOf(const std::string& text) {
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> m, ParseHloModule(text));
  codegen::CompileOptions o;
  RETURN_IF_ERROR(ApplyModuleOptions(*m, &o));
  return o.vmem_bytes;
}

TEST(ModuleOptionsTest, TheHeaderSetsTheVmemSize) {
  EXPECT_EQ(*VmemOf(SortModule("")), codegen::CompileOptions().vmem_bytes);
  EXPECT_EQ(*VmemOf(SortModule(
                ", frontend_attributes={trench_vmem_bytes=\"262144\"}")),
            262144);
  // Other attributes ride along unread.
  EXPECT_EQ(*VmemOf(SortModule(", frontend_attributes={xla.sdy=\"x\", "
                               "trench_vmem_bytes=\"65536\"}")),
            65536);
  EXPECT_EQ(*VmemOf(SortModule(", frontend_attributes={}")),
            codegen::CompileOptions().vmem_bytes);
}

// What the trench-side tools do to a case (copy the module, print it,
// parse the text again) keeps the option.
TEST(ModuleOptionsTest, CopiesAndPrintedTextKeepTheOption) {
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(
      SortModule(", frontend_attributes={trench_vmem_bytes=\"65536\"}"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::unique_ptr<HloModule> copy = (*m)->Clone();
  StatusOr<std::unique_ptr<HloModule>> again =
      ParseHloModule(PrintHloModule(*copy));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  codegen::CompileOptions o;
  ASSERT_TRUE(ApplyModuleOptions(**again, &o).ok());
  EXPECT_EQ(o.vmem_bytes, 65536);
}

TEST(ModuleOptionsTest, BadValuesAreNamed) {
  for (const char* v : {"1000", "1024", "abc", "262144x", "-65536",
                        "999999999999999999999", "33554432"}) {
    StatusOr<int64_t> r = VmemOf(
        SortModule(std::string(", frontend_attributes={trench_vmem_bytes=\"") +
                   v + "\"}"));
    ASSERT_FALSE(r.ok()) << v;
    EXPECT_NE(r.status().message().find("trench_vmem_bytes"), std::string::npos)
        << r.status().message();
  }
  // A stranger's value comes back with its controls escaped.
  StatusOr<int64_t> raw = VmemOf(
      SortModule(", frontend_attributes={trench_vmem_bytes=\"1\x1b[2J\"}"));
  ASSERT_FALSE(raw.ok());
  EXPECT_EQ(raw.status().message().find('\x1b'), std::string::npos)
      << raw.status().message();
  for (const char* attrs : {"{trench_vmem_bytes=262144}", "trench_vmem_bytes",
                            "{a=\"x\" b=\"y\"}", "{a=\"x\\\"\"}", "{=\"x\"}"}) {
    StatusOr<int64_t> r =
        VmemOf(SortModule(std::string(", frontend_attributes=") + attrs));
    if (r.ok()) continue;  // The HLO parser may refuse it first.
    EXPECT_NE(r.status().message().find("frontend_attributes"),
              std::string::npos)
        << attrs << ": " << r.status().message();
  }
}

// The kernels declare no more VMEM than the module allows: the sort that
// took 384 KiB whole streams through 256 KiB.
TEST(ModuleOptionsTest, ASmallerVmemStreamsTheSort) {
  auto most_vmem = [](const std::string& text) -> StatusOr<int64_t> {
    ASSIGN_OR_RETURN(std::unique_ptr<HloModule> m, ParseHloModule(text));
    ASSIGN_OR_RETURN(codegen::Compilation c, CompileWithFlags(*m, {}));
    int64_t most = 0;
    for (const tpu::Kernel& k : c.executable.kernels) {
      most = std::max(most, k.vmem_bytes);
    }
    return most;
  };
  StatusOr<int64_t> whole = most_vmem(SortModule(""));
  StatusOr<int64_t> streamed = most_vmem(
      SortModule(", frontend_attributes={trench_vmem_bytes=\"262144\"}"));
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_TRUE(streamed.ok()) << streamed.status().ToString();
  EXPECT_GT(*whole, 262144);
  EXPECT_LE(*streamed, 262144);
}

}  // namespace
}  // namespace trench::hloc
