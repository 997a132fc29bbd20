#include "triage/case/verdict_status.h"

#include <string>

namespace trench::hlo_diff {
namespace {

struct Info {
  VerdictStatus status;
  const char* name;
  FailureClass failure;
  bool judgeable;
  int exit_code;
};

constexpr Info kInfos[] = {
#define VERDICT_STATUS(e, name, failure, judgeable, exit_code) \
  {VerdictStatus::e, name, FailureClass::failure, judgeable, exit_code},
#include "triage/case/verdict_status.def"
#undef VERDICT_STATUS
};

const Info& InfoOf(VerdictStatus s) { return kInfos[static_cast<size_t>(s)]; }

const Info* FindInfo(std::string_view name) {
  for (const Info& i : kInfos) {
    if (name == i.name) return &i;
  }
  return nullptr;
}

}  // namespace

const std::vector<VerdictStatus>& AllVerdictStatuses() {
  static const std::vector<VerdictStatus>* const kAll = [] {
    auto* all = new std::vector<VerdictStatus>;
    for (const Info& i : kInfos) all->push_back(i.status);
    return all;
  }();
  return *kAll;
}

const char* VerdictStatusName(VerdictStatus s) { return InfoOf(s).name; }

StatusOr<VerdictStatus> ParseVerdictStatus(std::string_view name) {
  if (const Info* i = FindInfo(name)) return i->status;
  std::string known;
  for (const Info& i : kInfos) {
    known += (known.empty() ? "" : ", ") + std::string(i.name);
  }
  return InvalidArgument("unknown verdict status '" + std::string(name) +
                         "' (" + known + ")");
}

FailureClass FailureClassOf(VerdictStatus s) { return InfoOf(s).failure; }

bool IsFailure(VerdictStatus s) {
  return FailureClassOf(s) != FailureClass::kNone;
}

bool IsValueFailure(VerdictStatus s) {
  return FailureClassOf(s) == FailureClass::kValue;
}

bool IsCrash(VerdictStatus s) {
  return FailureClassOf(s) == FailureClass::kCrash;
}

bool IsJudgeable(VerdictStatus s) { return InfoOf(s).judgeable; }

int HloDiffExitCode(VerdictStatus s) { return InfoOf(s).exit_code; }

bool IsFailureStatus(std::string_view name) {
  const Info* i = FindInfo(name);
  return i != nullptr && i->failure != FailureClass::kNone;
}

bool IsValueFailureStatus(std::string_view name) {
  const Info* i = FindInfo(name);
  return i != nullptr && i->failure == FailureClass::kValue;
}

bool IsCrashStatus(std::string_view name) {
  const Info* i = FindInfo(name);
  return i != nullptr && i->failure == FailureClass::kCrash;
}

bool IsUnjudgeableStatus(std::string_view name) {
  const Info* i = FindInfo(name);
  return i != nullptr && !i->judgeable;
}

}  // namespace trench::hlo_diff
