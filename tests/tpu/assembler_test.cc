#include "tpu/assembler.h"

#include <gtest/gtest.h>

namespace trench::tpu {
namespace {

constexpr char kKernel[] = R"(kernel every_format {
  .vmem 65536
  saddr s1, x
  simm s2, -17
  simm s3, 0x7fffffffffffffff
  sadd s4, s2, 5
  sadd s4, s4, s2
  scmpltu s5, s4, s3
  ssel s6, s5, s2, s3
  sld.s32 s7, smem[s1+8]
  sst.u8 vmem[s2-4], s7
  sld.f32 s8, hbm[64]
loop:
  vld.f32 v0, vmem[s1] @m3
  vld.bf16 v1, vmem[s1+256], 800
  vst.s8 vmem[0], v1
  vst.f64 vmem[s2+8], v2, 2048 @m0
  vimm.f32 v4, 1.5
  vimm.f32 v5, -inf
  vimm.f32 v6, 0x7fc00001
  vimm.f64 v8, 0.10000000000000001
  vimm.s32 v7, -3
  vbcast.u64 v10, s3
  vadd.f32 v0, v1, v2 @m1
  vcmplt.s64 m2, v10, v12
  vsel.f32 v3, m2, v4, v5
  vcvt.s32.f32 v6, v0
  vcvt.f64.s32 v12, v7
  vpack.bf16 v1, v0
  vunpack.s8 v1, v1
  viota v9, 2
  mbox m1, s2, s3
  mand m1, m1, m2
  vgather.f32 v3, vmem[s1], v9 @m1
  vscatter.u16 vmem[128], v9, v3
  vexp.f32 v11, v4
  vatan2.f32 v11, v4, v5
  vlredsum.f32 v13, v11
  vlrot v13, v13, s4
  vsrot v13, v13, 3
  vlperm v13, v13, v9
  vxpose8 v14, v13
  vxpose128 v16, v0
  mxwpush v3, 15
  mxmatmulacc v2, v3
  dmastart vmem[s1+0], hbm[s2], 800, 3, 10, 800, 1024, 2, 8000, 16384
  dmastart smem[0], vmem[0], 8, 31
  dmawait 3
  sloop s2, loop
  brnz s4, done
  brz s4, loop
  jmp done
  trap 7
done:
  halt
}
)";

TEST(AssemblerTest, RoundTripsEveryFormat) {
  StatusOr<Kernel> k = ParseKernel(kKernel);
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  std::string printed = PrintKernel(*k);
  StatusOr<Kernel> k2 = ParseKernel(printed);
  ASSERT_TRUE(k2.ok()) << k2.status().ToString() << "\n" << printed;
  EXPECT_EQ(*k, *k2);
  EXPECT_EQ(printed, PrintKernel(*k2));
  EXPECT_EQ(k->vmem_bytes, 65536);
  ASSERT_EQ(k->symbols.size(), 1u);
  EXPECT_EQ(k->symbols[0], "x");
}

// A kernel from its parts is the kernel of the whole block; errors count
// lines from `first_line`.
TEST(AssemblerTest, AssemblesAKernelFromItsParts) {
  StatusOr<Kernel> whole = ParseKernel(kKernel);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  std::string_view text = kKernel;
  const size_t from = text.find("  saddr s1, x");
  const size_t to = text.rfind("}\n");
  StatusOr<Kernel> parts =
      AssembleKernel("every_format", 65536, text.substr(from, to - from), 3);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  EXPECT_EQ(*parts, *whole);
  StatusOr<Kernel> bad = AssembleKernel("k", 0, "  halt\n  vadd v1\n", 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("4:", 0), 0u)
      << bad.status().message();
  EXPECT_FALSE(AssembleKernel("not a name", 0, "  halt\n").ok());
  EXPECT_FALSE(AssembleKernel("k", -1, "  halt\n").ok());
}

