// The matrix unit (MXU): a 128x128 weight tile of bf16 values, loaded 8 rows
// at a time from vector registers (mxwpush rounds f32 lanes to bf16, RNE),
// and an LHS streamed by 8-row vregs (also rounded to bf16). Each product of
// two bf16 values is exact in f32; each output is the f32 sum over k = 0..127
// in order, added to the destination (mxmatmulacc) or stored (mxmatmul).
// There is no precision flag: f32 precision (bf16x3, bf16x6) is the
// compiler's job, by splitting operands with vpack/vunpack/vsub and issuing
// several passes.
#include <cstring>

#include "tpu/lanes.h"
#include "tpu/numerics.h"

namespace trench::tpu {
namespace {

constexpr uint32_t kAllRowGroups = (1u << (kMxuDim / kSublanes)) - 1;

void PushWeights(Machine& M, const Instr& in) {
  const int k = static_cast<int>(in.imm[0]);
  const uint32_t* src = M.v[in.reg[0]];
  for (int s = 0; s < kSublanes; ++s) {
    float* row = M.mxu_w + (k * kSublanes + s) * kMxuDim;
    for (int l = 0; l < kLanes; ++l) {
      row[l] = RoundF32ToBf16Value(BitsF32(src[s * kLanes + l]));
    }
  }
  M.mxu_loaded |= 1u << k;
}

bool Matmul(Machine& M, const Instr& in, bool accumulate) {
  if (M.mxu_loaded != kAllRowGroups) {
    char buf[96];
    std::snprintf(buf, sizeof buf,
                  "matrix unit used before all 16 weight row groups were "
                  "pushed (pushed mask 0x%04x)",
                  M.mxu_loaded);
    return M.Trap(buf);
  }
  alignas(64) float lhs[kSublanes][kMxuDim];
  alignas(64) float out[kSublanes][kMxuDim];
  const uint32_t* a = M.v[in.reg[1]];
  for (int s = 0; s < kSublanes; ++s) {
    for (int k = 0; k < kMxuDim; ++k) {
      lhs[s][k] = RoundF32ToBf16Value(BitsF32(a[s * kLanes + k]));
    }
  }
  std::memset(out, 0, sizeof out);
  for (int s = 0; s < kSublanes; ++s) {
    float* o = out[s];
    for (int k = 0; k < kMxuDim; ++k) {
      const float x = lhs[s][k];
      const float* w = M.mxu_w + k * kMxuDim;
      for (int n = 0; n < kMxuDim; ++n) o[n] += x * w[n];
    }
  }
  uint32_t* d = M.v[in.reg[0]];
  for (int s = 0; s < kSublanes; ++s) {
    for (int n = 0; n < kLanes; ++n) {
      float r = out[s][n];
      if (accumulate) r = BitsF32(d[s * kLanes + n]) + r;
      d[s * kLanes + n] = F32Bits(r);
    }
  }
  M.stats->matmul_passes++;
  M.stats->mxu_busy_cycles +=
      M.params->cycles[static_cast<int>(CostClass::kMatmulPass)];
  return true;
}

}  // namespace

bool ExecMatrix(Machine& M, const Instr& in) {
  switch (in.op) {
    case Opcode::kMxWPush:
      PushWeights(M, in);
      M.stats->mxu_busy_cycles +=
          M.params->cycles[static_cast<int>(CostClass::kWeightPush)];
      return true;
    case Opcode::kMxMatmul:
      return Matmul(M, in, false);
    case Opcode::kMxMatmulAcc:
      return Matmul(M, in, true);
    default:
      return false;
  }
}

}  // namespace trench::tpu
