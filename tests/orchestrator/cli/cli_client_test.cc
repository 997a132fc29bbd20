// The API client commands (cmd_client.cc) against the real API over a
// real socket (api_test_util.h: HttpServer + ApiHandlers over a temporary
// store), run in-process with captured output.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "base/sha256.h"
#include "orchestrator/cli/cli.h"
#include "orchestrator/store/job_queue.h"
#include "tests/orchestrator/api/api_test_util.h"
#include "tests/orchestrator/cli/cli_test_util.h"

namespace trench::orchestrator::testing {
namespace {

using cli::testing::CliRun;

class CliClientTest : public ApiTest {
 protected:
  // Runs `trench args...` against the test's server with `token` in
  // TRENCH_TOKEN and `stdin_text` on stdin.
  CliRun Run(std::vector<std::string> args, const std::string& token = kToken,
             const std::string& stdin_text = "") {
    args.push_back("--server");
    args.push_back(Url());
    return RunRaw(args, token, stdin_text);
  }
  CliRun RunRaw(const std::vector<std::string>& args, const std::string& token,
                const std::string& stdin_text = "") {
    std::map<std::string, std::string> env;
    if (!token.empty()) env["TRENCH_TOKEN"] = token;
    return cli::testing::RunTrench(args, std::move(env), stdin_text);
  }
  std::string Url() const {
    return "http://127.0.0.1:" + std::to_string(server_->port());
  }
  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // The bug the report printed the id of.
  Bug ReportedBug(const CliRun& r) {
    EXPECT_EQ(r.code, 0) << r.err;
    const int64_t id = std::atoll(r.out.c_str());
    EXPECT_GT(id, 0) << r.out;
    StatusOr<Bug> bug = check_->GetBug(id);
    EXPECT_TRUE(bug.ok()) << bug.status().ToString();
    return bug.ok() ? *bug : Bug{};
  }
  // A bug moved along the main line up to `proposed`, with details.
  int64_t ProposedBug() {
    const std::string sha = Sha256Hex("minimized");
    EXPECT_TRUE(check_->PutCase(sha, "", Json::MakeObject()).ok());
    NewBug nb{"sig-1", "wrong add", std::nullopt, Json::MakeObject()};
    auto id = check_->CreateBug(nb, "test", Json());
    EXPECT_TRUE(id.ok());
    TransitionFields f;
    f.minimized_sha256 = sha;
    f.culprit_commit = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00";
    for (BugState s :
         {BugState::kReproduced, BugState::kMinimized, BugState::kLocalized,
          BugState::kCulpritFound, BugState::kPatchDrafted,
          BugState::kPatchVerified, BugState::kProposed}) {
      Json evidence = Json::MakeObject();
      evidence["event"] = std::string(BugStateName(s));
      if (s == BugState::kLocalized) {
        evidence["localization"]["findings"]["pass"] = "algsimp";
        evidence["localization"]["findings"]["fused_opcode"] = "add";
      }
      EXPECT_TRUE(check_->TransitionBug(*id, s, "test", evidence, f).ok());
    }
    auto patch = check_->AddPatch(*id, "trench/bug-" + std::to_string(*id),
                                  "--- a/f\n+++ b/f\n-x\n+y\n");
    EXPECT_TRUE(patch.ok());
    return *id;
  }
};

void ExpectHas(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos)
      << "missing \"" << part << "\" in:\n"
      << text;
}

TEST(ExtractInlineHloTest, FencedUnfencedAndNone) {
  const std::string module = std::string(kHlo) + "\n";
  EXPECT_EQ(
      cli::ExtractInlineHlo("It breaks:\n```hlo\n" + module + "```\nThanks!\n"),
      module);
  EXPECT_EQ(cli::ExtractInlineHlo("It breaks:\n\n" + module +
                                  "\nThe output is wrong.\n"),
            module);
  // Braces inside strings do not count; computations before ENTRY stay.
  const std::string two =
      "HloModule n\n\nadd {\n  x = f32[] parameter(0)\n}\n\n"
      "ENTRY e {\n  p = f32[] parameter(0), metadata={op_name=\"}{\"}\n}\n";
  EXPECT_EQ(cli::ExtractInlineHlo("see\n" + two + "bye\n"), two);
  EXPECT_EQ(cli::ExtractInlineHlo("no module here\n```\ncode\n```\n"), "");
  EXPECT_EQ(cli::ExtractInlineHlo(""), "");
}

TEST_F(CliClientTest, ReportWithInlineFencedHlo) {
  const std::string text = "add gives garbage\n\nRepro:\n```\n" +
                           std::string(kHlo) + "\n```\nOn main since today.\n";
  CliRun r =
      Run({"report", WriteFile("report.txt", text), "--title", "bad add"});
  Bug bug = ReportedBug(r);
  EXPECT_EQ(bug.title, "bad add");
  ASSERT_TRUE(bug.case_sha256.has_value());
  EXPECT_EQ(*bug.case_sha256, Sha256Hex(std::string(kHlo) + "\n"));
  const Json* rep = bug.details.Find("report");
  ASSERT_NE(rep, nullptr);
  EXPECT_EQ(rep->Find("text")->string_value(), text);
  EXPECT_EQ(rep->Find("hlo")->string_value(), std::string(kHlo) + "\n");
  ExpectHas(r.err, "bug " + std::to_string(bug.id) + " created with case");
}

TEST_F(CliClientTest, ReportFromStdinWithHloFileAndInputs) {
  const std::string hlo = WriteFile("m.hlo", kHlo);
  const std::string inputs =
      WriteFile("in.json", R"([{"dtype": "f32", "shape": [2], "values": [1, 2]},
                    {"dtype": "f32", "shape": [2], "values": [3, 4]}])");
  CliRun r = Run({"report", "-", "--hlo", hlo, "--inputs", inputs}, kToken,
                 "NaN appears\nsecond line");
  Bug bug = ReportedBug(r);
  EXPECT_EQ(bug.title, "NaN appears");
  EXPECT_TRUE(bug.case_sha256.has_value());
  EXPECT_EQ(bug.details.Find("report")->Find("inputs")->size(), 2u);

