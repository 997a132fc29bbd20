// The callee level's probe (localize.h "callee"): a called computation
// (a sort comparator, a reduce / reduce-window / scatter / map /
// select-and-scatter / all-reduce body) outlined into an entry computation
// that applies it lane-wise to arrays of the scalar arguments its call site
// sees, so that every op inside becomes an entry instruction whose value
// the target's taps show and the oracle can check.
//
// Arguments ("samples"): S tuples, one value per parameter of the called
// computation, taken from the call site's operand values by the call
// site's rule (CalleeSampleRule below), at most kMaxCalleeSamples.
//
// Outlining: parameter k becomes entry parameter k (same name) of shape
// T[S]; every other instruction keeps its name, opcode and attributes with
// its shape widened to [S] (tuples and get-tuple-element follow); a scalar
// constant keeps its value under the name "<name>.scalar" and is broadcast
// to [S] under its own name. The root is a tuple of every array-shaped
// non-parameter instruction, post order ("__hlo_bisect_values").
// Outlining is sound for elementwise ops (compare, select, clamp, converts,
// unary and binary arithmetic), copies and rank-0 reshapes/bitcasts;
// anything else (nested calls, broadcasts with dimensions, ...) is
// Unimplemented naming the instruction.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"

namespace trench::hlo_bisect {

inline constexpr int64_t kMaxCalleeSamples = 256;

// Whether `op` runs a scalar computation per element pair (the call sites
// the callee level looks into): sort, reduce, reduce-window, map, scatter,
// select-and-scatter, all-reduce, reduce-scatter.
bool IsCalleeCallSite(HloOpcode op);

// The probe of one called computation.
struct CalleeProbe {
  std::unique_ptr<HloModule> module;  // The outlined module.
  std::vector<Literal> args;          // One T[S] array per parameter.
  std::vector<std::string> names;     // The root tuple's members, in order.
  int64_t samples = 0;                // S.
  std::string rule;                   // How the samples were drawn.
};

// Outlines `call_site.called_computations()[index]` with arguments drawn
// from `operands` (the call site's operand values, in operand order).
// Errors: InvalidArgument when the operands do not match the call site;
// Unimplemented for a computation that cannot be outlined (see above) or
// a call site whose parameters this rule does not cover.
// REQUIRES: IsCalleeCallSite(call_site.opcode()).
StatusOr<CalleeProbe> MakeCalleeProbe(const HloInstruction& call_site,
                                      int64_t index,
                                      const std::vector<Literal>& operands);

}  // namespace trench::hlo_bisect
