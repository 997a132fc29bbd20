#include "triage/case/target_description.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "base/cmake_define.h"

namespace trench::hlo_diff {
namespace {

void AddOnce(std::vector<std::string>* list, const std::string& name) {
  if (std::find(list->begin(), list->end(), name) == list->end()) {
    list->push_back(name);
  }
}

constexpr size_t kMaxNameBytes = 128;
constexpr size_t kMaxGlobBytes = 1024;

// A pass or op name: what --disable-passes, --focus and the compile report
// spell, so letters, digits, '_', '.', '-' only.
bool IsUnitName(std::string_view s) {
  return !s.empty() && s.size() <= kMaxNameBytes &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) {
           return std::isalnum(c) || c == '_' || c == '.' || c == '-';
         });
}

// Text shown to people as it is (an emitter's name, a glob): no control
// characters (C0, DEL, or C1 in UTF-8), at most `max` bytes.
bool IsShowable(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if (c < 0x20 || c == 0x7f) return false;
    if (c == 0xc2 && i + 1 < s.size() &&
        static_cast<unsigned char>(s[i + 1]) < 0xa0 &&
        static_cast<unsigned char>(s[i + 1]) >= 0x80) {
      return false;
    }
  }
  return true;
}

// `s` for a message: JSON-quoted, so control characters show escaped.
std::string Shown(std::string_view s) {
  return Json(std::string(s.substr(0, 200))).Dump();
}

