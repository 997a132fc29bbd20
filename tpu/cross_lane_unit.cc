// The cross-lane unit (XLU): reductions across lanes or sublanes (pairwise
// trees, results broadcast), lane/sublane rotations and permutes, and
// transposes (8x8 blocks within a register, 128x128 across 16 registers).
#include <cmath>
#include <cstring>
#include <limits>

#include "tpu/lanes.h"

namespace trench::tpu {
namespace {

template <typename T>
T Combine(Opcode op, T a, T b) {
  switch (op) {
    case Opcode::kVLRedSum:
    case Opcode::kVSRedSum:
      return WrapAdd(a, b);
    case Opcode::kVLRedMax:
    case Opcode::kVSRedMax:
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a) || std::isnan(b))
          return std::numeric_limits<T>::quiet_NaN();
      }
      return a > b ? a : b;
    default:
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a) || std::isnan(b))
          return std::numeric_limits<T>::quiet_NaN();
      }
      return a < b ? a : b;
  }
}

// Lane reduction: within each sublane, a pairwise tree (x[l] op x[l+64],
// then +32, ...), result broadcast to every lane of the sublane.
template <typename T>
bool LaneReduce(Machine& M, const Instr& in) {
  const int d = in.reg[0], a = in.reg[1];
  for (int s = 0; s < kSublanes; ++s) {
    T t[kLanes];
    for (int l = 0; l < kLanes; ++l) t[l] = GetLane<T>(M, a, s * kLanes + l);
    for (int w = kLanes / 2; w >= 1; w /= 2) {
      for (int l = 0; l < w; ++l) t[l] = Combine(in.op, t[l], t[l + w]);
    }
    for (int l = 0; l < kLanes; ++l) SetLane<T>(M, d, s * kLanes + l, t[0]);
  }
  return true;
}

// Sublane reduction: per lane, tree over the 8 sublanes (4, 2, 1),
// result broadcast to every sublane.
template <typename T>
bool SublaneReduce(Machine& M, const Instr& in) {
  const int d = in.reg[0], a = in.reg[1];
  for (int l = 0; l < kLanes; ++l) {
    T t[kSublanes];
    for (int s = 0; s < kSublanes; ++s) t[s] = GetLane<T>(M, a, s * kLanes + l);
    for (int w = kSublanes / 2; w >= 1; w /= 2) {
      for (int s = 0; s < w; ++s) t[s] = Combine(in.op, t[s], t[s + w]);
    }
    for (int s = 0; s < kSublanes; ++s) SetLane<T>(M, d, s * kLanes + l, t[0]);
  }
  return true;
}

int64_t Amount(const Machine& M, const Instr& in) {
  return in.x_reg >= 0 ? M.s[in.x_reg] : in.imm[0];
}

// Reads the source into scratch first so the destination may alias it.
bool Permute(Machine& M, const Instr& in) {
  uint32_t* src = M.xpose_tmp;
  uint32_t* idx = M.xpose_tmp + kVregElems;
  std::memcpy(src, M.v[in.reg[1]], sizeof(M.v[0]));
  uint32_t* out = M.v[in.reg[0]];
  switch (in.op) {
    case Opcode::kVLRot: {
      const int k =
          static_cast<int>(((Amount(M, in) % kLanes) + kLanes) % kLanes);
      for (int i = 0; i < kVregElems; ++i) {
        int s = i / kLanes, l = i % kLanes;
        out[i] = src[s * kLanes + (l - k + kLanes) % kLanes];
      }
      return true;
    }
    case Opcode::kVSRot: {
      const int k = static_cast<int>(((Amount(M, in) % kSublanes) + kSublanes) %
                                     kSublanes);
      for (int i = 0; i < kVregElems; ++i) {
        int s = i / kLanes, l = i % kLanes;
        out[i] = src[((s - k + kSublanes) % kSublanes) * kLanes + l];
      }
      return true;
    }
    case Opcode::kVLPerm:
    case Opcode::kVSPerm: {
      std::memcpy(idx, M.v[in.reg[2]], sizeof(M.v[0]));
      const bool lane = in.op == Opcode::kVLPerm;
      for (int i = 0; i < kVregElems; ++i) {
        int s = i / kLanes, l = i % kLanes;
        out[i] = lane ? src[s * kLanes + (idx[i] & (kLanes - 1))]
                      : src[(idx[i] & (kSublanes - 1)) * kLanes + l];
      }
      return true;
    }
    case Opcode::kVXpose8: {
      // Within each 8x8 block b: out[s][8b+j] = in[j][8b+s].
      for (int b = 0; b < kLanes / 8; ++b) {
        for (int s = 0; s < kSublanes; ++s) {
          for (int j = 0; j < 8; ++j) {
            out[s * kLanes + 8 * b + j] = src[j * kLanes + 8 * b + s];
          }
        }
      }
      return true;
    }
    default:
      return false;
  }
}

// A 128x128 matrix held in 16 registers (row r = register r/8, sublane r%8)
// is transposed into the 16 registers starting at the destination.
bool Transpose128(Machine& M, const Instr& in) {
  uint32_t* tmp = M.xpose_tmp;
  for (int r = 0; r < kMxuDim; ++r) {
    for (int c = 0; c < kMxuDim; ++c) {
      tmp[c * kMxuDim + r] = M.v[in.reg[1] + r / 8][(r % 8) * kLanes + c];
    }
  }
  for (int r = 0; r < kMxuDim; ++r) {
    std::memcpy(&M.v[in.reg[0] + r / 8][(r % 8) * kLanes], tmp + r * kMxuDim,
                kLanes * 4);
  }
  return true;
}

}  // namespace

bool ExecCrossLane(Machine& M, const Instr& in) {
  switch (in.op) {
    case Opcode::kVLRedSum:
    case Opcode::kVLRedMax:
    case Opcode::kVLRedMin:
#define TRENCH_RUN(T) return LaneReduce<T>(M, in);
      TRENCH_TPU_DISPATCH_NUM(in.type, TRENCH_RUN)
#undef TRENCH_RUN
    case Opcode::kVSRedSum:
    case Opcode::kVSRedMax:
    case Opcode::kVSRedMin:
#define TRENCH_RUN(T) return SublaneReduce<T>(M, in);
      TRENCH_TPU_DISPATCH_NUM(in.type, TRENCH_RUN)
#undef TRENCH_RUN
    case Opcode::kVXpose128:
      return Transpose128(M, in);
    default:
      return Permute(M, in);
  }
}

}  // namespace trench::tpu
