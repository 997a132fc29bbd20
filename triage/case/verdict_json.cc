// Verdict and Signature <-> JSON (the layouts are in verdict_record.h). The
// one mapping: the tools print ToJson(), and whoever reads a verdict or a
// signature back uses FromJson.
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/json_reader.h"
#include "triage/case/verdict.h"

namespace trench::hlo_diff {
namespace {

// A number, or "nan"/"inf"/"-inf" (the comparator's statistics).
StatusOr<double> Stat(const JsonReader& r, std::string_view key) {
  ASSIGN_OR_RETURN(const Json* v, r.Get(key));
  if (v->is_number()) return v->number_value();
  if (v->is_string()) {
    const std::string& s = v->string_value();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return r.Error(key, "expected a number");
}

StatusOr<ElementMismatch> MismatchFromJson(const JsonReader& r, const Json& j) {
  RETURN_IF_ERROR(r.Check());
  ElementMismatch m;
  ASSIGN_OR_RETURN(m.linear_index, r.Int("linear_index"));
  ASSIGN_OR_RETURN(const Json* index, r.Get("index"));
  if (!index->is_array()) return r.Error("index", "expected an array");
  for (const Json& i : index->array()) {
    StatusOr<int64_t> n = i.GetInt64();
    if (!n.ok()) return r.Error("index", "expected integers");
    m.index.push_back(*n);
  }
  ASSIGN_OR_RETURN(const Json* expected, r.Get("expected"));
  ASSIGN_OR_RETURN(const Json* actual, r.Get("actual"));
  m.expected = *expected;
  m.actual = *actual;
  ASSIGN_OR_RETURN(m.abs_error, Stat(r, "abs_error"));
  ASSIGN_OR_RETURN(m.rel_error, Stat(r, "rel_error"));
  if (j.Find("allowed") != nullptr) {
    ASSIGN_OR_RETURN(m.allowed, Stat(r, "allowed"));
  }
  return m;
}

// One entry of "outputs" (oracle/comparator_report.cc's layout).
StatusOr<OutputComparison> OutputFromJson(const JsonReader& r, const Json& j) {
  RETURN_IF_ERROR(r.Check());
  OutputComparison o;
  ASSIGN_OR_RETURN(o.index, r.Int("index"));
  ASSIGN_OR_RETURN(o.expected_shape, r.String("expected_shape"));
  ASSIGN_OR_RETURN(o.actual_shape, r.String("actual_shape"));
  if (r.Has("shape_error")) {
    ASSIGN_OR_RETURN(o.shape_error, r.String("shape_error"));
    return o;
  }
  ASSIGN_OR_RETURN(const Json* tol, r.Get("tolerance"));
  const JsonReader t = r.Sub(*tol, "tolerance");
  RETURN_IF_ERROR(t.Check());
  ASSIGN_OR_RETURN(o.tolerance.abs, Stat(t, "abs"));
  ASSIGN_OR_RETURN(o.tolerance.rel, Stat(t, "rel"));
  ASSIGN_OR_RETURN(o.element_count, r.Int("elements"));
  ASSIGN_OR_RETURN(o.max_abs_error, Stat(r, "max_abs_error"));
  ASSIGN_OR_RETURN(o.max_rel_error, Stat(r, "max_rel_error"));
  ASSIGN_OR_RETURN(o.max_ulp_error, r.Uint("max_ulp_error"));
  ASSIGN_OR_RETURN(o.mismatch_count, r.Int("mismatches"));
  ASSIGN_OR_RETURN(o.nonfinite_mismatch_count, r.Int("nonfinite_mismatches"));
  for (auto [key, slot] :
       {std::pair{"first_mismatch", &o.first_mismatch},
        std::pair{"first_nonfinite_mismatch", &o.first_nonfinite_mismatch}}) {
    if (const Json* m = j.Find(key)) {
      ASSIGN_OR_RETURN(*slot, MismatchFromJson(r.Sub(*m, key), *m));
    }
  }
  if (r.Has("bounded")) {
    ASSIGN_OR_RETURN(o.bounded, r.Bool("bounded"));
    ASSIGN_OR_RETURN(o.max_allowed, Stat(r, "max_allowed"));
    ASSIGN_OR_RETURN(o.undetermined_count, r.Int("undetermined"));
  }
  return o;
}

StatusOr<VerdictStatus> StatusFromJson(const JsonReader& r) {
  ASSIGN_OR_RETURN(std::string status, r.String("status"));
  StatusOr<VerdictStatus> s = ParseVerdictStatus(status);
  if (!s.ok()) return r.Error("status", s.status().message());
  return s;
}

// A string or null (nullopt).
StatusOr<std::optional<std::string>> OptionalString(const JsonReader& r,
                                                    std::string_view key) {
  ASSIGN_OR_RETURN(const Json* v, r.Get(key));
  if (v->is_null()) return std::optional<std::string>();
  if (!v->is_string()) return r.Error(key, "expected a string or null");
  return std::optional<std::string>(v->string_value());
}

Json OptionalJson(const std::optional<std::string>& s) {
  return s ? Json(*s) : Json();
}

StatusOr<Signature> SignatureFromJson(const JsonReader& r, const Json& j) {
  RETURN_IF_ERROR(r.Check());
  Signature s;
  ASSIGN_OR_RETURN(s.status, StatusFromJson(r));
  std::vector<std::string_view> members = {"status", "sig"};
  if (IsValueFailure(s.status)) {
    members.insert(members.end(), {"dtype", "ops"});
    ASSIGN_OR_RETURN(s.dtype, OptionalString(r, "dtype"));
    ASSIGN_OR_RETURN(const Json* ops, r.Get("ops"));
    if (!ops->is_array()) {
      return r.Error("ops", "expected an array of strings");
    }
    for (const Json& op : ops->array()) {
      if (!op.is_string()) {
        return r.Error("ops", "expected an array of strings");
      }
      s.ops.push_back(op.string_value());
    }
  } else if (IsCrash(s.status)) {
    members.insert(members.end(), {"stage", "message", "pass"});
    ASSIGN_OR_RETURN(s.stage, r.String("stage"));
    ASSIGN_OR_RETURN(s.message, r.String("message"));
    ASSIGN_OR_RETURN(s.pass, OptionalString(r, "pass"));
  }
  ASSIGN_OR_RETURN(s.sig, r.String("sig"));
  for (const auto& [key, v] : j.object()) {
    if (std::find(members.begin(), members.end(), key) == members.end()) {
      return r.Error(key, std::string("unexpected in a signature of status ") +
                              VerdictStatusName(s.status));
    }
  }
  return s;
}

Json OracleJson(const OracleRun& o) {
  Json j = Json::MakeObject();
  if (o.undetermined) j["undetermined"] = *o.undetermined;
  j["status"] = o.status;
  j["message"] = o.message;
  j["seconds"] = o.seconds;
  return j;
}

StatusOr<OracleRun> OracleFromJson(const JsonReader& r, const Json& j) {
  RETURN_IF_ERROR(r.Check());
  OracleRun o;
  if (j.Find("undetermined") != nullptr) {
    ASSIGN_OR_RETURN(o.undetermined, r.Int("undetermined"));
  }
  ASSIGN_OR_RETURN(o.status, r.String("status"));
  ASSIGN_OR_RETURN(o.message, r.String("message"));
  ASSIGN_OR_RETURN(o.seconds, Stat(r, "seconds"));
  return o;
}

}  // namespace

Json Signature::ToJson() const {
  Json j = Json::MakeObject();
  j["status"] = VerdictStatusName(status);
  if (IsValueFailure(status)) {
    j["dtype"] = OptionalJson(dtype);
    Json::Array list;
    for (const std::string& op : ops) list.emplace_back(op);
    j["ops"] = Json(std::move(list));
  } else if (IsCrash(status)) {
    j["stage"] = stage;
    j["message"] = message;
    j["pass"] = OptionalJson(pass);
  }
  j["sig"] = sig;
  return j;
}

StatusOr<Signature> Signature::FromJson(const Json& j) {
  return SignatureFromJson(JsonReader(j, "signature"), j);
}

std::string SignatureHash(const Signature& s) {
  return WithSignatureHash(s.ToJson())["sig"].string_value();
}

Json Verdict::ToJson() const {
  Json j = Json::MakeObject();
  j["status"] = status_name();
  j["message"] = message;
  if (!case_sha.empty()) {
    j["case"] = case_sha;
    j["compare"] = CompareKindName(compare);
    j["outputs"] = Json();
    if (outputs) {
      ComparisonResult cmp;
      cmp.outputs = *outputs;
      j["outputs"] = *cmp.ToJson().Find("outputs");
    }
    j["oracle"] = OracleJson(oracle);
    j["target"] = target ? target->ToJson() : Json();
    if (!structure_error.empty()) j["structure_error"] = structure_error;
    if (!error_maps.empty()) {
      Json maps = Json::MakeArray();
      for (const ErrorMap& m : error_maps) maps.push_back(m.ToJson());
      j["error_maps"] = maps;
    }
  }
  j["signature"] = signature.ToJson();
  return j;
}

StatusOr<Verdict> Verdict::FromJson(const Json& j) {
  const JsonReader r(j, "verdict");
  RETURN_IF_ERROR(r.Check());
  Verdict v;
  ASSIGN_OR_RETURN(v.status, StatusFromJson(r));
  ASSIGN_OR_RETURN(v.message, r.String("message"));
  ASSIGN_OR_RETURN(const Json* sig, r.Get("signature"));
  ASSIGN_OR_RETURN(v.signature,
                   SignatureFromJson(r.Sub(*sig, "signature"), *sig));
  if (!r.Has("case")) return v;
  ASSIGN_OR_RETURN(v.case_sha, r.String("case"));
  ASSIGN_OR_RETURN(std::string compare, r.String("compare"));
  bool known = false;
  for (CompareKind k :
       {CompareKind::kContract, CompareKind::kNear, CompareKind::kExact}) {
    if (compare == CompareKindName(k)) {
      v.compare = k;
      known = true;
    }
  }
  if (!known) return r.Error("compare", "unknown mode '" + compare + "'");
  ASSIGN_OR_RETURN(const Json* outputs, r.Get("outputs"));
  if (!outputs->is_null()) {
    if (!outputs->is_array()) return r.Error("outputs", "expected an array");
    v.outputs.emplace();
    for (size_t i = 0; i < outputs->size(); ++i) {
      const Json& o = outputs->array()[i];
      ASSIGN_OR_RETURN(
          OutputComparison c,
          OutputFromJson(r.Sub(o, "outputs[" + std::to_string(i) + "]"), o));
      v.outputs->push_back(std::move(c));
    }
  }
  ASSIGN_OR_RETURN(const Json* oracle, r.Get("oracle"));
  ASSIGN_OR_RETURN(v.oracle, OracleFromJson(r.Sub(*oracle, "oracle"), *oracle));
  ASSIGN_OR_RETURN(const Json* target, r.Get("target"));
  if (!target->is_null()) {
    StatusOr<TargetResult> t = TargetResult::FromJson(*target);
    if (!t.ok()) return InvalidArgument("verdict." + t.status().message());
    v.target = std::move(t).value();
  }
  if (r.Has("structure_error")) {
    ASSIGN_OR_RETURN(v.structure_error, r.String("structure_error"));
  }
  if (r.Has("error_maps")) {
    ASSIGN_OR_RETURN(const Json* maps, r.Get("error_maps"));
    if (!maps->is_array() ||
        maps->size() > static_cast<size_t>(kMaxErrorMaps)) {
      return r.Error("error_maps", "expected an array of at most " +
                                       std::to_string(kMaxErrorMaps));
    }
    for (size_t i = 0; i < maps->size(); ++i) {
      StatusOr<ErrorMap> m = ErrorMap::FromJson(maps->array()[i]);
      if (!m.ok()) {
        return r.Error("error_maps[" + std::to_string(i) + "]",
                       m.status().message());
      }
      v.error_maps.push_back(std::move(m).value());
    }
  }
  return v;
}

}  // namespace trench::hlo_diff