// Reads a document's parts; each error names where it is ("passes[2]").
class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  Status Error(const std::string& where, const std::string& what) const {
    return InvalidArgument(origin_ + ": " + where + ": " + what);
  }

  // `*field` as a list of non-empty strings; absent: empty. `what` names
  // the items in the message ("op names").
  StatusOr<std::vector<std::string>> Names(const Json* field,
                                           const std::string& where,
                                           const std::string& what) const {
    std::vector<std::string> out;
    if (field == nullptr) return out;
    if (!field->is_array()) return Error(where, "expected an array of " + what);
    for (size_t i = 0; i < field->array().size(); ++i) {
      const Json& e = field->array()[i];
      if (!e.is_string() || e.string_value().empty()) {
        return Error(where + "[" + std::to_string(i) + "]",
                     "expected a non-empty string (one of the " + what + ")");
      }
      const std::string& v = e.string_value();
      const bool globs = what == "source globs";
      if (globs ? !IsShowable(v, kMaxGlobBytes) : !IsUnitName(v)) {
        return Error(
            where + "[" + std::to_string(i) + "]",
            Shown(v) + (globs ? " is not a source glob (control "
                                "characters, or longer than " +
                                    std::to_string(kMaxGlobBytes) + " bytes)"
                              : " is not an op name (letters, "
                                "digits, '_', '.', '-')"));
      }
      out.push_back(v);
    }
    return out;
  }

  // Source globs: relative, with no ".." component.
  StatusOr<std::vector<std::string>> Globs(const Json* field,
                                           const std::string& where) const {
    ASSIGN_OR_RETURN(std::vector<std::string> globs,
                     Names(field, where, "source globs"));
    for (size_t i = 0; i < globs.size(); ++i) {
      const std::string& g = globs[i];
      const std::string at = where + "[" + std::to_string(i) + "]";
      if (g.front() == '/') {
        return Error(at, "'" + g +
                             "' is absolute; globs are relative to "
                             "the repository root");
      }
      if (("/" + g + "/").find("/../") != std::string::npos) {
        return Error(at, "'" + g + "' leaves the repository (\"..\")");
      }
    }
    return globs;
  }

  // The units of array `key` ("passes" or "emitters"). Sets *has_sources
  // when one of them has a "sources" key.
  StatusOr<std::vector<TargetDescription::Unit>> Units(
      const Json& doc, const std::string& key, bool* has_sources) const {
    std::vector<TargetDescription::Unit> out;
    const Json* list = doc.Find(key);
    if (list == nullptr) return out;
    if (!list->is_array()) return Error(key, "expected an array of objects");
    std::set<std::string> names;
    for (size_t i = 0; i < list->array().size(); ++i) {
      const Json& e = list->array()[i];
      const std::string at = key + "[" + std::to_string(i) + "]";
      if (!e.is_object()) return Error(at, "expected an object");
      const Json* name = e.Find("name");
      if (name == nullptr || !name->is_string() ||
          name->string_value().empty()) {
        return Error(at + ".name", "expected a non-empty string");
      }
      TargetDescription::Unit u;
      u.name = name->string_value();
      if (key == "passes" ? !IsUnitName(u.name)
                          : !IsShowable(u.name, kMaxNameBytes)) {
        return Error(at + ".name",
                     Shown(u.name) +
                         (key == "passes"
                              ? " is not a pass name (letters, "
                                "digits, '_', '.', '-')"
                              : " is not a name to show (control "
                                "characters, or longer than " +
                                    std::to_string(kMaxNameBytes) + " bytes)"));
      }
      if (key == "passes" && !names.insert(u.name).second) {
        return Error(at + ".name", "pass '" + u.name + "' is listed twice");
      }
      if (e.Find("sources")) *has_sources = true;
      ASSIGN_OR_RETURN(u.sources, Globs(e.Find("sources"), at + ".sources"));
      if (key == "emitters") {
        ASSIGN_OR_RETURN(u.ops, Names(e.Find("ops"), at + ".ops", "op names"));
        if (u.ops.empty()) {
          return Error(at + ".ops", "an emitter names the ops it compiles");
        }
      }
      out.push_back(std::move(u));
    }
    return out;
  }

  // "coverage": {"cmake_flags": [...]}: the flavour is offered when the
  // object is there; each flag is a safe CMake definition.
  Status Coverage(const Json* field, TargetDescription* d) const {
    if (field == nullptr) return Status::Ok();
    if (!field->is_object()) return Error("coverage", "expected an object");
    d->offers_coverage = true;
    const Json* flags = field->Find("cmake_flags");
    if (flags == nullptr) return Status::Ok();
    if (!flags->is_array()) {
      return Error("coverage.cmake_flags", "expected an array of strings");
    }
    if (flags->array().size() > kMaxCoverageFlags) {
      return Error("coverage.cmake_flags",
                   "more than " + std::to_string(kMaxCoverageFlags) + " flags");
    }
    for (size_t i = 0; i < flags->array().size(); ++i) {
      const Json& f = flags->array()[i];
      const std::string at = "coverage.cmake_flags[" + std::to_string(i) + "]";
      if (!f.is_string() || !IsSafeCMakeDefine(f.string_value())) {
        return Error(at, (f.is_string() ? Shown(f.string_value()) : "it") +
                             " is not -DNAME=VALUE (letters, digits, '_' in "
                             "the name; no quote, space or shell character "
                             "in the value)");
      }
      d->coverage_cmake_flags.push_back(f.string_value());
    }
    return Status::Ok();
  }

  // "slice": {"chips": N, "topology": text, "collectives": [op, ...]}.
  Status Slice(const Json* field, TargetDescription* d) const {
    if (field == nullptr) return Status::Ok();
    if (!field->is_object()) return Error("slice", "expected an object");
    if (const Json* chips = field->Find("chips")) {
      if (!chips->is_integer() || chips->int64_value() < 1 ||
          chips->int64_value() > kMaxSliceChips) {
        return Error("slice.chips", "expected an integer in 1.." +
                                        std::to_string(kMaxSliceChips));
      }
      d->slice.chips = chips->int64_value();
    }
    if (const Json* t = field->Find("topology"); t && t->is_string()) {
      d->slice.topology = t->string_value();
    }
    ASSIGN_OR_RETURN(
        d->slice.collectives,
        Names(field->Find("collectives"), "slice.collectives", "op names"));
    return Status::Ok();
  }

  // "large_arrays": [{"from_elements": N, "sources": [...]}, ...], both
  // required in each group. The earlier form, one group as an object, is
  // read too: the targets of older commits print it.
  Status LargeArrays(const Json* field, TargetDescription* d) const {
    if (field == nullptr) return Status::Ok();
    std::vector<const Json*> groups;
    if (field->is_object()) {
      groups.push_back(field);
    } else if (field->is_array()) {
      for (const Json& g : field->array()) groups.push_back(&g);
    } else {
      return Error("large_arrays", "expected an array of objects");
    }
    if (groups.size() > kMaxLargeGroups) {
      return Error("large_arrays",
                   "more than " + std::to_string(kMaxLargeGroups) + " groups");
    }
    for (size_t i = 0; i < groups.size(); ++i) {
      const Json& g = *groups[i];
      const std::string at = field->is_object()
                                 ? std::string("large_arrays")
                                 : "large_arrays[" + std::to_string(i) + "]";
      if (!g.is_object()) return Error(at, "expected an object");
      const Json* n = g.Find("from_elements");
      if (n == nullptr || n->type() != Json::Type::kInt64 ||
          n->int64_value() < 1 || n->int64_value() > kMaxLargeElements) {
        return Error(at + ".from_elements",
                     "expected an integer from 1 to " +
                         std::to_string(kMaxLargeElements));
      }
      TargetDescription::LargeArrays group;
      group.from_elements = n->int64_value();
      if (const Json* a = g.Find("frontend_attributes")) {
        const std::string where = at + ".frontend_attributes";
        if (!a->is_object()) return Error(where, "expected an object");
        if (a->object().size() > kMaxFrontendAttributes) {
          return Error(where, "more than " +
                                  std::to_string(kMaxFrontendAttributes) +
                                  " attributes");
        }
        for (const auto& [name, value] : a->object()) {
          if (!value.is_string() ||
              !IsFrontendAttribute(name, value.string_value())) {
            return Error(where + "." + Shown(name),
                         "expected a name and a string value of letters, "
                         "digits, '_', '.', '-' (at most 64 bytes each)");
          }
          group.frontend_attributes.emplace_back(name, value.string_value());
        }
      }
      ASSIGN_OR_RETURN(group.sources,
                       Globs(g.Find("sources"), at + ".sources"));
      if (group.sources.empty()) {
        return Error(at + ".sources", "expected at least one glob");
      }
      d->large_arrays.push_back(std::move(group));
    }
    return Status::Ok();
  }

  // In a description every unit names its files.
  Status CheckSources(const std::vector<TargetDescription::Unit>& units,
                      const std::string& key) const {
    for (size_t i = 0; i < units.size(); ++i) {
      if (units[i].sources.empty()) {
        return Error(key + "[" + std::to_string(i) + "].sources",
                     "'" + units[i].name +
                         "' has no source globs (a described target names "
                         "the files of every pass and emitter)");
      }
    }
    return Status::Ok();
  }

 private:
  std::string origin_;
};

}  // namespace

