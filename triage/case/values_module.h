// A module that returns the values of chosen instructions: the oracle
// evaluates it to learn what those instructions should hold (hlo-bisect's
// graph and fusion levels, hlo-reduce's replacement values).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_module.h"

namespace trench::hlo_diff {

// A copy of `module` whose entry is its computation named `computation`,
// with the root replaced by a tuple (named `root_name`) of the
// instructions named `names`, in that order. Errors: NotFound naming the
// computation or an instruction not in it. The result is evaluated, never
// compiled (a fused computation becomes the entry as it is).
StatusOr<std::unique_ptr<HloModule>> ValuesModule(
    const HloModule& module, const std::string& computation,
    const std::vector<std::string>& names, const std::string& root_name);

}  // namespace trench::hlo_diff
