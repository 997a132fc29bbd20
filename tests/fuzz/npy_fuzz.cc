// fuzz-libs: trench_ir
// Reads arbitrary bytes as .npy (plain and as bf16). A literal that reads
// must write and read back to an equal literal.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "compiler/ir/npy.h"

namespace {

void Check(std::string_view bytes, std::optional<trench::PrimitiveType> as) {
  auto lit = trench::ReadNpy(bytes, as);
  if (!lit.ok()) return;
  const std::string written = trench::WriteNpy(*lit);
  auto again = trench::ReadNpy(
      written,
      lit->element_type() == trench::PrimitiveType::BF16 ? as : std::nullopt);
  if (!again.ok() || !(*again == *lit)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Check(bytes, std::nullopt);
  Check(bytes, trench::PrimitiveType::BF16);
  return 0;
}