TEST(AssemblerTest, DecodesOperands) {
  StatusOr<Kernel> k = ParseKernel(kKernel);
  ASSERT_TRUE(k.ok());
  const Instr& ld = k->code[10];  // vld.f32 v0, vmem[s1] @m3
  EXPECT_EQ(ld.op, Opcode::kVLd);
  EXPECT_EQ(ld.type, DType::kF32);
  EXPECT_EQ(ld.mask, 3);
  EXPECT_EQ(ld.mem[0].base, 1);
  EXPECT_FALSE(ld.has_optional);
  const Instr& ld2 = k->code[11];
  EXPECT_TRUE(ld2.has_optional);
  EXPECT_EQ(ld2.imm[0], 800);
  EXPECT_EQ(ld2.mem[0].offset, 256);
  const Instr& sst = k->code[8];
  EXPECT_EQ(sst.mem[0].offset, -4);
  const Instr& imm = k->code[14];  // vimm.f32 v4, 1.5
  EXPECT_EQ(imm.imm[0], 0x3fc00000);
  const Instr& dma = k->code[42];
  EXPECT_EQ(dma.op, Opcode::kDmaStart);
  EXPECT_EQ(dma.nimm, 8);
  EXPECT_EQ(dma.imm[7], 16384);
  // Labels resolve to instruction indices.
  EXPECT_EQ(k->code[45].target, 10);
  EXPECT_EQ(k->code[46].target, 50);
}

void ExpectError(const std::string& text, const std::string& where,
                 const std::string& what) {
  StatusOr<Kernel> k = ParseKernel(text);
  ASSERT_FALSE(k.ok()) << text;
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(k.status().message().find(where), std::string::npos)
      << k.status().message();
  EXPECT_NE(k.status().message().find(what), std::string::npos)
      << k.status().message();
}

TEST(AssemblerTest, ErrorsCarryLineAndColumn) {
  ExpectError("kernel k {\n  vfoo.f32 v0, v1\n}\n", "2:3:", "unknown mnemonic");
  ExpectError("kernel k {\n  vadd.f32 v0, v1, v32\n}\n", "2:20:", "register");
  ExpectError("kernel k {\n  vadd.f32 v0, v1\n}\n", "2:", "expected ','");
  ExpectError("kernel k {\n  vadd.q7 v0, v1, v2\n}\n", "2:", "type suffix");
  ExpectError("kernel k {\n  vand.f32 v0, v1, v2\n}\n", "2:", "not allowed");
  ExpectError("kernel k {\n  vadd.f64 v1, v2, v4\n}\n", "2:", "even pair");
  ExpectError("kernel k {\n  jmp nowhere\n}\n", "2:", "unknown label");
  ExpectError("kernel k {\n  vld.f32 v0, hbm[s1]\n}\n", "2:", "memory operand");
  ExpectError("kernel k {\n  sadd s1, s1, 1 extra\n}\n", "2:", "unexpected");
  ExpectError("kernel k {\n  vimm.f32 v0, 1.5x\n}\n", "2:", "floating-point");
  ExpectError("kernel k {\n  simm s0, 99999999999999999999\n}\n",
              "2:", "out of range");
  ExpectError("kernel k {\n  halt\n", "2:", "not closed");
  ExpectError("kernel k {\n  vcmplt.f32 m0, v1, v2 @m1\n}\n", "2:", "@mask");
  ExpectError("kernel k {\n  dmastart vmem[0], hbm[0], 8, 0, 4\n}\n",
              "2:", "expected ','");
  ExpectError("kernel k {\n  dmastart vmem[0], hbm[0], 0, 0\n}\n",
              "2:", "chunk");
  ExpectError("kernel k {\n  mxwpush v0, 16\n}\n", "2:", "row group");
  ExpectError("kernel k {\nx:\nx:\n}\n", "3:", "duplicate label");
  ExpectError("garbage\n", "1:1:", "expected 'kernel");
}

