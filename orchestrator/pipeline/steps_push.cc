// The push step (config review.on_approve "push"): an approved bug's
// branch trench/bug-<id> goes from the target repository (where the
// propose step wrote it) to review.push_remote, with libgit2
// (git/push.h). The outcome is details.push on the bug.
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include "git/push.h"
#include "orchestrator/pipeline/step_util.h"

namespace trench::orchestrator {
namespace {

// The remote as recorded: a URL's user and password are left out.
std::string ShownRemote(const std::string& remote) {
  const size_t scheme = remote.find("://");
  if (scheme == std::string::npos) return remote;
  const size_t host = scheme + 3;
  const size_t at = remote.find('@', host);
  const size_t slash = remote.find('/', host);
  if (at == std::string::npos || (slash != std::string::npos && at > slash)) {
    return remote;
  }
  return remote.substr(0, host) + remote.substr(at + 1);
}

const std::string* ProposalCommit(const Bug& bug) {
  const Json* p = bug.details.Find("proposal");
  const Json* c = p ? p->Find("commit") : nullptr;
  return c && c->is_string() ? &c->string_value() : nullptr;
}

// PushBranch with the token the variable `env` holds ("": none).
StatusOr<std::string> PushWithToken(const std::string& env, PushRequest r) {
  if (!env.empty()) {
    const char* token = ::getenv(env.c_str());
    if (token == nullptr || *token == '\0') {
      return FailedPrecondition("review.push_token_env names " + env +
                                ", which is not set");
    }
    r.token = token;
  }
  return PushBranch(r);
}

}  // namespace

bool PushWanted(const DaemonConfig* config, const Bug& bug) {
  if (config == nullptr || config->review_on_approve != "push") return false;
  if (bug.state != BugState::kApproved) return false;
  const Json* push = bug.details.Find("push");
  if (push == nullptr) return true;
  const Json* ok = push->Find("ok");
  const Json* commit = push->Find("commit");
  const std::string* proposed = ProposalCommit(bug);
  const bool done = ok && ok->is_bool() && ok->bool_value() && commit &&
                    commit->is_string() &&
                    (!proposed || commit->string_value() == *proposed);
  return !done;
}

StatusOr<Json> RunPushStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::optional<Bug> bug,
                   BugForStep(ctx, job, {BugState::kApproved}));
  Json out = Json::MakeObject();
  if (!bug) return out;
  if (ctx.config->review_on_approve != "push") {
    out["skipped"] = "review.on_approve is not \"push\"";
    return out;
  }
  PushRequest r;
  r.repo = ctx.config->repo;
  r.remote = ctx.config->review_push_remote;
  r.branch = "trench/bug-" + std::to_string(bug->id);
  r.protected_ref = "refs/heads/" + ctx.config->branch;
  const StatusOr<std::string> commit =
      PushWithToken(ctx.config->review_push_token_env, r);
  out["remote"] = ShownRemote(r.remote);
  out["branch"] = r.branch;
  out["ok"] = commit.ok();
  out["commit"] = commit.ok() ? Json(*commit) : Json();
  if (!commit.ok()) out["error"] = commit.status().message();
  out["attempt"] = job.attempts;
  out["at_ms"] = ctx.store->clock()->NowMillis();
  // The bug as it is now (the push took a while).
  ASSIGN_OR_RETURN(Bug now, ctx.store->GetBug(bug->id));
  RETURN_IF_ERROR(
      ctx.store->SetBugDetails(now.id, DetailsWith(now, "push", out)));
  if (!commit.ok()) {
    spdlog::warn("push: bug {}: {}", bug->id, commit.status().message());
    return commit.status();  // Retried with backoff, then parked.
  }
  spdlog::info("push: bug {}: {} -> {} ({})", bug->id, r.branch,
               ShownRemote(r.remote), commit->substr(0, 12));
  return out;
}

}  // namespace trench::orchestrator
