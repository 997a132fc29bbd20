#include "triage/case/target_flags.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace trench::hlo_diff {

StatusOr<double> ParseSeconds(std::string_view name, const std::string& value) {
  char* end = nullptr;
  const double s = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(s > 0)) {
    return InvalidArgument("--" + std::string(name) +
                           " expects seconds > 0, got '" + value + "'");
  }
  return s;
}

FlagParser::Setter SecondsFlag(std::string name, double* out) {
  return [name = std::move(name), out](const std::string& v) -> Status {
    ASSIGN_OR_RETURN(*out, ParseSeconds(name, v));
    return Status::Ok();
  };
}

std::string ExecutableDir() {
  std::error_code ec;
  std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

StatusOr<bool> TargetFlags::Apply(std::string_view name,
                                  const std::string& value) {
  if (name == "bin-dir") {
    bin_dir = value;
  } else if (name == "hloc") {
    hloc = value;
  } else if (name == "tpusim") {
    tpusim = value;
  } else if (name == "hlo-run") {
    hlo_run = value;
  } else if (name == "target") {
    if (value == "serve") {
      mode = TargetMode::kServe;
    } else if (value == "hlo-run") {
      mode = TargetMode::kHloRun;
    } else if (value == "hloc-tpusim") {
      mode = TargetMode::kHlocTpusim;
    } else {
      return InvalidArgument(
          "--target expects serve, hlo-run or hloc-tpusim, got '" + value +
          "'");
    }
  } else if (name == "timeout") {
    ASSIGN_OR_RETURN(timeout, ParseSeconds(name, value));
  } else {
    return false;
  }
  return true;
}

bool TargetFlags::ApplySwitch(std::string_view arg) {
  if (arg != "--serve") return false;
  mode = TargetMode::kServe;
  return true;
}

Status TargetFlags::Check() const {
  if (!hlo_run.empty() && (!hloc.empty() || !tpusim.empty())) {
    return InvalidArgument("--hlo-run excludes --hloc/--tpusim");
  }
  return Status();
}

void TargetFlags::Register(FlagParser* p) {
  static constexpr struct {
    const char* name;
    const char* value_name;
    const char* help;
  } kValued[] = {
      {"hloc", "P", "the two-step pipeline: this hloc"},
      {"tpusim", "P", "... and this tpusim"},
      {"hlo-run", "P", "this hlo-run binary"},
      {"bin-dir", "D",
       "hloc, tpusim, hlo-run from D (default: next to this tool)"},
      {"target", "MODE", "serve, hlo-run or hloc-tpusim"},
      {"timeout", "S", "seconds per target run (default 60)"},
  };
  p->Group("target flags");
  for (const auto& f : kValued) {
    p->Custom(f.name, f.value_name, f.help,
              [this, name = std::string(f.name)](const std::string& v) {
                return Apply(name, v).status();
              });
  }
  p->Switch(
      "serve", [this] { ApplySwitch("--serve"); },
      "one `hlo-run --serve` worker (same as --target serve)");
  p->Group("");
}

std::vector<std::string> TargetFlags::ToArgs(const FlagParser& p) const {
  std::vector<std::string> args;
  for (const auto& [name, value] :
       {std::pair<const char*, const std::string*>{"bin-dir", &bin_dir},
        {"hloc", &hloc},
        {"tpusim", &tpusim},
        {"hlo-run", &hlo_run}}) {
    if (p.Given(name)) args.push_back("--" + std::string(name) + "=" + *value);
  }
  if (mode) {
    args.push_back(std::string("--target=") +
                   (*mode == TargetMode::kServe    ? "serve"
                    : *mode == TargetMode::kHloRun ? "hlo-run"
                                                   : "hloc-tpusim"));
  }
  if (p.Given("timeout")) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.17g", timeout);
    args.push_back(std::string("--timeout=") + buf);
  }
  return args;
}

TargetSpec TargetFlags::Spec(TargetMode default_mode) const {
  TargetMode m = default_mode;
  if (mode) {
    m = *mode;
  } else if (!hloc.empty() || !tpusim.empty()) {
    m = TargetMode::kHlocTpusim;
  } else if (!hlo_run.empty() && m == TargetMode::kHlocTpusim) {
    m = TargetMode::kHloRun;
  }
  TargetSpec s =
      TargetSpec::FromBinaryDir(bin_dir.empty() ? ExecutableDir() : bin_dir, m);
  if (!hloc.empty()) s.hloc = hloc;
  if (!tpusim.empty()) s.tpusim = tpusim;
  if (!hlo_run.empty()) s.hlo_run = hlo_run;
  s.timeout_seconds = timeout;
  return s;
}

}  // namespace trench::hlo_diff