StatusOr<TargetDescription> ParseTargetDescription(const Json& doc,
                                                   const std::string& origin) {
  const Reader r(origin);
  if (!doc.is_object()) return r.Error("the document", "expected an object");
  TargetDescription d;
  bool has_sources = doc.Find("emitters") != nullptr;
  ASSIGN_OR_RETURN(d.passes, r.Units(doc, "passes", &has_sources));
  ASSIGN_OR_RETURN(d.emitters, r.Units(doc, "emitters", &has_sources));
  ASSIGN_OR_RETURN(d.ops, r.Names(doc.Find("ops"), "ops", "op names"));
  RETURN_IF_ERROR(r.Coverage(doc.Find("coverage"), &d));
  RETURN_IF_ERROR(r.LargeArrays(doc.Find("large_arrays"), &d));
  RETURN_IF_ERROR(r.Slice(doc.Find("slice"), &d));
  if (!has_sources) {
    d.passes.clear();  // Names alone describe no files.
    return d;
  }
  RETURN_IF_ERROR(r.CheckSources(d.passes, "passes"));
  RETURN_IF_ERROR(r.CheckSources(d.emitters, "emitters"));
  return d;
}

StatusOr<TargetDescription> ParseTargetDescriptionText(
    std::string_view text, const std::string& origin) {
  if (text.size() > kMaxDescriptionBytes) {
    return InvalidArgument(origin + ": " + std::to_string(text.size()) +
                           " bytes, more than a description may take (" +
                           std::to_string(kMaxDescriptionBytes) + ")");
  }
  StatusOr<Json> doc = ParseJson(text);
  if (!doc.ok()) return doc.status().WithContext(origin);
  return ParseTargetDescription(*doc, origin);
}

bool SourceGlobMatches(std::string_view glob, std::string_view path) {
  std::string pattern(glob);
  std::string subject(path);
  if (pattern.size() >= 3 && pattern.ends_with("/**")) {
    // The directory part matches a leading part of the path that has more
    // below it.
    pattern.resize(pattern.size() - 3);
    const size_t parts = std::count(pattern.begin(), pattern.end(), '/') + 1;
    size_t end = 0;
    for (size_t i = 0; i < parts; ++i) {
      end = subject.find('/', i == 0 ? 0 : end + 1);
      if (end == std::string::npos) return false;
    }
    subject.resize(end);
  }
  return fnmatch(pattern.c_str(), subject.c_str(), FNM_PATHNAME) == 0;
}

