// The interesting values of each element type (interesting_values.h).
#include "triage/fuzz/interesting_values.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>

#include "compiler/ir/hlo_printer.h"

namespace trench::fuzz {
namespace {

using K = InterestingKind;
using P = PrimitiveType;

struct KindInfo {
  K kind;
  const char* name;
  bool finite;
};

const std::vector<KindInfo>& Kinds() {
  static const auto* v = new std::vector<KindInfo>{
#define X(e, name, applies, finite, what) {K::e, name, finite},
#include "triage/fuzz/interesting_values.def"
#undef X
  };
  return *v;
}

P RealPartType(P t) { return t == P::C64 ? P::F32 : t == P::C128 ? P::F64 : t; }

uint64_t LowBits(int w) {
  return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
}

// Adds (kind, bits) unless the bits are already there (the first kind of
// the registry wins).
struct Table {
  P t;
  std::vector<InterestingValue> values;
  void Add(K kind, uint64_t bits, double value, bool finite) {
    for (const InterestingValue& v : values) {
      if (v.bits == bits) return;
    }
    InterestingValue v;
    v.kind = kind;
    v.bits = bits;
    v.value = value;
    v.finite = finite;
    v.magnitude =
        finite ? std::fabs(value) : std::numeric_limits<double>::infinity();
    values.push_back(v);
  }
};

void IntegerValues(Table& tb) {
  const int w = BitWidth(tb.t);
  const bool sig = IsSigned(tb.t);
  // Range as long double: exact for every 64-bit bound.
  const long double lo = sig ? -std::ldexp(1.0L, w - 1) : 0.0L;
  const long double hi =
      sig ? std::ldexp(1.0L, w - 1) - 1 : std::ldexp(1.0L, w) - 1;
  auto add = [&](K kind, long double v) {
    if (v < lo || v > hi) return;
    uint64_t bits;
    if (v < 0) {
      bits = static_cast<uint64_t>(static_cast<int64_t>(v)) & LowBits(w);
    } else {
      bits = static_cast<uint64_t>(v) & LowBits(w);
    }
    tb.Add(kind, bits, static_cast<double>(v), true);
  };
  add(K::kZero, 0);
  add(K::kOne, 1);
  add(K::kMinusOne, -1);
  add(K::kTwo, 2);
  add(K::kMin, lo);
  add(K::kMinPlusOne, lo + 1);
  add(K::kMax, hi);
  add(K::kMaxMinusOne, hi - 1);
  for (int k : {7, 8, 15, 16, 31, 32}) {
    const long double p = std::ldexp(1.0L, k);
    for (long double v : {p - 1, p, p + 1, -p, -p - 1}) add(K::kPow2Edge, v);
  }
  for (int d : {-1, 0, 1}) add(K::kShiftCount, w + d);
}

void FloatValues(Table& tb) {
  const int e = ExponentBits(tb.t), m = MantissaBits(tb.t);
  const uint64_t sign = uint64_t{1} << (e + m);
  const uint64_t exp_all = LowBits(e) << m;
  const uint64_t quiet = uint64_t{1} << (m - 1);
  const uint64_t man_all = LowBits(m);
  auto decode = [&](uint64_t b) { return DecodeFloat(b, e, m); };
  auto bits = [&](K kind, uint64_t b) {
    const bool finite = (b & exp_all) != exp_all;
    tb.Add(kind, b, decode(b), finite);
  };
  // A value (rounded to the type); skipped when it is not finite there.
  auto val = [&](K kind, double v) {
    const uint64_t b = EncodeFloat(v, e, m);
    if ((b & exp_all) == exp_all) return;
    bits(kind, b);
  };
  val(K::kZero, 0.0);
  val(K::kOne, 1.0);
  val(K::kMinusOne, -1.0);
  bits(K::kNegZero, sign);
  bits(K::kInf, exp_all);
  bits(K::kInf, sign | exp_all);
  bits(K::kQuietNaN, exp_all | quiet);
  bits(K::kQuietNaN, sign | exp_all | quiet);
  bits(K::kQuietNaN, exp_all | quiet | 1);
  bits(K::kSignalingNaN, exp_all | 1);
  bits(K::kSignalingNaN, sign | exp_all | 1);
  bits(K::kSignalingNaN, exp_all | (man_all & ~quiet));
  for (uint64_t s : {uint64_t{0}, sign}) bits(K::kMinSubnormal, s | 1);
  for (uint64_t s : {uint64_t{0}, sign}) bits(K::kMaxSubnormal, s | man_all);
  for (uint64_t s : {uint64_t{0}, sign}) {
    bits(K::kMinNormal, s | (uint64_t{1} << m));
  }
  for (uint64_t s : {uint64_t{0}, sign}) {
    bits(K::kMaxFinite, s | (exp_all - (uint64_t{1} << m)) | man_all);
  }
  val(K::kEpsilon, std::ldexp(1.0, -m));
  val(K::kEpsilon, 1 + std::ldexp(1.0, -m));
  val(K::kEpsilon, 1 - std::ldexp(1.0, -m - 1));
  for (double v : {0.5, -0.5, 1.5, 2.5, -2.5}) val(K::kRoundingTie, v);
  for (int k : {7, 8, 15, 16, 31, 32, 63, 64}) {
    val(K::kIntBoundary, std::ldexp(1.0, k));
    val(K::kIntBoundary, -std::ldexp(1.0, k));
  }
  val(K::kIntBoundary, std::ldexp(1.0, m + 1) - 1);
  val(K::kIntBoundary, std::ldexp(1.0, m + 1));
}

std::vector<InterestingValue> Compute(P t) {
  Table tb{t, {}};
  if (t == P::PRED) {
    tb.Add(K::kZero, 0, 0, true);
    tb.Add(K::kOne, 1, 1, true);
  } else if (IsInteger(t)) {
    IntegerValues(tb);
  } else if (IsFloat(t)) {
    FloatValues(tb);
  } else if (IsComplex(t)) {
    // (v, 0) and (0, v) for every value v of the real part.
    Table real{RealPartType(t), {}};
    FloatValues(real);
    for (const InterestingValue& r : real.values) {
      InterestingValue a = r;
      a.imag_bits = 0;
      tb.values.push_back(a);
      if (r.bits == 0) continue;
      InterestingValue b = r;
      b.bits = 0;
      b.imag_bits = r.bits;
      tb.values.push_back(b);
    }
  }
  return std::move(tb.values);
}

struct Cache {
  std::mutex mu;
  std::map<P, std::vector<InterestingValue>> values;
  std::map<P, std::unordered_map<uint64_t, K>> index;  // Real types.
};

Cache& TheCache() {
  static auto* c = new Cache;
  return *c;
}

uint64_t LoadBits(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; ++k) v |= uint64_t{p[k]} << (8 * k);
  return v;
}

void StoreBits(uint8_t* p, int bytes, uint64_t v) {
  for (int k = 0; k < bytes; ++k) p[k] = static_cast<uint8_t>(v >> (8 * k));
}

const std::unordered_map<uint64_t, K>& Index(P t) {
  Cache& c = TheCache();
  const auto& values = InterestingValues(t);
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.index.find(t);
  if (it != c.index.end()) return it->second;
  auto& idx = c.index[t];
  for (const InterestingValue& v : values) idx.emplace(v.bits, v.kind);
  return idx;
}

// The kind of one real element's bits of type t.
std::optional<K> ClassifyReal(P t, uint64_t b) {
  if (IsFloat(t)) {
    const int e = ExponentBits(t), m = MantissaBits(t);
    const uint64_t exp_all = LowBits(e) << m;
    const uint64_t man = b & LowBits(m);
    if ((b & exp_all) == exp_all && man != 0) {
      return (man >> (m - 1)) & 1 ? K::kQuietNaN : K::kSignalingNaN;
    }
  }
  const auto& idx = Index(t);
  auto it = idx.find(b);
  if (it == idx.end()) return std::nullopt;
  return it->second;
}

}  // namespace

