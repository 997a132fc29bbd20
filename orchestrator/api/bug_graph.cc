// Module graphs through Graphviz (bug_graph.h).
#include "orchestrator/api/bug_graph.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "base/scoped_temp_dir.h"
#include "base/subprocess.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/opcode.h"
#include "sandbox/sandbox.h"

namespace trench::orchestrator {
namespace {

constexpr char kRed[] = "#e74c3c";

std::string Label(const HloInstruction& i) {
  return DotEscape(i.name()) + "\\n" +
         DotEscape(std::string(OpcodeName(i.opcode())) + " " +
                   i.shape().ToString(false));
}

// Writes the nodes of `c` (and, for fusions, their clusters) and the
// operand edges; node ids are "n<k>" in visiting order.
class DotWriter {
 public:
  DotWriter(const GraphHighlight& h, int max_nodes)
      : h_(h), max_nodes_(max_nodes) {}

  Status Computation(const HloComputation& c, bool fused, std::string* out) {
    const bool fusion_hit = fused && c.fusion_instruction() != nullptr &&
                            !h_.fusion.empty() &&
                            c.fusion_instruction()->name() == h_.fusion;
    for (const HloInstruction* i : c.instructions()) {
      if (++nodes_ > max_nodes_) {
        return ResourceExhausted("the module has more than " +
                                 std::to_string(max_nodes_) +
                                 " instructions to draw");
      }
      const std::string id = "n" + std::to_string(nodes_);
      ids_[i] = id;
      if (i->opcode() == HloOpcode::kFusion &&
          !i->called_computations().empty()) {
        const std::string& target =
            h_.fusion.empty() ? h_.instruction : h_.fusion;
        const bool outlined = !target.empty() && i->name() == target;
        *out += "subgraph cluster_" + id + " {\nlabel=\"" + Label(*i) +
                "\";\nstyle=rounded;\n";
        if (outlined) {
          *out += std::string("color=\"") + kRed + "\";\npenwidth=3;\n";
        }
        // The fusion's own box: its operands' edges end there.
        Node(id, *i, outlined && h_.fused_instruction.empty(), true, out);
        RETURN_IF_ERROR(Computation(*i->fused_computation(), true, out));
        *out += "}\n";
      } else {
        const bool red = fused ? fusion_hit && i->name() == h_.fused_instruction
                               : i->name() == h_.instruction;
        Node(id, *i, red, false, out);
      }
    }
    for (const HloInstruction* i : c.instructions()) {
      for (const HloInstruction* o : i->operands()) {
        auto from = ids_.find(o);
        if (from != ids_.end()) *out += from->second + " -> " + ids_[i] + ";\n";
      }
    }
    return Status::Ok();
  }

 private:
  static void Node(const std::string& id, const HloInstruction& i, bool red,
                   bool dashed, std::string* out) {
    *out += id + " [label=\"" + Label(i) + "\"";
    if (red) {
      *out += std::string(", style=filled, fillcolor=\"") + kRed +
              "\", fontcolor=white";
    } else if (dashed) {
      *out += ", style=dashed";
    }
    *out += "];\n";
  }

  const GraphHighlight& h_;
  const int max_nodes_;
  int nodes_ = 0;
  std::map<const HloInstruction*, std::string> ids_;
};

}  // namespace

std::string DotEscape(const std::string& text, size_t max_bytes) {
  std::string cut =
      text.size() > max_bytes ? text.substr(0, max_bytes) + "..." : text;
  std::string out;
  for (char ch : cut) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == '"') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

StatusOr<std::string> ModuleDot(const std::string& hlo_text,
                                const GraphHighlight& highlight,
                                int max_nodes) {
  StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(hlo_text);
  if (!module.ok()) {
    return InvalidArgument("the module does not parse: " +
                           module.status().message());
  }
  std::string out =
      "digraph module {\nrankdir=TB;\nnode [shape=box, fontname=\"monospace\", "
      "fontsize=10];\nlabel=\"" +
      DotEscape((*module)->name()) + "\";\n";
  DotWriter writer(highlight, max_nodes);
  RETURN_IF_ERROR(
      writer.Computation(*(*module)->entry_computation(), false, &out));
  out += "}\n";
  return out;
}

namespace {

// What dot's run says, as RenderSvg's result.
StatusOr<std::string> DotResult(const std::string& program, bool exited,
                                int exit_code, bool timed_out,
                                const std::string& err_last_line,
                                std::string out, double timeout_seconds,
                                size_t max_bytes) {
  if (timed_out) {
    return ResourceExhausted("dot did not finish in " +
                             std::to_string(timeout_seconds) + " s");
  }
  if (exited && exit_code == 127 && out.empty()) {
    return Unimplemented("Graphviz `dot` ('" + program +
                         "') cannot be executed: " + err_last_line);
  }
  if (!exited || exit_code != 0) {
    return Internal(
        "dot failed (" +
        (exited ? "exit " + std::to_string(exit_code) : std::string("killed")) +
        "): " + err_last_line);
  }
  if (out.size() > max_bytes) {
    return ResourceExhausted("the graph's SVG is larger than " +
                             std::to_string(max_bytes) + " bytes");
  }
  return out;
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of("\n");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end + 1 - start);
}

Status WriteDot(const std::string& path, const std::string& dot) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << dot;
  if (!f.flush()) return IoError("cannot write " + path);
  return Status::Ok();
}