  // No FILE and no --hlo: the text comes from stdin; no HLO, no case.
  r = Run({"report"}, kToken, "it crashes on my model");
  bug = ReportedBug(r);
  EXPECT_FALSE(bug.case_sha256.has_value());
  EXPECT_EQ(bug.details.Find("report")->Find("hlo"), nullptr);
}

TEST_F(CliClientTest, ReportErrors) {
  StoreSnapshot before = Snapshot();
  // Invalid HLO inline: the API's 400 and its message.
  CliRun r =
      Run({"report", "-"}, kToken, "HloModule m\nENTRY e {\n  ROOT x\n}");
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "trench: field 'hlo' is not a valid HLO module");
  ExpectHas(r.err, "(HTTP 400)");
  // HLO that parses but does not verify: the verifier's message, with the
  // instruction's line and column in the module file.
  r = Run({"report", "-", "--hlo",
           WriteFile("wrong.hlo",
                     "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                     "  ROOT a = f32[5] add(p, p)\n}\n")},
          kToken, "the add is wrong");
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err,
            "trench: field 'hlo' does not verify: 4:8: in computation %e: "
            "%a: add declared shape f32[5] is not compatible with inferred "
            "shape f32[4] (HTTP 400)");
  // An attribute nobody knows.
  r = Run({"report", "--hlo",
           WriteFile("attr.hlo",
                     "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                     "  ROOT n = f32[4] negate(p), custom_Kall_target=\"f\"\n"
                     "}\n")});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err,
            "trench: field 'hlo' is not a valid HLO module: 4:30: unknown "
            "attribute 'custom_Kall_target'; did you mean "
            "'custom_call_target'? (HTTP 400)");
  // Empty report, bad flags, unreadable files.
  EXPECT_EQ(Run({"report", "-"}, kToken, "").code, 2);
  EXPECT_EQ(Run({"report", "--bogus"}).code, 2);
  r = Run({"report", dir_ + "/missing.txt"});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "cannot read");
  r = Run({"report", "--hlo", WriteFile("m.hlo", kHlo), "--inputs",
           WriteFile("bad.json", "[1,\n 2")});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "bad.json:2:");
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(CliClientTest, WritesNeedTheRightToken) {
  StoreSnapshot before = Snapshot();
  CliRun r = Run({"report", "-"}, "", "text");
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "set TRENCH_TOKEN");
  ExpectHas(r.err, "(HTTP 401)");
  r = Run({"report", "-"}, "wrong-token", "text");
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "trench: the bearer token is not valid (HTTP 403)");
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(CliClientTest, BugsTable) {
  EXPECT_EQ(Run({"bugs"}).out, "no bugs\n");
  ReportedBug(Run({"report", "-", "--title", "first one"}, kToken, "a"));
  ReportedBug(Run({"report", "-", "--title", "second one"}, kToken, "b"));
  const int64_t proposed = ProposedBug();
  CliRun r = Run({"bugs"});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "ID    STATE");
  ExpectHas(r.out, "first one");
  ExpectHas(r.out, "second one");
  ExpectHas(r.out, std::to_string(proposed) + "     proposed");
  ExpectHas(r.out, "c0ffee00c0ff");
  r = Run({"bugs", "--state", "proposed"});
  EXPECT_EQ(r.out.find("first one"), std::string::npos) << r.out;
  ExpectHas(r.out, "wrong add");
  r = Run({"bugs", "--json"});
  StatusOr<Json> j = ParseJson(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ(j->Find("bugs")->size(), 3u);
  r = Run({"bugs", "--state", "bogus"});
  EXPECT_EQ(r.code, 2);
  ExpectHas(r.err,
            "trench: unknown bug state 'bogus' (valid: new, reproduced, "
            "not_reproducible, flaky, minimized, localized, culprit_found, "
            "patch_drafted, patch_verified, proposed, approved, rejected, "
            "fixed, closed, duplicate, invalid)");
}