std::vector<std::string> TargetDescription::AllOps() const {
  std::vector<std::string> out = ops;
  for (const Unit& e : emitters) {
    for (const std::string& op : e.ops) AddOnce(&out, op);
  }
  return out;
}

std::vector<std::string> TargetDescription::SourcesOf(
    std::string_view culprit) const {
  std::vector<std::string> out;
  for (const Unit& p : passes) {
    if (p.name != culprit) continue;
    for (const std::string& g : p.sources) AddOnce(&out, g);
  }
  if (out.empty() && culprit == "codegen") {
    for (const Unit& e : emitters) {
      for (const std::string& g : e.sources) AddOnce(&out, g);
    }
  }
  return out;
}

bool IsFrontendAttribute(std::string_view name, std::string_view value) {
  auto plain = [](std::string_view t) {
    return t.size() <= 64 && std::all_of(t.begin(), t.end(), [](char c) {
             return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
                    c == '.' || c == '-';
           });
  };
  return !name.empty() && plain(name) && plain(value);
}

StatusOr<std::pair<std::string, std::string>> ParseFrontendAttribute(
    std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos ||
      !IsFrontendAttribute(text.substr(0, eq), text.substr(eq + 1))) {
    return InvalidArgument(
        "expected NAME=VALUE of letters, digits, '_', "
        "'.', '-' (at most 64 each), got " +
        Shown(text));
  }
  return std::make_pair(std::string(text.substr(0, eq)),
                        std::string(text.substr(eq + 1)));
}

TargetDescription::LargeArrays TargetDescription::LargeArraysOfPath(
    std::string_view path) const {
  LargeArrays best;
  for (const LargeArrays& g : large_arrays) {
    if (g.from_elements <= best.from_elements) continue;
    for (const std::string& glob : g.sources) {
      if (SourceGlobMatches(glob, path)) {
        best = g;
        break;
      }
    }
  }
  return best;
}

void TargetDescription::NamesOfPath(std::string_view path,
                                    std::vector<std::string>* pass_names,
                                    std::vector<std::string>* op_names) const {
  auto matches = [&](const Unit& u) {
    return std::any_of(
        u.sources.begin(), u.sources.end(),
        [&](const std::string& g) { return SourceGlobMatches(g, path); });
  };
  for (const Unit& p : passes) {
    if (matches(p)) AddOnce(pass_names, p.name);
  }
  for (const Unit& e : emitters) {
    if (!matches(e)) continue;
    for (const std::string& op : e.ops) AddOnce(op_names, op);
  }
}

Json TargetDescription::ToJson() const {
  auto units = [](const std::vector<Unit>& list, bool with_ops) {
    Json out = Json::MakeArray();
    for (const Unit& u : list) {
      Json e = Json::MakeObject();
      e["name"] = u.name;
      if (with_ops) e["ops"] = Json::MakeStringArray(u.ops);
      e["sources"] = Json::MakeStringArray(u.sources);
      out.push_back(std::move(e));
    }
    return out;
  };
  Json j = Json::MakeObject();
  j["passes"] = units(passes, false);
  j["emitters"] = units(emitters, true);
  j["ops"] = Json::MakeStringArray(ops);
  if (offers_coverage) {
    Json c = Json::MakeObject();
    c["cmake_flags"] = Json::MakeStringArray(coverage_cmake_flags);
    j["coverage"] = std::move(c);
  }
  if (!large_arrays.empty()) {
    Json groups = Json::MakeArray();
    for (const LargeArrays& g : large_arrays) {
      Json l = Json::MakeObject();
      l["from_elements"] = g.from_elements;
      if (!g.frontend_attributes.empty()) {
        Json a = Json::MakeObject();
        for (const auto& [k, v] : g.frontend_attributes) a[k] = v;
        l["frontend_attributes"] = std::move(a);
      }
      l["sources"] = Json::MakeStringArray(g.sources);
      groups.push_back(std::move(l));
    }
    j["large_arrays"] = std::move(groups);
  }
  if (slice.chips != 1 || !slice.collectives.empty()) {
    Json sl = Json::MakeObject();
    sl["chips"] = slice.chips;
    if (!slice.topology.empty()) sl["topology"] = slice.topology;
    sl["collectives"] = Json::MakeStringArray(slice.collectives);
    j["slice"] = std::move(sl);
  }
  return j;
}

}  // namespace trench::hlo_diff
