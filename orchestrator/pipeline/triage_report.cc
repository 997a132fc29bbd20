#include "orchestrator/pipeline/triage_report.h"

#include <cstdio>
#include <ctime>
#include <sstream>

#include "base/display_text.h"
#include "triage/case/verdict_status.h"

namespace trench::orchestrator {
namespace {

constexpr char kNotYet[] = "not yet\n";

// ---- Tolerant accessors: a missing member or one of the wrong type is
// "absent", never an error.

const Json* Obj(const Json* j, std::string_view key) {
  const Json* v = j != nullptr && j->is_object() ? j->Find(key) : nullptr;
  return v != nullptr && v->is_object() ? v : nullptr;
}

const Json* Arr(const Json* j, std::string_view key) {
  const Json* v = j != nullptr && j->is_object() ? j->Find(key) : nullptr;
  return v != nullptr && v->is_array() ? v : nullptr;
}

// "changed-line reach of the campaign: 3/4 executable changed lines (1
// more changed lines hold no code)\nnot reached: a.cc:7, ...\n" from a fuzz
// finding's "reach" (hlo-fuzz's, kept when the bug was filed); "" when
// the campaign did not measure it.
std::string ReachText(const Json* reach) {
  if (reach == nullptr) return "";
  const Json* reached = reach->Find("reached");
  const Json* lines = reach->Find("lines");
  if (!reached || !lines || !reached->is_integer() || !lines->is_integer()) {
    return "";
  }
  std::string t = "changed-line reach of the campaign: " + reached->Dump() +
                  "/" + lines->Dump() + " executable changed lines";
  if (const Json* none = reach->Find("no_code"); none && none->is_integer()) {
    t += " (" + none->Dump() + " more changed lines hold no code)";
  }
  t += "\n";
  if (const Json* u = Arr(reach, "unreached"); u && !u->array().empty()) {
    std::string list;
    for (const Json& l : u->array()) {
      if (!l.is_string()) continue;
      list += (list.empty() ? "" : ", ") + l.string_value();
    }
    t += "not reached: " + list + "\n";
  }
  return t;
}

std::string Str(const Json* j, std::string_view key) {
  const Json* v = j != nullptr && j->is_object() ? j->Find(key) : nullptr;
  return v != nullptr && v->is_string() ? v->string_value() : "";
}

// A scalar member as text ("" when absent, null, or not a scalar).
std::string Scalar(const Json* j, std::string_view key) {
  const Json* v = j != nullptr && j->is_object() ? j->Find(key) : nullptr;
  if (v == nullptr || v->is_null() || v->is_array() || v->is_object()) {
    return "";
  }
  if (v->is_string()) return v->string_value();
  if (v->is_bool()) return v->bool_value() ? "yes" : "no";
  return v->number_text();
}

std::string Truncate(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n - 3) + "...";
  return s;
}

// "2026-11-30 15:50:00 UTC" for milliseconds since the epoch.
std::string TimeText(const Json* j, std::string_view key) {
  const Json* v = j != nullptr && j->is_object() ? j->Find(key) : nullptr;
  if (v == nullptr || !v->is_integer() || !v->GetInt64().ok()) return "?";
  const std::time_t secs = static_cast<std::time_t>(*v->GetInt64() / 1000);
  std::tm tm{};
  if (gmtime_r(&secs, &tm) == nullptr) return "?";
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

// Lines of `text`, each prefixed by `indent`.
std::string Indent(const std::string& text, const std::string& indent) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += indent + line + "\n";
  return out;
}

std::string Fenced(const std::string& lang, const std::string& text) {
  std::string body = text;
  if (!body.empty() && body.back() != '\n') body += '\n';
  return "```" + lang + "\n" + body + "```\n";
}

// The scalar members of an object as "k=v" pairs; nested ones by name.
std::string MembersLine(const Json* j, size_t max_len = 200) {
  if (j == nullptr || !j->is_object()) return "";
  std::string s;
  for (const auto& [k, v] : j->object()) {
    if (!s.empty()) s += ", ";
    if (v.is_object() || v.is_array()) {
      s += k + "=" + Truncate(v.Dump(), 60);
    } else {
      s += k + "=" + (v.is_string() ? v.string_value() : v.Dump());
    }
  }
  return OneLine(s, max_len);
}

// ---- Where a step's data is: bug.details[key], else the evidence of the
// latest event to one of `states` (its member `key`, or itself).

struct Source {
  const Json* details = nullptr;
  const Json* events = nullptr;
};

const Json* StepData(const Source& src, std::string_view key,
                     std::initializer_list<std::string_view> states) {
  if (const Json* d = Obj(src.details, key)) return d;
  if (src.events == nullptr) return nullptr;
  const Json::Array& ev = src.events->array();
  for (auto it = ev.rbegin(); it != ev.rend(); ++it) {
    const std::string to = Str(&*it, "to");
    bool match = false;
    for (std::string_view s : states) match |= to == s;
    if (!match) continue;
    const Json* evidence = Obj(&*it, "evidence");
    if (evidence == nullptr) continue;
    if (const Json* d = Obj(evidence, key)) return d;
    return evidence;
  }
  return nullptr;
}

// ---- Sections shared by both reports.

std::string VerdictText(const Json* verdict) {
  if (verdict == nullptr) return "";
  std::string s = "verdict: " + Str(verdict, "status");
  const std::string msg = Str(verdict, "message");
  if (!msg.empty()) s += " (" + Truncate(msg, 300) + ")";
  s += "\n";
  if (const Json* outs = Arr(verdict, "outputs")) {
    for (const Json& o : outs->array()) {
      if (!o.is_object() || Scalar(&o, "ok") == "yes") continue;
      s += "  output " + Scalar(&o, "index") + " " + Str(&o, "expected_shape") +
           ": ";
      const std::string shape_error = Str(&o, "shape_error");
      if (!shape_error.empty()) {
        s += "shape mismatch: " + shape_error + "\n";
        continue;
      }
      s += Scalar(&o, "mismatches") + " of " + Scalar(&o, "elements") +
           " elements differ, max abs error " + Scalar(&o, "max_abs_error") +
           ", max rel error " + Scalar(&o, "max_rel_error") + "\n";
      if (const Json* first = Obj(&o, "first_mismatch")) {
        s += "    first mismatch: " + MembersLine(first) + "\n";
      }
    }
  }
  const Json* target = Obj(verdict, "target");
  const std::string last_pass = Str(target, "last_pass");
  if (!last_pass.empty()) s += "last pass entered: " + last_pass + "\n";
  if (const Json* sig = Obj(verdict, "signature")) {
    s += "signature: " + MembersLine(sig) + "\n";
  }
  return s;
}

std::string SizeText(const Json* sizes) {
  return Scalar(sizes, "instructions") + " instructions, " +
         Scalar(sizes, "elements") + " elements, " +
         Scalar(sizes, "text_bytes") + " bytes";
}

std::string MinimizationText(const Json* m, const std::string& module) {
  std::string s;
  if (m != nullptr) {
    if (const Json* before = Obj(m, "before")) {
      s += "before: " + SizeText(before) + "\n";
    }
    if (const Json* after = Obj(m, "after")) {
      s += "after:  " + SizeText(after) + "\n";
    }
    const std::string runs = Scalar(m, "target_runs");
    std::string secs;
    if (const Json* v = m->Find("seconds"); v != nullptr && v->is_number()) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.1f", v->number_value());
      secs = buf;
    }
    if (!runs.empty()) {
      s += "target runs: " + runs + (secs.empty() ? "" : " in " + secs + " s") +
           "\n";
    }
  }
  if (!module.empty()) s += Fenced("hlo", module);
  return s;
}

