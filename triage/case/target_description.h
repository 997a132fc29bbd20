// What a target says about itself (DESIGN.md "Target contract": the target
// describes itself): its passes and emitters and the source files that
// implement each, and the ops it compiles. trench reads it to aim campaigns
// at what a commit changed, with no knowledge of the target's source
// layout.
//
// The document is JSON, either `hloc --capabilities` (whose other keys are
// ignored here) or a manifest `trench-target.json` at the root of the
// target's repository (kManifestPath):
//
//   {
//     "passes":   [{"name": "cse", "sources": ["compiler/passes/cse.*"]}],
//     "emitters": [{"name": "EmitReduce", "ops": ["reduce"],
//                   "sources": ["compiler/codegen/emit_reduce.cc",
//                               "compiler/codegen/stream_reduce.*"]}],
//     "ops":      ["abs", "add", ...],
//     "coverage": {"cmake_flags": ["-DTRENCH_TARGET_COVERAGE=ON", ...]},
//     "large_arrays": [{"from_elements": 65536,
//                       "sources": ["compiler/codegen/streaming.*"]},
//                      {"from_elements": 16384,
//                       "frontend_attributes": {"trench_vmem_bytes": "65536"},
//                       "sources": ["compiler/codegen/stream_*"]}]
//   }
//
// "coverage" (optional): the target has a coverage build flavour
// (DESIGN.md "Target contract"; line_reach.h measures changed-line reach
// on it); "cmake_flags" are what its CMake build adds to build it (at most
// kMaxCoverageFlags, each IsSafeCMakeDefine of base/cmake_define.h).
// Other keys of "coverage" are ignored.
//
// "large_arrays" (optional): groups of code that runs only for large
// arrays: the code in a group's "sources" runs only for arrays of at least
// its "from_elements" elements (1 .. kMaxLargeElements), such as loops that
// stream arrays larger than on-chip memory. A campaign aimed at a change
// to those files makes more of its programs that large
// (ChangedArea::large in the daemon, hlo-fuzz --large-elements). A group's
// "frontend_attributes" (optional) are module attributes under which
// "from_elements" holds (a target that can compile as if on a smaller
// chip); large programs carry them in their HloModule header. Names and
// values are IsFrontendAttribute's. At most kMaxLargeGroups groups.
//
// "slice" (optional; absent: one chip, no collectives): {"chips": N
// (1..kMaxSliceChips), "topology": text, "collectives": [op, ...]}, the
// machine the target runs SPMD programs on and the collectives (and
// partition-id / replica-id) it compiles; an SPMD case runs on the target
// only when its mesh fits and its device ops are listed.
//
// "name": a pass's name as --disable-passes and the compile report spell
// it (letters, digits, '_', '.', '-'; at most 128 bytes); an emitter's name
// is free text people read (no control characters). "ops": HLO opcode
// names (the same characters as pass names). Globs hold no control
// characters and take at most 1 KiB each. The document is at most
// kMaxDescriptionBytes.
// "sources": globs relative to the repository root, '/'-separated: `*`,
// `?` and `[...]` match within one path component (fnmatch(3) with
// FNM_PATHNAME), and a final "/**" matches everything below a directory.
// Every key is optional; unknown keys are ignored. A document describes
// the target when it has an "emitters" array or a pass with "sources"; then
// every pass and emitter must have non-empty "sources" (a target that
// lists a pass without its files would hide changes to it). A document
// that describes nothing (an older hloc's capabilities) is not an error:
// the target is then fuzzed without focus.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace trench::hlo_diff {

inline constexpr char kManifestPath[] = "trench-target.json";
// The largest description read (a manifest, hloc's output): a target's own
// list of passes and files is kilobytes; a larger one is refused as
// malformed rather than loaded.
inline constexpr uint64_t kMaxDescriptionBytes = 1 << 20;
inline constexpr size_t kMaxCoverageFlags = 16;
inline constexpr int64_t kMaxLargeElements = int64_t{1} << 26;
inline constexpr size_t kMaxLargeGroups = 16;
inline constexpr size_t kMaxFrontendAttributes = 8;
inline constexpr int64_t kMaxSliceChips = 4096;  // As a mesh's devices.

using FrontendAttributes = std::vector<std::pair<std::string, std::string>>;
// A module attribute trench may write into HLO text: the name of letters,
// digits, '_', '.', '-' (1 to 64 bytes), the value of the same characters
// (0 to 64 bytes), so nothing in it can end the quoted value.
bool IsFrontendAttribute(std::string_view name, std::string_view value);
// "NAME=VALUE" (a flag's or a tool argument's form) as an attribute;
// InvalidArgument quoting the text when it is not IsFrontendAttribute's.
StatusOr<std::pair<std::string, std::string>> ParseFrontendAttribute(
    std::string_view text);

struct TargetDescription {
  struct Unit {
    std::string name;
    std::vector<std::string> ops;      // Emitters only.
    std::vector<std::string> sources;  // Globs.
  };
  std::vector<Unit> passes;
  std::vector<Unit> emitters;
  std::vector<std::string> ops;  // What it compiles ("ops"; may be empty).
  bool offers_coverage = false;  // A "coverage" entry.
  std::vector<std::string> coverage_cmake_flags;
  // "large_arrays" (empty when absent).
  struct LargeArrays {
    int64_t from_elements = 0;
    FrontendAttributes frontend_attributes;  // In the document's order.
    std::vector<std::string> sources;        // Globs.
  };
  std::vector<LargeArrays> large_arrays;
  // "slice" (one chip and no collectives when absent).
  struct Slice {
    int64_t chips = 1;
    std::string topology;
    std::vector<std::string> collectives;
  };
  Slice slice;

  // Whether it names the files of any pass or emitter.
  bool described() const { return !passes.empty() || !emitters.empty(); }
  // The ops it compiles: "ops", then the emitters' ops not listed there.
  std::vector<std::string> AllOps() const;
  // Appends to *passes / *ops (each name once, order kept) the passes and
  // the emitters' ops whose sources match `path` (repository-relative).
  void NamesOfPath(std::string_view path, std::vector<std::string>* passes,
                   std::vector<std::string>* ops) const;
  // The "large_arrays" group whose source globs match `path` (of the
  // largest from_elements when several do); from_elements 0 when none.
  LargeArrays LargeArraysOfPath(std::string_view path) const;
  // The source globs of a localized culprit: pass `culprit`'s, or for
  // "codegen" (the back end) every emitter's; empty when the description
  // names no such unit.
  std::vector<std::string> SourcesOf(std::string_view culprit) const;
  // The document form above (ParseTargetDescription reads it back).
  Json ToJson() const;
};

// Reads a description from `doc` (see the format above). `origin` names
// the document in messages ("hloc --capabilities", "trench-target.json at
// <sha>"). kInvalidArgument "<origin>: <where>: <what>" for a malformed
// one, e.g. "trench-target.json at 1a2b: passes[2].sources: expected an
// array of globs".
StatusOr<TargetDescription> ParseTargetDescription(const Json& doc,
                                                   const std::string& origin);
// The same from JSON text; kInvalidArgument "<origin>: <parse error>" when
// the text is not JSON or is longer than kMaxDescriptionBytes.
StatusOr<TargetDescription> ParseTargetDescriptionText(
    std::string_view text, const std::string& origin);

// Whether repository-relative `path` matches source glob `glob` (the
// syntax above).
bool SourceGlobMatches(std::string_view glob, std::string_view path);

}  // namespace trench::hlo_diff
