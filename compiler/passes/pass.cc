#include "compiler/passes/pass.h"

namespace trench {

bool PassContext::ShouldRewrite(std::string_view pass, std::string_view site,
                                std::string_view instruction) {
  const bool allowed = rewrite_limit_ < 0 || allowed_ < rewrite_limit_;
  if (allowed) ++allowed_;
  decisions_.push_back({std::string(pass), std::string(site),
                        std::string(instruction),
                        static_cast<int64_t>(decisions_.size()), allowed});
  return allowed;
}

const RewriteDecision* PassContext::LastAllowed() const {
  for (auto it = decisions_.rbegin(); it != decisions_.rend(); ++it) {
    if (it->allowed) return &*it;
  }
  return nullptr;
}

}  // namespace trench
