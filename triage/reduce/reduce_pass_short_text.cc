// short-text: the module in XLA's short parsable form (hlo_printer.h
// HloPrintOptions::Short(): no operand shapes, no "%", no program shapes),
// as a person would write it and as short as a text reducer's result. One
// opportunity, offered while the case's text is not that form already and
// the short text parses back to the same module (names that read as
// keywords would not). It is last in the registry: the other passes print
// the full form, and the final round ends with this one.
#include <string>
#include <vector>

#include "compiler/ir/hlo_equal.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

class ShortTextPass : public OpportunityListPass<std::string> {
 public:
  ShortTextPass()
      : OpportunityListPass("short-text",
                            "print the module in XLA's short parsable form "
                            "(operands without shapes, no %, no program "
                            "shapes)") {}

 private:
  std::vector<std::string> Opportunities(const hlo_diff::Case& c,
                                         const EditableCase& e) const override {
    std::string text = PrintHloModule(*e.module, HloPrintOptions::Short());
    if (text == c.module_text) return {};
    StatusOr<std::unique_ptr<HloModule>> back = ParseHloModule(text);
    if (!back.ok() || !ModulesEqual(**back, *e.module)) return {};
    return {std::move(text)};
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase&,
      const std::vector<std::string>& chosen) const override {
    hlo_diff::Case out = c;
    if (!chosen.empty()) out.module_text = chosen[0];
    return out;
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeShortTextPass() {
  return std::make_unique<ShortTextPass>();
}

}  // namespace trench::hlo_reduce
