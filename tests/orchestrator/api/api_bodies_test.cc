// The HTTP API's bodies as records (orchestrator/api/api_bodies.h): each
// one's JSON round trip and wire format, strict requests (unknown fields,
// wrong types, malformed JSON), lenient responses.
#include "orchestrator/api/api_bodies.h"

#include <gtest/gtest.h>

namespace trench::orchestrator {
namespace {

JsonDoc Doc(std::string_view text) {
  StatusOr<JsonDoc> d = ParseJsonDoc(text);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : JsonDoc();
}

Bug SomeBug() {
  Bug b;
  b.id = 7;
  b.state = BugState::kCulpritFound;
  b.signature = "sig:abc";
  b.title = "wrong add";
  b.created_ms = 1000;
  b.updated_ms = 2000;
  b.flaky_rate = 0.25;
  b.case_sha256 = std::string(64, 'a');
  b.culprit_commit = "c0ffee";
  b.details["report"]["text"] = "add is wrong";
  b.details["reproduction"]["rate"] = 1.0;
  return b;
}

Event SomeEvent(int64_t id, std::optional<BugState> from, BugState to) {
  Event e;
  e.id = id;
  e.bug_id = 7;
  e.from = from;
  e.to = to;
  e.actor = "orchestrator";
  e.evidence = Json::MakeObject();
  e.evidence["event"] = "reproduced";
  e.at_ms = 3000 + id;
  return e;
}

// The wire format the API has always written (records_json.h).
TEST(ApiBodiesTest, BugWireFormat) {
  EXPECT_EQ(DumpJsonDoc(ToJson(SomeBug())),
            R"({"id":7,"state":"culprit_found","signature":"sig:abc",)"
            R"("title":"wrong add","created_ms":1000,"updated_ms":2000,)"
            R"("duplicate_of":null,"flaky_rate":0.25,"case_sha256":")" +
                std::string(64, 'a') +
                R"(","minimized_sha256":null,"culprit_commit":"c0ffee",)"
                R"("fix_commit":null,"details":{"report":{"text":)"
                R"("add is wrong"},"reproduction":{"rate":1.0}}})");
  EXPECT_EQ(DumpJsonDoc(ToJson(SomeEvent(1, std::nullopt, BugState::kNew))),
            R"({"id":1,"kind":"bug","bug_id":7,"from":null,"to":"new",)"
            R"("actor":"orchestrator","evidence":{"event":"reproduced"},)"
            R"("at_ms":3001})");
  EXPECT_EQ(DumpJsonDoc(ToJson(ErrorBody{"not_found", "no bug 9"})),
            R"({"error":{"code":"not_found","message":"no bug 9"}})");
  EXPECT_EQ(DumpJsonDoc(ToJson(ReportCreated{3, std::nullopt})), R"({"id":3})");
}

TEST(ApiBodiesTest, BugPageRoundTrip) {
  BugPage page;
  page.bug = SomeBug();
  page.events = {SomeEvent(1, std::nullopt, BugState::kNew),
                 SomeEvent(2, BugState::kNew, BugState::kReproduced)};
  Patch p;
  p.id = 4;
  p.bug_id = 7;
  p.branch = "trench/bug-7";
  p.diff = "--- a/x\n+++ b/x\n";
  p.verified = true;
  p.verification["repro"] = "pass";
  p.created_ms = 5;
  p.updated_ms = 6;
  page.patches = {p};
  page.jobs = {BugJob{9, "draft", "parked", 5, 2, 3, "timeout",
                      "failed 3 of 3 attempts: timeout", 8},
               BugJob{8, "reproduce", "done", 1, 0, 8, "", "", 4}};
  const JsonDoc doc = ToJson(page);
  StatusOr<BugPage> back = ParseBugPage(Doc(DumpJsonDoc(doc)));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->bug.id, 7);
  EXPECT_EQ(back->bug.state, BugState::kCulpritFound);
  EXPECT_EQ(back->bug.flaky_rate, 0.25);
  EXPECT_EQ(back->bug.culprit_commit, "c0ffee");
  EXPECT_FALSE(back->bug.fix_commit.has_value());
  EXPECT_EQ(back->bug.details, SomeBug().details);
  ASSERT_EQ(back->events.size(), 2u);
  EXPECT_FALSE(back->events[0].from.has_value());
  EXPECT_EQ(back->events[1].from, BugState::kNew);
  EXPECT_EQ(back->events[1].to, BugState::kReproduced);
  ASSERT_EQ(back->patches.size(), 1u);
  EXPECT_EQ(back->patches[0].diff, p.diff);
  EXPECT_TRUE(back->patches[0].verified);
  ASSERT_EQ(back->jobs.size(), 2u);
  EXPECT_EQ(back->jobs[0].crashes, 2);
  EXPECT_EQ(back->jobs[0].parked_reason, "failed 3 of 3 attempts: timeout");
  EXPECT_EQ(DumpJsonDoc(ToJson(*back)), DumpJsonDoc(doc));
}