TEST_F(CliClientTest, ShowPrintsTheTriageReport) {
  const int64_t id = ProposedBug();
  CliRun r = Run({"show", std::to_string(id)});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "# Bug " + std::to_string(id) + ": wrong add");
  ExpectHas(r.out, "state: proposed");
  ExpectHas(r.out, "pass: algsimp");
  ExpectHas(r.out, "commit: c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00");
  ExpectHas(r.out, "branch: trench/bug-" + std::to_string(id));
  ExpectHas(r.out, "```diff\n--- a/f");
  ExpectHas(r.out, "patch_verified -> proposed  by test");
  r = Run({"show", std::to_string(id), "--json"});
  StatusOr<Json> j = ParseJson(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ(*j->Find("bug")->Find("id")->GetInt64(), id);
  EXPECT_EQ(j->Find("events")->size(), 8u);
}

// No byte of `out` is a control a terminal acts on (C0 but newline, DEL,
// UTF-8 C1) and no line starts a trailer.
void ExpectNoControls(const std::string& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    const unsigned char c = out[i];
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c != 0x7f))
        << "control byte " << int(c) << " at " << i << " in:\n"
        << out;
    if (c == 0xc2 && i + 1 < out.size()) {
      const unsigned char d = out[i + 1];
      EXPECT_FALSE(d >= 0x80 && d <= 0x9f) << "C1 control in:\n" << out;
    }
  }
}

