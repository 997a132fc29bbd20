// Loading the cases extracted from XLA's own tests
// (shared/conformance/xla_tests/, see its README.md) for test suites that
// run them: the module, the inputs, the expected literal and the case's
// comparison options (exact: bitwise with NaN == NaN; near: the case's
// ErrorSpec with XLA's abs-OR-rel rule). Header-only; test binaries
// define TRENCH_SHARED_DIR (tests/CMakeLists.txt).
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/literal_json.h"
#include "compiler/ir/verifier.h"
#include "oracle/comparator.h"

namespace trench::conformance {

inline std::filesystem::path CasesDir() {
  return std::filesystem::path(TRENCH_SHARED_DIR) / "conformance" / "xla_tests";
}

// The case directory names, sorted (empty when the corpus is missing).
inline std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(CasesDir(), ec)) {
    if (entry.is_directory() &&
        std::filesystem::exists(entry.path() / "case.json")) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The case's comparison options, or InvalidArgument for a malformed case.
inline StatusOr<ComparisonOptions> CompareOptions(const Json& c) {
  const Json* compare = c.Find("compare");
  if (compare == nullptr || !compare->is_string()) {
    return InvalidArgument("case.json: missing \"compare\"");
  }
  if (compare->string_value() == "exact") return ComparisonOptions::Exact();
  if (compare->string_value() != "near") {
    return InvalidArgument("case.json: unknown compare mode " +
                           compare->Dump());
  }
  const Json* error = c.Find("error");
  if (error == nullptr) return InvalidArgument("case.json: near needs error");
  ASSIGN_OR_RETURN(double abs, error->Find("abs")
                                   ? error->Find("abs")->GetDouble()
                                   : StatusOr<double>(0.0));
  ASSIGN_OR_RETURN(double rel, error->Find("rel")
                                   ? error->Find("rel")->GetDouble()
                                   : StatusOr<double>(0.0));
  return ComparisonOptions::Near(abs, rel);
}

struct Case {
  std::unique_ptr<HloModule> module;
  Status verified;            // VerifyModule's answer (not fatal).
  std::vector<Literal> args;  // inputs[i] -> parameter(i).
  Literal expected;
  ComparisonOptions options;
};

// Loads case `name`. Errors: InvalidArgument/parse errors for a malformed
// case (module.hlo that does not parse, inputs that do not match the
// entry's parameters).
inline StatusOr<Case> LoadCase(const std::string& name) {
  const std::filesystem::path dir = CasesDir() / name;
  ASSIGN_OR_RETURN(Json c, ParseJson(ReadText(dir / "case.json")));
  Case out;
  ASSIGN_OR_RETURN(out.options, CompareOptions(c));
  ASSIGN_OR_RETURN(out.module, ParseHloModule(ReadText(dir / "module.hlo")));
  out.verified = VerifyModule(*out.module);
  const HloComputation& entry = *out.module->entry_computation();
  const Json* inputs = c.Find("inputs");
  if (inputs == nullptr || !inputs->is_array() ||
      inputs->size() != static_cast<size_t>(entry.num_parameters())) {
    return InvalidArgument("case.json: inputs do not match the parameters");
  }
  for (size_t i = 0; i < inputs->size(); ++i) {
    ASSIGN_OR_RETURN(Literal lit, LiteralFromJson(inputs->array()[i]));
    // case.json values are logical row-major; the parameter's layout is
    // metadata on the argument.
    lit.set_layout(entry.parameter_instruction(i)->shape().layout());
    out.args.push_back(std::move(lit));
  }
  const Json* expected = c.Find("expected");
  if (expected == nullptr) return InvalidArgument("case.json: no expected");
  ASSIGN_OR_RETURN(out.expected, LiteralFromJson(*expected));
  return out;
}

// A gtest parameter name for a case directory name.
inline std::string ParamName(const std::string& name) {
  std::string s = name;
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return s;
}

}  // namespace trench::conformance
