// Request helpers the API's handler files share: ids in paths, query
// parameters, 405 answers. Every error names what was wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/api/api_handlers.h"
#include "orchestrator/api/api_request.h"

namespace trench::orchestrator {

// 405 for `request`, with "Allow: <allowed>".
ApiResponse MethodNotAllowed(const ApiRequest& request,
                             std::string_view allowed);

// A positive decimal integer, or nullopt.
std::optional<int64_t> ParsePositive(std::string_view s);

// Query parameter `key` as an integer >= min_value, or `fallback` when
// absent. Errors: kInvalidArgument "query parameter 'limit' must be an
// integer >= 1, got 'x'".
StatusOr<int64_t> QueryInt(const ApiRequest& request, const std::string& key,
                           int64_t fallback, int64_t min_value);

// ?limit= (default options.default_limit, clamped to options.max_limit).
// Errors as QueryInt.
StatusOr<int> QueryLimit(const ApiRequest& request, const ApiOptions& options);

// The request's Idempotency-Key header: "" when absent. Errors:
// kInvalidArgument when it is not 1 to 255 printable ASCII characters
// without spaces.
StatusOr<std::string> IdempotencyKeyOf(const ApiRequest& request);

}  // namespace trench::orchestrator