// Issue 18, item 11: a hostile title and text, through the API (cleaned at
// intake) and as an older daemon may have stored them (raw), are printed
// by `trench bugs` and `trench show` with every control escaped.
TEST_F(CliClientTest, StrangerTextIsEscapedOnTheTerminal) {
  const std::string title =
      "abort\n\nSigned-off-by: Mallory <m@evil>\n\x1b]0;pwned\x07";
  const std::string text =
      "boom\r\x1b[2J\x1b]0;pwned\x07 \xc2\x9b"
      "31m done";
  Json body = Json::MakeObject();
  body["title"] = title;
  body["text"] = text;
  HttpReply posted = Call("POST", "/api/v1/reports", body.Dump(), kToken);
  ASSERT_EQ(posted.status, 201) << posted.body;
  const int64_t cleaned = *posted.json().Find("id")->GetInt64();
  EXPECT_EQ(check_->GetBug(cleaned)->title,
            "abort Signed-off-by: Mallory <m@evil> ]0;pwned");
  NewBug raw{"sig-raw", title, std::nullopt, Json::MakeObject()};
  raw.details["report"]["text"] = text;
  StatusOr<int64_t> stored = check_->CreateBug(raw, "\x1b[31mtest", Json());
  ASSERT_TRUE(stored.ok());

  CliRun r = Run({"bugs"});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectNoControls(r.out);
  ExpectHas(r.out, "abort Signed-off-by: Mallory <m@evil> ]0;pwned\n");
  ExpectHas(r.out,
            "abort\\x0a\\x0aSigned-off-by: Mallory <m@evil>\\x0a\\x1b]0;"
            "pwned\\x07\n");
  for (int64_t id : {cleaned, *stored}) {
    r = Run({"show", std::to_string(id)});
    ASSERT_EQ(r.code, 0) << r.err;
    ExpectNoControls(r.out);
    ExpectHas(r.out, "> boom\\x0d\\x1b[2J\\x1b]0;pwned\\x07 \\u{009b}31m done");
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_FALSE(line.starts_with("Signed-off-by:")) << r.out;
    }
  }
  ExpectHas(r.out, "by \\x1b[31mtest");
  r = Run({"events"});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectNoControls(r.out);
}

// Issue 18 item 8 from the CLI: `trench show` lists a bug's jobs, says
// why a parked one stopped (its crashes apart from its failures, control
// characters escaped) and how to retry; `trench retry` queues it again.
TEST_F(CliClientTest, ShowListsParkedJobsAndRetryQueuesThemAgain) {
  const int64_t id = ProposedBug();
  const std::string n = std::to_string(id);
  CliRun r = Run({"retry", n});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "no parked or failed step to retry (HTTP 409)");
  JobQueue queue(check_.get(), {.max_crashes = 2});
  JobOptions o;
  o.dedup_key = "bug:" + n + ":draft";
  auto job = queue.Enqueue("draft", Json::MakeObject(), o);
  ASSERT_TRUE(job.ok());
  for (int crash = 0; crash < 2; ++crash) {
    ASSERT_EQ(queue.Lease("daemon", 1, 60000)->size(), 1u);
    ASSERT_EQ(*queue.RequeueOwner("daemon"), 1);
  }
  r = Run({"show", n});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "## Jobs\n\n- job " + std::to_string(job->id) +
                       " draft: parked, 0 of 3 attempts used, 2 lost to "
                       "crashes\n  parked: crash loop: 2 leases lost");
  ExpectHas(r.out, "Retry with: trench retry " + n);
  r = Run({"retry", n}, "");
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "(HTTP 401)");
  EXPECT_EQ(Run({"retry", "x"}).code, 2);
  EXPECT_EQ(Run({"retry"}).code, 2);
  r = Run({"retry", "999"});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "(HTTP 404)");
  r = Run({"retry", n});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "bug " + n + ": job " + std::to_string(job->id) +
                       " queued again\n");
  EXPECT_EQ(queue.Get(job->id)->state, JobState::kQueued);
  r = Run({"show", n});
  ExpectHas(r.out, "draft: queued, 0 of 3 attempts used\n");
  EXPECT_EQ(r.out.find("Retry with"), std::string::npos) << r.out;
  // A step's error quoting a report cannot drive the terminal.
  auto leased = queue.Lease("daemon", 1, 60000);
  ASSERT_EQ(leased->size(), 1u);
  ASSERT_TRUE(
      queue.Fail(LeaseOf((*leased)[0]), "bad\x1b]0;pwned\x07\nline", false)
          .ok());
  r = Run({"show", n});
  ExpectHas(r.out, "last error: bad\\x1b]0;pwned\\x07\\x0aline\n");
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

TEST_F(CliClientTest, UnknownAndBadIds) {
  CliRun r = Run({"show", "999"});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "trench: ");
  ExpectHas(r.err, "999");
  ExpectHas(r.err, "(HTTP 404)");
  EXPECT_EQ(Run({"show", "abc"}).code, 2);
  EXPECT_EQ(Run({"show"}).code, 2);
  r = Run({"review", "999", "--approve"});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "(HTTP 404)");
}