const std::vector<InterestingKind>& AllInterestingKinds() {
  static const auto* v = [] {
    auto* out = new std::vector<InterestingKind>;
    for (const KindInfo& k : Kinds()) out->push_back(k.kind);
    return out;
  }();
  return *v;
}

std::string_view InterestingKindName(InterestingKind k) {
  return Kinds()[static_cast<size_t>(k)].name;
}

bool InterestingKindFinite(InterestingKind k) {
  return Kinds()[static_cast<size_t>(k)].finite;
}

const std::vector<InterestingValue>& InterestingValues(PrimitiveType t) {
  Cache& c = TheCache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.values.find(t);
  if (it == c.values.end()) it = c.values.emplace(t, Compute(t)).first;
  return it->second;
}

std::vector<InterestingValue> InterestingValuesOf(PrimitiveType t,
                                                  bool finite_only) {
  std::vector<InterestingValue> out;
  for (const InterestingValue& v : InterestingValues(t)) {
    if (!finite_only || v.finite) out.push_back(v);
  }
  return out;
}

std::string InterestingText(PrimitiveType t, const InterestingValue& v) {
  Literal l{Shape(t, {})};
  StoreInteresting(l, 0, v);
  return PrintLiteral(l);
}

void StoreInteresting(Literal& l, int64_t i, const InterestingValue& v) {
  const P t = l.element_type();
  const int w = ByteWidth(t);
  uint8_t* p = l.mutable_bytes().data() + i * w;
  if (IsComplex(t)) {
    StoreBits(p, w / 2, v.bits);
    StoreBits(p + w / 2, w / 2, v.imag_bits);
  } else {
    StoreBits(p, w, v.bits);
  }
}

std::optional<InterestingKind> ClassifyInteresting(const Literal& l,
                                                   int64_t i) {
  const P t = l.element_type();
  if (!IsArrayType(t)) return std::nullopt;
  const int w = ByteWidth(t);
  const uint8_t* p = l.bytes().data() + i * w;
  if (!IsComplex(t)) return ClassifyReal(t, LoadBits(p, w));
  const P r = RealPartType(t);
  const uint64_t re = LoadBits(p, w / 2), im = LoadBits(p + w / 2, w / 2);
  if (re == 0 && im == 0) return K::kZero;
  if (im == 0) return ClassifyReal(r, re);
  if (re == 0) return ClassifyReal(r, im);
  return std::nullopt;
}

bool HasEdgeSemantics(HloOpcode op) {
  switch (op) {
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
    case HloOpcode::kPower:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kClamp:
    case HloOpcode::kCompare:
    case HloOpcode::kConvert:
      return true;
    default:
      return false;
  }
}

}  // namespace trench::fuzz
