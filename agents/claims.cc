// The agents' claims as records (claims.h).
#include "agents/claims.h"

#include "base/display_text.h"
#include "base/sha256.h"

namespace trench::agents {
namespace {

// `s` for an error message: quoted, at most 80 bytes.
std::string Quoted(const std::string& s) {
  return DumpJsonDoc(s.size() > 80 ? s.substr(0, 77) + "..." : s);
}

StatusOr<std::optional<std::string>> CaseIdField(const JsonFields& f,
                                                 std::string_view key) {
  ASSIGN_OR_RETURN(std::optional<std::string> id, f.OptionalString(key));
  if (id && !IsCaseId(*id)) {
    return InvalidArgument(f.Name(key) +
                           " must be a case id (64 lowercase hex digits), "
                           "got " +
                           Quoted(*id));
  }
  return id;
}

StatusOr<std::vector<std::string>> Strings(const JsonFields& f,
                                           std::string_view key) {
  std::vector<std::string> out;
  ASSIGN_OR_RETURN(const JsonDoc* a, f.OptionalArray(key));
  if (a == nullptr) return out;
  for (size_t i = 0; i < a->size(); ++i) {
    const JsonDoc& e = (*a)[i];
    if (!e.is_string()) {
      return InvalidArgument(
          f.Name(std::string(key) + "[" + std::to_string(i) + "]") +
          " must be a string, got " + e.type_name());
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

JsonDoc StringsJson(const std::vector<std::string>& v) {
  JsonDoc a = JsonDoc::array();
  for (const std::string& s : v) a.push_back(s);
  return a;
}

StatusOr<ClaimSource> Source(const JsonFields& f) {
  ClaimSource s;
  ASSIGN_OR_RETURN(std::optional<std::string> brain, f.OptionalString("brain"));
  s.brain = brain.value_or("");
  ASSIGN_OR_RETURN(s.summary, f.OptionalString("summary"));
  ASSIGN_OR_RETURN(const JsonDoc* fb, f.OptionalObject("fallback"));
  if (fb != nullptr) {
    ASSIGN_OR_RETURN(JsonFields ff, JsonFields::Of(*fb, f.Path("fallback")));
    ClaimSource::Fallback fallback;
    ASSIGN_OR_RETURN(fallback.from, ff.String("from"));
    ASSIGN_OR_RETURN(fallback.reason, ff.String("reason"));
    s.fallback = std::move(fallback);
  }
  return s;
}

// The fields every claim may carry, after the role's own.
void AddCommon(const std::optional<std::string>& reason,
               const std::vector<std::string>& notes, const ClaimSource& s,
               JsonDoc& j) {
  if (reason) j["reason"] = *reason;
  if (!notes.empty()) j["notes"] = StringsJson(notes);
  if (s.summary) j["summary"] = *s.summary;
  if (!s.brain.empty()) j["brain"] = s.brain;
  if (s.fallback) {
    j["fallback"] = {{"from", s.fallback->from},
                     {"reason", s.fallback->reason}};
  }
}

StatusOr<std::optional<CaseSize>> SizeField(const JsonFields& f,
                                            std::string_view key) {
  ASSIGN_OR_RETURN(const JsonDoc* o, f.OptionalObject(key));
  if (o == nullptr) return std::optional<CaseSize>();
  ASSIGN_OR_RETURN(JsonFields sf, JsonFields::Of(*o, f.Path(key)));
  CaseSize s;
  ASSIGN_OR_RETURN(s.instructions, sf.OptionalInt("instructions"));
  ASSIGN_OR_RETURN(s.elements, sf.OptionalInt("elements"));
  ASSIGN_OR_RETURN(s.text_bytes, sf.OptionalInt("text_bytes"));
  return std::optional<CaseSize>(s);
}

JsonDoc SizeJson(const std::optional<CaseSize>& s) {
  return s ? ToJson(*s) : JsonDoc();
}

// The object at `list`[i] of `f`, as a field reader named "list[i]".
StatusOr<JsonFields> Element(const JsonFields& f, std::string_view list,
                             const JsonDoc& e, size_t i) {
  return JsonFields::Of(
      e, f.Path(std::string(list) + "[" + std::to_string(i) + "]"));
}

StatusOr<MinimizerClaim::Round> ParseRound(const JsonFields& f) {
  MinimizerClaim::Round r;
  ASSIGN_OR_RETURN(std::optional<std::string> id, CaseIdField(f, "case"));
  if (!id) return InvalidArgument(f.Name("case") + " is missing");
  r.case_id = *id;
  ASSIGN_OR_RETURN(r.before, SizeField(f, "before"));
  ASSIGN_OR_RETURN(r.after, SizeField(f, "after"));
  ASSIGN_OR_RETURN(r.gain_percent, f.OptionalDouble("gain_percent"));
  ASSIGN_OR_RETURN(r.seconds, f.OptionalDouble("seconds"));
  return r;
}

StatusOr<DrafterClaim::Candidate> ParseCandidate(const JsonFields& f) {
  DrafterClaim::Candidate c;
  ASSIGN_OR_RETURN(c.candidate, f.Int("candidate"));
  if (c.candidate <= 0) {
    return InvalidArgument(f.Name("candidate") + " must be positive, got " +
                           std::to_string(c.candidate));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> strategy,
                   f.OptionalString("strategy"));
  c.strategy = strategy.value_or("");
  ASSIGN_OR_RETURN(c.diff, f.String("diff"));
  ASSIGN_OR_RETURN(c.changed_lines, f.OptionalInt("changed_lines"));
  ASSIGN_OR_RETURN(c.rationale, f.OptionalString("rationale"));
  ASSIGN_OR_RETURN(c.detail, f.OptionalString("detail"));
  return c;
}

StatusOr<StressAuthorClaim::Finding> ParseFinding(const JsonFields& f) {
  StressAuthorClaim::Finding x;
  ASSIGN_OR_RETURN(std::optional<std::string> id, CaseIdField(f, "case"));
  if (!id) return InvalidArgument(f.Name("case") + " is missing");
  x.case_id = *id;
  ASSIGN_OR_RETURN(std::optional<std::string> status,
                   f.OptionalString("status"));
  x.status = status.value_or("");
  ASSIGN_OR_RETURN(const JsonDoc* sig, f.Required("signature"));
  ASSIGN_OR_RETURN(JsonFields sf, JsonFields::Of(*sig, f.Path("signature")));
  ASSIGN_OR_RETURN(x.sig, sf.String("sig"));
  if (x.sig.empty()) return InvalidArgument(sf.Name("sig") + " is empty");
  x.signature = *sig;
  return x;
}

StatusOr<StressAuthorClaim::Round> ParseAuthorRound(const JsonFields& f) {
  StressAuthorClaim::Round r;
  ASSIGN_OR_RETURN(r.focus, f.String("focus"));
  ASSIGN_OR_RETURN(r.names, Strings(f, "names"));
  ASSIGN_OR_RETURN(r.seconds, f.OptionalInt("seconds"));
  ASSIGN_OR_RETURN(r.programs, f.OptionalInt("programs"));
  ASSIGN_OR_RETURN(r.findings, f.OptionalInt("findings"));
  ASSIGN_OR_RETURN(r.error, f.OptionalString("error"));
  return r;
}

}  // namespace

bool IsCaseId(std::string_view s) { return IsLowerHex(s, 64); }

JsonDoc ToJson(const CaseSize& s) {
  JsonDoc j = JsonDoc::object();
  if (s.instructions) j["instructions"] = *s.instructions;
  if (s.elements) j["elements"] = *s.elements;
  if (s.text_bytes) j["text_bytes"] = *s.text_bytes;
  return j;
}

StatusOr<ReproducerClaim> ParseReproducerClaim(const JsonDoc& claim) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(claim));
  ReproducerClaim c;
  ASSIGN_OR_RETURN(c.case_id, CaseIdField(f, "case"));
  ASSIGN_OR_RETURN(c.outcome, f.OptionalString("outcome"));
  ASSIGN_OR_RETURN(c.runs, f.OptionalInt("runs"));
  ASSIGN_OR_RETURN(c.failures, f.OptionalInt("failures"));
  ASSIGN_OR_RETURN(c.rate, f.OptionalDouble("rate"));
  ASSIGN_OR_RETURN(c.status, f.OptionalString("status"));
  ASSIGN_OR_RETURN(const JsonDoc* sig, f.OptionalObject("signature"));
  if (sig != nullptr) c.signature = *sig;
  ASSIGN_OR_RETURN(c.statuses, Strings(f, "statuses"));
  ASSIGN_OR_RETURN(c.reason, f.OptionalString("reason"));
  ASSIGN_OR_RETURN(const JsonDoc* d, f.OptionalObject("described"));
  if (d != nullptr) {
    ASSIGN_OR_RETURN(JsonFields df, JsonFields::Of(*d, "described"));
    ReproducerClaim::Described described;
    ASSIGN_OR_RETURN(described.ops, Strings(df, "ops"));
    ASSIGN_OR_RETURN(described.dropped, Strings(df, "dropped"));
    ASSIGN_OR_RETURN(described.seconds, df.OptionalInt("seconds"));
    ASSIGN_OR_RETURN(described.programs, df.OptionalInt("programs"));
    c.described = std::move(described);
  }
  ASSIGN_OR_RETURN(c.notes, Strings(f, "notes"));
  ASSIGN_OR_RETURN(c.source, Source(f));
  return c;
}

JsonDoc ToJson(const ReproducerClaim& c) {
  JsonDoc j = JsonDoc::object();
  j["case"] = JsonDocOrNull(c.case_id);
  if (c.outcome) j["outcome"] = *c.outcome;
  if (c.runs) j["runs"] = *c.runs;
  if (c.failures) j["failures"] = *c.failures;
  if (c.rate) j["rate"] = *c.rate;
  if (c.status) j["status"] = *c.status;
  if (!c.signature.is_null()) j["signature"] = c.signature;
  if (!c.statuses.empty()) j["statuses"] = StringsJson(c.statuses);
  if (c.described) {
    JsonDoc d = JsonDoc::object();
    d["ops"] = StringsJson(c.described->ops);
    if (c.described->seconds) d["seconds"] = *c.described->seconds;
    if (c.described->programs) d["programs"] = *c.described->programs;
    if (!c.described->dropped.empty()) {
      d["dropped"] = StringsJson(c.described->dropped);
    }
    j["described"] = std::move(d);
  }
  AddCommon(c.reason, c.notes, c.source, j);
  return j;
}

StatusOr<MinimizerClaim> ParseMinimizerClaim(const JsonDoc& claim) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(claim));
  MinimizerClaim c;
  ASSIGN_OR_RETURN(c.case_id, CaseIdField(f, "case"));
  ASSIGN_OR_RETURN(c.before, SizeField(f, "before"));
  ASSIGN_OR_RETURN(c.after, SizeField(f, "after"));
  ASSIGN_OR_RETURN(c.status, f.OptionalString("status"));
  ASSIGN_OR_RETURN(c.verified, f.OptionalBool("verified"));
  ASSIGN_OR_RETURN(const JsonDoc* rounds, f.OptionalArray("rounds"));
  for (size_t i = 0; rounds != nullptr && i < rounds->size(); ++i) {
    ASSIGN_OR_RETURN(JsonFields rf, Element(f, "rounds", (*rounds)[i], i));
    ASSIGN_OR_RETURN(MinimizerClaim::Round r, ParseRound(rf));
    c.rounds.push_back(std::move(r));
  }
  ASSIGN_OR_RETURN(c.reason, f.OptionalString("reason"));
  ASSIGN_OR_RETURN(c.notes, Strings(f, "notes"));
  ASSIGN_OR_RETURN(c.source, Source(f));
  return c;
}