std::string LocalizationText(const Json* l) {
  const Json* f = Obj(l, "findings");
  if (f == nullptr) return "";
  std::string s;
  auto line = [&s](const std::string& name, const std::string& value) {
    s += name + ": " + (value.empty() ? "-" : value) + "\n";
  };
  std::string pass = Str(f, "pass");
  const std::string exec = Scalar(f, "pass_execution");
  if (!pass.empty() && !exec.empty()) pass += " (pass execution " + exec + ")";
  const std::string trigger = Str(f, "trigger");
  if (!trigger.empty()) pass += ", triggered by " + trigger;
  line("pass", pass);
  std::string rewrite;
  if (const Json* r = Obj(f, "rewrite")) {
    rewrite = Str(r, "pass") + " rewrite at site " + Str(r, "site");
    const std::string instr = Str(r, "instruction");
    if (!instr.empty()) rewrite += " on " + instr;
    const std::string index = Scalar(r, "index");
    if (!index.empty()) rewrite += " (decision " + index + ")";
  }
  line("rewrite site", rewrite);
  std::string instr = Str(f, "instruction");
  const std::string op = Str(f, "opcode"), dtype = Str(f, "dtype");
  if (!instr.empty() && !(op.empty() && dtype.empty())) {
    instr +=
        " (" + op + (op.empty() || dtype.empty() ? "" : ", ") + dtype + ")";
  }
  line("instruction", instr);
  std::string fused = Str(f, "fused_instruction");
  const std::string fused_op = Str(f, "fused_opcode");
  if (!fused.empty() && !fused_op.empty()) fused += " (" + fused_op + ")";
  const std::string fusion = Str(f, "fusion");
  if (!fusion.empty()) fused += (fused.empty() ? "" : " ") + ("in " + fusion);
  line("fused op", fused);
  // The callee level's op inside a called computation (sort comparator,
  // reduce body, ...), with the computation; the call site is "instruction".
  std::string called = Str(f, "called_instruction");
  const std::string called_op = Str(f, "called_opcode");
  if (!called.empty() && !called_op.empty()) called += " (" + called_op + ")";
  const std::string callee = Str(f, "called_computation");
  if (!called.empty() && !callee.empty()) called += " in " + callee;
  line("called op", called);
  if (const Json* sig = Obj(l, "signature")) {
    s += "signature: " + MembersLine(sig) + "\n";
  }
  if (const Json* levels = Arr(l, "levels")) {
    s += "levels:\n";
    for (const Json& lv : levels->array()) {
      s += "  " + Str(&lv, "level") + ": " + Str(&lv, "result") + " [" +
           Scalar(&lv, "runs") + " runs] " + Str(&lv, "summary") + "\n";
    }
  }
  if (const Json* runs = Obj(l, "runs")) {
    s += "target runs: " + Scalar(runs, "localize") +
         " (a linear scan: " + Scalar(runs, "linear_scan") + ")\n";
  }
  return s;
}

