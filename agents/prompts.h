// The roles' prompt templates (the format: llm_brain.h). They are built
// into trench from prompts/*.md (cmake/embed_files.cmake generates
// EmbeddedPromptFiles at build time), so an installed binary needs no
// prompts directory; a prompts directory given in the config replaces
// them, file by file name: <dir>/<role>.md.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace trench::agents {

// One prompts/*.md file as built in: name is the file's stem ("reproducer").
struct EmbeddedPromptFile {
  std::string_view name;
  std::string_view text;
};

// Every built-in template, sorted by name (generated).
std::span<const EmbeddedPromptFile> EmbeddedPromptFiles();

// The template of `role`: <prompts_dir>/<role>.md when prompts_dir is not
// empty, else the built-in one. `*source` (may be null) is set to the
// file's path or to "built-in prompts/<role>.md". Errors: kNotFound when
// the file is missing or unreadable ("cannot read the prompt file
// <path>"), or for a role with no built-in template; kIoError when reading
// fails midway.
StatusOr<std::string> LoadPrompt(const std::string& prompts_dir,
                                 const std::string& role,
                                 std::string* source = nullptr);

}  // namespace trench::agents
