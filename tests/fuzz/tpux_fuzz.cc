// fuzz-libs: trench_tpu
// Reads arbitrary bytes as a .tpux executable (the assembler included: its
// kernels are TPU assembly). What reads must be valid, write, and read
// back to an equal executable; the kernel assembler alone (a whole text,
// or a kernel body) must answer every input with kernels or an error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tpu/assembler.h"
#include "tpu/executable.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)trench::tpu::ParseKernels(text);
  (void)trench::tpu::AssembleKernel("k", 4096, text);
  auto exe = trench::tpu::ReadExecutable(text);
  if (!exe.ok()) return 0;
  if (!trench::tpu::ValidateExecutable(*exe).ok()) std::abort();
  auto again = trench::tpu::ReadExecutable(trench::tpu::WriteExecutable(*exe));
  if (!again.ok() || !(*again == *exe)) std::abort();
  return 0;
}
