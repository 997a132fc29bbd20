// The simulated TPU's instruction set: machine constants, element types,
// opcodes (generated from isa.def), and the decoded instruction and kernel
// structures that the assembler produces and the simulator executes.
//
// The machine knows no HLO. See tpu/ISA.md for the semantics of every
// instruction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trench::tpu {

inline constexpr int kSublanes = 8;
inline constexpr int kLanes = 128;
inline constexpr int kVregElems = kSublanes * kLanes;  // 1024 x 32 bit.
inline constexpr int kNumVregs = 32;
inline constexpr int kNumMregs = 8;
inline constexpr int kNumSregs = 32;
inline constexpr int kNumSemaphores = 32;
inline constexpr int kNumFlags = 32;   // Sync flags (slice), per chip.
inline constexpr int kMxuDim = 128;    // The weight tile is 128x128.
inline constexpr int kMaxDmaDims = 3;  // Strided dims on top of the chunk.
// rdmastart: chunk, semaphore, flag, then the dimension triples.
inline constexpr int kMaxImms = 3 + 3 * kMaxDmaDims;

// Element types the machine knows (register and memory element formats).
#define TRENCH_TPU_DTYPES(X) \
  X(kNone, "none", 0)        \
  X(kF32, "f32", 4)          \
  X(kS32, "s32", 4)          \
  X(kU32, "u32", 4)          \
  X(kF64, "f64", 8)          \
  X(kS64, "s64", 8)          \
  X(kU64, "u64", 8)          \
  X(kBf16, "bf16", 2)        \
  X(kF16, "f16", 2)          \
  X(kS8, "s8", 1)            \
  X(kU8, "u8", 1)            \
  X(kS16, "s16", 2)          \
  X(kU16, "u16", 2)          \
  X(kPred, "pred", 1)

enum class DType : uint8_t {
#define X(e, name, bytes) e,
  TRENCH_TPU_DTYPES(X)
#undef X
};

std::string_view DTypeName(DType t);
std::optional<DType> DTypeFromName(std::string_view name);
// Bytes per element in memory; 0 for kNone.
int DTypeBytes(DType t);
inline bool Is64Bit(DType t) {
  return t == DType::kF64 || t == DType::kS64 || t == DType::kU64;
}
inline bool IsFloatType(DType t) {
  return t == DType::kF32 || t == DType::kF64 || t == DType::kBf16 ||
         t == DType::kF16;
}

// Which type suffixes an opcode accepts.
enum class TypeClass : uint8_t {
  kNone,       // No suffix.
  kNum,        // f32 s32 u32 f64 s64 u64
  kInt,        // s32 u32 s64 u64
  kFloat,      // f32 f64
  kMemory,     // any element type but none
  kPacked,     // bf16 f16 s8 u8 s16 u16
  kScalarMem,  // s8 u8 s16 u16 s32 u32 s64 u64 f32 pred
  kConvert,    // two kNum suffixes: .dst.src
};

enum class Unit : uint8_t {
  kScalar,
  kVector,
  kTranscendental,
  kCrossLane,
  kMatrix,
  kDma,
  kLink,  // The inter-chip interconnect (ICI) of a slice.
};

enum class CostClass : uint8_t {
  kScalarOp,
  kScalarMem,
  kControl,
  kVectorOp,
  kVectorMem,
  kTranscendentalOp,
  kCrossLaneOp,
  kTransposeOp,
  kWeightPush,
  kMatmulPass,
  kDmaOp,
  kLinkOp,
};
inline constexpr int kNumCostClasses = 12;
std::string_view CostClassName(CostClass c);

enum class Opcode : uint8_t {
#define X(e, mnemonic, operands, types, unit, cost, maskable) e,
#include "tpu/isa.def"
#undef X
};

struct OpInfo {
  std::string_view mnemonic;
  std::string_view operands;  // Operand grammar, see isa.def.
  TypeClass types;
  Unit unit;
  CostClass cost;
  bool maskable;
};

// REQUIRES: op is a valid enumerator.
const OpInfo& GetOpInfo(Opcode op);
std::optional<Opcode> OpcodeFromMnemonic(std::string_view mnemonic);
int NumOpcodes();
// True when `t` is an allowed (single) suffix for the class.
bool TypeAllowed(TypeClass c, DType t);

enum class MemSpace : uint8_t { kHbm, kVmem, kSmem };
std::string_view MemSpaceName(MemSpace s);

// A memory operand: space[sBASE+offset]; base < 0 means no register.
struct MemRef {
  MemSpace space = MemSpace::kVmem;
  int8_t base = -1;
  int64_t offset = 0;
  bool operator==(const MemRef&) const = default;
};

// One decoded instruction. Operands are stored by kind in text order:
// registers (v/m/s) in reg[], memory operands in mem[], immediates (i/f/x and
// DMA triples) in imm[]. An `x` operand given as a register sets x_reg and
// leaves its imm slot 0. Unused fields stay zero so == is structural.
struct Instr {
  Opcode op = Opcode::kNop;
  DType type = DType::kNone;
  DType type2 = DType::kNone;  // kConvert: the source type.
  int8_t mask = -1;            // Predicate mask register, or -1.
  int8_t x_reg = -1;           // `x` operand as a scalar register, or -1.
  bool has_optional = false;   // The `?` operand was given.
  uint8_t nreg = 0;
  uint8_t nmem = 0;
  uint8_t nimm = 0;
  uint8_t reg[4] = {0, 0, 0, 0};
  MemRef mem[2];
  int64_t imm[kMaxImms] = {};
  int32_t target = -1;  // Branch target: instruction index.
  int32_t symbol = -1;  // Index into Kernel::symbols (`b` operands).
  bool operator==(const Instr&) const = default;
};

struct Label {
  int32_t index = 0;  // The instruction the label precedes (may == size).
  std::string name;
  bool operator==(const Label&) const = default;
};

// A named instruction sequence. Execution starts at code[0] and ends at
// `halt` or by running past the last instruction.
struct Kernel {
  std::string name;
  int64_t vmem_bytes = 0;  // VMEM scratch the kernel declares (.vmem).
  std::vector<Instr> code;
  std::vector<std::string> symbols;  // HBM buffer names used by `saddr`.
  std::vector<Label> labels;         // Sorted by index.
  bool operator==(const Kernel&) const = default;
};

// Checks the structural invariants the simulator relies on: register numbers
// in range, 64-bit register pairs even, type suffixes allowed, branch targets
// and symbols in range, memory spaces allowed for the opcode, DMA dims.
// Returns InvalidArgument naming the kernel and instruction index.
Status ValidateKernel(const Kernel& kernel);
// As above for one instruction; `code_size` bounds branch targets.
Status ValidateInstr(const Instr& instr, int64_t code_size,
                     int64_t num_symbols);

}  // namespace trench::tpu