TEST(AssemblerTest, SliceInstructions) {
  constexpr char kText[] = R"(kernel k {
  .vmem 4096
  chipid s1
  nchips s2
  rdmastart s3, hbm[s4+64], vmem[0], 128, 5, 31, 4, 128, 256, 2, 512, 1024, 3, 8, 16
  rdmastart s3, hbm[0], smem[s1], 8, 0, 0
  flagsignal s3, 7
  flagwait 7, 3
  flagwait 0, s9
}
)";
  StatusOr<Kernel> k = ParseKernel(kText);
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  std::string printed = PrintKernel(*k);
  StatusOr<Kernel> back = ParseKernel(printed);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << printed;
  EXPECT_EQ(*k, *back);
  const Instr& r = k->code[2];
  EXPECT_EQ(r.op, Opcode::kRDmaStart);
  EXPECT_EQ(r.reg[0], 3);
  EXPECT_EQ(r.mem[0].space, MemSpace::kHbm);
  EXPECT_EQ(r.mem[0].offset, 64);
  EXPECT_EQ(r.nimm, 12);
  EXPECT_EQ(r.imm[1], 5);   // Semaphore.
  EXPECT_EQ(r.imm[2], 31);  // Flag.
  EXPECT_EQ(r.imm[11], 16);
  EXPECT_EQ(k->code[3].mem[1].space, MemSpace::kSmem);
  EXPECT_EQ(k->code[5].imm[1], 3);
  EXPECT_EQ(k->code[6].x_reg, 9);
  EXPECT_EQ(GetOpInfo(Opcode::kFlagWait).unit, Unit::kLink);
  EXPECT_EQ(CostClassName(GetOpInfo(Opcode::kRDmaStart).cost), "link");
}

TEST(AssemblerTest, SliceInstructionErrors) {
  auto kernel = [](const std::string& line) {
    return "kernel k {\n  " + line + "\n}\n";
  };
  ExpectError(kernel("rdmastart s1, vmem[0], vmem[64], 8, 0, 0"),
              "2:3:", "destination must be hbm");
  ExpectError(kernel("rdmastart s1, hbm[0], vmem[0], 8, 0, 32"),
              "2:3:", "sync flag must be in [0, 32)");
  ExpectError(kernel("rdmastart s1, hbm[0], vmem[0], 8, 32, 0"),
              "2:3:", "semaphore");
  ExpectError(kernel("rdmastart s1, hbm[0], vmem[0], 0, 0, 0"),
              "2:3:", "chunk");
  ExpectError(kernel("rdmastart s1, hbm[0], vmem[0], 8, 0"),
              "2:", "expected ','");
  ExpectError(kernel("rdmastart s1, hbm[0], vmem[0], 8, 0, 0, 1, 2"),
              "2:", "expected ','");
  ExpectError(kernel("rdmastart s1, hbm[0], vmem[0], 8, 0, 0, 0, 1, 1"),
              "2:3:", "count must be > 0");
  ExpectError(kernel("rdmastart 3, hbm[0], vmem[0], 8, 0, 0"),
              "2:13:", "expected an identifier");
  ExpectError(kernel("flagsignal s1, 32"), "2:3:", "sync flag");
  ExpectError(kernel("flagwait 0, -1"), "2:3:", "count must be >= 0");
  ExpectError(kernel("flagwait -1, 1"), "2:3:", "sync flag");
  ExpectError(kernel("chipid v1"), "2:10:", "register");
  ExpectError(kernel("nchips"), "2:9:", "expected an identifier");
}

TEST(AssemblerTest, PrintsUnlabeledTargets) {
  Kernel k;
  k.name = "k";
  Instr jmp;
  jmp.op = Opcode::kJmp;
  jmp.target = 1;
  Instr halt;
  halt.op = Opcode::kHalt;
  k.code = {jmp, halt};
  std::string text = PrintKernel(k);
  EXPECT_NE(text.find("L1:"), std::string::npos) << text;
  StatusOr<Kernel> back = ParseKernel(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->code, k.code);
}

TEST(AssemblerTest, ValidateRejectsBadStructs) {
  Kernel k;
  k.name = "k";
  Instr add;
  add.op = Opcode::kVAdd;
  add.type = DType::kF32;
  add.nreg = 3;
  add.reg[2] = 40;
  k.code = {add};
  EXPECT_FALSE(ValidateKernel(k).ok());
  k.code[0].reg[2] = 3;
  EXPECT_TRUE(ValidateKernel(k).ok());
  k.code[0].op = static_cast<Opcode>(250);
  EXPECT_FALSE(ValidateKernel(k).ok());
}

}  // namespace
}  // namespace trench::tpu
