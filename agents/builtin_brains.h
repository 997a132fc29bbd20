// The built-in brains' parts (agents/brain.h has the contract and the
// task / claim JSON of each role): one factory per role, the task-field
// readers they share, and the reproducer's HLO finder. Each brain is a
// deterministic policy over the ToolBox; "could not do it" is a claim with
// a `reason`, and a tool's failure (ToolResult::ok == false) is never an
// error Status.
//
// Optional task fields beyond brain.h's (additive): reproducer `seed`
// (inputs of a case written from a report; runs default 5, clamped to
// 1..20), `target_ops` (the ops the target compiles, from its description
// of itself: the words of a report without HLO are matched against them;
// default: every HLO opcode); minimizer `min_gain_percent` (default 10);
// stress_test_author `seed` (default from the bug id; seconds default 60);
// patch_drafter `max_tries` (try_patch calls, default 16), `seconds` (their
// reported time, 0 = no limit), `exhaustive` (run every strategy, not only
// until one passes).
//
// Claims carry a few fields beyond brain.h's (additive): `outcome`
// (reproducer: reproduced | flaky | not_reproducible | no_case | error),
// `reason`, `notes` (what was skipped and why) and per-role details
// (reproducer `statuses`; minimizer `rounds`, `verified`, `status`;
// stress_test_author `programs`, `rounds`; patch_drafter per candidate
// `changed_lines`, `rationale`, `detail`, and `tries`, `pass`).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/brain.h"

namespace trench::agents {

std::unique_ptr<Brain> MakeBuiltinStressAuthor();
std::unique_ptr<Brain> MakeBuiltinReproducer();
std::unique_ptr<Brain> MakeBuiltinMinimizer();
std::unique_ptr<Brain> MakeBuiltinDrafter();

// Task fields. Absent or null fields give `def` / nullopt; a field of the
// wrong type is kInvalidArgument "task: <key>: expected <type>".
StatusOr<std::optional<std::string>> TaskString(const Json& task,
                                                std::string_view key);
StatusOr<int64_t> TaskInt(const Json& task, std::string_view key, int64_t def);
StatusOr<std::vector<std::string>> TaskStrings(const Json& area,
                                               std::string_view key);
// kInvalidArgument "task: expected a JSON object" otherwise.
Status CheckTaskObject(const Json& task);

// A tool output's field, or a default when absent or of another type.
std::string OutString(const Json& out, std::string_view key,
                      const std::string& def = "");
int64_t OutInt(const Json& out, std::string_view key, int64_t def = 0);

// The HLO modules quoted in a free-text report, best first: the text of
// each ``` fenced block that holds "HloModule" (from that line on), else
// each run of lines from a line starting with "HloModule " to the line that
// closes its ENTRY computation (or the end of the text). Duplicates are
// left out; the text is data and is never interpreted otherwise.
std::vector<std::string> HloBlocksInText(std::string_view text);
// The HLO opcodes a report describes in words, in order of first mention,
// at most 16 (the fuzz tool's limit): each word (letters, digits, '-' and '_'
// as '-', lower-cased) that is one of `known_ops` (the ops the target
// compiles, from its description; when empty, every HLO opcode) or a
// common alias of an opcode
// ("matmul", "gemm", "einsum" -> dot; "conv" -> convolution; "reduction", "sum"
// -> reduce; "softmax" -> exponential, reduce, divide). Opcode names that are
// ordinary English or name no computation ("and", "or", "not", "map",
// "copy", "call", "parameter", "constant", "tuple", "domain") are left
// out. For a report without HLO: the area a focused campaign may reproduce
// it in.
std::vector<std::string> OpsNamedInText(
    std::string_view text, const std::vector<std::string>& known_ops = {});

}  // namespace trench::agents
