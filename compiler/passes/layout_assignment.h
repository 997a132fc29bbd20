// Layout assignment: gives every array shape a layout.
#pragma once

#include "compiler/passes/pass.h"

namespace trench {

// Gives every array shape (and tuple leaf) that has no layout one:
// entry parameters and the entry root take theirs from the module's
// entry_computation_layout header attribute when it names one, everything
// else gets the default {rank-1,...,0}. Layouts already present are kept.
// Where an entry parameter or the entry root already has a layout that
// differs from the header's, a copy converts between the two (the
// parameter takes the header's layout and a copy gives its users the old
// one; the root gets a copy to the header's layout).
// Rewrite sites: "assign-entry-layout", "assign-default-layout" (per
// instruction), "parameter-layout-copy", "result-layout-copy".
// An entry_computation_layout that does not parse or does not match the
// entry computation's signature is ignored (and logged to the context);
// the pass itself does not fail on a verified module.
class LayoutAssignment : public HloPass {
 public:
  std::string_view name() const override { return "layout-assignment"; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override;
};

}  // namespace trench