JsonDoc ToJson(const MinimizerClaim& c) {
  JsonDoc j = JsonDoc::object();
  j["case"] = JsonDocOrNull(c.case_id);
  j["before"] = SizeJson(c.before);
  j["after"] = SizeJson(c.after);
  if (c.status) j["status"] = *c.status;
  if (c.verified) j["verified"] = *c.verified;
  if (!c.rounds.empty()) {
    JsonDoc rounds = JsonDoc::array();
    for (const MinimizerClaim::Round& r : c.rounds) {
      JsonDoc rj = JsonDoc::object();
      rj["case"] = r.case_id;
      rj["before"] = SizeJson(r.before);
      rj["after"] = SizeJson(r.after);
      if (r.gain_percent) rj["gain_percent"] = *r.gain_percent;
      if (r.seconds) rj["seconds"] = *r.seconds;
      rounds.push_back(std::move(rj));
    }
    j["rounds"] = std::move(rounds);
  }
  AddCommon(c.reason, c.notes, c.source, j);
  return j;
}

StatusOr<DrafterClaim> ParseDrafterClaim(const JsonDoc& claim) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(claim));
  DrafterClaim c;
  ASSIGN_OR_RETURN(const JsonDoc* list, f.OptionalArray("candidates"));
  for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
    ASSIGN_OR_RETURN(JsonFields cf, Element(f, "candidates", (*list)[i], i));
    ASSIGN_OR_RETURN(DrafterClaim::Candidate one, ParseCandidate(cf));
    c.candidates.push_back(std::move(one));
  }
  ASSIGN_OR_RETURN(c.pass, f.OptionalString("pass"));
  ASSIGN_OR_RETURN(c.reason, f.OptionalString("reason"));
  ASSIGN_OR_RETURN(c.notes, Strings(f, "notes"));
  ASSIGN_OR_RETURN(c.source, Source(f));
  return c;
}

