// Report text on its way into git (steps_patch.cc's propose step): the
// title from the field report, "abort\n\nSigned-off-by: ...\n\x1b]0;pwned
// \x07", is filed through the API's report handler, the bug is moved to
// patch_verified with a patch, and the proposed commit, read back with
// libgit2, has a one-line subject, no control bytes, no trailers (as git
// itself parses them) and no line that starts one.
#include <git2.h>
#include <gtest/gtest.h>

#include <sstream>

#include "orchestrator/api/api_handlers.h"
#include "orchestrator/pipeline/step_util.h"
#include "tests/orchestrator/pipeline/step_test_fixture.h"

namespace trench::orchestrator {
namespace {

constexpr char kHostileTitle[] =
    "abort\n\nSigned-off-by: Mallory <mallory@evil.example>\n\x1b]0;pwned\x07";
constexpr char kHostileText[] =
    "it aborts\n\nSigned-off-by: Mallory <mallory@evil.example>\n"
    "Reviewed-by: \x1b[2Jnobody\r\n\xc2\x9b"
    "31m";

// The full message of the commit `ref` points to, read with libgit2.
std::string MessageAt(const std::string& repo_path, const std::string& ref) {
  git_libgit2_init();
  git_repository* repo = nullptr;
  git_object* obj = nullptr;
  std::string message;
  if (git_repository_open(&repo, repo_path.c_str()) == 0 &&
      git_revparse_single(&obj, repo, ref.c_str()) == 0) {
    const char* m = git_commit_message(reinterpret_cast<git_commit*>(obj));
    if (m != nullptr) message = m;
  }
  git_object_free(obj);
  git_repository_free(repo);
  git_libgit2_shutdown();
  return message;
}

// The trailers git finds in `message`, as "key: value" lines.
std::vector<std::string> Trailers(const std::string& message) {
  git_message_trailer_array arr{};
  std::vector<std::string> out;
  if (git_message_trailers(&arr, message.c_str()) == 0) {
    for (size_t i = 0; i < arr.count; ++i) {
      out.push_back(std::string(arr.trailers[i].key) + ": " +
                    arr.trailers[i].value);
    }
  }
  git_message_trailer_array_free(&arr);
  return out;
}

class StepProposeTest : public testing::StepTest {};

TEST_F(StepProposeTest, StrangerTextIsQuotedInTheProposedCommit) {
  const std::string base = Commit({{"f.cc", "int x = 1;\n"}});
  config_.repo = paths_->mirror;
  config_.branch = "main";
  // Filed through the API's report handler.
  ApiOptions options;
  options.token = "t";
  options.cases_dir = paths_->cases;
  ApiHandlers api(store_.get(), options);
  Json body = Json::MakeObject();
  body["title"] = kHostileTitle;
  body["text"] = kHostileText;
  ApiRequest post;
  post.method = "POST";
  post.path = "/api/v1/reports";
  post.headers["authorization"] = "Bearer t";
  post.headers["content-type"] = "application/json";
  post.body = body.Dump();
  ApiResponse created = api.Handle(post);
  ASSERT_EQ(created.status, 201) << created.body;
  StatusOr<Json> reply = ParseJson(created.body);
  ASSERT_TRUE(reply.ok());
  const int64_t id = reply->Find("id")->int64_value();
  StatusOr<Bug> bug = store_->GetBug(id);
  ASSERT_TRUE(bug.ok());
  // Stored as one line without controls; the title as given is data.
  EXPECT_EQ(bug->title,
            "abort Signed-off-by: Mallory <mallory@evil.example> ]0;pwned");
  EXPECT_EQ(bug->details.Find("report")->Find("title")->string_value(),
            kHostileTitle);

  // Along to patch_verified, with a patch on the base.
  StatusOr<int64_t> patch =
      store_->AddPatch(id, "trench/bug-" + std::to_string(id),
                       "diff --git a/f.cc b/f.cc\n--- a/f.cc\n+++ b/f.cc\n"
                       "@@ -1 +1 @@\n-int x = 1;\n"
                       "+int x = 2;\n");
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  const std::string minimized(64, 'd');
  ASSERT_TRUE(store_->PutCase(minimized, "", Json::MakeObject()).ok());
  for (BugState s : {BugState::kReproduced, BugState::kMinimized,
                     BugState::kLocalized, BugState::kCulpritFound,
                     BugState::kPatchDrafted, BugState::kPatchVerified}) {
    TransitionFields f;
    f.minimized_sha256 = minimized;
    f.culprit_commit = base;
    if (s == BugState::kPatchDrafted) {
      Json d = bug->details;
      d["draft"] = Json::MakeObject();
      d["draft"]["base"] = base;
      d["draft"]["patch"] = *patch;
      f.details = d;
    }
    Json evidence = Json::MakeObject();
    evidence["event"] = std::string(BugStateName(s));
    // A model's multi-line words in the evidence, too.
    evidence["summary"] = "done\nSigned-off-by: Model <m@llm>\n\x1b]2;x\x07";
    StatusOr<Bug> moved = store_->TransitionBug(id, s, "test", evidence, f);
    ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  }
  Json payload = Json::MakeObject();
  payload["bug"] = id;
  StatusOr<Json> out = RunProposeStep(ctx_, MakeJob("propose", payload));
  ASSERT_TRUE(out.ok()) << out.status().ToString();

  const std::string message =
      MessageAt(paths_->mirror, "refs/heads/trench/bug-" + std::to_string(id));
  ASSERT_FALSE(message.empty());
  const std::string subject = message.substr(0, message.find('\n'));
  EXPECT_EQ(subject, "trench: fix bug " + std::to_string(id) +
                         ": abort Signed-off-by: Mallory "
                         "<mallory@evil.example> ]0;pwned");
  EXPECT_EQ(message.substr(subject.size(), 2), "\n\n");
  for (unsigned char c : message) {
    EXPECT_TRUE(c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f))
        << "control byte " << int(c) << " in:\n"
        << message;
  }
  EXPECT_EQ(message.find("\xc2\x9b"), std::string::npos);  // C1 CSI.
  EXPECT_TRUE(Trailers(message).empty()) << Trailers(message)[0];
  std::istringstream lines(message);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_FALSE(line.starts_with("Signed-off-by:")) << line;
    EXPECT_FALSE(line.starts_with("Reviewed-by:")) << line;
  }
  // The report's text is there, quoted and escaped.
  EXPECT_NE(message.find("> Signed-off-by: Mallory"), std::string::npos)
      << message;
  EXPECT_NE(message.find("> Reviewed-by: \\x1b[2Jnobody\\x0d"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace trench::orchestrator
