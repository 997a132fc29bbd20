// CMake cache definitions that are safe to put in a shell command as they
// are: a target's description may ask for its coverage flavour to be built
// with extra `-D` flags (target_description.h), and the daemon's default
// build command carries them (git/commit_builder.h).
#pragma once

#include <string>

namespace trench {

// Whether `flag` is "-D<NAME>=<VALUE>" with NAME of [A-Za-z0-9_] and VALUE
// of [A-Za-z0-9_.+/:=-], at most kMaxCMakeDefineBytes: a definition that
// holds nothing a shell would interpret (no quote, space, $, ;, `, etc.).
inline constexpr size_t kMaxCMakeDefineBytes = 256;
bool IsSafeCMakeDefine(const std::string& flag);

}  // namespace trench
