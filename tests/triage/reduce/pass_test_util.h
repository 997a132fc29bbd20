// Helpers for the reduction pass tests (pass_*_test.cc): cases from HLO
// text with seeded random inputs, the checks every pass must pass, and a
// small greedy reducer (chunks of opportunities, recount after every
// success) driving one or more passes with a predicate.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/hlo_text_file.h"
#include "compiler/ir/random_inputs.h"
#include "oracle/evaluator.h"
#include "oracle/spmd.h"
#include "tests/traces_dir.h"
#include "triage/case/case_bundle.h"
#include "triage/reduce/reduction_pass.h"

namespace trench::hlo_reduce::testing {

// A case of `text`, printed as the passes print (so that text sizes
// compare), with RandomArguments(entry, seed) as inputs.
inline hlo_diff::Case CaseOf(const std::string& raw, uint64_t seed = 1) {
  auto module = ParseHloModule(raw);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  const std::string text = PrintHloModule(**module);
  std::vector<Literal> leaves;
  for (const Literal& arg :
       RandomArguments(*(*module)->entry_computation(), seed)) {
    for (const Literal* l : arg.Leaves()) {
      if (l->shape().IsArray()) leaves.push_back(*l);
    }
  }
  auto c = hlo_diff::MakeCase(text, std::move(leaves));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : hlo_diff::Case{};
}

// The pass named `name`.
inline std::unique_ptr<ReductionPass> PassNamed(const std::string& name) {
  auto passes = ReductionPassesNamed(name);
  EXPECT_TRUE(passes.ok()) << passes.status().ToString();
  return passes.ok() ? std::move((*passes)[0]) : nullptr;
}

inline bool Smaller(const CaseSize& a, const CaseSize& b) {
  return std::tie(a.instructions, a.elements, a.text_bytes) <
         std::tie(b.instructions, b.elements, b.text_bytes);
}

// pass.Apply with a braced list.
inline StatusOr<hlo_diff::Case> Apply(const ReductionPass& pass,
                                      const hlo_diff::Case& c,
                                      const std::vector<int64_t>& chosen) {
  return pass.Apply(c, chosen);
}

// Applies `chosen`, expects a valid candidate and returns it.
inline hlo_diff::Case ApplyValid(const ReductionPass& pass,
                                 const hlo_diff::Case& c,
                                 const std::vector<int64_t>& chosen) {
  auto out = pass.Apply(c, chosen);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return c;
  Status valid = ValidateCandidate(*out);
  EXPECT_TRUE(valid.ok()) << valid.ToString() << "\n" << out->module_text;
  return *out;
}

inline std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// The oracle's result of the case.
inline StatusOr<Literal> Run(const hlo_diff::Case& c) {
  ASSIGN_OR_RETURN(auto m, hlo_diff::ParseCaseModule(c.module_text, "case"));
  RETURN_IF_ERROR(hlo_diff::CheckInputs(*m, c.inputs));
  const std::vector<Literal> args = hlo_diff::ParameterArguments(*m, c.inputs);
  return Evaluate(*m, args);
}

// An SPMD case of `text` on `mesh`, device d's inputs
// RandomArguments(entry, seed + d).
inline hlo_diff::Case SpmdCaseOf(const std::string& text,
                                 const DeviceMesh& mesh, uint64_t seed) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return {};
  std::vector<std::vector<Literal>> lists;
  for (int64_t d = 0; d < mesh.size(); ++d) {
    lists.push_back(RandomArguments(*(*m)->entry_computation(), seed + d));
  }
  auto c = hlo_diff::MakeSpmdCase(PrintHloModule(**m), mesh, std::move(lists));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : hlo_diff::Case{};
}

// The SPMD oracle's result of an SPMD case, one value per device.
inline StatusOr<std::vector<Literal>> RunSpmd(const hlo_diff::Case& c) {
  ASSIGN_OR_RETURN(auto m, hlo_diff::ParseCaseModule(c.module_text, "case"));
  ASSIGN_OR_RETURN(auto args, hlo_diff::DeviceArguments(*m, c));
  SpmdOptions o;
  o.mesh = c.mesh;
  o.evaluator.threads = 1;
  return EvaluateSpmd(*m, args, o);
}

