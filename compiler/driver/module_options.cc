// Compile options from the module header (module_options.h).
#include "compiler/driver/module_options.h"

#include <cctype>
#include <charconv>
#include <map>
#include <string>
#include <string_view>

#include "base/display_text.h"

namespace trench::hloc {
namespace {

// `{k="v", k2="v2"}` (the HLO text of a frontend_attributes value) as a
// map; the values hold no quote or backslash.
StatusOr<std::map<std::string, std::string>> ParseAttributes(
    std::string_view text) {
  auto bad = [&](const std::string& what) {
    return InvalidArgument("HloModule frontend_attributes: " + what);
  };
  std::map<std::string, std::string> out;
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
  };
  skip();
  if (i >= text.size() || text[i] != '{') return bad("expected '{'");
  ++i;
  skip();
  if (i < text.size() && text[i] == '}') return out;
  while (true) {
    skip();
    const size_t k = i;
    while (i < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[i])) ||
            text[i] == '_' || text[i] == '.' || text[i] == '-')) {
      ++i;
    }
    if (i == k) return bad("expected an attribute name");
    std::string key(text.substr(k, i - k));
    skip();
    if (i >= text.size() || text[i] != '=')
      return bad("expected '=' after " + key);
    ++i;
    skip();
    if (i >= text.size() || text[i] != '"') {
      return bad("expected a quoted value for " + key);
    }
    const size_t v = ++i;
    while (i < text.size() && text[i] != '"' && text[i] != '\\') ++i;
    if (i >= text.size() || text[i] != '"') {
      return bad("unterminated or escaped value of " + key);
    }
    out[key] = std::string(text.substr(v, i - v));
    ++i;
    skip();
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    if (i < text.size() && text[i] == '}') return out;
    return bad("expected ',' or '}'");
  }
}

}  // namespace

Status ApplyModuleOptions(const HloModule& module,
                          codegen::CompileOptions* options) {
  for (const auto& [key, value] : module.header_attrs()) {
    if (key != "frontend_attributes") continue;
    ASSIGN_OR_RETURN(auto attrs, ParseAttributes(value));
    auto it = attrs.find(kVmemBytesAttribute);
    if (it == attrs.end()) continue;
    const std::string& v = it->second;
    int64_t bytes = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), bytes);
    const int64_t most = codegen::CompileOptions().vmem_bytes;
    if (ec != std::errc() || end != v.data() + v.size() ||
        bytes < kMinVmemBytes || bytes > most || bytes % 512 != 0) {
      // The value is the module author's: shown with its controls escaped.
      return InvalidArgument(std::string(kVmemBytesAttribute) + "=\"" +
                             EscapeControls(v.substr(0, 64), false) +
                             "\": expected a multiple of 512 from " +
                             std::to_string(kMinVmemBytes) + " to " +
                             std::to_string(most));
    }
    options->vmem_bytes = bytes;
  }
  return Status::Ok();
}

}  // namespace trench::hloc
