// The thread's log fields (base/log_context.h): scopes add, replace and
// remove fields and restore them when they end; threads do not share them.
#include "base/log_context.h"

#include <gtest/gtest.h>

#include <thread>

namespace trench {
namespace {

std::string Fields() { return CurrentLogFields().Dump(); }

TEST(LogContextTest, ScopesNestAndRestore) {
  EXPECT_EQ(Fields(), "{}");
  {
    LogScope outer(*ParseJson(R"({"job": 1, "bug": 2})"));
    EXPECT_EQ(Fields(), R"({"job":1,"bug":2})");
    {
      LogScope inner(*ParseJson(R"({"bug": 3, "job": null, "role": "r"})"));
      EXPECT_EQ(Fields(), R"({"bug":3,"role":"r"})");
      inner.Set("attempt", Json(2));
      EXPECT_EQ(Fields(), R"({"bug":3,"role":"r","attempt":2})");
      std::string other;
      std::thread([&] { other = Fields(); }).join();
      EXPECT_EQ(other, "{}");
    }
    EXPECT_EQ(Fields(), R"({"job":1,"bug":2})");
    LogScope ignored(Json(5));  // Not an object: nothing changes.
    EXPECT_EQ(Fields(), R"({"job":1,"bug":2})");
  }
  EXPECT_EQ(Fields(), "{}");
}

}  // namespace
}  // namespace trench
