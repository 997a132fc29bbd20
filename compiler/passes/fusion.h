// Fusion: groups instructions of the entry computation into XLA-style
// fusion instructions (`fusion(...), kind=kLoop|kInput|kOutput,
// calls=%fused_computation`), each compiled to one kernel.
#pragma once

#include "compiler/passes/pass.h"

namespace trench {

// Forms, consumer first (from the root backwards):
//   - loop fusions (kLoop): elementwise chains with the broadcasts, iota,
//     scalar constants, reshapes and converts feeding them;
//   - input fusions (kInput): a reduce with its elementwise producers;
//   - output fusions (kOutput): a dot with its epilogue (bias add,
//     activation, convert) consuming it;
// then multi-output fusions: fusions (or single fusible ops) that read a
// common operand, e.g. sibling elementwise consumers or a reduce and an
// elementwise op sharing a producer, merge into one fusion whose fused
// computation returns a tuple; users read it via get-tuple-element.
// A producer joins a fusion only when all its users are in it (no work is
// duplicated), except cheap ones (one-element constants, iota,
// broadcasts) which are copied into the fusion and kept for other users.
// Every fusion must pass AnalyzeFusion (fusion_support.h), the predicate
// the fused-kernel emitter compiles by. Only the entry computation is
// fused; instructions with control edges are left alone.
// No fusion is ever part of a cycle: a multi-output merge is made only if
// no path leads from one of the two fusions to the other through a third
// node, checked in a topological order of the fused graph kept up to date
// incrementally (fusion_order.h), so the pass costs about O(n) for n
// instructions; a merge whose check would visit more than a bounded
// number of nodes is not made.
// Rewrite sites, one decision per fusion formed, named by the fusion's
// first consumer: "loop", "input", "output", "multi-output".
class FusionPass : public HloPass {
 public:
  std::string_view name() const override { return "fusion"; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override;
};

}  // namespace trench
