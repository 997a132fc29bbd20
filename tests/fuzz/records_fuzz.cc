// fuzz-libs: trench_localize
// The service side's record parsers over arbitrary bytes. The first byte
// picks the parser, the rest is the text:
//   0 ParseJsonDoc (nlohmann): a document it takes base/json takes too
//     unless base/json says it is too deep or a number is out of range;
//     a key repeated in an object is refused by both;
//   1 ParseLocalizationReport: a report it takes prints JSON that reads
//     back as the same report;
//   2 ParseTargetDescriptionText: a description it takes prints a
//     document that reads back as the same description;
//   3 Verdict::FromJson (over base/json): a verdict it takes prints JSON
//     that reads back as the same verdict.
// Nothing may crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/json.h"
#include "base/json_nlohmann.h"
#include "triage/case/target_description.h"
#include "triage/case/verdict.h"
#include "triage/localize/localization_record.h"

namespace {

using namespace trench;

void JsonDocAgreesWithBaseJson(std::string_view text) {
  StatusOr<JsonDoc> doc = ParseJsonDoc(text, 64);
  JsonParseOptions opts;
  opts.max_depth = 64;
  StatusOr<Json> base = ParseJson(text, opts);
  if (!base.ok() && base.status().message().find("appears twice") !=
                        std::string::npos) {
    if (doc.ok()) std::abort();  // A repeated key got through.
  }
  if (doc.ok() && base.ok()) {
    // The same document: the bridge gives base/json's value.
    if (!(FromJsonDoc(*doc) == *base)) std::abort();
  }
}

void LocalizationRoundTrips(std::string_view text) {
  StatusOr<hlo_bisect::LocalizationReport> r =
      hlo_bisect::ParseLocalizationReport(text);
  if (!r.ok()) return;
  StatusOr<hlo_bisect::LocalizationReport> again =
      hlo_bisect::ParseLocalizationReport(DumpJsonDoc(hlo_bisect::ToJson(*r)));
  if (!again.ok() || !(*again == *r)) std::abort();
}

void DescriptionRoundTrips(std::string_view text) {
  StatusOr<hlo_diff::TargetDescription> d =
      hlo_diff::ParseTargetDescriptionText(text, "fuzz");
  if (!d.ok()) return;
  StatusOr<hlo_diff::TargetDescription> again =
      hlo_diff::ParseTargetDescription(d->ToJson(), "again");
  if (!again.ok() || !(again->ToJson() == d->ToJson())) std::abort();
}

void VerdictRoundTrips(std::string_view text) {
  JsonParseOptions opts;
  opts.max_depth = 64;
  StatusOr<Json> j = ParseJson(text, opts);
  if (!j.ok()) return;
  StatusOr<hlo_diff::Verdict> v = hlo_diff::Verdict::FromJson(*j);
  if (!v.ok()) return;
  StatusOr<hlo_diff::Verdict> again = hlo_diff::Verdict::FromJson(v->ToJson());
  if (!again.ok() || !(again->ToJson() == v->ToJson())) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  switch (data[0] % 4) {
    case 0:
      JsonDocAgreesWithBaseJson(text);
      break;
    case 1:
      LocalizationRoundTrips(text);
      break;
    case 2:
      DescriptionRoundTrips(text);
      break;
    default:
      VerdictRoundTrips(text);
      break;
  }
  return 0;
}
