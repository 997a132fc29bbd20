// Server time of the web dashboard's heaviest reads (orchestrator/api/
// web_data.h) on a store with 10,000 bugs, one of which has 1,000 events
// and 20 agent sessions: GET /api/v1/bugs/{id}/view, and GET /api/v1/bugs
// (first page; filtered by pass; by text). The requests go through
// ApiHandlers::Handle (routing, queries, JSON encoding), not a socket.
// Prints one JSON object {"store", "bug", "<query>": median ms, ...}; the
// store file is kept for bench/web_data.py, which runs the same queries
// with python's sqlite3 + json and prints the ratios. Run that script.
//
// Usage: bench_web_data DIR [REPEATS]   (DIR: an empty directory)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "orchestrator/api/api_handlers.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {
namespace {

constexpr int kBugs = 10000;
constexpr int kEvents = 1000;
constexpr int kSessions = 20;
constexpr int kMessages = 10;

int Fail(const Status& s) {
  std::fprintf(stderr, "bench_web_data: %s\n", s.ToString().c_str());
  return 2;
}

Status Fill(Store* store, int64_t* heavy) {
  Db* db = store->db();
  RETURN_IF_ERROR(db->Exec("BEGIN"));
  for (int i = 1; i <= kBugs; ++i) {
    // Prepared (from the cache) each time: a statement resets when it goes.
    ASSIGN_OR_RETURN(
        Statement st,
        db->Prepare("INSERT INTO bugs (state, signature, title, created_ms, "
                    "updated_ms, details) VALUES (?1, ?2, ?3, ?4, ?4, ?5)"));
    {
      Json d = Json::MakeObject();
      Json findings = Json::MakeObject();
      findings["pass"] = "pass" + std::to_string(i % 40);
      findings["opcode"] = "op" + std::to_string(i % 30);
      findings["instruction"] = "fusion." + std::to_string(i);
      Json loc = Json::MakeObject();
      loc["findings"] = findings;
      loc["status"] = "mismatch";
      d["localization"] = loc;
      Json report = Json::MakeObject();
      report["text"] = "the output of add differs for case " +
                       std::to_string(i) +
                       (i % 97 == 0 ? " with a rare needle" : "");
      d["report"] = report;
      d["commit"] = "c" + std::to_string(i % 50);
      st.BindText(1, i % 3 == 0 ? "reproduced" : "new")
          .BindText(2, "sig" + std::to_string(i % 400))
          .BindText(3, "bug number " + std::to_string(i))
          .BindInt64(4, 1700000000000 + i)
          .BindJson(5, d);
      RETURN_IF_ERROR(st.Run());
    }
  }
  *heavy = kBugs / 2;
  for (int i = 0; i < kEvents; ++i) {
    ASSIGN_OR_RETURN(
        Statement st,
        db->Prepare("INSERT INTO events (bug_id, from_state, to_state, actor, "
                    "evidence, at_ms) VALUES (?1, 'new', 'new', 'bench', ?2, "
                    "?3)"));
    {
      Json e = Json::MakeObject();
      e["event"] = "note";
      e["text"] = "event " + std::to_string(i) + " of the heavy bug";
      st.BindInt64(1, *heavy).BindJson(2, e).BindInt64(3, 1700000000000 + i);
      RETURN_IF_ERROR(st.Run());
    }
  }
  RETURN_IF_ERROR(db->Exec("COMMIT"));
  for (int s = 0; s < kSessions; ++s) {
    ASSIGN_OR_RETURN(int64_t id, store->StartAgentSession(
                                     *heavy, "patch_drafter", "openai"));
    for (int m = 0; m < kMessages; ++m) {
      RETURN_IF_ERROR(store
                          ->AddAgentMessage(id, m % 2 ? "assistant" : "user",
                                            std::string(400, 'x'), 100, 50)
                          .status());
    }
    RETURN_IF_ERROR(store->EndAgentSession(id, "done"));
  }
  return Status::Ok();
}

double MedianMs(ApiHandlers& api, const ApiRequest& r, int repeats) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    ApiResponse resp = api.Handle(r);
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    if (resp.status != 200) {
      std::fprintf(stderr, "%s: %d %s\n", r.path.c_str(), resp.status,
                   resp.body.c_str());
      return -1;
    }
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_web_data DIR [REPEATS]\n");
    return 2;
  }
  const std::string path = std::string(argv[1]) + "/store.db";
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 30;
  StatusOr<std::unique_ptr<Store>> store = Store::Open(path, {});
  if (!store.ok()) return Fail(store.status());
  int64_t heavy = 0;
  if (Status s = Fill(store->get(), &heavy); !s.ok()) return Fail(s);
  ApiHandlers api(store->get(), ApiOptions{});
  struct Query {
    const char* name;
    std::string path;
    std::map<std::string, std::string> query;
  };
  const std::vector<Query> queries = {
      {"view", "/api/v1/bugs/" + std::to_string(heavy) + "/view", {}},
      {"list", "/api/v1/bugs", {}},
      {"list_pass", "/api/v1/bugs", {{"pass", "pass7"}}},
      {"list_text", "/api/v1/bugs", {{"q", "needle"}}},
  };
  std::printf("{\"store\": \"%s\", \"bug\": %lld", path.c_str(),
              static_cast<long long>(heavy));
  for (const Query& q : queries) {
    ApiRequest r;
    r.method = "GET";
    r.path = q.path;
    r.query = q.query;
    const double ms = MedianMs(api, r, repeats);
    if (ms < 0) return 1;
    std::printf(", \"%s\": %.3f", q.name, ms);
  }
  std::printf("}\n");
  return 0;
}

}  // namespace
}  // namespace trench::orchestrator

int main(int argc, char** argv) {
  return trench::orchestrator::Main(argc, argv);
}
