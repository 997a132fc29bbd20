// The verdict record (DESIGN.md "Data flowing through", point 4): what
// hlo-diff says about a case (triage/case/verdict.h computes it; the
// statuses are there) and the coarse signature bugs are deduplicated by.
// JSON is only their form at the edge of a process (the tools' output,
// case.json), produced and read by Verdict::ToJson / FromJson and
// Signature::ToJson / FromJson (verdict_json.cc).
//
// Verdict JSON (members in this order):
//   {"status": S, "message": "...", "case": SHA256,
//    "compare": "contract"|"near"|"exact",
//    "outputs": [ComparisonResult outputs (max_abs_error, max_rel_error,
//                max_ulp_error, mismatches, first_mismatch, ...)] | null,
//    "oracle": {"undetermined"?: N,
//               "status": "ok"|"unsupported"|"invalid_input", "message",
//               "seconds"},
//    "target": TargetResult::ToJson() | null,
//    "structure_error"?: "...",
//    "error_maps"?: [ErrorMap JSON (error_map.h), one per mismatching
//                    output, contract mode only],
//    "signature": Signature JSON}
// A case that could not be read gets {"status": "invalid_input", "message",
// "signature"} only (InvalidInputVerdict).
//
// Signature JSON (coarse, before localization; used for dedup), members
// in this order:
//   mismatch classes (mismatch, nan_mismatch): {"status", "dtype" (of the
//     first bad output; null when the module has no output), "ops":
//     opcodes within 2 producer steps of the instruction producing that
//     output (itself, its operands, their operands; parameters and
//     constants left out; sorted, deduplicated)};
//   compile_crash / run_crash / timeout / memory_error: {"status",
//     "stage", "message" (NormalizeMessage), "pass" (last pass entered, or
//     null)};
//   others: {"status"}.
// Every signature also has "sig" (last): the first 16 hex digits of the
// SHA-256 of the signature's compact JSON without "sig" (SignatureHash).
// Stored bugs are deduplicated by it: the layout must not change.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "oracle/comparator.h"
#include "triage/case/error_map.h"
#include "triage/case/target_result.h"
#include "triage/case/verdict_status.h"

namespace trench::hlo_diff {

// How the verdict compares target and oracle outputs.
//   contract: the numerics contract (per-element allowed deviation);
//   near:     oracle/comparator.h's default tolerances;
//   exact:    bit-exact (NaNs equal to any NaN).
enum class CompareKind { kContract, kNear, kExact };
// "contract", "near", "exact".
const char* CompareKindName(CompareKind k);

// The coarse signature (see above). Which members count depends on the
// status's class; the others stay empty and are not written.
struct Signature {
  VerdictStatus status = VerdictStatus::kPass;
  // Mismatch classes: the first bad output's element type ("f32"; nullopt
  // when the module has no output) and the opcodes near its producer.
  std::optional<std::string> dtype;
  std::vector<std::string> ops;
  // Crash classes: the stage ("compile", "run"), the normalized message
  // and the last pass entered (nullopt: none).
  std::string stage;
  std::string message;
  std::optional<std::string> pass;
  // SignatureHash of the members above ("" until computed).
  std::string sig;

  // The signature JSON described above, "sig" last (as stored: "sig" is
  // not recomputed).
  Json ToJson() const;
  // Reads ToJson()'s form. InvalidArgument("signature.<member>: ...") for a
  // missing or ill-typed member of the status's class, an unknown status,
  // a member of another class, or an unknown member.
  static StatusOr<Signature> FromJson(const Json& j);
};

// The "sig" of `s`: the first 16 hex digits of the SHA-256 of s.ToJson()
// without "sig", compact.
std::string SignatureHash(const Signature& s);

// The oracle's part of a verdict.
struct OracleRun {
  std::string status = "ok";  // "ok" | "unsupported" | "invalid_input".
  std::string message;        // The oracle's error ("" when ok).
  double seconds = 0;
  // Elements whose allowance is unbounded (contract mode, oracle ok only).
  std::optional<int64_t> undetermined;
};

struct Verdict {
  VerdictStatus status = VerdictStatus::kPass;
  std::string message;
  // The case's content address (CaseSha256). Empty for a case that could
  // not be read: then only status, message and signature are meaningful
  // (and the JSON has no other member).
  std::string case_sha;
  CompareKind compare = CompareKind::kContract;
  // Per output leaf: the errors (max abs/rel/ulp, mismatch counts, first
  // mismatch); nullopt when the outputs were not compared.
  std::optional<std::vector<OutputComparison>> outputs;
  OracleRun oracle;
  // The target's run (outputs and stderr_text not kept); nullopt when the
  // target was not run.
  std::optional<TargetResult> target;
  // Why the outputs could not be compared leaf by leaf ("" none).
  std::string structure_error;
  // Where the mismatching outputs differ (contract mode; at most
  // kMaxErrorMaps, the first mismatching outputs; empty otherwise).
  std::vector<ErrorMap> error_maps;
  Signature signature;  // "sig" included.

  const char* status_name() const { return VerdictStatusName(status); }
  // The target's stage and last pass ("" when it did not run).
  std::string stage() const { return target ? target->stage : ""; }
  std::string last_pass() const { return target ? target->last_pass : ""; }

  // The verdict JSON described above.
  Json ToJson() const;
  // Reads ToJson()'s form. InvalidArgument("verdict.<member>: ...") for a
  // missing or ill-typed member or an unknown status (the signature's:
  // "verdict.signature.<member>: ...").
  static StatusOr<Verdict> FromJson(const Json& j);
};

}  // namespace trench::hlo_diff
