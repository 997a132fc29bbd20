#include "tpu/isa.h"

#include <array>
#include <unordered_map>

namespace trench::tpu {
namespace {

struct DTypeRow {
  std::string_view name;
  int bytes;
};

constexpr DTypeRow kDTypes[] = {
#define X(e, name, bytes) {name, bytes},
    TRENCH_TPU_DTYPES(X)
#undef X
};

constexpr OpInfo kOps[] = {
#define X(e, mnemonic, operands, types, unit, cost, maskable) \
  {mnemonic, operands, TypeClass::types, Unit::unit, CostClass::cost, maskable},
#include "tpu/isa.def"
#undef X
};

std::string Where(const Instr& in) {
  return std::string(GetOpInfo(in.op).mnemonic);
}

// True when the vector operand at position `pos` (counting only v operands)
// holds a 64-bit value as an even/odd register pair.
bool VOperandIsPair(const Instr& in, int pos) {
  switch (in.op) {
    case Opcode::kVCvt:
      return pos == 0 ? Is64Bit(in.type) : Is64Bit(in.type2);
    case Opcode::kVGather:
      return pos == 0 && Is64Bit(in.type);
    case Opcode::kVScatter:
      return pos == 1 && Is64Bit(in.type);
    default:
      return Is64Bit(in.type);
  }
}

bool SpaceAllowed(Opcode op, MemSpace s) {
  switch (op) {
    case Opcode::kVLd:
    case Opcode::kVSt:
    case Opcode::kVGather:
    case Opcode::kVScatter:
      return s == MemSpace::kVmem;
    default:
      return true;
  }
}

Status CheckTypes(const Instr& in, const OpInfo& info) {
  if (info.types == TypeClass::kConvert) {
    if (!TypeAllowed(TypeClass::kNum, in.type) ||
        !TypeAllowed(TypeClass::kNum, in.type2)) {
      return InvalidArgument(Where(in) + " needs two numeric suffixes");
    }
    return Status::Ok();
  }
  if (in.type2 != DType::kNone) {
    return InvalidArgument(Where(in) + " takes at most one type suffix");
  }
  if (!TypeAllowed(info.types, in.type)) {
    return InvalidArgument(Where(in) + ": type suffix '" +
                           std::string(DTypeName(in.type)) +
                           "' is not allowed");
  }
  return Status::Ok();
}

Status CheckFlag(int64_t flag) {
  if (flag < 0 || flag >= kNumFlags) {
    return InvalidArgument("sync flag must be in [0, 32)");
  }
  return Status::Ok();
}

// dmastart/rdmastart: imm[0] is the chunk, imm[1] the semaphore, the
// dimension triples start at `dims`.
Status CheckDmaImms(const Instr& in, int dims, const char* shape_error) {
  if (in.nimm < dims || (in.nimm - dims) % 3 != 0 ||
      (in.nimm - dims) / 3 > kMaxDmaDims) {
    return InvalidArgument(shape_error);
  }
  if (in.imm[0] <= 0) return InvalidArgument("dma chunk must be > 0");
  if (in.imm[1] < 0 || in.imm[1] >= kNumSemaphores) {
    return InvalidArgument("semaphore must be in [0, 32)");
  }
  for (int i = dims; i < in.nimm; i += 3) {
    if (in.imm[i] <= 0) return InvalidArgument("dma count must be > 0");
  }
  return Status::Ok();
}

Status CheckImmediates(const Instr& in) {
  switch (in.op) {
    case Opcode::kVIota:
      if (in.imm[0] < 0 || in.imm[0] > 2) {
        return InvalidArgument("viota dimension must be 0, 1 or 2");
      }
      break;
    case Opcode::kMxWPush:
      if (in.imm[0] < 0 || in.imm[0] >= kMxuDim / kSublanes) {
        return InvalidArgument("mxwpush row group must be in [0, 16)");
      }
      break;
    case Opcode::kDmaWait:
      if (in.imm[0] < 0 || in.imm[0] >= kNumSemaphores) {
        return InvalidArgument("semaphore must be in [0, 32)");
      }
      break;
    case Opcode::kDmaStart:
      return CheckDmaImms(in, 2, "dmastart takes chunk, sem and 0..3 triples");
    case Opcode::kRDmaStart:
      if (in.mem[0].space != MemSpace::kHbm) {
        return InvalidArgument(
            "rdmastart destination must be hbm (the peer's)");
      }
      RETURN_IF_ERROR(CheckDmaImms(
          in, 3, "rdmastart takes chunk, sem, flag and 0..3 triples"));
      return CheckFlag(in.imm[2]);
    case Opcode::kFlagSignal:
      return CheckFlag(in.imm[0]);
    case Opcode::kFlagWait:
      if (in.x_reg < 0 && in.imm[1] < 0) {
        return InvalidArgument("flagwait count must be >= 0");
      }
      return CheckFlag(in.imm[0]);
    default:
      break;
  }
  return Status::Ok();
}

Status CheckOperands(const Instr& in, const OpInfo& info, int64_t code_size,
                     int64_t num_symbols) {
  int r = 0, m = 0, k = 0, vpos = 0;
  for (char c : info.operands) {
    switch (c) {
      case 'v': {
        if (r >= in.nreg) return InvalidArgument(Where(in) + ": operands");
        int reg = in.reg[r++];
        bool pair = VOperandIsPair(in, vpos++);
        if (reg >= kNumVregs || (pair && (reg % 2 != 0))) {
          return InvalidArgument(Where(in) + ": bad vector register v" +
                                 std::to_string(reg) +
                                 (pair ? " (64-bit needs an even pair)" : ""));
        }
        if (in.op == Opcode::kVXpose128 && reg > kNumVregs - 16) {
          return InvalidArgument("vxpose128 needs 16 registers from v" +
                                 std::to_string(reg));
        }
        break;
      }
      case 'm':
        if (r >= in.nreg || in.reg[r++] >= kNumMregs) {
          return InvalidArgument(Where(in) + ": bad mask register");
        }
        break;
      case 's':
        if (r >= in.nreg || in.reg[r++] >= kNumSregs) {
          return InvalidArgument(Where(in) + ": bad scalar register");
        }
        break;
      case 'a':
        if (m >= in.nmem) return InvalidArgument(Where(in) + ": operands");
        if (in.mem[m].base >= kNumSregs ||
            !SpaceAllowed(in.op, in.mem[m].space)) {
          return InvalidArgument(Where(in) + ": bad memory operand");
        }
        ++m;
        break;
      case 'i':
      case 'f':
      case 'x':
        ++k;
        break;
      case 'l':
        if (in.target < 0 || in.target > code_size) {
          return InvalidArgument(Where(in) + ": branch target out of range");
        }
        break;
      case 'b':
        if (in.symbol < 0 || in.symbol >= num_symbols) {
          return InvalidArgument(Where(in) + ": bad buffer symbol");
        }
        break;
      default:
        break;
    }
  }
  if (r != in.nreg || m != in.nmem) {
    return InvalidArgument(Where(in) + ": wrong operand count");
  }
  if (in.x_reg >= kNumSregs) return InvalidArgument("bad scalar register");
  if (in.mask >= kNumMregs || (in.mask >= 0 && !info.maskable)) {
    return InvalidArgument(Where(in) + ": bad or disallowed @mask");
  }
  return Status::Ok();
}

}  // namespace

std::string_view DTypeName(DType t) {
  return kDTypes[static_cast<int>(t)].name;
}

std::optional<DType> DTypeFromName(std::string_view name) {
  for (int i = 1; i < static_cast<int>(std::size(kDTypes)); ++i) {
    if (kDTypes[i].name == name) return static_cast<DType>(i);
  }
  return std::nullopt;
}

int DTypeBytes(DType t) { return kDTypes[static_cast<int>(t)].bytes; }

std::string_view CostClassName(CostClass c) {
  static constexpr std::string_view kNames[] = {
      "scalar",      "scalar_mem",     "control",    "vector",
      "vector_mem",  "transcendental", "cross_lane", "transpose",
      "weight_push", "matmul_pass",    "dma",        "link"};
  return kNames[static_cast<int>(c)];
}

const OpInfo& GetOpInfo(Opcode op) { return kOps[static_cast<int>(op)]; }

int NumOpcodes() { return static_cast<int>(std::size(kOps)); }

std::optional<Opcode> OpcodeFromMnemonic(std::string_view mnemonic) {
  // The assembler looks up every instruction it reads: a hash index built
  // once from kOps instead of comparing with every mnemonic.
  static const auto* const index = [] {
    auto* m = new std::unordered_map<std::string_view, Opcode>();
    m->reserve(std::size(kOps));
    for (int i = 0; i < NumOpcodes(); ++i) {
      m->emplace(kOps[i].mnemonic, static_cast<Opcode>(i));
    }
    return m;
  }();
  auto it = index->find(mnemonic);
  if (it == index->end()) return std::nullopt;
  return it->second;
}

bool TypeAllowed(TypeClass c, DType t) {
  switch (c) {
    case TypeClass::kNone:
      return t == DType::kNone;
    case TypeClass::kNum:
    case TypeClass::kConvert:
      return t == DType::kF32 || t == DType::kS32 || t == DType::kU32 ||
             Is64Bit(t);
    case TypeClass::kInt:
      return t == DType::kS32 || t == DType::kU32 || t == DType::kS64 ||
             t == DType::kU64;
    case TypeClass::kFloat:
      return t == DType::kF32 || t == DType::kF64;
    case TypeClass::kMemory:
      return t != DType::kNone;
    case TypeClass::kPacked:
      return t == DType::kBf16 || t == DType::kF16 || t == DType::kS8 ||
             t == DType::kU8 || t == DType::kS16 || t == DType::kU16;
    case TypeClass::kScalarMem:
      return t != DType::kNone && t != DType::kBf16 && t != DType::kF16 &&
             t != DType::kF64;
  }
  return false;
}

std::string_view MemSpaceName(MemSpace s) {
  switch (s) {
    case MemSpace::kHbm:
      return "hbm";
    case MemSpace::kVmem:
      return "vmem";
    case MemSpace::kSmem:
      return "smem";
  }
  return "?";
}

Status ValidateInstr(const Instr& in, int64_t code_size, int64_t num_symbols) {
  if (static_cast<int>(in.op) >= NumOpcodes()) {
    return InvalidArgument("unknown opcode " +
                           std::to_string(static_cast<int>(in.op)));
  }
  const OpInfo& info = GetOpInfo(in.op);
  RETURN_IF_ERROR(CheckTypes(in, info));
  RETURN_IF_ERROR(CheckOperands(in, info, code_size, num_symbols));
  return CheckImmediates(in);
}

Status ValidateKernel(const Kernel& kernel) {
  if (kernel.vmem_bytes < 0) {
    return InvalidArgument("kernel " + kernel.name + ": negative .vmem");
  }
  const int64_t n = static_cast<int64_t>(kernel.code.size());
  for (int64_t i = 0; i < n; ++i) {
    Status s = ValidateInstr(kernel.code[i], n, kernel.symbols.size());
    if (!s.ok()) {
      return s.WithContext("kernel " + kernel.name + " instruction " +
                           std::to_string(i));
    }
  }
  for (const Label& l : kernel.labels) {
    if (l.index < 0 || l.index > n) {
      return InvalidArgument("kernel " + kernel.name + ": label " + l.name +
                             " out of range");
    }
  }
  return Status::Ok();
}

}  // namespace trench::tpu
