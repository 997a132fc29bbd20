// fuzz-libs: trench_base
// Parses arbitrary bytes as JSON. A value that parses must print (compact
// and pretty) to text that parses back to an equal value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trench::JsonParseOptions opts;
  opts.max_depth = 64;
  auto parsed = trench::ParseJson(text, opts);
  if (!parsed.ok()) return 0;
  for (int indent : {-1, 2}) {
    trench::JsonPrintOptions print;
    print.indent = indent;
    auto printed = trench::PrintJson(*parsed, print);
    if (!printed.ok()) std::abort();  // Parsed values are always finite.
    auto again = trench::ParseJson(*printed, opts);
    if (!again.ok() || !(*again == *parsed)) std::abort();
  }
  return 0;
}