JsonDoc ToJson(const DrafterClaim& c) {
  JsonDoc j = JsonDoc::object();
  JsonDoc list = JsonDoc::array();
  for (const DrafterClaim::Candidate& x : c.candidates) {
    JsonDoc e = JsonDoc::object();
    e["candidate"] = x.candidate;
    e["strategy"] = x.strategy;
    e["diff"] = x.diff;
    if (x.changed_lines) e["changed_lines"] = *x.changed_lines;
    if (x.rationale) e["rationale"] = *x.rationale;
    if (x.detail) e["detail"] = *x.detail;
    list.push_back(std::move(e));
  }
  j["candidates"] = std::move(list);
  if (c.pass) j["pass"] = *c.pass;
  AddCommon(c.reason, c.notes, c.source, j);
  return j;
}

StatusOr<StressAuthorClaim> ParseStressAuthorClaim(const JsonDoc& claim) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(claim));
  StressAuthorClaim c;
  ASSIGN_OR_RETURN(c.refused, Strings(f, "refused"));
  ASSIGN_OR_RETURN(const JsonDoc* list, f.OptionalArray("findings"));
  // One bad finding (a model's invention) costs only itself.
  for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
    StatusOr<StressAuthorClaim::Finding> one =
        [&]() -> StatusOr<StressAuthorClaim::Finding> {
      ASSIGN_OR_RETURN(JsonFields ff, Element(f, "findings", (*list)[i], i));
      return ParseFinding(ff);
    }();
    if (one.ok()) {
      c.findings.push_back(std::move(*one));
    } else {
      c.refused.push_back(one.status().message());
    }
  }
  ASSIGN_OR_RETURN(c.programs, f.OptionalInt("programs"));
  ASSIGN_OR_RETURN(const JsonDoc* rounds, f.OptionalArray("rounds"));
  for (size_t i = 0; rounds != nullptr && i < rounds->size(); ++i) {
    ASSIGN_OR_RETURN(JsonFields rf, Element(f, "rounds", (*rounds)[i], i));
    ASSIGN_OR_RETURN(StressAuthorClaim::Round r, ParseAuthorRound(rf));
    c.rounds.push_back(std::move(r));
  }
  ASSIGN_OR_RETURN(c.reason, f.OptionalString("reason"));
  ASSIGN_OR_RETURN(c.notes, Strings(f, "notes"));
  ASSIGN_OR_RETURN(c.source, Source(f));
  return c;
}

