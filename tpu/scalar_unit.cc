// The scalar unit: 64-bit integer arithmetic on s0..s31, SMEM/VMEM/HBM
// scalar loads and stores (dynamic indices, loop predicates), branches.
#include <cstring>

#include "tpu/machine.h"

namespace trench::tpu {
namespace {

int64_t Wrap(uint64_t v) { return static_cast<int64_t>(v); }

// Returns false (trap) only for division by zero.
bool Alu(Machine& M, const Instr& in, int64_t a, int64_t b, int64_t* r) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (in.op) {
    case Opcode::kSAdd:
      *r = Wrap(ua + ub);
      return true;
    case Opcode::kSSub:
      *r = Wrap(ua - ub);
      return true;
    case Opcode::kSMul:
      *r = Wrap(ua * ub);
      return true;
    case Opcode::kSDiv:
    case Opcode::kSRem:
      if (b == 0) return M.Trap("scalar division by zero");
      if (b == -1) {
        *r = in.op == Opcode::kSDiv ? Wrap(0 - ua) : 0;
      } else {
        *r = in.op == Opcode::kSDiv ? a / b : a % b;
      }
      return true;
    case Opcode::kSAnd:
      *r = a & b;
      return true;
    case Opcode::kSOr:
      *r = a | b;
      return true;
    case Opcode::kSXor:
      *r = a ^ b;
      return true;
    case Opcode::kSShl:
      *r = (b < 0 || b > 63) ? 0 : Wrap(ua << b);
      return true;
    case Opcode::kSShrl:
      *r = (b < 0 || b > 63) ? 0 : Wrap(ua >> b);
      return true;
    case Opcode::kSShra:
      *r = a >> ((b < 0 || b > 63) ? 63 : b);
      return true;
    case Opcode::kSMin:
      *r = a < b ? a : b;
      return true;
    case Opcode::kSMax:
      *r = a > b ? a : b;
      return true;
    case Opcode::kSCmpEq:
      *r = a == b;
      return true;
    case Opcode::kSCmpNe:
      *r = a != b;
      return true;
    case Opcode::kSCmpLt:
      *r = a < b;
      return true;
    case Opcode::kSCmpLe:
      *r = a <= b;
      return true;
    case Opcode::kSCmpGt:
      *r = a > b;
      return true;
    case Opcode::kSCmpGe:
      *r = a >= b;
      return true;
    case Opcode::kSCmpLtu:
      *r = ua < ub;
      return true;
    default:
      return M.Trap("internal: not a scalar ALU op");
  }
}

int64_t Extend(DType t, const uint8_t* p) {
  switch (t) {
    case DType::kS8:
      return static_cast<int8_t>(p[0]);
    case DType::kU8:
      return p[0];
    case DType::kPred:
      return p[0] != 0;
    case DType::kS16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case DType::kU16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case DType::kS32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kU32:
    case DType::kF32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

}  // namespace

bool ExecScalar(Machine& M, const Instr& in, const Kernel& k, int64_t* pc) {
  int64_t* s = M.s;
  int64_t next = *pc + 1;
  switch (in.op) {
    case Opcode::kNop:
      break;
    case Opcode::kHalt:
      next = static_cast<int64_t>(k.code.size());
      break;
    case Opcode::kTrap:
      return M.Trap("trap " + std::to_string(in.imm[0]));
    case Opcode::kJmp:
      next = in.target;
      break;
    case Opcode::kBrnz:
      if (s[in.reg[0]] != 0) next = in.target;
      break;
    case Opcode::kBrz:
      if (s[in.reg[0]] == 0) next = in.target;
      break;
    case Opcode::kSLoop:
      s[in.reg[0]] = Wrap(static_cast<uint64_t>(s[in.reg[0]]) - 1);
      if (s[in.reg[0]] != 0) next = in.target;
      break;
    case Opcode::kSImm:
      s[in.reg[0]] = in.imm[0];
      break;
    case Opcode::kSMov:
      s[in.reg[0]] = s[in.reg[1]];
      break;
    case Opcode::kChipId:
      s[in.reg[0]] = M.chip;
      break;
    case Opcode::kNChips:
      s[in.reg[0]] = M.nchips;
      break;
    case Opcode::kSAddr:
      s[in.reg[0]] = M.symbol_addr[in.symbol];
      break;
    case Opcode::kSSel:
      s[in.reg[0]] = s[in.reg[1]] != 0 ? s[in.reg[2]] : s[in.reg[3]];
      break;
    case Opcode::kSLd: {
      uint8_t buf[8];
      const int n = DTypeBytes(in.type);
      if (!M.Read(in.mem[0].space, M.Addr(in.mem[0]), n, buf)) return false;
      s[in.reg[0]] = Extend(in.type, buf);
      break;
    }
    case Opcode::kSSt: {
      const int n = DTypeBytes(in.type);
      int64_t v = s[in.reg[0]];
      if (in.type == DType::kPred) v = v != 0;
      uint8_t buf[8];
      std::memcpy(buf, &v, 8);  // Little-endian: the low n bytes.
      if (!M.Write(in.mem[0].space, M.Addr(in.mem[0]), n, buf)) return false;
      break;
    }
    default: {
      const int64_t b = in.x_reg >= 0 ? s[in.x_reg] : in.imm[0];
      int64_t r = 0;
      if (!Alu(M, in, s[in.reg[1]], b, &r)) return false;
      s[in.reg[0]] = r;
      break;
    }
  }
  *pc = next;
  return true;
}

}  // namespace trench::tpu
