// fuzz-libs: trench_ir
//
// libFuzzer target for the HLO text parser and the verifier: arbitrary
// bytes must parse or fail with a Status, never crash; a module that
// parses must verify or fail with a Status, and print to text that parses
// again to an equal module with the same verdict.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "compiler/ir/hlo_equal.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = trench::ParseHloModule(text);
  if (!module.ok()) return 0;
  const std::string printed = trench::PrintHloModule(**module);
  auto again = trench::ParseHloModule(printed);
  if (!again.ok()) {
    std::fprintf(stderr, "printed module does not parse: %s\n%s\n",
                 again.status().message().c_str(), printed.c_str());
    std::abort();
  }
  std::string diff;
  if (!trench::ModulesEqual(**module, **again, &diff)) {
    std::fprintf(stderr, "round trip changed the module: %s\n%s\n",
                 diff.c_str(), printed.c_str());
    std::abort();
  }
  // Locations differ between the two texts; the verdict must not.
  const trench::Status verified = trench::VerifyModule(**module);
  if (verified.ok() != trench::VerifyModule(**again).ok()) {
    std::fprintf(stderr, "round trip changed the verdict (%s)\n%s\n",
                 verified.ok() ? "ok" : verified.message().c_str(),
                 printed.c_str());
    std::abort();
  }
  return 0;
}