std::string CulpritText(const Json* c, const std::string& sha) {
  const Json* commit = Obj(c, "culprit");
  std::string s;
  const std::string full = commit ? Str(commit, "sha") : sha;
  if (full.empty() && c == nullptr) return "";
  s += "commit: " + (full.empty() ? std::string("-") : full) + "\n";
  if (commit != nullptr) {
    s += "summary: " + Str(commit, "summary") + "\n";
    s += "author: " + Str(commit, "author") + "\n";
  }
  if (c == nullptr) return s;
  const std::string confirmed = Scalar(c, "confirmed");
  const Json* conf = Obj(c, "confirmation");
  if (confirmed == "yes") {
    s += "confirmed: the case passes with this commit reverted on top of " +
         Str(Obj(c, "bad"), "short") + "\n";
  } else if (confirmed == "no") {
    s += "not confirmed: " + Str(conf, "reason") + "\n";
  }
  const std::string commits = Scalar(c, "commits");
  if (!commits.empty()) {
    s += "search: " + commits + " commits between " +
         Str(Obj(c, "good"), "short") + " and " + Str(Obj(c, "bad"), "short") +
         ", " + Scalar(c, "builds") + " builds\n";
  }
  return s;
}

std::string PatchText(const Json* patch) {
  std::string s = "branch: " + Str(patch, "branch") + "\n";
  s += "verified: " + Scalar(patch, "verified") + "\n";
  const Json* v = Obj(patch, "verification");
  if (v != nullptr && v->size() > 0) {
    s += "verification:\n";
    for (const auto& [k, val] : v->object()) {
      std::string text = val.is_string() ? OneLine(val.string_value(), 400)
                         : val.is_bool() ? (val.bool_value() ? "yes" : "no")
                                         : Truncate(val.Dump(), 200);
      s += "  " + k + ": " + text + "\n";
    }
  }
  const std::string diff = Str(patch, "diff");
  if (!diff.empty()) s += Fenced("diff", diff);
  return s;
}

