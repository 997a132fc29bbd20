#include "tools/hlo-eval/hlo_eval_flags.h"

#include <charconv>
#include <string_view>

namespace trench::hlo_eval {
namespace {

template <typename T>
StatusOr<T> ParseNumber(std::string_view flag, std::string_view v) {
  T out{};
  const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size()) {
    return InvalidArgument(std::string(flag) +
                           ": expected a non-negative "
                           "integer, got '" +
                           std::string(v) + "'");
  }
  return out;
}

}  // namespace

const char* Usage() {
  return "usage: hlo-eval MODULE.hlo (--input F.npy ... | --random-inputs "
         "[--seed N])\n"
         "                --output-dir D [--threads N]\n"
         "\n"
         "Evaluates MODULE with the reference evaluator and writes the result\n"
         "leaves (flattened tuple order) to D/0.npy, D/1.npy, ... with a\n"
         "manifest D/outputs.json (bf16 is stored as <u2 bits).\n"
         "\n"
         "  --input F.npy      one file per array leaf of the entry "
         "parameters,\n"
         "                     in order (repeat the flag)\n"
         "  --random-inputs    deterministic random inputs, also written to\n"
         "                     D/inputs/ so the run can be repeated\n"
         "  --seed N           seed for --random-inputs (default 0)\n"
         "  --output-dir D     where results go (created if missing)\n"
         "  --threads N        evaluator threads (default: all cores)\n"
         "  --help             this text\n"
         "\n"
         "exit: 0 ok, 1 bad input, 2 usage, 3 evaluation error\n";
}

StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags f;
  bool have_seed = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.substr(0, 2) != "--" || arg == "--") {
      if (!f.module_path.empty()) {
        return InvalidArgument("more than one MODULE: '" + f.module_path +
                               "' and '" + std::string(arg) + "'");
      }
      f.module_path = std::string(arg);
      continue;
    }
    std::string_view name = arg, value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (name == "--help") {
      f.help = true;
      continue;
    }
    if (name == "--random-inputs") {
      if (has_value) return InvalidArgument("--random-inputs takes no value");
      f.random_inputs = true;
      continue;
    }
    if (name != "--input" && name != "--seed" && name != "--output-dir" &&
        name != "--threads") {
      return InvalidArgument("unknown flag " + std::string(name));
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        return InvalidArgument(std::string(name) + " needs a value");
      }
      value = argv[++i];
    }
    if (name == "--input") {
      f.inputs.emplace_back(value);
    } else if (name == "--output-dir") {
      f.output_dir = std::string(value);
    } else if (name == "--seed") {
      ASSIGN_OR_RETURN(f.seed, ParseNumber<uint64_t>(name, value));
      have_seed = true;
    } else {
      ASSIGN_OR_RETURN(f.threads, ParseNumber<int>(name, value));
      if (f.threads < 0) return InvalidArgument("--threads: must be >= 0");
    }
  }
  if (f.help) return f;
  if (f.module_path.empty()) return InvalidArgument("missing MODULE");
  if (f.output_dir.empty()) return InvalidArgument("missing --output-dir");
  if (f.random_inputs && !f.inputs.empty()) {
    return InvalidArgument("--input and --random-inputs exclude each other");
  }
  if (have_seed && !f.random_inputs) {
    return InvalidArgument("--seed needs --random-inputs");
  }
  return f;
}

}  // namespace trench::hlo_eval
