// The reviewers' verbs (triage_verbs.h).
#include "orchestrator/pipeline/triage_verbs.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "orchestrator/pipeline/pipeline.h"

namespace trench::orchestrator {
namespace {

void Erase(Json* object, std::string_view key) {
  std::erase_if(object->mutable_object(),
                [&](const auto& member) { return member.first == key; });
}

// A fresh drafting budget: the reconciler's needs_human stop and the
// round count that sets it.
void ResetDraftBudget(Json* details) {
  (*details)["draft_rounds"] = 0;
  Erase(details, "needs_human");
  Erase(details, "last_draft_failure");
}

void AppendHint(Json* details, const std::string& hint, int64_t now,
                const char* from) {
  Json* hints =
      details->Find("draft_hints") ? &(*details)["draft_hints"] : nullptr;
  if (hints == nullptr || !hints->is_array()) {
    (*details)["draft_hints"] = Json::MakeArray();
    hints = &(*details)["draft_hints"];
  }
  Json h = Json::MakeObject();
  h["hint"] = hint;
  h["at_ms"] = now;
  if (from != nullptr) h["from"] = from;
  hints->push_back(std::move(h));
}

}  // namespace

Status CheckTriageAction(const TriageAction& action) {
  const std::string verb(TriageVerbName(action.verb));
  if (action.verb == TriageVerb::kRedraft) {
    if (!action.hint) {
      return InvalidArgument("field 'hint' is missing (redraft needs one)");
    }
    if (action.hint->find_first_not_of(" \t\r\n") == std::string::npos) {
      return InvalidArgument("field 'hint' must not be empty");
    }
  } else if (action.hint) {
    return InvalidArgument("field 'hint' is only for redraft, not " + verb);
  }
  if (action.verb == TriageVerb::kDuplicate) {
    if (!action.duplicate_of) {
      return InvalidArgument(
          "field 'duplicate_of' is missing (duplicate needs the bug id)");
    }
    if (*action.duplicate_of <= 0) {
      return InvalidArgument("field 'duplicate_of' must be a bug id (> 0)");
    }
  } else if (action.duplicate_of) {
    return InvalidArgument("field 'duplicate_of' is only for duplicate, not " +
                           verb);
  }
  return Status::Ok();
}

StatusOr<Bug> ApplyTriage(Store* store, int64_t bug_id,
                          const TriageAction& action, const std::string& actor,
                          bool push_on_approve) {
  RETURN_IF_ERROR(CheckTriageAction(action));
  const BugState to = TriageVerbTarget(action.verb);
  Json evidence = Json::MakeObject();
  evidence["event"] = "triaged";
  evidence["verb"] = TriageVerbName(action.verb);
  if (action.comment) evidence["comment"] = *action.comment;
  if (action.hint) evidence["hint"] = *action.hint;
  if (action.duplicate_of) evidence["duplicate_of"] = *action.duplicate_of;
  const int64_t now = store->clock()->NowMillis();
  TransitionFields fields;
  fields.duplicate_of = action.duplicate_of;
  fields.edit_details = [&](const Bug& bug, Json* details) -> Status {
    // The verb's own check first: its message names the verb.
    RETURN_IF_ERROR(CheckTriageVerb(action.verb, bug.state)
                        .WithContext("bug " + std::to_string(bug.id)));
    switch (action.verb) {
      case TriageVerb::kRedraft:
        AppendHint(details, *action.hint, now, nullptr);
        ResetDraftBudget(details);
        break;
      case TriageVerb::kReopen: {
        ResetDraftBudget(details);
        Json reopened = Json::MakeObject();
        reopened["from"] = BugStateName(bug.state);
        reopened["at_ms"] = now;
        (*details)["reopened"] = reopened;
        break;
      }
      case TriageVerb::kApprove:
      case TriageVerb::kReject: {
        Json review = Json::MakeObject();
        review["verb"] = TriageVerbName(action.verb);
        review["comment"] = action.comment.value_or("");
        review["at_ms"] = now;
        (*details)["review"] = review;
        if (action.verb == TriageVerb::kReject) {
          // Another round comes (the reconciler drafts for rejected bugs),
          // with its own budget, guided by the comment.
          ResetDraftBudget(details);
          if (action.comment && !action.comment->empty()) {
            AppendHint(details, *action.comment, now, "reject");
          }
        }
        break;
      }
      default:
        break;
    }
    return Status::Ok();
  };
  ASSIGN_OR_RETURN(Bug bug,
                   store->TransitionBug(bug_id, to, actor, evidence, fields));
  if (action.verb == TriageVerb::kApprove && push_on_approve) {
    JobQueue queue(store);
    if (Status s = QueuePushJob(queue, bug.id); !s.ok()) {
      // The move stands: the reconciler queues the push on its next tick.
      spdlog::warn("bug {}: approved, push not queued yet: {}", bug.id,
                   s.message());
    }
  }
  return bug;
}

Status QueuePushJob(JobQueue& queue, int64_t bug_id) {
  Json payload = Json::MakeObject();
  payload["bug"] = bug_id;
  JobOptions o = StepJobOptions();
  o.dedup_key = BugJobKey(bug_id, "push");
  return queue.Enqueue("push", payload, o).status();
}

std::vector<std::string> DraftHintsOf(const Bug& bug) {
  std::vector<std::string> out;
  const Json* hints = bug.details.Find("draft_hints");
  if (hints == nullptr || !hints->is_array()) return out;
  for (const Json& h : hints->array()) {
    const Json* text = h.is_object() ? h.Find("hint") : nullptr;
    if (text != nullptr && text->is_string())
      out.push_back(text->string_value());
  }
  return out;
}

bool ReopenedFromDuplicate(const Bug& bug) {
  const Json* r = bug.details.Find("reopened");
  const Json* from = r && r->is_object() ? r->Find("from") : nullptr;
  return from && from->is_string() &&
         from->string_value() == BugStateName(BugState::kDuplicate);
}

}  // namespace trench::orchestrator
