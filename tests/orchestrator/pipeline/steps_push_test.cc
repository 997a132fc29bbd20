// review.on_approve "push" (steps_push.cc, git/push.h): an approval queues
// the push job; the step pushes trench/bug-<id> from the target repository
// to a bare repository the test creates, with libgit2, and the remote's
// branch is the proposed commit; details.push records it. The watched
// branch is never a destination; a failed push is recorded and retried.
#include <git2.h>
#include <gtest/gtest.h>

#include "orchestrator/pipeline/triage_verbs.h"
#include "tests/orchestrator/pipeline/step_test_fixture.h"
#include "tests/orchestrator/store/main_line_bug.h"

namespace trench::orchestrator {
namespace {

// The commit `ref` names in the repository at `path` ("" when none).
std::string RefAt(const std::string& path, const std::string& ref) {
  git_libgit2_init();
  git_repository* repo = nullptr;
  std::string out;
  git_oid oid;
  if (git_repository_open(&repo, path.c_str()) == 0 &&
      git_reference_name_to_id(&oid, repo, ref.c_str()) == 0) {
    char hex[GIT_OID_HEXSZ + 1] = {};
    git_oid_tostr(hex, sizeof(hex), &oid);
    out = hex;
  }
  git_repository_free(repo);
  git_libgit2_shutdown();
  return out;
}

class StepPushTest : public testing::StepTest {
 protected:
  void SetUp() override {
    StepTest::SetUp();
    base_ = Commit({{"f.cc", "int x = 1;\n"}});
    config_.repo = paths_->mirror;
    config_.branch = "main";
    remote_ = dir_ + "/remote.git";
    git_libgit2_init();
    git_repository* r = nullptr;
    ASSERT_EQ(git_repository_init(&r, remote_.c_str(), 1), 0);
    git_repository_free(r);
    git_libgit2_shutdown();
    config_.review_on_approve = "push";
    config_.review_push_remote = remote_;
  }

  // A bug proposed on branch trench/bug-<id> (as the propose step writes
  // it into the target repository). Returns its id; `proposed_` is the
  // branch's commit.
  int64_t ProposedBug() {
    // The branch first: its commit is the proposal's.
    const int64_t next = store_->ListBugs(std::nullopt, 0, 1000)->size() + 1;
    const std::string branch = "trench/bug-" + std::to_string(next);
    StatusOr<std::string> commit =
        repo_->CommitFiles(base_, {{"f.cc", "int x = 2;\n"}}, "trench: fix bug",
                           "refs/heads/" + branch);
    EXPECT_TRUE(commit.ok()) << commit.status().ToString();
    proposed_ = commit.ok() ? *commit : "";
    Json d = Json::MakeObject();
    d["proposal"] = Json::MakeObject();
    d["proposal"]["branch"] = branch;
    d["proposal"]["commit"] = proposed_;
    const int64_t id =
        testing::MainLineBug(store_.get(), "s", BugState::kProposed, base_, d);
    EXPECT_EQ(id, next);
    return id;
  }

  StatusOr<Json> Push(int64_t id) {
    Json payload = Json::MakeObject();
    payload["bug"] = id;
    return RunPushStep(ctx_, MakeJob("push", payload));
  }

  std::string base_, remote_, proposed_;
};

TEST_F(StepPushTest, AnApprovalPutsTheBranchOnTheRemote) {
  const int64_t id = ProposedBug();
  const std::string ref = "refs/heads/trench/bug-" + std::to_string(id);
  // Not approved yet: nothing to push.
  EXPECT_FALSE(PushWanted(&config_, *store_->GetBug(id)));
  TriageAction approve{.verb = TriageVerb::kApprove};
  StatusOr<Bug> bug = ApplyTriage(store_.get(), id, approve, "test", true);
  ASSERT_TRUE(bug.ok()) << bug.status().ToString();
  // The approval queued the durable job.
  StatusOr<std::optional<Job>> job = queue_->Latest(BugJobKey(id, "push"));
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_EQ((*job)->kind, "push");
  EXPECT_EQ((*job)->state, JobState::kQueued);
  EXPECT_TRUE(PushWanted(&config_, *bug));

  StatusOr<Json> out = Push(id);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(RefAt(remote_, ref), proposed_);
  EXPECT_EQ(RefAt(remote_, "refs/heads/main"), "");  // Never the watched one.
  Bug pushed = *store_->GetBug(id);
  const Json* push = pushed.details.Find("push");
  ASSERT_NE(push, nullptr);
  EXPECT_EQ(*push->Find("ok"), Json(true));
  EXPECT_EQ(push->Find("commit")->string_value(), proposed_);
  EXPECT_EQ(push->Find("branch")->string_value(),
            "trench/bug-" + std::to_string(id));
  EXPECT_EQ(push->Find("remote")->string_value(), remote_);
  // Done: the reconciler does not queue it again.
  EXPECT_FALSE(PushWanted(&config_, pushed));
  EXPECT_EQ(QueueNextStep(ctx_, pushed).value(), "");
  // With on_approve "none" it is never wanted.
  config_.review_on_approve = "none";
  Json d = pushed.details;
  d["push"]["ok"] = false;
  ASSERT_TRUE(store_->SetBugDetails(id, d).ok());
  EXPECT_FALSE(PushWanted(&config_, *store_->GetBug(id)));
}

TEST_F(StepPushTest, TheWatchedBranchIsNeverWrittenAndFailuresAreRecorded) {
  const int64_t id = ProposedBug();
  TriageAction approve{.verb = TriageVerb::kApprove};
  ASSERT_TRUE(ApplyTriage(store_.get(), id, approve, "test", false).ok());
  // The reconciler queues the push when the approval did not.
  EXPECT_EQ(QueueNextStep(ctx_, *store_->GetBug(id)).value(), "push");

  // A watched branch that is the bug's branch: refused, a final failure.
  config_.branch = "trench/bug-" + std::to_string(id);
  StatusOr<Json> out = Push(id);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(out.status().message().find("the watched branch"),
            std::string::npos);
  EXPECT_EQ(RefAt(remote_, "refs/heads/" + config_.branch), "");
  const Json* push = store_->GetBug(id)->details.Find("push");
  ASSERT_NE(push, nullptr);
  EXPECT_EQ(*push->Find("ok"), Json(false));
  EXPECT_NE(push->Find("error")->string_value().find("watched branch"),
            std::string::npos);

  // An unreachable remote: an I/O error (retried by the queue), recorded.
  config_.branch = "main";
  config_.review_push_remote = dir_ + "/no-such-remote.git";
  out = Push(id);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kIoError);
  push = store_->GetBug(id)->details.Find("push");
  EXPECT_EQ(*push->Find("ok"), Json(false));
  EXPECT_FALSE(push->Find("error")->string_value().empty());
  // A token variable that is not set: refused before any network.
  config_.review_push_remote = remote_;
  config_.review_push_token_env = "TRENCH_TEST_NO_SUCH_TOKEN_VAR";
  out = Push(id);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("TRENCH_TEST_NO_SUCH_TOKEN_VAR"),
            std::string::npos);
  // Then it works.
  config_.review_push_token_env = "";
  out = Push(id);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(RefAt(remote_, "refs/heads/trench/bug-" + std::to_string(id)),
            proposed_);
}

}  // namespace
}  // namespace trench::orchestrator
