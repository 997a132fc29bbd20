// All-reduce combining (XLA's AllReduceCombiner).
#pragma once

#include <cstdint>

#include "compiler/passes/pass.h"

namespace trench {

// Combines independent all-reduces of one computation into one variadic
// all-reduce whose shape is the tuple of their shapes; a get-tuple-element
// of it replaces each of them and keeps its annotations (metadata,
// sharding, frontend_attributes). Many small collectives cost more latency
// than one large one.
//
// Two all-reduces may be combined when, as in XLA's AllReduceKey:
// - each has one array operand, of its result's element type, and a
//   reduction (to_apply) of that type: two scalar parameters and one
//   binary op of them (XLA's verifier insists on the types); the two
//   reductions are structurally equal (same op, shapes, attributes and
//   parameter order; not necessarily the same computation), so element
//   types never mix (XLA keys on the reduction's type too);
// - their replica_groups expand (list or iota form) to the same groups, in
//   the same order (absent and {} are equal);
// - both or neither have a channel_id, and use_global_device_ids agrees
//   (absent is false);
// - neither reaches the other through operands or control edges.
// The combined op takes the first member's channel_id, replica_groups,
// use_global_device_ids and reduction, a tuple sharding when any member
// has a sharding, and the union of the members' control edges.
//
// Rounds as XLA's CombineInstructionsByKey: walk the computation in post
// order; the first all-reduce left opens a set of its key; later ones of
// that key join it while the set stays within `threshold_bytes` and
// `threshold_count` members; the walk ends at the first that would exceed
// the bytes or depends on a member. A set of two or more is one combine.
// An all-reduce larger than `threshold_bytes` alone is never combined.
// Runs on every computation except fused ones. Not at all when a
// threshold is <= 0 or any all-reduce has constrain_layout=true (as XLA).
// Computations that hold a domain instruction are left alone: XLA keeps
// sharding domains apart, and skipping them is the conservative reading.
//
// Rewrite site: "combine" (per set, named after its first member).
class AllReduceCombiner : public HloPass {
 public:
  // XLA's defaults: xla_gpu_all_reduce_combine_threshold_bytes (30 MiB)
  // and the count its GPU pipeline passes (256).
  static constexpr int64_t kDefaultThresholdBytes = int64_t{30} << 20;
  static constexpr int64_t kDefaultThresholdCount = 256;

  explicit AllReduceCombiner(int64_t threshold_bytes = kDefaultThresholdBytes,
                             int64_t threshold_count = kDefaultThresholdCount)
      : threshold_bytes_(threshold_bytes), threshold_count_(threshold_count) {}

  std::string_view name() const override { return "all-reduce-combiner"; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override;

 private:
  int64_t threshold_bytes_;
  int64_t threshold_count_;
};

}  // namespace trench
