// fuzz-libs: trench_driver
//
// libFuzzer target for the compile options a module header carries
// (compiler/driver/module_options.h): any bytes after "HloModule m, " that
// parse as a module must be applied or refused with a Status naming the
// attributes, never crash, and an applied VMEM size stays in range.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "compiler/driver/module_options.h"
#include "compiler/ir/hlo_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string header(reinterpret_cast<const char*>(data), size);
  const std::string text = "HloModule m, " + header +
                           "\n\nENTRY main {\n  ROOT p = f32[4] "
                           "parameter(0)\n}\n";
  auto module = trench::ParseHloModule(text);
  if (!module.ok()) return 0;
  trench::codegen::CompileOptions options;
  const int64_t most = options.vmem_bytes;
  const trench::Status s = trench::hloc::ApplyModuleOptions(**module, &options);
  if (s.ok() && (options.vmem_bytes < trench::hloc::kMinVmemBytes ||
                 options.vmem_bytes > most)) {
    std::fprintf(stderr, "VMEM %lld out of range\n",
                 static_cast<long long>(options.vmem_bytes));
    std::abort();
  }
  return 0;
}
