// Bounds of sort (rule in oracle/numerics_contract.h): sorted keys move by
// at most the row's max bound; payloads are undetermined where the order
// is ambiguous (keys within twice that bound of a neighbour, or equal keys
// of an unstable sort with different payloads).
#include <cmath>
#include <optional>

#include "oracle/numerics_internal.h"

namespace trench::oracle::numerics {
namespace {

// The key operand of a comparator "compare(param 2k, param 2k+1), LT|GT"
// (either parameter order), or nullopt.
std::optional<int64_t> KeyOperand(const HloComputation& comp, size_t n) {
  const HloInstruction* root = comp.root_instruction();
  if (root == nullptr || root->opcode() != HloOpcode::kCompare ||
      root->operand_count() != 2 ||
      comp.num_parameters() != static_cast<int64_t>(2 * n)) {
    return std::nullopt;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter ||
      b->opcode() != HloOpcode::kParameter) {
    return std::nullopt;
  }
  const int64_t pa = a->parameter_number(), pb = b->parameter_number();
  if (pa / 2 != pb / 2 || pa == pb || pa < 0 ||
      pa >= static_cast<int64_t>(2 * n)) {
    return std::nullopt;
  }
  const ComparisonDirection dir = root->attrs().comparison_direction;
  if (dir != ComparisonDirection::kLt && dir != ComparisonDirection::kGt) {
    return std::nullopt;
  }
  return pa / 2;
}

bool SameBits(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) ||
         (a == b && std::signbit(a) == std::signbit(b));
}

}  // namespace

StatusOr<Literal> SortBound(BoundsEvaluator& ev, const HloInstruction& instr,
                            BoundedOps ops, const Literal& y) {
  const size_t n = ops.size();
  Literal e = FilledBound(y.shape(), 0);
  std::vector<Literal*> out_e;
  std::vector<const Literal*> out_v;
  if (y.shape().IsTuple()) {
    for (Literal& l : e.mutable_tuple_elements()) out_e.push_back(&l);
    for (const Literal& l : y.tuple_elements()) out_v.push_back(&l);
  } else {
    out_e.push_back(&e);
    out_v.push_back(&y);
  }
  if (out_e.size() != n || instr.dimensions().size() != 1 ||
      instr.called_computations().empty()) {
    return InvalidArgument("sort shape mismatch");
  }
  bool exact = true;
  for (const Bounded* b : ops) exact = exact && AllZero(b->e);
  const std::optional<int64_t> key = KeyOperand(*instr.to_apply(), n);
  if (!key) {
    if (!exact) {
      ev.Note("sort with an unclassified comparator");
      MakeUndetermined(e);
    }
    return e;
  }
  const std::vector<int64_t>& dims = ops[0]->v.shape().dims();
  const int64_t d = instr.dimensions()[0];
  if (d < 0 || d >= static_cast<int64_t>(dims.size())) {
    return InvalidArgument("sort dimension out of range");
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= dims[i];
  for (int64_t i = d + 1; i < static_cast<int64_t>(dims.size()); ++i) {
    inner *= dims[i];
  }
  const int64_t len = dims[d];
  const std::vector<double> keys = AsDoubles(*out_v[*key]);
  const auto key_e = ops[*key]->e.data<double>();
  std::vector<std::vector<double>> payloads(n);
  for (size_t k = 0; k < n; ++k) payloads[k] = AsDoubles(*out_v[k]);
  const bool total_order =
      instr.to_apply()->root_instruction()->attrs().comparison_type ==
      ComparisonType::kTotalOrder;
  bool noted = false;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * len * inner + in;
      auto at = [&](int64_t j) { return base + j * inner; };
      // The row's max key bound and whether it holds unordered NaN keys.
      double m = 0;
      bool nan_key = false;
      for (int64_t j = 0; j < len; ++j) {
        m = std::max(m, key_e[at(j)]);
        nan_key = nan_key || (std::isnan(keys[at(j)]) && !total_order);
      }
      std::vector<double> row_max(n, 0);
      // Whether the row holds a zero of unspecified sign: wherever an
      // exact zero of that operand lands, it may be that one.
      std::vector<char> row_marked(n, 0);
      for (size_t k = 0; k < n; ++k) {
        const auto ek = ops[k]->e.data<double>();
        for (int64_t j = 0; j < len; ++j) {
          row_max[k] = std::max(row_max[k], ek[at(j)]);
          if (IsSignUnspecified(ek[at(j)]) &&
              IsFloat(ops[k]->v.element_type()) &&
              ops[k]->v.GetAsDouble(at(j)) == 0) {
            row_marked[k] = 1;
          }
        }
        if (row_max[k] == 0) row_max[k] = 0.0;
      }
      // Runs of equal keys: an unstable sort may order them either way.
      std::vector<int64_t> run_start(len, 0);
      for (int64_t j = 1; j < len; ++j) {
        const double a = keys[at(j)], b = keys[at(j - 1)];
        run_start[j] = (a == b || SameBits(a, b)) ? run_start[j - 1] : j;
      }
      std::vector<std::vector<char>> run_differs(n, std::vector<char>(len, 0));
      if (!instr.attrs().is_stable) {
        for (size_t k = 0; k < n; ++k) {
          for (int64_t j = 1; j < len; ++j) {
            if (run_start[j] != j &&
                !SameBits(payloads[k][at(j)], payloads[k][at(run_start[j])])) {
              run_differs[k][run_start[j]] = 1;
            }
          }
        }
      }
      for (int64_t j = 0; j < len; ++j) {
        // Ambiguous: a neighbour within 2m (for sorted keys, overlaps of
        // non-neighbours imply overlaps of neighbours).
        bool ambiguous = nan_key || std::isinf(m);
        for (int64_t nb : {j - 1, j + 1}) {
          if (nb < 0 || nb >= len || m == 0) continue;
          if (!(std::fabs(keys[at(j)] - keys[at(nb)]) > 2 * m)) {
            ambiguous = true;
          }
        }
        for (size_t k = 0; k < n; ++k) {
          double& bound = out_e[k]->mutable_data<double>()[at(j)];
          // +0 and -0 keys form one run: an unstable sort may put either
          // sign at each of its positions.
          const bool any_sign =
              row_marked[k] ||
              (static_cast<int64_t>(k) == *key && run_differs[k][run_start[j]]);
          if (static_cast<int64_t>(k) == *key) {
            bound = nan_key ? kInf : m;
            if (bound == 0) {
              bound = any_sign && keys[at(j)] == 0 ? kAnySign : 0.0;
            }
            continue;
          }
          const bool differs = ambiguous || run_differs[k][run_start[j]];
          bound = differs ? kInf : row_max[k];
          if (bound == 0) {
            bound = any_sign && payloads[k][at(j)] == 0 ? kAnySign : 0.0;
          }
          if (differs && !noted) {
            ev.Note("sort payload at ambiguous key order");
            noted = true;
          }
        }
      }
    }
  }
  return e;
}

}  // namespace trench::oracle::numerics
