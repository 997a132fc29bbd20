// A fuzz campaign in shards (fuzz_shards.h).
#include "orchestrator/pipeline/fuzz_shards.h"

#include <algorithm>
#include <map>
#include <set>

namespace trench::orchestrator {
namespace {

int64_t IntOr(const Json& j, const char* key) {
  const Json* v = j.Find(key);
  return v && v->is_integer() ? v->int64_value() : 0;
}

// The sum of the shards' reach: per line, the programs that reached it.
Json MergeReach(const std::vector<const Json*>& reaches) {
  Json out = *reaches.front();
  std::vector<std::string> order;
  std::map<std::string, int64_t> programs;
  for (const Json* r : reaches) {
    const Json* per_line = r->Find("per_line");
    if (!per_line || !per_line->is_array()) continue;
    for (const Json& e : per_line->array()) {
      const Json* line = e.is_object() ? e.Find("line") : nullptr;
      if (!line || !line->is_string()) continue;
      auto [it, added] = programs.emplace(line->string_value(), 0);
      if (added) order.push_back(line->string_value());
      it->second += IntOr(e, "programs");
    }
  }
  Json per_line = Json::MakeArray();
  Json unreached = Json::MakeArray();
  int64_t reached = 0;
  for (const std::string& line : order) {
    const int64_t n = programs[line];
    Json e = Json::MakeObject();
    e["line"] = line;
    e["programs"] = n;
    per_line.push_back(std::move(e));
    if (n > 0) {
      ++reached;
    } else if (unreached.array().size() < 50) {
      unreached.push_back(line);
    }
  }
  out["reached"] = reached;
  out["unreached"] = std::move(unreached);
  out["per_line"] = std::move(per_line);
  return out;
}

}  // namespace

std::vector<std::string> ShardFlags(int k, int n) {
  if (n <= 1) return {};
  return {"--shard", std::to_string(k) + "/" + std::to_string(n)};
}

StatusOr<Json> MergeFuzzSummaries(const std::vector<Json>& shards) {
  if (shards.empty()) return InvalidArgument("no fuzz shard summaries");
  for (size_t i = 0; i < shards.size(); ++i) {
    if (!shards[i].is_object()) {
      return InvalidArgument("fuzz shard " + std::to_string(i) +
                             ": its summary is not a JSON object");
    }
  }
  if (shards.size() == 1) return shards.front();
  Json out = shards.front();
  for (const char* key :
       {"programs", "synthetic", "traces", "generator_errors"}) {
    int64_t sum = 0;
    for (const Json& s : shards) sum += IntOr(s, key);
    out[key] = sum;
  }
  double seconds = 0;
  Json statuses = Json::MakeObject();
  std::map<std::string, int64_t> status_sums;
  Json findings = Json::MakeArray();
  std::set<std::string> sigs;
  std::vector<const Json*> reaches;
  for (const Json& s : shards) {
    if (const Json* t = s.Find("seconds"); t && t->is_number()) {
      seconds = std::max(seconds, t->number_value());
    }
    if (const Json* st = s.Find("statuses"); st && st->is_object()) {
      for (const auto& [k, v] : st->object()) {
        if (v.is_integer()) status_sums[k] += v.int64_value();
      }
    }
    if (const Json* f = s.Find("findings"); f && f->is_array()) {
      for (const Json& one : f->array()) {
        const Json* sig = one.is_object() ? one.Find("sig") : nullptr;
        const std::string key =
            sig && sig->is_string() ? sig->string_value() : one.Dump();
        if (sigs.insert(key).second) findings.push_back(one);
      }
    }
    if (const Json* r = s.Find("reach"); r && r->is_object()) {
      reaches.push_back(r);
    }
  }
  for (const auto& [k, v] : status_sums) statuses[k] = v;
  out["seconds"] = seconds;
  if (seconds > 0) {
    out["programs_per_second"] =
        static_cast<double>(out["programs"].int64_value()) / seconds;
  }
  out["statuses"] = std::move(statuses);
  out["distinct_findings"] = static_cast<int64_t>(findings.array().size());
  out["findings"] = std::move(findings);
  out["shards"] = static_cast<int64_t>(shards.size());
  if (!reaches.empty()) out["reach"] = MergeReach(reaches);
  return out;
}

}  // namespace trench::orchestrator