TEST(ApiBodiesTest, BugListAndReviewResultRoundTrip) {
  BugList list{{SomeBug(), SomeBug()}};
  list.bugs[1].id = 8;
  StatusOr<BugList> back = ParseBugList(ToJson(list));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->bugs.size(), 2u);
  EXPECT_EQ(back->bugs[1].id, 8);
  EXPECT_EQ(DumpJsonDoc(ToJson(*back)), DumpJsonDoc(ToJson(list)));
  StatusOr<ReviewResult> r = ParseReviewResult(ToJson(ReviewResult{SomeBug()}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->bug.title, "wrong add");
}

TEST(ApiBodiesTest, EventFeedRoundTrip) {
  CommitEvent c;
  c.id = 3;
  c.commit_sha = std::string(40, 'b');
  c.kind = CommitEventKind::kBuildReady;
  c.actor = "builder";
  c.evidence = Json::MakeObject();
  c.evidence["built"] = true;
  c.at_ms = 9;
  EventFeed feed;
  feed.events = {SomeEvent(1, std::nullopt, BugState::kNew), c};
  feed.next = 3;
  const JsonDoc doc = ToJson(feed);
  EXPECT_EQ(DumpJsonDoc(doc["events"][1]),
            R"({"id":3,"kind":"commit","event":"build_ready","commit":")" +
                std::string(40, 'b') +
                R"(","actor":"builder","evidence":{"built":true},"at_ms":9})");
  StatusOr<EventFeed> back = ParseEventFeed(doc);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->events.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<Event>(back->events[0]));
  ASSERT_TRUE(std::holds_alternative<CommitEvent>(back->events[1]));
  EXPECT_EQ(std::get<CommitEvent>(back->events[1]).kind,
            CommitEventKind::kBuildReady);
  EXPECT_EQ(back->next, 3);
  EXPECT_EQ(DumpJsonDoc(ToJson(*back)), DumpJsonDoc(doc));
}

TEST(ApiBodiesTest, ResponsesIgnoreUnknownFieldsAndNameBadOnes) {
  StatusOr<ReportCreated> r =
      ParseReportCreated(Doc(R"({"id": 4, "case": "x", "new_field": 1})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->id, 4);
  EXPECT_EQ(r->case_sha256, "x");
  StatusOr<ErrorBody> e = ParseErrorBody(
      Doc(R"({"error": {"code": "conflict", "message": "m", "hint": 1}})"));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->message, "m");

  struct Bad {
    std::string body, message;
  } cases[] = {
      {R"({"id": "4"})", "field 'id' must be an integer, got string"},
      {R"({"id": -4})", "field 'id' must be positive"},
      {R"({"bugs": [{"id": 0, "state": "new"}]})",
       "field 'bugs[0]': field 'id' must be a positive integer, got 0"},
      {R"({"bugs": [{"id": 1, "state": "sleeping"}]})",
       "unknown bug state 'sleeping'"},
      {R"({})", "field 'bugs' is missing"},
      {R"({"events": [{"id": 1, "kind": "tag"}]})",
       "field 'kind' must be \"bug\" or \"commit\""},
      {R"({"events": [{"id": 1, "kind": "commit", "event": "pushed",
                       "commit": "c"}]})",
       "unknown commit event 'pushed'"},
      {R"({"error": {"code": "x"}})", "field 'error.message' is missing"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.body);
    Status s;
    const JsonDoc doc = Doc(b.body);
    if (doc.contains("bugs") || b.body == "{}") {
      s = ParseBugList(doc).status();
    } else if (doc.contains("events")) {
      s = ParseEventFeed(doc).status();
    } else if (doc.contains("error")) {
      s = ParseErrorBody(doc).status();
    } else {
      s = ParseReportCreated(doc).status();
    }
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(b.message), std::string::npos) << s.message();
  }
}

