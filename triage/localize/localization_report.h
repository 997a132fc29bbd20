// The localization report: the record hlo-bisect prints as JSON
// (localization_record.h holds the record, its JSON layout and its one
// mapping), a readable text form, and the refined signature (DESIGN.md
// "Data flowing through", point 4; notes: after localization a signature is
// (status class, pass, rewrite site, opcode, dtype)).
//
// From a Localization: "case" is the case directory given, "status" and
// "message" the baseline verdict's, "coarse_signature" the baseline
// signature, "levels" the levels run (in order), "findings" the levels'
// findings (null where unknown), "signature" RefinedSignatureOf below,
// "runs" {"localize": the target runs (baseline included), "linear_scan":
// the baseline plus the levels' linear scans}.
#pragma once

#include <string>

#include "base/json.h"
#include "triage/localize/localization_record.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {

// Whether a findings' pass names a pass of the pipeline, rather than the
// back end ("codegen", "buffer-assignment") or nothing.
bool IsPassCulprit(const std::string& pass);

// The refined signature {"status", "pass", "site", "opcode", "dtype",
// "sig"}. pass: the culprit (a pass, "codegen", "buffer-assignment") or
// null; site: the rewrite decision's site or null; opcode: for a pass culprit
// the opcode of the instruction its decision rewrote (when the input module has
// it and it is no parameter or constant), else the callee level's op inside a
// called computation, else the fusion level's member, else
// the graph level's instruction, else the rewritten instruction's opcode (for
// back-end culprits), else null; dtype: that instruction's element type,
// else the coarse signature's, else null.
// "sig" (what findings are deduplicated by) is hlo_diff::WithSignatureHash
// of {class (value for mismatch/nan_mismatch, crash for the crash statuses),
// pass, site, opcode, and for the crash class "crash": the crash site, the
// coarse signature's normalized message (the failing check and the top
// frames, triage/case/crash_site.h) -- two crashes in one pass, at one
// site, on one opcode are two bugs when different checks fail, and one
// when only names and values in the message differ}, the opcode only when
// no rewrite site is named: a
// rewrite rule that misfires is one bug whichever op sits next to the
// damage (the op near a clobbered buffer, the sibling of a wrong
// multi-output fusion), and a back-end bug is told apart by its emitter's
// opcode. The dtype is reported but not hashed: one bad DMA stride or
// rounding rule shows in every element type it touches. Two bugs of one
// rule or emitter then share a finding; fixing the first leaves the
// second's case failing, which fix verification reports.
RefinedSignatureRecord RefinedSignatureOf(const Localization& l);
// The same as JSON (ToJson of the record, as base/json).
Json RefinedSignature(const Localization& l);

// The report described above.
LocalizationReport MakeLocalizationReport(const Localization& l,
                                          const std::string& case_dir);
// Its JSON (ToJson of the record, as base/json): what hlo-bisect prints.
Json LocalizationJson(const Localization& l, const std::string& case_dir);

// The readable form: one block per level with its summary and runs, the
// refined signature, and the run count against the linear scan.
std::string LocalizationText(const Localization& l,
                             const std::string& case_dir);

}  // namespace trench::hlo_bisect