// How much of the culprit the drafted `patch` undoes (draft_coverage.h):
// `draft` is details.draft (or the patch_drafted evidence), read only when
// it names this patch. A partial revert is flagged; the candidates passed
// over for one that covers the localized pass are listed.
std::string CoverageText(const Json* draft, const Json* patch) {
  if (draft == nullptr || Scalar(draft, "patch").empty() ||
      Scalar(draft, "patch") != Scalar(patch, "id")) {
    return "";
  }
  const Json* c = Obj(draft, "coverage");
  std::string s;
  if (const std::string why = Str(c, "unknown"); !why.empty()) {
    s += "coverage: not judged: " + OneLine(why, 300) + "\n";
  } else if (const std::string sum = Str(c, "summary"); !sum.empty()) {
    s += "coverage: " + OneLine(sum, 400) + "\n";
  }
  if (Scalar(c, "partial") == "yes") {
    s += "WARNING: " + OneLine(Str(c, "reason"), 600) + "\n";
  }
  if (const Json* over = Arr(draft, "passed_over")) {
    for (const Json& o : over->array()) {
      s += "preferred over candidate " + Scalar(&o, "candidate") + " (" +
           OneLine(Str(&o, "strategy"), 40) + ", " +
           Scalar(&o, "changed_lines") +
           " changed lines): " + OneLine(Str(&o, "reason"), 400) + "\n";
    }
  }
  return s;
}

// The agents' claims in an event's evidence that fell back to the
// built-in brain: the whole reason, never cut (the evidence line is).
std::string FallbackLines(const Json* evidence) {
  if (evidence == nullptr || !evidence->is_object()) return "";
  std::string s;
  for (const auto& [k, v] : evidence->object()) {
    const Json* fb = Obj(&v, "fallback");
    if (fb == nullptr) continue;
    s += "    " + k + ": the " + Str(fb, "from") +
         " brain fell back to the built-in one: " +
         OneLine(Str(fb, "reason"), std::string::npos) + "\n";
  }
  return s;
}

// The reviewers' part (triage_verbs.h): the last review, the redraft
// hints, the push of an approved branch; "" when there is none.
std::string ReviewText(const Json* details) {
  std::string s;
  if (const Json* r = Obj(details, "review")) {
    const std::string comment = Str(r, "comment");
    s += "last review: " + Str(r, "verb") +
         (comment.empty() ? "" : ": " + OneLine(comment, 300)) + "\n";
  }
  if (const Json* hints = Arr(details, "draft_hints")) {
    for (const Json& h : hints->array()) {
      s += "hint for the drafter: " + OneLine(Str(&h, "hint"), 300) + "\n";
    }
  }
  if (const Json* p = Obj(details, "push")) {
    const Json* ok = p->Find("ok");
    s += "push of " + Str(p, "branch") + " to " + Str(p, "remote") + ": " +
         (ok && ok->is_bool() && ok->bool_value()
              ? "done (" + Str(p, "commit") + ")"
              : "failed: " + OneLine(Str(p, "error"), 300)) +
         "\n";
  }
  return s;
}

std::string HistoryText(const Json* events) {
  if (events == nullptr || events->size() == 0) return "";
  std::string s;
  for (const Json& e : events->array()) {
    const std::string from = Str(&e, "from");
    s += TimeText(&e, "at_ms") + "  " + (from.empty() ? "(created)" : from) +
         " -> " + Str(&e, "to") + "  by " + Str(&e, "actor");
    const std::string ev = MembersLine(Obj(&e, "evidence"), 160);
    if (!ev.empty()) s += "  [" + ev + "]";
    s += "\n";
    s += FallbackLines(Obj(&e, "evidence"));
  }
  return s;
}