TEST_F(CliClientTest, Review) {
  const int64_t id = ProposedBug();
  const std::string n = std::to_string(id);
  // Wrong token: refused, nothing changes.
  CliRun r = Run({"review", n, "--reject", "--comment", "no"}, "nope");
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "(HTTP 403)");
  EXPECT_EQ(check_->GetBug(id)->state, BugState::kProposed);
  // Usage errors.
  EXPECT_EQ(Run({"review", n}).code, 2);
  EXPECT_EQ(Run({"review", n, "--approve", "--reject"}).code, 2);
  // The right token.
  r = Run({"review", n, "--reject", "--comment", "breaks the fast path"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "bug " + n + ": rejected\n");
  StatusOr<std::vector<Event>> events = check_->ListEvents(id, 0, 100);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->back().evidence.Find("comment")->string_value(),
            "breaks the fast path");
  // An illegal move: the lifecycle's message with 409.
  r = Run({"review", n, "--approve"});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "cannot approve a bug in state rejected");
  ExpectHas(r.err, "(HTTP 409)");
}

// Every triage verb through `trench review` (POST /api/v1/bugs/N/triage),
// recorded with the CLI as the actor.
TEST_F(CliClientTest, ReviewVerbs) {
  const int64_t id = ProposedBug();
  const std::string n = std::to_string(id);
  // Usage errors: no request is made.
  CliRun r = Run({"review", n, "--redraft"});
  EXPECT_EQ(r.code, 2);
  ExpectHas(r.err, "--hint is missing");
  EXPECT_EQ(Run({"review", n, "--approve", "--hint", "x"}).code, 2);
  EXPECT_EQ(Run({"review", n, "--close", "--reopen"}).code, 2);
  EXPECT_EQ(Run({"review", n, "--duplicate-of", "x"}).code, 2);
  EXPECT_EQ(check_->GetBug(id)->state, BugState::kProposed);

  r = Run({"review", n, "--redraft", "--hint", "revert_commit please"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "bug " + n + ": culprit_found\n");
  StatusOr<std::vector<Event>> events = check_->ListEvents(id, 0, 100);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->back().actor, "cli:triage");
  EXPECT_EQ(events->back().evidence.Find("hint")->string_value(),
            "revert_commit please");
  EXPECT_EQ(check_->GetBug(id)
                ->details.Find("draft_hints")
                ->array()[0]
                .Find("hint")
                ->string_value(),
            "revert_commit please");
  r = Run({"show", n});
  ExpectHas(r.out, "## Review\nhint for the drafter: revert_commit please\n");

  NewBug other{"sig-2", "other", std::nullopt, Json::MakeObject()};
  const int64_t m = *check_->CreateBug(other, "test", Json());
  r = Run({"review", n, "--duplicate-of", std::to_string(m)});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "bug " + n + ": duplicate\n");
  EXPECT_EQ(check_->GetBug(id)->duplicate_of, m);
  r = Run({"review", n, "--reopen", "--comment", "not the same"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "bug " + n + ": new\n");
  r = Run({"review", n, "--invalid"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "bug " + n + ": invalid\n");
  r = Run({"review", n, "--close"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "bug " + n + ": closed\n");
  // An illegal verb: the lifecycle's reason, 409.
  r = Run({"review", n, "--close"});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "cannot close a bug in state closed");
  ExpectHas(r.err, "(HTTP 409)");
}

TEST_F(CliClientTest, Events) {
  const int64_t id = ProposedBug();
  CliRun r = Run({"events", "--bug", std::to_string(id)});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "bug " + std::to_string(id) + ": (created) -> new  by test");
  ExpectHas(r.out, "patch_verified -> proposed");
  r = Run({"events", "--since", "bad"});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "(HTTP 400)");
}

