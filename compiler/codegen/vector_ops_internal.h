// Internal to vector_ops*.cc: the emission context shared by the lane-wise
// op families (arithmetic, compare/select/clamp, conversions).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/codegen/vector_ops.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen::vops {

enum class Kind { kFloat, kSigned, kUnsigned, kPred, kNone };

// How an HLO element type lives in registers.
struct TypeInfo {
  std::string name;     // HLO name: "bf16".
  std::string lane;     // Lane type suffix: "f32" (empty if unsupported).
  int bits = 0;         // The HLO type's bit width (pred: 8).
  bool wide = false;    // A register pair.
  bool narrow = false;  // bf16 f16 s8 u8 s16 u16: fixed after each op.
  Kind kind = Kind::kNone;
};
TypeInfo Info(PrimitiveType t);

// "v<n>".
std::string V(int n);

// Emission state of one EmitVectorOp call: scratch registers taken from the
// pool are returned when the context dies.
class Ctx {
 public:
  Ctx(KernelBuilder& kb, VRegPool& pool, const HloInstruction& instr)
      : kb_(kb), pool_(pool), instr_(instr) {}
  ~Ctx();
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;

  // A scratch register (pair if wide), freed at the end of the op.
  StatusOr<int> Tmp(bool wide);
  // `n` (1, 2 or 4) aligned scratch registers, freed at the end of the op.
  StatusOr<int> TmpN(int n);
  // Returns scratch register `v` (taken by Tmp/TmpN of this context) to the
  // pool before the op ends. REQUIRES: no later instruction reads it.
  void Release(int v);
  void E(const std::string& line) { kb_.Emit(line); }
  // vD = splat of `bits` typed `type` (a lane type: f32 s32 u32 f64 ...).
  void Imm(int v, const std::string& type, uint64_t bits);
  // vD = vS (both registers of a pair when wide).
  void Mov(int d, int s, bool wide);
  // vD..vD+n-1 = vS..vS+n-1.
  void MovN(int d, int s, int n);
  // Brings a lane-form result in `r` back into `t`'s value set: bf16/f16
  // rounded to nearest even, s8/u8/s16/u16 wrapped; nothing otherwise.
  void Fix(int r, const TypeInfo& t);
  // CannotCompile(instr, what).
  Status Cannot(const std::string& what) const;

  KernelBuilder& kb() { return kb_; }
  VRegPool& pool() { return pool_; }
  const HloInstruction& instr() const { return instr_; }

 private:
  KernelBuilder& kb_;
  VRegPool& pool_;
  const HloInstruction& instr_;
  std::vector<std::pair<int, int>> temps_;  // (register, count)
};

// The op families (REQUIRES: srcs.size() == operand count).
Status EmitArithmetic(Ctx& c, int dst, const std::vector<int>& srcs);
Status EmitConvert(Ctx& c, int dst, int src);
// convert between the real types `from` and `to` (EmitConvert's body).
Status EmitConvertTypes(Ctx& c, TypeInfo from, const TypeInfo& to, int dst,
                        int src);
// True when `instr` is a complex op (vector_ops_complex.cc): real, imag,
// complex, or any op whose result or operand 0.. is c64/c128.
bool IsComplexOp(const HloInstruction& instr);
// Emits a complex op (vector_ops.h describes the forms and semantics).
Status EmitComplexOp(Ctx& c, int dst, const std::vector<int>& srcs);
// The lane-form bits of a complex scalar literal: parts (re, im) as lane
// bits of their part type (f32 or f64).
StatusOr<std::pair<uint64_t, uint64_t>> ComplexLaneBits(const Literal& l);
Status EmitBitcastConvert(Ctx& c, int dst, int src);
Status EmitReducePrecision(Ctx& c, int dst, int src);
bool IsArithmeticOp(HloOpcode op);

}  // namespace trench::codegen::vops
