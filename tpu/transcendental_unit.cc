// The transcendental unit applied to vector registers: f32 goes through the
// polynomial approximations of transcendental.h; f64 (which the machine
// emulates in multiple passes) uses the host's f64 libm; integer vdiv uses
// XLA's integer-division semantics.
#include <cmath>

#include "tpu/lanes.h"
#include "tpu/transcendental.h"

namespace trench::tpu {
namespace {

using F1 = float (*)(float);
using D1 = double (*)(double);

double Logistic64(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double Rsqrt64(double x) { return 1.0 / std::sqrt(x); }
double Recip64(double x) { return 1.0 / x; }

bool UnaryFns(Opcode op, F1* f, D1* d) {
  switch (op) {
    case Opcode::kVExp:
      *f = ApproxExp;
      *d = [](double x) { return std::exp(x); };
      return true;
    case Opcode::kVExpm1:
      *f = ApproxExpm1;
      *d = [](double x) { return std::expm1(x); };
      return true;
    case Opcode::kVLog:
      *f = ApproxLog;
      *d = [](double x) { return std::log(x); };
      return true;
    case Opcode::kVLog1p:
      *f = ApproxLog1p;
      *d = [](double x) { return std::log1p(x); };
      return true;
    case Opcode::kVTanh:
      *f = ApproxTanh;
      *d = [](double x) { return std::tanh(x); };
      return true;
    case Opcode::kVLogistic:
      *f = ApproxLogistic;
      *d = Logistic64;
      return true;
    case Opcode::kVSin:
      *f = ApproxSin;
      *d = [](double x) { return std::sin(x); };
      return true;
    case Opcode::kVCos:
      *f = ApproxCos;
      *d = [](double x) { return std::cos(x); };
      return true;
    case Opcode::kVTan:
      *f = ApproxTan;
      *d = [](double x) { return std::tan(x); };
      return true;
    case Opcode::kVSqrt:
      *f = ApproxSqrt;
      *d = [](double x) { return std::sqrt(x); };
      return true;
    case Opcode::kVRsqrt:
      *f = ApproxRsqrt;
      *d = Rsqrt64;
      return true;
    case Opcode::kVCbrt:
      *f = ApproxCbrt;
      *d = [](double x) { return std::cbrt(x); };
      return true;
    case Opcode::kVErf:
      *f = ApproxErf;
      *d = [](double x) { return std::erf(x); };
      return true;
    case Opcode::kVRecip:
      *f = ApproxRecip;
      *d = Recip64;
      return true;
    default:
      return false;
  }
}

template <typename T>
bool IntDivide(Machine& M, const Instr& in) {
  Map2<T>(M, in, [](T a, T b) { return IntDiv(a, b); });
  return true;
}

}  // namespace

bool ExecTranscendental(Machine& M, const Instr& in) {
  const bool f64 = in.type == DType::kF64;
  switch (in.op) {
    case Opcode::kVDiv:
      switch (in.type) {
        case DType::kF32:
          Map2<float>(M, in, ApproxDiv);
          return true;
        case DType::kF64:
          Map2<double>(M, in, [](double a, double b) { return a / b; });
          return true;
        case DType::kS32:
          return IntDivide<int32_t>(M, in);
        case DType::kU32:
          return IntDivide<uint32_t>(M, in);
        case DType::kS64:
          return IntDivide<int64_t>(M, in);
        case DType::kU64:
          return IntDivide<uint64_t>(M, in);
        default:
          return false;
      }
    case Opcode::kVAtan2:
      if (f64) {
        Map2<double>(M, in,
                     [](double y, double x) { return std::atan2(y, x); });
      } else {
        Map2<float>(M, in, ApproxAtan2);
      }
      return true;
    case Opcode::kVPow:
      if (f64) {
        Map2<double>(M, in, [](double x, double y) { return std::pow(x, y); });
      } else {
        Map2<float>(M, in, ApproxPow);
      }
      return true;
    default:
      break;
  }
  F1 f;
  D1 d;
  if (!UnaryFns(in.op, &f, &d)) return false;
  if (f64) {
    Map1<double>(M, in, in.reg[0], in.reg[1], d);
  } else {
    Map1<float>(M, in, in.reg[0], in.reg[1], f);
  }
  return true;
}

}  // namespace trench::tpu