TEST_F(CliClientTest, EventsShowTheCommits) {
  const std::string sha = "0123456789ab" + std::string(28, 'f');
  ASSERT_TRUE(check_
                  ->RecordCommitEvent(sha, CommitEventKind::kCommitLanded,
                                      "orchestrator", Json::MakeObject())
                  .ok());
  const int64_t id = ProposedBug();
  ASSERT_TRUE(check_
                  ->RecordCommitEvent(sha, CommitEventKind::kBuildReady,
                                      "orchestrator", Json::MakeObject())
                  .ok());
  CliRun r = Run({"events"});
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t landed =
      r.out.find("commit 0123456789ab: commit_landed  by orchestrator\n");
  const size_t created =
      r.out.find("bug " + std::to_string(id) + ": (created) -> new");
  const size_t built =
      r.out.find("commit 0123456789ab: build_ready  by orchestrator\n");
  ASSERT_NE(landed, std::string::npos) << r.out;
  ASSERT_NE(built, std::string::npos) << r.out;
  EXPECT_LT(landed, created);
  EXPECT_LT(created, built);
  r = Run({"events", "--commit", sha});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("bug "), std::string::npos) << r.out;
  ExpectHas(r.out, "build_ready");
}

TEST_F(CliClientTest, ServerFromTheEnvironment) {
  std::istringstream in;
  std::ostringstream out, err;
  cli::Context ctx;
  ctx.in = &in;
  ctx.out = &out;
  ctx.err = &err;
  ctx.env["TRENCH_SERVER"] = Url() + "/";
  EXPECT_EQ(cli::RunCli({"bugs"}, ctx), 0) << err.str();
  EXPECT_EQ(out.str(), "no bugs\n");
}

TEST(CliNoDaemonTest, ConnectionRefusedIsNamed) {
  // A port nobody listens on: bound, then closed.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  const std::string url =
      "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  std::istringstream in;
  std::ostringstream out, err;
  cli::Context ctx;
  ctx.in = &in;
  ctx.out = &out;
  ctx.err = &err;
  EXPECT_EQ(cli::RunCli({"bugs", "--server", url}, ctx), 1);
  EXPECT_NE(err.str().find("trench: no daemon at " + url + " ("),
            std::string::npos)
      << err.str();
}

}  // namespace
}  // namespace trench::orchestrator::testing