JsonDoc ToJson(const StressAuthorClaim& c) {
  JsonDoc j = JsonDoc::object();
  JsonDoc list = JsonDoc::array();
  for (const StressAuthorClaim::Finding& x : c.findings) {
    JsonDoc e = JsonDoc::object();
    e["case"] = x.case_id;
    e["status"] = x.status;
    e["signature"] = x.signature;
    list.push_back(std::move(e));
  }
  j["findings"] = std::move(list);
  if (!c.refused.empty()) j["refused"] = StringsJson(c.refused);
  if (c.programs) j["programs"] = *c.programs;
  if (!c.rounds.empty()) {
    JsonDoc rounds = JsonDoc::array();
    for (const StressAuthorClaim::Round& r : c.rounds) {
      JsonDoc rj = JsonDoc::object();
      rj["focus"] = r.focus;
      rj["names"] = StringsJson(r.names);
      if (r.seconds) rj["seconds"] = *r.seconds;
      if (r.programs) rj["programs"] = *r.programs;
      if (r.findings) rj["findings"] = *r.findings;
      if (r.error) rj["error"] = *r.error;
      rounds.push_back(std::move(rj));
    }
    j["rounds"] = std::move(rounds);
  }
  AddCommon(c.reason, c.notes, c.source, j);
  return j;
}

std::string FailedRoundsLine(const StressAuthorClaim& claim, size_t max_bytes) {
  size_t failed = 0;
  const StressAuthorClaim::Round* first = nullptr;
  for (const StressAuthorClaim::Round& r : claim.rounds) {
    if (!r.error) continue;
    if (failed++ == 0) first = &r;
  }
  if (failed == 0) return "";
  // Only as much of the model's text as the line can show is copied.
  const std::string_view error =
      std::string_view(*first->error).substr(0, 4 * max_bytes);
  const std::string_view focus =
      std::string_view(first->focus).substr(0, max_bytes);
  return OneLine(std::to_string(failed) +
                     " of the author's campaigns failed; the first (" +
                     std::string(focus) + ": " + std::string(error) + ")",
                 max_bytes);
}

}  // namespace trench::agents
