#include "triage/case/target_flags.h"

#include <cstdlib>
#include <filesystem>

namespace trench::hlo_diff {

StatusOr<std::pair<std::string, std::string>> TakeFlag(int argc, char** argv,
                                                       int* i) {
  std::string name = std::string(argv[*i]).substr(2), value;
  const size_t eq = name.find('=');
  if (eq != std::string::npos) {
    value = name.substr(eq + 1);
    name = name.substr(0, eq);
  } else if (*i + 1 < argc) {
    value = argv[++*i];
  } else {
    return InvalidArgument("--" + name + " needs a value");
  }
  return std::make_pair(std::move(name), std::move(value));
}

StatusOr<double> ParseSeconds(std::string_view name, const std::string& value) {
  char* end = nullptr;
  const double s = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(s > 0)) {
    return InvalidArgument("--" + std::string(name) +
                           " expects seconds > 0, got '" + value + "'");
  }
  return s;
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
