#include "base/cmake_define.h"

#include <gtest/gtest.h>

namespace trench {
namespace {

TEST(CMakeDefineTest, DefinitionsWithNothingAShellInterprets) {
  EXPECT_TRUE(IsSafeCMakeDefine("-DTRENCH_TARGET_COVERAGE=ON"));
  EXPECT_TRUE(IsSafeCMakeDefine("-DCMAKE_CXX_COMPILER=clang++"));
  EXPECT_TRUE(IsSafeCMakeDefine("-DX=/usr/lib/llvm-14/bin:a=b-c.d"));
  EXPECT_TRUE(IsSafeCMakeDefine("-DEMPTY="));
  for (const char* bad :
       {"",          "-D",       "-D=ON",     "-DX",      "DX=ON",   "-UX=ON",
        "-DX Y=ON",  "-DX=O N",  "-DX=$(id)", "-DX=`id`", "-DX=a;b", "-DX='a'",
        "-DX=\"a\"", "-DX=a|b",  "-DX=a&b",   "-DX=a>b",  "-DX=~",   "-DX=*",
        "-DX=a\nb",  "-DX=a\\b", "-DX-Y=ON"}) {
    EXPECT_FALSE(IsSafeCMakeDefine(bad)) << bad;
  }
  EXPECT_TRUE(IsSafeCMakeDefine("-DX=" + std::string(252, 'a')));
  EXPECT_FALSE(IsSafeCMakeDefine("-DX=" + std::string(253, 'a')));
}

}  // namespace
}  // namespace trench
