// Case bundles (DESIGN.md "Data flowing through", point 2): a directory
//
//   module.hlo        the program, HLO text
//   inputs/<i>.npy    one file per array leaf of the entry parameters, in
//                     flattened parameter order (token leaves take none);
//                     bf16 is stored as its bit patterns, '<u2'
//   inputs/<d>/<i>.npy  the same per device d of an SPMD case (a mesh of
//                     more than one device: the program runs on every
//                     device, each with its own inputs)
//   case.json         {"format": 1,
//                      "mesh"?: {"replicas": R, "partitions": P} (SPMD
//                               cases only; device d = r * P + p),
//                      "origin": {...free JSON: fuzz seed, trace, report...},
//                      "inputs": [{"file": "inputs/0.npy", "dtype": "bf16",
//                                  "shape": [2, 3], "npy_dtype": "<u2",
//                                  "device"?: d (SPMD: device-major),
//                                  "note"?: "bf16 bits ..."}...],
//                      "options": {"disable_passes": [..], "pass_limit": N|
//                                  null, "rewrite_limit": N|null, "taps":
//                                  "", "compare": "contract"|"near"|"exact"},
//                      "signature": null|{...},
//                      "verdict": null|Verdict JSON (verdict_record.h),
//                      ...other keys are kept as they are}
//
// The content address is the SHA-256 of the module text, the input .npy
// bytes, the mesh (SPMD cases only) and the canonical options (length-prefixed,
// see CaseSha256); origin, signature, verdict and other keys of case.json are
// mutable annotations and do not enter it. StoreCase keeps cases under
// <root>/cases/<sha>/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"
#include "triage/case/verdict_record.h"

namespace trench::hlo_diff {

// Compile flags for the target and the comparison mode.
struct CaseOptions {
  std::vector<std::string> disable_passes;
  std::optional<int64_t> pass_limit;
  std::optional<int64_t> rewrite_limit;
  std::string taps;  // "" (none), "all" or "a,b".
  CompareKind compare = CompareKind::kContract;

