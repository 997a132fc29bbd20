// Helpers for hlo-diff's tests: temporary directories, small cases, and
// fake target programs (shell scripts speaking the command-line contract).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/ir/literal.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_runner.h"
#include "triage/case/verdict.h"

namespace trench::hlo_diff::testing {

// A fresh directory under /tmp, removed at destruction.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/hlo-diff-test.XXXXXX";
    path_ = ::mkdtemp(tmpl) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const {
    return path_ + "/" + name;
  }

 private:
  std::string path_;
};

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Writes an executable /bin/sh script.
inline std::string WriteScript(const std::string& path,
                               const std::string& body) {
  WriteText(path, "#!/bin/sh\n" + body);
  ::chmod(path.c_str(), 0755);
  return path;
}

inline Literal F32(std::vector<int64_t> dims, std::vector<float> values) {
  Literal l(Shape(PrimitiveType::F32, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) l.SetFromDouble(i, values[i]);
  return l;
}

// p0 + p1 over f32[2,3], and convert of the sum to bf16, as a tuple.
inline constexpr char kAddModule[] = R"(HloModule add_case

ENTRY main {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  sum = f32[2,3] add(p0, p1)
  neg = f32[2,3] negate(sum)
  half = bf16[2,3] convert(neg)
  ROOT out = (f32[2,3], bf16[2,3]) tuple(sum, half)
}
)";

inline Case AddCase() {
  StatusOr<Case> c =
      MakeCase(kAddModule, {F32({2, 3}, {1, 2, 3, 4, 5, 6}),
                            F32({2, 3}, {0.5, -1, 2.25, 8, -3, 0})});
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : Case();
}

inline std::string BinaryDir() { return TRENCH_BINARY_DIR; }

inline TargetSpec RealTarget(TargetMode mode) {
  TargetSpec s = TargetSpec::FromBinaryDir(BinaryDir(), mode);
  s.timeout_seconds = 120;
  return s;
}

// ComputeVerdict's verdict in its JSON form (as hlo-diff prints it).
inline StatusOr<Json> ComputeVerdictJson(const Case& c, TargetRunner& runner,
                                         const std::string& work_dir) {
  ASSIGN_OR_RETURN(Verdict v, ComputeVerdict(c, runner, work_dir));
  return v.ToJson();
}

}  // namespace trench::hlo_diff::testing