// Greedy reduction: for each pass in turn, chunks of its opportunities
// (sizes n, n/2, ..., 1) are tried; a candidate is accepted when it is
// valid, strictly smaller (instructions, elements, text bytes) and
// `interesting`; after an acceptance the pass recounts. Rounds repeat
// until nothing is accepted. Returns the result; `tests` counts the
// predicate calls.
inline hlo_diff::Case GreedyReduce(
    const std::vector<std::unique_ptr<ReductionPass>>& passes, hlo_diff::Case c,
    const std::function<bool(const hlo_diff::Case&)>& interesting,
    int64_t* tests = nullptr) {
  for (int round = 0; round < 30; ++round) {
    bool progress = false;
    for (const auto& pass : passes) {
      for (bool again = true; again;) {
        again = false;
        const int64_t n = pass->Count(c);
        for (int64_t k = n; k >= 1 && !again; k = k == 1 ? 0 : (k + 1) / 2) {
          for (int64_t lo = 0; lo < n && !again; lo += k) {
            std::vector<int64_t> chosen;
            for (int64_t i = lo; i < std::min(n, lo + k); ++i) {
              chosen.push_back(i);
            }
            auto cand = pass->Apply(c, chosen);
            if (!cand.ok() || !ValidateCandidate(*cand).ok()) continue;
            if (!Smaller(MeasureCase(*cand), MeasureCase(c))) continue;
            if (tests) ++*tests;
            if (!interesting(*cand)) continue;
            c = std::move(*cand);
            again = progress = true;
          }
        }
      }
    }
    if (!progress) break;
  }
  return c;
}

// Explores every case reachable from `c` by applying single opportunities
// of `pass` (depth first, up to `max_states` distinct cases) and returns
// the number of cases seen; a failure when a step leads back to a case on
// the current path (a cycle: the pass can undo its own changes) or when
// more than `max_states` cases are reachable.
inline int64_t ExpectAcyclic(const ReductionPass& pass, const hlo_diff::Case& c,
                             int64_t max_states) {
  std::unordered_map<std::string, bool> seen;  // sha -> on the current path
  bool failed = false;
  std::function<void(const hlo_diff::Case&, int)> visit =
      [&](const hlo_diff::Case& k, int depth) {
        const std::string sha = hlo_diff::CaseSha256(k);
        auto [it, fresh] = seen.emplace(sha, true);
        if (!fresh) {
          if (it->second && !failed) {
            ADD_FAILURE() << pass.name() << " cycles back (depth " << depth
                          << ") to\n"
                          << k.module_text;
            failed = true;
          }
          return;
        }
        if (static_cast<int64_t>(seen.size()) > max_states) {
          if (!failed) ADD_FAILURE() << "more than " << max_states << " cases";
          failed = true;
        }
        const int64_t n = failed ? 0 : pass.Count(k);
        for (int64_t i = 0; i < n && !failed; ++i) {
          auto next = pass.Apply(k, std::vector<int64_t>{i});
          if (next.ok() && ValidateCandidate(*next).ok()) {
            visit(*next, depth + 1);
          }
        }
        seen[sha] = false;
      };
  visit(c, 0);
  return static_cast<int64_t>(seen.size());
}

// True when the case's module has an instruction of opcode `op`.
inline bool HasOpcode(const hlo_diff::Case& c, const std::string& op) {
  auto m = ParseHloModule(c.module_text);
  if (!m.ok()) return false;
  for (const HloComputation* comp : (*m)->computations()) {
    for (const HloInstruction* i : comp->instructions()) {
      if (OpcodeName(i->opcode()) == op) return true;
    }
  }
  return false;
}

// The modules of a trace file under TRENCH_TRACES_DIR/xla/xla/ (corpus/traces).
inline std::vector<std::string> TraceModules(const std::string& rel) {
  std::ifstream in(std::string(TRENCH_TRACES_DIR) + "/xla/xla/" + rel);
  EXPECT_TRUE(in.good()) << rel;
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<std::string> out;
  for (const HloTextPiece& piece : SplitHloTextFile(ss.str())) {
    out.push_back(piece.text);
  }
  return out;
}

}  // namespace trench::hlo_reduce::testing
