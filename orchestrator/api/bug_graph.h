// A module as a Graphviz graph (the bug page's picture): DOT text with one
// node per instruction of the entry computation, each fusion a cluster
// holding its fused computation's instructions, operand edges, and the
// first diverging instruction filled red (#e74c3c) with its fusion
// outlined in red. Labels ("name\nopcode shape") come from strangers: they
// are cut to 80 bytes and escaped for DOT quoted strings (backslashes,
// quotes; controls become spaces), so no escape sequence of dot's (\N,
// \G, \l ...) and no markup reaches it; dot escapes them again for SVG.
//
// RenderSvg runs dot with a timeout and a cap on its output: in the sandbox
// when given one (the daemon always does: a fresh directory under its
// work_dir holds the DOT file, the SVG comes back on stdout; dot is a
// parser of text that came from strangers), else as a plain child process
// (base/subprocess.h: no shell, argv only) for tools and tests.
//
// Errors: kInvalidArgument when the module does not parse (the parser's
// line:column); kResourceExhausted for a module of more than `max_nodes`
// instructions or an SVG over the cap; kUnimplemented naming `dot`
// when it cannot be found or run (the API answers 503); kInternal when
// dot fails (with its stderr's last line).
#pragma once

#include <cstdint>
#include <string>

#include "base/json.h"
#include "base/status.h"

namespace trench::sandbox {
struct Options;
}  // namespace trench::sandbox

namespace trench::orchestrator {

struct GraphHighlight {
  std::string instruction;        // The entry's instruction ("" none).
  std::string fusion;             // Its fusion, when in one ("" none).
  std::string fused_instruction;  // The op inside the fusion ("" none).
  // The op inside a computation the instruction calls (sort comparator,
  // reduce body, ...: findings.called_instruction; "" none).
  std::string called_instruction;
};

// What a bug's localization (details.localization.findings) marks: the
// culprit instruction, else the instruction its rewrite decision acted on
// (findings.rewrite.instruction: a pass localized to one rewrite whose
// graph level found no single diverging instruction), and the fusion and
// fused op, and the op inside a called computation. Fields that are absent
// or not strings are "".
GraphHighlight LocalizedHighlight(const Json& bug_details);

// The DOT text of module `hlo_text`.
StatusOr<std::string> ModuleDot(const std::string& hlo_text,
                                const GraphHighlight& highlight,
                                int max_nodes = 2000);

// A DOT quoted string's contents for `text` (without the quotes).
std::string DotEscape(const std::string& text, size_t max_bytes = 80);

// `dot_program` (a path, or a name looked up in PATH) -Tsvg on `dot`.
// With `jail`: in the sandbox with those options (argv, work_dir and the
// time and output limits are set here; jail->work_dir is the directory
// each render makes its own below, created mode 0711 when missing).
StatusOr<std::string> RenderSvg(const std::string& dot_program,
                                const std::string& dot,
                                double timeout_seconds = 20,
                                size_t max_bytes = 16 << 20,
                                const sandbox::Options* jail = nullptr);

}  // namespace trench::orchestrator