  // Canonical form: every key, in the order of the header comment.
  Json ToJson() const;
  // Reads the "options" object; absent keys keep their defaults. Errors:
  // InvalidArgument("options.<key>: ...") for unknown keys, wrong types,
  // negative limits, unknown compare modes.
  static StatusOr<CaseOptions> FromJson(const Json& j);
  // The hloc command-line flags ("--disable-passes=a,b", ...).
  std::vector<std::string> ToFlags() const;
};

struct Case {
  std::string module_text;
  // Array leaves of the entry parameters; for an SPMD case (mesh of more
  // than one device) device-major: device d's leaves are inputs[d * L,
  // (d + 1) * L), L the leaves of one device.
  std::vector<Literal> inputs;
  DeviceMesh mesh;  // 1 x 1: a single-device case.
  CaseOptions options;
  Json origin = Json::MakeObject();
  // The signature the case is filed under (null until known): its
  // verdict's Signature (hlo-diff --record), or, for a fuzz campaign's
  // case, the finding's signature: hlo-bisect's refined signature
  // (triage/localize/localization_report.h; the reducer takes its culprit
  // pass from it) or a refusal signature {"status", "message", "sig"}.
  // Those layouts differ, so this one stays JSON.
  Json signature;
  std::optional<Verdict> verdict;   // nullopt until known.
  Json extra = Json::MakeObject();  // Other top-level keys of case.json.
};

// Parses and verifies `text` (messages "<origin>:line:col: ..." from the
// parser, or the verifier's).
StatusOr<std::unique_ptr<HloModule>> ParseCaseModule(const std::string& text,
                                                     const std::string& origin);

// ParseCaseModule calls so far in this process (all threads). A debug hook:
// tests check that a tool run parses a case's module once, and that the
// libraries pass the parsed module along instead of parsing it again.
int64_t CaseModuleParseCount();

// The entry parameters' array leaf shapes, in flattened order.
std::vector<Shape> InputLeafShapes(const HloModule& module);

// The array leaves of per-parameter arguments (e.g. RandomArguments'
// result), in flattened order: the form Case::inputs takes. Tuple-shaped
// parameters give one input per array leaf; token leaves give none.
std::vector<Literal> ArgumentLeaves(const std::vector<Literal>& args);

// The inverse: one argument per entry parameter, tuple-shaped ones
// assembled from their leaves (token leaves become token literals).
// REQUIRES: CheckInputs(module, inputs) is ok.
std::vector<Literal> ParameterArguments(const HloModule& module,
                                        std::vector<Literal> inputs);

// A value of `shape` from array leaves leaves[next...] (moved out; `next`
// advances past them; token leaves become token literals). REQUIRES: enough
// leaves of the right shapes (missing ones become zeros).
Literal AssembleLeaves(const Shape& shape, std::vector<Literal>& leaves,
                       size_t& next);

// Checks that `inputs` match the entry parameter leaves (count, dtype,
// dims). InvalidArgument naming the first bad input.
Status CheckInputs(const HloModule& module, const std::vector<Literal>& inputs);

// An SPMD case's per-device inputs (CheckInputs per device, then its
// arguments: ParameterArguments of each device's leaves). InvalidArgument
// naming the device when they do not match. A single-device case gives
// one list.
StatusOr<std::vector<std::vector<Literal>>> DeviceArguments(
    const HloModule& module, const Case& c);

// Builds an SPMD case on `mesh` from per-device inputs (leaves, as
// MakeCase's); InvalidArgument when the mesh is not 1..4096 devices, the
// lists are not one per device, or a device's inputs do not match.
StatusOr<Case> MakeSpmdCase(std::string module_text, const DeviceMesh& mesh,
                            std::vector<std::vector<Literal>> device_inputs,
                            CaseOptions options = {},
                            Json origin = Json::MakeObject());

// Builds a case from a module and its inputs (checked as CheckInputs).
// With `module`, *module receives the parsed module.
StatusOr<Case> MakeCase(std::string module_text, std::vector<Literal> inputs,
                        CaseOptions options = {},
                        Json origin = Json::MakeObject(),
                        std::unique_ptr<HloModule>* module = nullptr);

// Reads a case directory. Errors (InvalidArgument/IoError/NotFound) name
// the file and the problem: "DIR/case.json:3:7: expected ','",
// "DIR/case.json: inputs[1].shape: expected an array of integers",
// "DIR/module.hlo:4:12: ...", "DIR/inputs/1.npy: npy: truncated data",
// "DIR/inputs/0.npy: f32[3] does not match case.json's f32[2]",
// "DIR/case.json: verdict.status: unknown verdict status 'x' (...)",
// "DIR/case.json: verdict.signature.ops: expected an array of strings",
// "DIR: the module takes 2 input arrays, case.json lists 1",
// "DIR/case.json: mesh.partitions: expected an integer in 1..4096". Input file
// names must be relative paths inside DIR. Never crashes. With `module`,
// *module receives the parsed module (so that callers need not parse the
// module text again).
StatusOr<Case> ReadCase(const std::string& dir,
                        std::unique_ptr<HloModule>* module = nullptr);

// The content address: SHA-256 (hex) over "trench-case-1", the module
// text, each input's .npy bytes and options.ToJson().Dump(), each
// length-prefixed.
std::string CaseSha256(const Case& c);

// case.json's document for `c`.
Json CaseJson(const Case& c);

// Writes `c` to `dir` atomically: everything goes to a fresh sibling
// temporary directory, which is then renamed to `dir`. Errors:
// FailedPrecondition when `dir` already exists; IoError otherwise.
Status WriteCase(const std::string& dir, const Case& c);

// Replaces DIR/case.json with CaseJson(c) atomically (temp file + rename),
// e.g. to record a verdict. IoError on failure.
Status UpdateCaseJson(const std::string& dir, const Case& c);

// Stores `c` under <root>/cases/<CaseSha256(c)>/ and returns that path.
// Idempotent: an existing directory of that address is left as it is.
StatusOr<std::string> StoreCase(const std::string& root, const Case& c);

}  // namespace trench::hlo_diff