// The root-cause evidence (root_cause.h): why the bug is a duplicate,
// which older bug it waits for or waited for, and the check against that
// bug's patch.
std::string RootCauseLines(const Json* details) {
  std::string s;
  if (const Json* d = Obj(details, "duplicate")) {
    s += "duplicate evidence: " + OneLine(Str(d, "reason"), 300) + "\n";
    if (const std::string c = Str(d, "culprit"); !c.empty()) {
      s += "  shared culprit: " + OneLine(c, 80) + "\n";
    }
    if (const Json* site = Obj(d, "site")) {
      s += "  shared site: " + OneLine(MembersLine(site), 200) + "\n";
    }
    if (const std::string p = Scalar(d, "older_patch"); !p.empty()) {
      s += "  same patch as: patch " + p + "\n";
    }
  }
  if (const Json* w = Obj(details, "waiting_for")) {
    s += "waiting: " + OneLine(Str(w, "reason"), 300) + "\n";
  }
  if (const Json* r = Obj(details, "released")) {
    s += "released from waiting for bug " + Scalar(r, "bug") + ": " +
         OneLine(Str(r, "reason"), 300) + "\n";
  }
  if (const Json* c = Obj(details, "patch_check")) {
    s += "checked against bug " + Scalar(c, "bug") + "'s patch " +
         Scalar(c, "patch") + ": " +
         (Scalar(c, "fixed") == "yes" ? "fixed" : "not fixed") + " (" +
         OneLine(Str(c, "why"), 300) + ")\n";
  }
  return s;
}

void Section(std::ostringstream& o, const std::string& title,
             const std::string& body, const std::string& missing = kNotYet) {
  o << "\n## " << title << "\n" << (body.empty() ? missing : body);
}

}  // namespace

StatusOr<std::string> BugReportText(const Json& bug_response) {
  const Json* bug = Obj(&bug_response, "bug");
  if (bug == nullptr) {
    return InvalidArgument(
        "not a bug: expected an object with a \"bug\" object (GET "
        "/api/v1/bugs/{id})");
  }
  Source src{Obj(bug, "details"), Arr(&bug_response, "events")};
  std::ostringstream o;
  o << "# Bug " << Scalar(bug, "id") << ": " << OneLine(Str(bug, "title"), 200)
    << "\n\n";
  o << "state: " << Str(bug, "state") << "\n";
  o << "signature: " << Str(bug, "signature") << "\n";
  o << "created: " << TimeText(bug, "created_ms")
    << ", updated: " << TimeText(bug, "updated_ms") << "\n";
  if (const std::string dup = Scalar(bug, "duplicate_of"); !dup.empty()) {
    o << "duplicate of: bug " << dup << "\n";
  }
  o << RootCauseLines(Obj(bug, "details"));
  if (const std::string rate = Scalar(bug, "flaky_rate"); !rate.empty()) {
    o << "flaky rate: " << rate << "\n";
  }

  const Json* report = Obj(src.details, "report");
  std::string rep;
  if (report != nullptr) {
    const std::string text = Str(report, "text");
    if (!text.empty()) rep += Indent(text, "> ");
    const std::string hlo = Str(report, "hlo");
    if (!hlo.empty()) rep += "attached HLO:\n" + Fenced("hlo", hlo);
    if (const Json* in = Arr(report, "inputs")) {
      rep += "attached inputs: " + std::to_string(in->size()) + "\n";
    }
  }
  const std::string source = Str(src.details, "source");
  if (rep.empty() && !source.empty()) rep = "source: " + source + "\n";
  rep += ReachText(Obj(Obj(src.details, "finding"), "reach"));
  Section(o, "Report", rep, "none (found by trench)\n");

  const Json* repro = StepData(src, "reproduction",
                               {"reproduced", "flaky", "not_reproducible"});
  std::string r;
  const std::string case_sha = Str(bug, "case_sha256");
  if (!case_sha.empty()) r += "case: " + case_sha + "\n";
  if (repro != nullptr) {
    const std::string runs = Scalar(repro, "runs");
    if (!runs.empty()) {
      r += "runs: " + runs + ", failures: " + Scalar(repro, "failures");
      const std::string rate = Scalar(repro, "rate");
      r += (rate.empty() ? "" : " (rate " + rate + ")") + std::string("\n");
    }
    r += VerdictText(Obj(repro, "verdict"));
  }
  Section(o, "Reproduction", repro == nullptr ? "" : r,
          case_sha.empty() ? kNotYet : "case: " + case_sha + "\nnot yet\n");

  const Json* min = StepData(src, "minimization", {"minimized"});
  const std::string min_sha = Str(bug, "minimized_sha256");
  std::string m = min_sha.empty() ? "" : "case: " + min_sha + "\n";
  if (min != nullptr || !m.empty()) {
    m += MinimizationText(min, Str(min, "module"));
  }
  Section(o, "Minimized case", m);

  Section(o, "Localization",
          LocalizationText(StepData(src, "localization", {"localized"})));
  Section(o, "Culprit commit",
          CulpritText(StepData(src, "culprit", {"culprit_found"}),
                      Str(bug, "culprit_commit")));

  const Json* patches = Arr(&bug_response, "patches");
  const Json* last = patches != nullptr && patches->size() > 0
                         ? &patches->array().back()
                         : nullptr;
  Section(o, "Patch",
          last != nullptr && last->is_object()
              ? CoverageText(StepData(src, "draft", {"patch_drafted"}), last) +
                    PatchText(last)
              : "");
  if (const std::string fix = Str(bug, "fix_commit"); !fix.empty()) {
    Section(o, "Fix", "fixed by commit " + fix + "\n");
  }
  if (const std::string review = ReviewText(src.details); !review.empty()) {
    Section(o, "Review", review);
  }
  Section(o, "History", HistoryText(src.events), "no events\n");
  return o.str();
}

