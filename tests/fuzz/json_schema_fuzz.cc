// fuzz-libs: trench_base
// Schema text and a value (the input split at its first NUL byte; no NUL:
// the input is both). ParseSchema must never crash and must refuse what
// CheckSchema refuses; ValidateJson must never crash, on checked schemas
// and on raw parsed JSON alike, and must accept every value it is given
// when the schema is {} (no constraints).
//
// The validator depends on trench_base only; it is compiled in here
// directly so that the fuzz build does not have to build trench_agents'
// whole dependency chain (libgit2, the tool libraries) with sanitizers.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "agents/json_schema.cc"  // NOLINT: see above.

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view schema_text = input.substr(0, nul);
  const std::string_view value_text =
      nul == std::string_view::npos ? input : input.substr(nul + 1);
  trench::JsonParseOptions opts;
  opts.max_depth = 64;
  auto value = trench::ParseJson(value_text, opts);
  auto schema = trench::agents::ParseSchema(schema_text);
  if (schema.ok()) {
    if (!trench::agents::CheckSchema(*schema).ok()) std::abort();
    if (value.ok()) (void)trench::agents::ValidateJson(*schema, *value);
  }
  auto raw = trench::ParseJson(schema_text, opts);
  if (raw.ok() && value.ok()) {
    trench::Status s = trench::agents::ValidateJson(*raw, *value);
    if (!s.ok() && s.message().empty()) std::abort();
    if (!trench::agents::ValidateJson(trench::Json::MakeObject(), *value)
             .ok()) {
      std::abort();
    }
  }
  if (value.ok()) (void)trench::agents::ShortJson(*value, 20);
  return 0;
}
