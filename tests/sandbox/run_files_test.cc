// A sandboxed run as files (sandbox/run_files.h): the request and the
// result round-trip, and what a reader refuses.
#include "sandbox/run_files.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace trench::sandbox {
namespace {

class RunFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/run-files-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << text;
  }
  std::string dir_;
};

TEST_F(RunFilesTest, RequestRoundTrips) {
  Options o;
  o.argv = {"/bin/sh", "-c", "echo 'quoted \"x\"'"};
  o.env = {"PATH=/bin", "LANG=C.UTF-8"};
  o.work_dir = "/shared/run.1";
  o.read_only_paths = {"/tools"};
  o.masked_paths = {"/var/trench"};
  o.limits.wall_seconds = 12.5;
  o.limits.memory_bytes = 3ull << 30;
  o.limits.stdout_bytes = 1234;
  o.uid = o.gid = 200001;
  o.chown_work_dir = false;
  o.isolation = Isolation::kBwrap;
  o.seccomp = SeccompMode::kKill;
  ASSERT_TRUE(WriteRunRequest(dir_, o).ok());
  StatusOr<Options> back = ReadRunRequest(dir_);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(OptionsToJson(*back), OptionsToJson(o));
  EXPECT_EQ(back->limits.memory_bytes, 3ull << 30);
  EXPECT_EQ(back->isolation, Isolation::kBwrap);
}

TEST_F(RunFilesTest, MalformedRequestsAreRefusedNamingTheMember) {
  Options o;
  o.argv = {"/bin/true"};
  Json good = OptionsToJson(o);
  auto refused = [&](const std::string& key, Json value) {
    Json j = good;
    j[key] = std::move(value);
    StatusOr<Options> r = OptionsFromJson(j);
    EXPECT_FALSE(r.ok()) << key;
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(refused("argv", Json::MakeArray()), "request.argv: empty");
  EXPECT_EQ(refused("env", Json("PATH=/bin")),
            "request.env: expected an array of strings");
  EXPECT_EQ(refused("isolation", Json("vm")),
            "request.isolation: unknown value 'vm'");
  EXPECT_EQ(refused("uid", Json(-1)),
            "request.uid: expected a non-negative integer");
  Json limits = *good.Find("limits");
  limits["wall_seconds"] = Json("forever");
  EXPECT_EQ(refused("limits", limits),
            "request.limits.wall_seconds: expected a non-negative number");
  Write("request.json", "{\"argv\": [");
  EXPECT_EQ(ReadRunRequest(dir_).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(RunFilesTest, ResultRoundTripsWithItsBytesBoundedByTheLimits) {
  Result r;
  r.exited = true;
  r.exit_code = 7;
  r.wall_seconds = 0.25;
  r.limits_hit = kLimitOutput;
  r.stdout_data = std::string("bin\0ary\xff", 8);
  r.stderr_data = "err\n";
  r.stdout_truncated = 10;
  r.namespaced = true;
  r.isolation = Isolation::kBuiltin;
  EXPECT_EQ(ReadRunResult(dir_, Limits()).status().code(),
            StatusCode::kNotFound);  // Not finished yet.
  ASSERT_TRUE(WriteRunResult(dir_, r).ok());
  StatusOr<Result> back = ReadRunResult(dir_, Limits());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ResultToJson(*back), ResultToJson(r));
  EXPECT_EQ(back->stdout_data, r.stdout_data);
  EXPECT_EQ(back->stderr_data, "err\n");
  // A result whose output is longer than the request allowed (a hostile
  // run writing the files itself) is cut there.
  Limits small;
  small.stdout_bytes = 3;
  back = ReadRunResult(dir_, small);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->stdout_data, "bin");
  EXPECT_EQ(back->stdout_truncated, 10u + 5u);
  Write("result.json", "{\"exited\": true}");
  EXPECT_NE(ReadRunResult(dir_, Limits())
                .status()
                .message()
                .find("result.exit_code: missing"),
            std::string::npos);
}

}  // namespace
}  // namespace trench::sandbox
