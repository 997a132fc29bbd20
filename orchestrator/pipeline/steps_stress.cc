// The stress-test author's step: once a bug is localized, a campaign aimed
// at its area (the culprit pass, else the opcode) on the newest build, so
// that relatives of the bug are found too. The author (built-in or LLM
// brain) proposes findings; each one is filed like a fuzz finding.
#include <spdlog/spdlog.h>

#include "base/json_nlohmann.h"
#include "orchestrator/pipeline/agent_sessions.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "orchestrator/pipeline/step_util.h"
#include "triage/localize/localization_report.h"

namespace trench::orchestrator {

StatusOr<Json> RunStressStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::optional<Bug> bug,
                   BugForStep(ctx, job,
                              {BugState::kLocalized, BugState::kCulpritFound,
                               BugState::kPatchDrafted,
                               BugState::kPatchVerified, BugState::kProposed,
                               BugState::kApproved, BugState::kRejected}));
  if (!bug) return Json::MakeObject();
  ASSIGN_OR_RETURN(std::optional<std::string> head,
                   ctx.store->GetMeta("head.built"));
  if (!head) return FailedPrecondition("no built head to stress");
  ASSIGN_OR_RETURN(std::string bin, BinDirOf(ctx, *head));
  ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job.id, "stress"));
  ASSIGN_OR_RETURN(auto tools, agents::SandboxToolBox::Create(
                                   "stress_test_author",
                                   ToolContextFor(ctx, bin, scratch, *head)));
  Json area = Json::MakeObject();
  const std::optional<hlo_bisect::LocalizationReport> loc =
      BugLocalization(*bug);
  const std::optional<std::string> pass =
      loc ? loc->signature.pass : std::nullopt;
  const std::optional<std::string> opcode =
      loc ? loc->signature.opcode : std::nullopt;
  if (pass && hlo_bisect::IsPassCulprit(*pass)) {
    area["passes"] = Json::MakeArray();
    area["passes"].push_back(*pass);
  } else if (opcode) {
    area["ops"] = Json::MakeArray();
    area["ops"].push_back(*opcode);
  }
  Json task = Json::MakeObject();
  task["bug"] = bug->id;
  task["area"] = area;
  task["seconds"] = static_cast<int64_t>(ctx.config->verify_fuzz_seconds);
  task["seed"] = job.id;
  ASSIGN_OR_RETURN(Json raw,
                   RunAgent(ctx, "stress_test_author", bug->id, task, *tools));
  Json out = Json::MakeObject();
  out["area"] = area;
  out["filed"] = Json::MakeArray();
  StatusOr<agents::StressAuthorClaim> claim =
      agents::ParseStressAuthorClaim(ToJsonDoc(raw));
  if (claim.ok()) {
    ASSIGN_OR_RETURN(out["filed"], FileAuthorFindings(ctx, *head, *claim));
  } else {
    out["refused"] = "the author's claim: " + claim.status().message();
  }
  spdlog::info("stress: bug {}'s area {}: {} findings", bug->id, area.Dump(),
               out["filed"].size());
  return out;
}

}  // namespace trench::orchestrator
