#include "agents/prompts.h"

#include <fstream>
#include <sstream>

namespace trench::agents {

StatusOr<std::string> LoadPrompt(const std::string& prompts_dir,
                                 const std::string& role, std::string* source) {
  if (prompts_dir.empty()) {
    if (source != nullptr) *source = "built-in prompts/" + role + ".md";
    for (const EmbeddedPromptFile& f : EmbeddedPromptFiles()) {
      if (f.name == role) return std::string(f.text);
    }
    return NotFound("no built-in prompt for the role '" + role + "'");
  }
  const std::string path = prompts_dir + "/" + role + ".md";
  if (source != nullptr) *source = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read the prompt file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return IoError("cannot read the prompt file " + path);
  return text.str();
}

}  // namespace trench::agents