TEST(ApiBodiesTest, ReportRequestRoundTrip) {
  StatusOr<ReportRequest> r = ParseReportRequest(
      R"({"text": "t", "title": "T", "hlo": "HloModule m",
          "inputs": [{"dtype": "f32", "shape": [1], "values": [0.5]}]})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text, "t");
  EXPECT_EQ(r->title, "T");
  EXPECT_EQ(r->hlo, "HloModule m");
  EXPECT_EQ(r->inputs.size(), 1u);
  EXPECT_EQ(DumpJsonDoc(ToJson(*r)),
            R"({"text":"t","title":"T","hlo":"HloModule m","inputs":)"
            R"([{"dtype":"f32","shape":[1],"values":[0.5]}]})");
  StatusOr<ReportRequest> again = ParseReportRequest(DumpJsonDoc(ToJson(*r)));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(DumpJsonDoc(ToJson(*again)), DumpJsonDoc(ToJson(*r)));
  r = ParseReportRequest(R"({"text": "only text"})");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->hlo.has_value());
  EXPECT_TRUE(r->inputs.is_null());
  EXPECT_EQ(DumpJsonDoc(ToJson(*r)), R"({"text":"only text"})");
}

TEST(ApiBodiesTest, ReviewRequestRoundTrip) {
  StatusOr<ReviewRequest> r =
      ParseReviewRequest(R"({"decision": "reject", "comment": "no"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->decision, ReviewRequest::Decision::kReject);
  EXPECT_EQ(r->comment, "no");
  EXPECT_EQ(DumpJsonDoc(ToJson(*r)), R"({"decision":"reject","comment":"no"})");
  r = ParseReviewRequest(R"({"decision": "approve"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(DumpJsonDoc(ToJson(*r)), R"({"decision":"approve"})");
}

TEST(ApiBodiesTest, RequestsAreStrict) {
  struct Bad {
    bool review;
    std::string body, message;
  } cases[] = {
      {false, "{\"text\": \"x\",\n  oops}",
       "malformed JSON in request body: 2:3"},
      {false, "", "malformed JSON in request body: 1:1"},
      {false, "[1]", "request body must be a JSON object, got array"},
      {false, R"({"text": "x", "colour": 1})",
       "unknown field 'colour' (expected one of text, title, hlo, inputs)"},
      {false, R"({"text": 5})", "field 'text' must be a string, got number"},
      {false, R"({"text": null})", "field 'text' must be a string, got null"},
      {false, R"({"text": "x", "inputs": []})", "field 'inputs' needs 'hlo'"},
      {false, R"({"hlo": "h", "inputs": {}})",
       "field 'inputs' must be an array, got object"},
      {true, "{", "malformed JSON in request body: 1:2"},
      {true, R"({"decision": "maybe"})",
       "field 'decision' must be \"approve\" or \"reject\""},
      {true, R"({})", "field 'decision' must be \"approve\" or \"reject\""},
      {true, R"({"decision": 1})",
       "field 'decision' must be a string, got number"},
      {true, R"({"decision": "approve", "comment": []})",
       "field 'comment' must be a string, got array"},
      {true, R"({"decision": "approve", "by": "me"})", "unknown field 'by'"},
      // Which of two decisions would count is not guessed.
      {true, R"({"decision": "reject", "decision": "approve"})",
       "malformed JSON in request body: 1:24: duplicate key \"decision\""},
  };
  // Deep nesting is refused before anything recurses over it.
  const std::string deep =
      R"({"hlo": "h", "inputs": )" + std::string(100000, '[') + "]}";
  EXPECT_NE(ParseReportRequest(deep).status().message().find(
                "malformed JSON in request body: 1:535: expected at most 512"),
            std::string::npos)
      << ParseReportRequest(deep).status().message();
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.body);
    const Status s = b.review ? ParseReviewRequest(b.body).status()
                              : ParseReportRequest(b.body).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(b.message), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace trench::orchestrator
