// fuzz-libs: trench_pipeline
// The triage report (orchestrator/pipeline/triage_report.h) over arbitrary JSON: the
// API's bug object comes from a server, so any shape must render or give
// an error, never crash. The input is parsed as JSON and given to both
// renderers as is, and as the "bug" member (so that random JSON reaches
// the sections).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/json.h"
#include "orchestrator/pipeline/triage_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  trench::StatusOr<trench::Json> j = trench::ParseJson(text);
  if (!j.ok()) return 0;
  (void)trench::orchestrator::BugReportText(*j);
  (void)trench::orchestrator::TriageRunText(*j);
  trench::Json wrapped = trench::Json::MakeObject();
  wrapped["bug"] = *j;
  wrapped["events"] = *j;
  wrapped["patches"] = *j;
  (void)trench::orchestrator::BugReportText(wrapped);
  return 0;
}