// dot in the sandbox: a fresh directory under jail.work_dir holds the DOT
// file, and the SVG comes back on stdout.
StatusOr<std::string> RenderInSandbox(const std::string& program,
                                      const std::string& dot,
                                      const sandbox::Options& jail,
                                      double timeout_seconds,
                                      size_t max_bytes) {
  ::mkdir(jail.work_dir.c_str(), 0711);
  ::chmod(jail.work_dir.c_str(), 0711);  // Runs reach their own dirs only.
  ASSIGN_OR_RETURN(ScopedTempDir scratch,
                   ScopedTempDir::Make(jail.work_dir, "graph", 0700));
  const std::string& dir = scratch.path();
  RETURN_IF_ERROR(WriteDot(dir + "/graph.dot", dot));
  sandbox::Options o = jail;
  o.argv = {program, "-Tsvg", "graph.dot"};
  o.work_dir = dir;
  o.limits.wall_seconds = timeout_seconds;
  o.limits.cpu_seconds = static_cast<uint64_t>(timeout_seconds) + 1;
  o.limits.stdout_bytes = max_bytes + 1;
  o.limits.stderr_bytes = 64 << 10;
  // The sandbox's /tmp is its own: a dot there has its folder bound in.
  if (program.rfind("/tmp/", 0) == 0) {
    o.read_only_paths.push_back(
        std::filesystem::path(program).parent_path().string());
  }
  StatusOr<sandbox::Result> r = sandbox::Run(o);
  if (!r.ok() && r.status().code() == StatusCode::kNotFound) {
    return Unimplemented("Graphviz `dot` ('" + program +
                         "') cannot be started: " + r.status().message());
  }
  if (!r.ok()) return r.status();
  return DotResult(program, r->exited, r->exit_code, r->timed_out,
                   LastLine(r->stderr_data), std::move(r->stdout_data),
                   timeout_seconds, max_bytes);
}

}  // namespace

StatusOr<std::string> RenderSvg(const std::string& dot_program,
                                const std::string& dot, double timeout_seconds,
                                size_t max_bytes,
                                const sandbox::Options* jail) {
  const std::string program = hlo_diff::FindProgram(dot_program);
  if (program.empty()) {
    return Unimplemented("Graphviz `dot` ('" + dot_program +
                         "') is not installed: the graph needs it (Debian "
                         "package graphviz)");
  }
  if (jail != nullptr) {
    return RenderInSandbox(program, dot, *jail, timeout_seconds, max_bytes);
  }
  char path[] = "/tmp/trench-graph.XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return IoError("cannot create a temporary file for dot");
  ::close(fd);
  if (Status s = WriteDot(path, dot); !s.ok()) {
    std::filesystem::remove(path);
    return s;
  }
  hlo_diff::ProcessSpec spec;
  spec.argv = {program, "-Tsvg", path};
  spec.timeout_seconds = timeout_seconds;
  spec.capture_bytes = max_bytes + 1;
  StatusOr<hlo_diff::ProcessResult> r = hlo_diff::RunProcess(spec);
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (!r.ok()) return r.status();
  return DotResult(program, r->exit_code >= 0, r->exit_code, r->timed_out,
                   r->err_last_line, std::move(r->out), timeout_seconds,
                   max_bytes);
}

GraphHighlight LocalizedHighlight(const Json& bug_details) {
  const Json* l = bug_details.Find("localization");
  const Json* f = l ? l->Find("findings") : nullptr;
  auto text = [](const Json* o, const char* key) {
    const Json* v = o ? o->Find(key) : nullptr;
    return v && v->is_string() ? v->string_value() : std::string();
  };
  GraphHighlight h{text(f, "instruction"), text(f, "fusion"),
                   text(f, "fused_instruction"), text(f, "called_instruction")};
  if (h.instruction.empty()) {
    h.instruction = text(f ? f->Find("rewrite") : nullptr, "instruction");
  }
  return h;
}

}  // namespace trench::orchestrator
