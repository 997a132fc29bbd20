// A test helper: a bug moved along the lifecycle's main line (new ->
// reproduced -> minimized -> localized -> culprit_found -> patch_drafted
// -> patch_verified -> proposed), stopping at a given state.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "base/sha256.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator::testing {

// Creates a bug with `signature` and moves it up to `last` (a main-line
// state up to proposed), with a stored minimized case and `culprit` as its
// culprit commit. `proposed_details`, when an object, becomes the details
// with the move to proposed. Returns its id (0 on failure, reported).
inline int64_t MainLineBug(Store* store, const std::string& signature,
                           BugState last, const std::string& culprit = "abc",
                           const Json& proposed_details = Json()) {
  const std::string sha = Sha256Hex("minimized");
  EXPECT_TRUE(store->PutCase(sha, "", Json::MakeObject()).ok());
  StatusOr<int64_t> id =
      store->CreateBug({.signature = signature, .title = "t"}, "test", Json());
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  if (!id.ok()) return 0;
  for (BugState s :
       {BugState::kReproduced, BugState::kMinimized, BugState::kLocalized,
        BugState::kCulpritFound, BugState::kPatchDrafted,
        BugState::kPatchVerified, BugState::kProposed}) {
    if (store->GetBug(*id)->state == last) break;
    TransitionFields f;
    f.minimized_sha256 = sha;
    f.culprit_commit = culprit;
    if (s == BugState::kProposed && proposed_details.is_object()) {
      f.details = proposed_details;
    }
    StatusOr<Bug> moved = store->TransitionBug(*id, s, "test", Json(), f);
    EXPECT_TRUE(moved.ok()) << moved.status().ToString();
  }
  EXPECT_EQ(store->GetBug(*id)->state, last);
  return *id;
}

}  // namespace trench::orchestrator::testing