std::string ProposalCommitMessage(int64_t bug_id, const std::string& title,
                                  const std::string& report) {
  std::string body = EscapeControls(report);
  if (!body.empty() && body.back() != '\n') body += '\n';
  return "trench: fix bug " + std::to_string(bug_id) + ": " +
         OneLine(title, 200) + "\n\n" + body +
         "\n(Proposed by trench. The report above is data: its text is "
         "quoted from the bug and the tools.)\n";
}

std::string TriageRunText(const Json& triage) {
  std::ostringstream o;
  const Json* t = &triage;
  o << "# Triage of " << Str(t, "case") << "\n";
  const std::string out = Str(t, "out");
  if (!out.empty()) o << "\noutputs: " << out << "\n";
  const Json* verdict = Obj(t, "verdict");
  const std::string status = Str(verdict, "status");
  Section(o, "Verdict", VerdictText(verdict), "not done\n");

  std::string m =
      MinimizationText(Obj(t, "minimization"), Str(t, "minimized_module"));
  const std::string min_case = Str(t, "minimized_case");
  if (!min_case.empty()) m = "case: " + min_case + "\n" + m;
  const std::string nothing =
      verdict != nullptr && !hlo_diff::IsFailureStatus(status)
          ? "nothing to reduce: the case does not fail (" + status + ")\n"
          : std::string("not done\n");
  Section(o, "Minimized case", m, nothing);
  Section(o, "Localization", LocalizationText(Obj(t, "localization")),
          verdict != nullptr && !hlo_diff::IsFailureStatus(status)
              ? "nothing to localize: the case does not fail (" + status + ")\n"
              : std::string("not done\n"));
  Section(o, "Culprit commit",
          "not searched: a one-shot triage has no repository (the daemon "
          "bisects commits; or run `hlo-bisect commits`)\n");
  if (const Json* notes = Arr(t, "notes"); notes && notes->size() > 0) {
    std::string n;
    for (const Json& x : notes->array()) {
      if (x.is_string()) n += "- " + x.string_value() + "\n";
    }
    Section(o, "Notes", n);
  }
  return o.str();
}

}  // namespace trench::orchestrator
