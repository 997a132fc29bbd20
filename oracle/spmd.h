// The oracle on a slice of devices: an SPMD program evaluated on every
// device of a mesh of R replicas x P partitions (global id r * P + p),
// each device running the module on its own arguments, with XLA's
// collective semantics between them (operation_semantics.md; groups as
// compiler/ir/collective_groups.h derives them):
//   all-reduce, all-gather, reduce-scatter, all-to-all   (collectives.h)
//   collective-permute  a target gets its source's operand, a device no
//                       pair targets gets zeros;
//   partition-id, replica-id  the device's partition / replica (u32).
// Each device runs on a thread of its own; they meet at each execution of
// a collective (oracle/collectives.h Rendezvous).
#pragma once

#include <span>
#include <vector>

#include "base/status.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"
#include "oracle/evaluator.h"
#include "oracle/numerics_contract.h"

namespace trench {

struct SpmdOptions {
  DeviceMesh mesh;
  // Per device; threads (0: hardware concurrency) are shared out among
  // the devices.
  EvaluatorOptions evaluator;
};

// Evaluates `module`'s entry on every device of options.mesh: args[d] are
// device d's arguments (one literal per entry parameter). Returns each
// device's root value, by device. Errors: InvalidArgument when the number
// of argument lists is not the mesh's size, or as Evaluate, prefixed with
// the device ("device 3: ..."); a collective no group can complete
// (devices that took different paths) is FailedPrecondition naming the
// devices and where they wait.
StatusOr<std::vector<Literal>> EvaluateSpmd(
    const HloModule& module, std::span<const std::vector<Literal>> args,
    const SpmdOptions& options);

// The numerics contract (numerics_contract.h) on every device: each
// device's outputs with their bounds. A collective's bound follows its
// members' values and bounds (an all-reduce's sum in any order of the
// devices, as a reduce over them whose steps may round to the element
// type; data movement carries bounds along).
// Errors as EvaluateSpmd's. (Implemented in numerics_contract.cc.)
StatusOr<std::vector<BoundedResult>> EvaluateSpmdWithBounds(
    const HloModule& module, std::span<const std::vector<Literal>> args,
    const DeviceMesh& mesh, const NumericsOptions& options = {});

// CheckMesh (collective_groups.h), and InvalidArgument unless
// `argument_lists` is the mesh's size.
Status CheckMeshArguments(const DeviceMesh& mesh, size_t argument_lists);
// options.threads (0: the hardware's) shared out among `devices`, at
// least 1 each.
int ThreadsPerDevice(const EvaluatorOptions& options, int64_t devices);

}  // namespace trench
