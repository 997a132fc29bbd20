#include "tools/hlo-run/hlo_run.h"

#include <charconv>
#include <string>
#include <vector>

#include "compiler/driver/run_request.h"

namespace trench {
namespace {

using hlo_run::Outcome;
using hlo_run::Request;

const char* Usage() {
  return "usage: hlo-run MODULE.hlo (--input F.npy ... | --random-inputs "
         "[--seed N]) --output-dir D [flags]\n"
         "       hlo-run --serve [flags]\n"
         "       hlo-run --help\n"
         "Compiles MODULE for the simulated TPU and runs it.\n"
         "flags:\n";
}

struct Args {
  bool help = false, serve = false, random = false, seed_given = false;
  uint64_t seed = 0;
  Request request;
};

StatusOr<uint64_t> ParseSeed(const std::string& v) {
  uint64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || v.empty()) {
    return InvalidArgument("--seed: expected a non-negative integer, got '" +
                           v + "'");
  }
  return n;
}

StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      a.help = true;
    } else if (arg == "--serve") {
      a.serve = true;
    } else if (arg == "--random-inputs") {
      a.random = true;
    } else if (arg.rfind("--", 0) == 0) {
      std::string name = arg.substr(2), value;
      if (size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return InvalidArgument(arg + ": missing value");
      }
      if (name == "input") {
        a.request.input_files.push_back(value);
      } else if (name == "seed") {
        ASSIGN_OR_RETURN(a.seed, ParseSeed(value));
        a.seed_given = true;
      } else if (name == "output-dir") {
        a.request.output_dir = value;
      } else {
        ASSIGN_OR_RETURN(bool known, hloc::ApplyCompileFlag(
                                         name, value, &a.request.compile));
        if (!known) return InvalidArgument("unknown flag " + arg);
      }
    } else {
      positional.push_back(arg);
    }
  }
  if (a.help || a.serve) return a;
  if (positional.size() != 1) return InvalidArgument("expected one MODULE");
  if (a.random && !a.request.input_files.empty()) {
    return InvalidArgument("--input and --random-inputs are exclusive");
  }
  if (a.seed_given && !a.random) {
    return InvalidArgument("--seed needs --random-inputs");
  }
  if (a.request.output_dir.empty())
    return InvalidArgument("missing --output-dir");
  a.request.module_origin = positional[0];
  if (a.random) a.request.seed = a.seed;
  return a;
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
  if (r->seed && !r->input_files.empty()) {
    return InvalidArgument("request: inputs and seed are exclusive");
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
  return a;
}

int Serve(const Request& defaults, std::istream& in, std::ostream& out) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    StatusOr<Json> j = ParseJson(line);
    const Json* id = j.ok() ? j->Find("id") : nullptr;
    Request r = defaults;
    Status s = j.ok() ? ParseRequest(*j, &r) : j.status();
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
  StatusOr<Args> args = Parse(argc, argv);
  if (!args.ok()) {
    err << "hlo-run: " << args.status().message() << "\n"
        << Usage() << hloc::CompileFlagsUsage();
    return hloc::kExitUsage;
  }
  if (args->help) {
    out << Usage() << hloc::CompileFlagsUsage();
    return 0;
  }
  if (args->serve) return Serve(args->request, in, out);
  Request r = args->request;
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
