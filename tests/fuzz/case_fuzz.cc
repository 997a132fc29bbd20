// fuzz-libs: trench_fuzz
// Case bundles and option documents: the input becomes the case.json of a
// case directory (module.hlo and inputs/0.npy fixed) read with ReadCase,
// and, parsed as JSON, the case options and the generator options. Any of
// them may reject the input with a message; none may crash, and an
// accepted case.json must describe the fixed module's one input per
// device of its mesh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "base/json.h"
#include "triage/case/case_bundle.h"
#include "triage/fuzz/generator.h"

namespace {

// A case directory made once per process.
const std::string& CaseDir() {
  static const std::string dir = [] {
    const std::filesystem::path d =
        std::filesystem::temp_directory_path() /
        ("trench_case_fuzz_" + std::to_string(getpid()));
    std::filesystem::remove_all(d);
    auto c = trench::hlo_diff::MakeCase(
        "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = "
        "f32[2] negate(p)\n}\n",
        {trench::Literal(trench::Shape(trench::PrimitiveType::F32, {2}))});
    if (!c.ok() || !trench::hlo_diff::WriteCase(d.string(), *c).ok()) {
      std::abort();
    }
    // The same input for two devices, for SPMD case.json documents.
    for (const char* dev : {"0", "1"}) {
      std::error_code ec;
      std::filesystem::create_directories(d / "inputs" / dev, ec);
      std::filesystem::copy_file(d / "inputs" / "0.npy",
                                 d / "inputs" / dev / "0.npy", ec);
    }
    return d.string();
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string& dir = CaseDir();
  {
    std::ofstream f(dir + "/case.json", std::ios::binary | std::ios::trunc);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  auto c = trench::hlo_diff::ReadCase(dir);
  // One input per device (an SPMD case.json may point every device at the
  // one file).
  if (c.ok() && static_cast<int64_t>(c->inputs.size()) != c->mesh.size()) {
    std::abort();
  }
  if (!c.ok() && c.status().message().empty()) std::abort();
  trench::JsonParseOptions opts;
  opts.max_depth = 64;
  auto j = trench::ParseJson(text, opts);
  if (!j.ok()) return 0;
  (void)trench::hlo_diff::CaseOptions::FromJson(*j);
  auto g = trench::fuzz::GeneratorOptions::FromJson(*j);
  // Accepted generator options print back to options that read the same.
  if (g.ok()) {
    auto again = trench::fuzz::GeneratorOptions::FromJson(g->ToJson());
    if (!again.ok() || !(again->ToJson() == g->ToJson())) std::abort();
  }
  return 0;
}
