// The web dashboard's data (issue 20; /work/notes/web_contract.md "Web
// data"): read-only JSON, SVG and download endpoints over the store, as
// functions of a request. ApiHandlers::Route hands them every request
// (RouteWebData) before its own routes.
//
//   GET /api/v1/overview           -> the overview page's data: repository,
//       recent commits (build, programs fuzzed, findings, focus), swarm,
//       job counts and the jobs needing attention, bugs by state, and time
//       series (programs per second, findings per hour, hourly buckets).
//   GET /api/v1/bugs?state=&pass=&opcode=&signature=&q=&after=&limit=
//       -> {"bugs", "next"?, "total"}: pass and opcode match the
//       localization's findings (opcode: the instruction's or the fused
//       op's), q is a case-insensitive substring of the title or the
//       report's text; total counts every match (after= aside).
//   GET /api/v1/signatures?state=&after=&limit= -> {"signatures", "next"?}
//       in signature order; "next" is the after= of the next page.
//   GET /api/v1/bugs/{id}/view     -> everything the bug page shows.
//   GET /api/v1/bugs/{id}/graph.svg  Graphviz drawing of the module (503
//       naming `dot` when it cannot be run).
//   GET /api/v1/bugs/{id}/case.tar.gz, .../minimized.tar.gz   the case
//       directories as ustar + gzip; GET /api/v1/patches/{pid}.patch.
//
// Ids in paths are positive decimal integers (404 naming the id
// otherwise, 404 for an unknown one); no path is ever built from request
// text: files come from the store's case rows. Errors are the API's
// {"error": {"code", "message"}}.
#pragma once

#include <optional>

#include "orchestrator/api/api_handlers.h"
#include "orchestrator/api/api_request.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

// The answer for a web data route, or nullopt when `request` is not one
// (405 with Allow for another method on one). `store` is used by this
// thread only for the call.
std::optional<ApiResponse> RouteWebData(Store* store, const ApiOptions& options,
                                        const ApiRequest& request);

// The routes' handlers (each file says what it answers).
ApiResponse WebBugList(Store* store, const ApiOptions& options,
                       const ApiRequest& request);  // api_bug_list.cc
ApiResponse WebSignatures(Store* store, const ApiOptions& options,
                          const ApiRequest& request);  // api_bug_list.cc
ApiResponse WebOverview(Store* store, const ApiOptions& options);
ApiResponse WebBugView(Store* store, const ApiOptions& options, int64_t id);
ApiResponse WebBugGraph(Store* store, const ApiOptions& options, int64_t id);
// `minimized`: the minimized case, else the repro case.
ApiResponse WebCaseDownload(Store* store, int64_t id, bool minimized);
ApiResponse WebPatchDownload(Store* store, int64_t patch_id);

}  // namespace trench::orchestrator