namespace trench::orchestrator::testing {
namespace {

// Issue 19 item 10: `trench jobs` lists the queue with each stuck job's
// whole last error (escaped); `trench jobs retry N` queues one again and
// refuses a live one.
TEST_F(CliClientTest, JobsListsTheQueueAndRetriesOneJob) {
  JobQueue queue(check_.get());
  JobOptions o;
  o.dedup_key = "bug:7:localize";
  Json payload = Json::MakeObject();
  payload["bug"] = 7;
  const int64_t failed = queue.Enqueue("localize", payload, o)->id;
  const int64_t running = queue.Enqueue("scan", Json::MakeObject())->id;
  auto leased = queue.Lease("daemon", 1, 60000, {"localize"});
  ASSERT_EQ(leased->size(), 1u);
  const std::string error =
      "hlo-bisect: " + std::string(200, 'y') + " \x1b]0;owned\x07 end";
  ASSERT_TRUE(queue.Fail(LeaseOf((*leased)[0]), error, false).ok());
  ASSERT_EQ(queue.Lease("daemon", 1, 60000, {"scan"})->size(), 1u);

  CliRun r = Run({"jobs"});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "ID     STATE    KIND");
  ExpectHas(r.out, std::to_string(running) +
                       std::string(7 - std::to_string(running).size(), ' ') +
                       "running  scan");
  ExpectHas(r.out, "failed   localize      7");
  // The whole error, escaped.
  ExpectHas(r.out, "last error: hlo-bisect: " + std::string(200, 'y') +
                       " \\x1b]0;owned\\x07 end\n");
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  r = Run({"jobs", "--state", "failed"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("scan"), std::string::npos) << r.out;
  r = Run({"jobs", "--bug", "7", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  StatusOr<Json> j = ParseJson(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  ASSERT_EQ(j->Find("jobs")->size(), 1u);
  EXPECT_EQ(j->Find("jobs")->array()[0].Find("last_error")->string_value(),
            error);
  r = Run({"jobs", "--limit", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.err, "more jobs: add --before " + std::to_string(running));

  // Bad arguments are usage errors that say what is valid.
  r = Run({"jobs", "--state", "leased"});
  EXPECT_EQ(r.code, 2);
  ExpectHas(r.err,
            "unknown job state 'leased' (valid: queued, running, done, "
            "failed, parked)");
  r = Run({"jobs", "--help"});
  ExpectHas(r.out, "queued, running, done, failed, parked");
  EXPECT_EQ(Run({"jobs", "--bug", "x"}).code, 2);
  EXPECT_EQ(Run({"jobs", "retry"}).code, 2);
  EXPECT_EQ(Run({"jobs", "retry", "0"}).code, 2);
  EXPECT_EQ(Run({"jobs", "cancel", "1"}).code, 2);

  r = Run({"jobs", "retry", std::to_string(running)});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "is running, not parked or failed");
  r = Run({"jobs", "retry", std::to_string(failed)}, "");
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "(HTTP 401)");
  r = Run({"jobs", "retry", std::to_string(failed)});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "job " + std::to_string(failed) + " (localize): queued again\n");
  EXPECT_EQ(queue.Get(failed)->state, JobState::kQueued);
  r = Run({"jobs", "retry", "999"});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "(HTTP 404)");
}

// Issue 19 item 11: `trench bugs` pages and lists the valid states.
TEST_F(CliClientTest, BugsPagesAndListsTheStates) {
  std::vector<int64_t> ids;
  for (const char* t : {"one", "two", "three"}) {
    ids.push_back(*check_->CreateBug(
        {std::string("sig-") + t, t, std::nullopt, Json::MakeObject()}, "test",
        Json()));
  }
  CliRun r = Run({"bugs", "--limit", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "one");
  ExpectHas(r.out, "two");
  EXPECT_EQ(r.out.find("three"), std::string::npos) << r.out;
  ExpectHas(r.err, "more bugs: trench bugs --limit 2 --page " +
                       std::to_string(ids[1]));
  r = Run({"bugs", "--limit", "2", "--page", std::to_string(ids[1])});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "three");
  EXPECT_EQ(r.out.find("one"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("more bugs"), std::string::npos) << r.err;
  r = Run({"bugs", "--limit", "2", "--json"});
  StatusOr<Json> j = ParseJson(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ(j->Find("next")->int64_value(), ids[1]);
  EXPECT_EQ(Run({"bugs", "--page", "x"}).code, 2);
  EXPECT_EQ(Run({"bugs", "--limit", "0"}).code, 2);
  r = Run({"bugs", "--help"});
  ExpectHas(r.out, "new, reproduced, not_reproducible");
  ExpectHas(r.out, "duplicate");
}

// Issue 19 item 11: `trench events --follow` prints an event written while
// it waits (long poll), then stops after --count.
TEST_F(CliClientTest, EventsFollowPrintsNewEvents) {
  const int64_t bug = *check_->CreateBug(
      {"sig", "t", std::nullopt, Json::MakeObject()}, "test", Json());
  CliRun r = Run({"events", "--json"});
  const int64_t since = ParseJson(r.out)->Find("next")->int64_value();
  std::promise<CliRun> done;
  std::thread follower([&] {
    done.set_value(Run({"events", "--follow", "--since", std::to_string(since),
                        "--count", "1", "--wait", "30"}));
  });
  std::future<CliRun> result = done.get_future();
  // The follower is answered by this write (or sees it at once when the
  // write came first).
  ASSERT_TRUE(check_
                  ->TransitionBug(bug, BugState::kReproduced, "test",
                                  Json::MakeObject())
                  .ok());
  ASSERT_EQ(result.wait_for(std::chrono::seconds(60)),
            std::future_status::ready);
  follower.join();
  r = result.get();
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "bug " + std::to_string(bug) + ": new -> reproduced");
  EXPECT_EQ(Run({"events", "--count", "1"}).code, 2);  // Needs --follow.
  EXPECT_EQ(Run({"events", "--follow", "--wait", "0"}).code, 2);
}

}  // namespace
}  // namespace trench::orchestrator::testing
