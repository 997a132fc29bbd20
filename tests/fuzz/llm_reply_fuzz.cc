// fuzz-libs: trench_agents
// Feeds arbitrary bytes to the LLM reply parsers. The first byte picks the
// parser: 0 OpenAI reply, 1 Anthropic reply, 2 OpenAI SSE stream, 3
// Anthropic SSE stream (the second byte sets the chunk size the stream is
// cut into). A reply that parses must satisfy the contract (every tool
// call has an id, a name and object arguments; stop_reason is set) and
// must go back into a request body that prints as valid JSON.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "agents/llm_anthropic.h"
#include "agents/llm_anthropic_stream.h"
#include "agents/llm_openai.h"
#include "agents/llm_openai_stream.h"
#include "agents/sse.h"

namespace {

using namespace trench;
using namespace trench::agents;

void Check(const StatusOr<ChatResponse>& r) {
  if (!r.ok()) {
    if (r.status().message().empty()) std::abort();
    return;
  }
  for (const ToolCall& c : r->message.tool_calls) {
    if (c.id.empty() || c.name.empty() || !c.arguments.is_object())
      std::abort();
    if (!c.arguments_error.empty() && c.arguments.size() != 0) std::abort();
  }
  if (r->stop_reason.empty()) std::abort();
  ChatRequest req{.messages = {r->message}};
  LlmConfig config{.model = "m"};
  for (const Json& body :
       {BuildOpenAiRequest(config, req), BuildAnthropicRequest(config, req)}) {
    if (!ParseJson(body.Dump()).ok()) std::abort();
  }
}

template <typename Accumulator>
void Stream(std::string_view text, size_t step) {
  CallIdSource ids;
  Accumulator acc(&ids);
  SseParser parser(1 << 16);
  std::vector<SseEvent> events;
  Status s;
  for (size_t i = 0; i < text.size() && s.ok(); i += step) {
    s = parser.Feed(text.substr(i, step), &events);
  }
  if (s.ok()) s = parser.Finish(&events);
  for (const SseEvent& e : events) {
    if (s.ok()) s = acc.OnEvent(e);
  }
  if (s.ok()) Check(acc.Finish());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 2,
                              size - 2);
  const size_t step = 1 + data[1] % 64;
  CallIdSource ids;
  switch (data[0] % 4) {
    case 0:
      Check(ParseOpenAiResponse(text, &ids));
      break;
    case 1:
      Check(ParseAnthropicResponse(text, &ids));
      break;
    case 2:
      Stream<OpenAiStreamAccumulator>(text, step);
      break;
    case 3:
      Stream<AnthropicStreamAccumulator>(text, step);
      break;
  }
  return 0;
}
