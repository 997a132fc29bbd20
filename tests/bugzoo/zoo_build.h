// The bug zoo's patched builds, shared by the tests that run seeded bugs
// (tests/bugzoo/bugzoo_test.cc, tests/triage/localize/level_zoo_test.cc):
// a copy of the target side under DIR/src with one -DTRENCH_TARGET_ONLY=ON
// build in DIR/build (Release, -O1; ccache hits across runs: paths below
// DIR are made relative and the cwd is not hashed), then per bug: Apply
// its patch, Build hlo-run incrementally, Revert. Header-only so that any
// test binary can use it. The output of every step goes to DIR/build.log.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

namespace trench::bugzoo {

// `s` quoted for /bin/sh.
inline std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `command` through /bin/sh; returns its exit code, or 128 + signal
// when it died from a signal (127 when it could not run).
inline int RunCommand(const std::string& command) {
  const int st = std::system(command.c_str());
  if (st == -1) return 127;
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 127;
}

inline bool HasTool(const std::string& tool) {
  return RunCommand(tool + " --version >/dev/null 2>&1") == 0;
}

class ZooBuild {
 public:
  // Copies the target side of `source` (a checkout) to `dir`/src.
  ZooBuild(const std::filesystem::path& source,
           const std::filesystem::path& dir)
      : dir_(dir), src_(dir / "src"), build_(dir / "build") {
    namespace fs = std::filesystem;
    fs::create_directories(src_);
    for (const char* d : {"base", "compiler", "tpu", "tools"}) {
      fs::copy(source / d, src_ / d, fs::copy_options::recursive);
    }
    fs::copy_file(source / "CMakeLists.txt", src_ / "CMakeLists.txt");
    env_ =
        "CCACHE_BASEDIR=" + ShellQuote(dir.string()) + " CCACHE_NOHASHDIR=1 ";
  }

  // Configures the build; true on success (else see log()).
  bool Configure() const {
    return RunCommand(env_ + "cmake -S " + ShellQuote(src_.string()) + " -B " +
                      ShellQuote(build_.string()) +
                      (HasTool("ninja") ? " -G Ninja" : "") +
                      " -DTRENCH_TARGET_ONLY=ON -DCMAKE_BUILD_TYPE=Release"
                      " '-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG' >" +
                      Log() + " 2>&1") == 0;
  }
  // Builds `targets` (incrementally); true on success. hloc describes the
  // target's slice to RunWitness.
  bool Build(const std::string& targets = "hlo-run hloc") const {
    const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
    return RunCommand(env_ + "cmake --build " + ShellQuote(build_.string()) +
                      " --target " + targets + " -j " + std::to_string(jobs) +
                      " >>" + Log() + " 2>&1") == 0;
  }
  // Applies (or, with `reverse`, takes out) bug_dir/bug.patch in the copy.
  bool Patch(const std::filesystem::path& bug_dir, bool reverse = false) const {
    return RunCommand("cd " + ShellQuote(src_.string()) + " && git apply " +
                      (reverse ? "-R " : "") +
                      ShellQuote((bug_dir / "bug.patch").string())) == 0;
  }

  const std::filesystem::path& build_dir() const { return build_; }
  std::filesystem::path log() const { return dir_ / "build.log"; }

 private:
  std::string Log() const { return ShellQuote(log().string()); }

  std::filesystem::path dir_, src_, build_;
  std::string env_;
};

}  // namespace trench::bugzoo
