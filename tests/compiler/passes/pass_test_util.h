// Helpers for pass tests: parse inline HLO, run a pass, compare the values
// of a module before and after a pass with the oracle.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/random_inputs.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/pass.h"
#include "oracle/comparator.h"
#include "oracle/evaluator.h"

namespace trench::testing {

// Parses and verifies `text`; fails the test (and returns null) otherwise.
inline std::unique_ptr<HloModule> Parse(std::string_view text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return nullptr;
  Status v = VerifyModule(**m);
  EXPECT_TRUE(v.ok()) << v.ToString();
  return std::move(*m);
}

// Runs `pass` and returns its "changed" answer; fails the test when the
// pass errs, the answer disagrees with the printed text, or the result
// does not verify.
inline bool RunPass(HloPass& pass, HloModule* module, PassContext* ctx) {
  const std::string before = PrintHloModule(*module);
  StatusOr<bool> r = pass.Run(module, ctx);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return false;
  const std::string after = PrintHloModule(*module);
  EXPECT_EQ(*r, before != after) << after;
  Status v = VerifyModule(*module);
  EXPECT_TRUE(v.ok()) << v.ToString() << "\n" << after;
  return *r;
}

inline bool RunPass(HloPass& pass, HloModule* module) {
  PassContext ctx;
  return RunPass(pass, module, &ctx);
}

// Evaluates `before` and `after` on the same arguments and expects bitwise
// equal results (NaNs with any payload are equal; -0 and +0 are not).
inline void ExpectSameValues(const HloModule& before, const HloModule& after,
                             const std::vector<Literal>& args) {
  auto a = Evaluate(before, args);
  auto b = Evaluate(after, args);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ComparisonResult cmp = CompareLiterals(*b, *a, ComparisonOptions::Exact());
  EXPECT_TRUE(cmp.ok()) << cmp.ToText() << "\nafter:\n"
                        << PrintHloModule(after);
}

// ExpectSameValues on `seeds` random argument sets.
inline void ExpectEquivalent(const HloModule& before, const HloModule& after,
                             int seeds = 8) {
  for (int s = 0; s < seeds; ++s) {
    ExpectSameValues(before, after,
                     RandomArguments(*before.entry_computation(), 1000 + s));
  }
}

// The instruction named `name` anywhere in the module, or null.
inline HloInstruction* Find(const HloModule& m, const std::string& name) {
  for (HloComputation* c : m.computations()) {
    if (HloInstruction* i = c->GetInstructionWithName(name)) return i;
  }
  return nullptr;
}

inline HloInstruction* Root(const HloModule& m) {
  return m.entry_computation()->root_instruction();
}

}  // namespace trench::testing
