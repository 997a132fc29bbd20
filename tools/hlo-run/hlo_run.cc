#include "tools/hlo-run/hlo_run.h"

#include <optional>
#include <string>

#include "base/flags.h"
#include "compiler/driver/coverage.h"
#include "compiler/driver/run_request.h"

namespace trench {
namespace {

using hlo_run::Outcome;
using hlo_run::Request;

struct Args {
  bool serve = false, random = false, coverage_pcs = false;
  std::string module;
  uint64_t seed = 0;
  Request request;
};

void Declare(FlagParser* p, Args* a) {
  p->set_description("Compiles MODULE for the simulated TPU and runs it.");
  p->set_epilog(
      "--serve answers JSON-lines requests on stdin (see hlo_run.h).\n"
      "exit: 0 ok, 1 bad input, 2 usage, 3 compile error, 4 run crash,\n"
      "5 memory error, 6 timeout");
  p->Positional("MODULE.hlo", &a->module, "the module (one-shot runs)");
  p->Strings("input", "F.npy", &a->request.input_files,
             "one file per program input, in order");
  p->String("input-dir", "D", &a->request.input_dir,
            "inputs D/<i>.npy; with --mesh, device d's are D/<d>/<i>.npy");
  p->Bool("random-inputs", &a->random, "deterministic random inputs");
  p->Number("seed", "N", &a->seed, "seed for --random-inputs (default 0)");
  p->String("output-dir", "D", &a->request.output_dir,
            "where outputs, taps/ and report.json go");
  p->Bool("serve", &a->serve,
          "serve requests on stdin; the compile flags are the defaults");
  p->Bool("coverage-pcs", &a->coverage_pcs,
          "print the coverage build's PC table as JSON and exit");
  hloc::RegisterCompileFlags(p, &a->request.compile);
}

// The one-shot run's arguments; InvalidArgument naming what is wrong.
Status Check(const FlagParser& p, Args* a) {
  if (a->serve || a->coverage_pcs) return Status::Ok();
  if (a->module.empty()) return InvalidArgument("expected one MODULE");
  const int sources = !a->request.input_files.empty() + a->random +
                      !a->request.input_dir.empty();
  if (sources > 1) {
    return InvalidArgument(
        "--input, --input-dir and --random-inputs are exclusive");
  }
  if (p.Given("seed") && !a->random) {
    return InvalidArgument("--seed needs --random-inputs");
  }
  if (a->request.output_dir.empty()) {
    return InvalidArgument("missing --output-dir");
  }
  a->request.module_origin = a->module;
  if (a->random) a->request.seed = a->seed;
  return Status::Ok();
}

// A list flag given as "a,b" or ["a", "b"].
StatusOr<std::string> ListValue(const Json& v, const std::string& key) {
  if (v.is_string()) return v.string_value();
  if (!v.is_array())
    return InvalidArgument(key + ": expected a string or list");
  std::string joined;
  for (const Json& e : v.array()) {
    if (!e.is_string()) return InvalidArgument(key + ": expected strings");
    joined += (joined.empty() ? "" : ",") + e.string_value();
  }
  return joined;
}

// Fills `r` (starting from the server's defaults) from one request line.
Status ParseRequest(const Json& j, Request* r) {
  if (!j.is_object()) return InvalidArgument("request: expected an object");
  for (const auto& [key, v] : j.object()) {
    if (key == "id") continue;
    if (key == "module") {
      ASSIGN_OR_RETURN(std::string m, v.GetString());
      if (m.find('\n') != std::string::npos ||
          m.find("HloModule") != std::string::npos) {
        r->module_text = m;
        r->module_origin = "<request>";
      } else {
        ASSIGN_OR_RETURN(r->module_text, hloc::ReadFile(m));
        r->module_origin = m;
      }
    } else if (key == "inputs") {
      if (!v.is_array()) return InvalidArgument("inputs: expected a list");
      for (const Json& f : v.array()) {
        ASSIGN_OR_RETURN(std::string path, f.GetString());
        r->input_files.push_back(path);
      }
    } else if (key == "input_dir") {
      ASSIGN_OR_RETURN(r->input_dir, v.GetString());
    } else if (key == "seed") {
      ASSIGN_OR_RETURN(uint64_t s, v.GetUint64());
      r->seed = s;
    } else if (key == "output_dir") {
      ASSIGN_OR_RETURN(r->output_dir, v.GetString());
    } else {
      std::string flag = key;
      for (char& c : flag) c = c == '_' ? '-' : c;
      std::string value;
      if (v.is_integer()) {
        value = v.number_text();
      } else {
        ASSIGN_OR_RETURN(value, ListValue(v, key));
      }
      ASSIGN_OR_RETURN(bool known,
                       hloc::ApplyCompileFlag(flag, value, &r->compile));
      if (!known) return InvalidArgument("request: unknown key '" + key + "'");
    }
  }
  if (r->module_text.empty()) return InvalidArgument("request: missing module");
  if (int(r->seed.has_value()) + !r->input_files.empty() +
          !r->input_dir.empty() >
      1) {
    return InvalidArgument("request: inputs, input_dir and seed are exclusive");
  }
  if (r->output_dir.empty())
    return InvalidArgument("request: missing output_dir");
  return Status::Ok();
}

Json Answer(const Json* id, const Outcome& o) {
  Json a = Json::MakeObject();
  if (id != nullptr) a["id"] = *id;
  a["ok"] = o.exit_code == 0;
  a["status"] = o.status;
  a["exit_code"] = o.exit_code;
  a["message"] = o.message;
  a["report"] = o.report;
  if (coverage::Available()) {
    Json c = Json::MakeObject();
    c["size"] = static_cast<int64_t>(coverage::Size());
    c["hit"] = coverage::HitsHex();
    a["coverage"] = std::move(c);
  }
  return a;
}

// {"size": N, "pcs": [offset, ...]} (coverage.h PcOffsets; size 0 and no
// points in a build without the coverage flavour).
Json CoveragePcs() {
  Json j = Json::MakeObject();
  j["size"] = static_cast<int64_t>(coverage::Size());
  Json pcs = Json::MakeArray();
  for (uint64_t pc : coverage::PcOffsets()) {
    pcs.push_back(static_cast<int64_t>(pc));
  }
  j["pcs"] = std::move(pcs);
  return j;
}

int Serve(const Request& defaults, std::istream& in, std::ostream& out) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    StatusOr<Json> j = ParseJson(line);
    const Json* id = j.ok() ? j->Find("id") : nullptr;
    Request r = defaults;
    Status s = j.ok() ? ParseRequest(*j, &r) : j.status();
    coverage::Reset();  // Each answer covers its own request only.
    Outcome o =
        s.ok() ? hlo_run::Execute(r)
               : Outcome{hloc::kExitBadInput, "bad_input", s.message(), Json()};
    out << Answer(id, o).Dump() << "\n" << std::flush;
  }
  return 0;
}

}  // namespace

int RunHloRun(int argc, char** argv, std::istream& in, std::ostream& out,
              std::ostream& err) {
  Args a;
  FlagParser p("hlo-run",
               "MODULE.hlo (--input F.npy ... | --random-inputs [--seed N]) "
               "--output-dir D [flags]\n--serve [flags]");
  Declare(&p, &a);
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  if (Status s = Check(p, &a); !s.ok()) return p.UsageError(err, s.message());
  if (a.coverage_pcs) {
    out << CoveragePcs().Dump() << "\n";
    return 0;
  }
  if (a.serve) return Serve(a.request, in, out);
  Request r = a.request;
  StatusOr<std::string> text = hloc::ReadFile(r.module_origin);
  if (!text.ok()) {
    err << "hlo-run: bad_input: " << text.status().message() << "\n";
    return hloc::kExitBadInput;
  }
  r.module_text = std::move(text).value();
  Outcome o = hlo_run::Execute(r);
  if (o.exit_code != 0)
    err << "hlo-run: " << o.status << ": " << o.message << "\n";
  return o.exit_code;
}

}  // namespace trench
