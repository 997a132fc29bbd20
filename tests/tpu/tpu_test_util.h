// Helpers for the tpu/ tests: byte conversions and a harness that runs a
// kernel body on inputs staged into VMEM.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tpu/executable.h"
#include "tpu/simulator.h"

namespace trench::tpu::testing {

template <typename T>
std::vector<uint8_t> ToBytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T>
std::vector<T> FromBytes(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

// Applies 1..max_edits random edits to `text`, for the readers' fuzz
// tests: replace a character (by one of `replace`, or any 7-bit character
// when it is empty), erase 1..max_erase characters, or insert one of
// `insert`. REQUIRES: `text` stays nonempty.
inline std::string Mutate(std::string text, std::mt19937& rng, int max_edits,
                          std::string_view replace, int max_erase,
                          std::string_view insert) {
  const int edits = 1 + rng() % max_edits;
  for (int e = 0; e < edits; ++e) {
    const size_t pos = rng() % text.size();
    switch (rng() % 3) {
      case 0:
        text[pos] = replace.empty() ? static_cast<char>(rng() % 128)
                                    : replace[rng() % replace.size()];
        break;
      case 1:
        text.erase(pos, 1 + rng() % max_erase);
        break;
      default:
        text.insert(pos, 1, insert[rng() % insert.size()]);
        break;
    }
  }
  return text;
}

// Parses a .tpux text and runs it; fails the test on a Status error.
inline RunResult RunTpux(const std::string& text,
                         const std::vector<std::vector<uint8_t>>& inputs,
                         const SimOptions& opts = SimOptions()) {
  StatusOr<Executable> exe = ReadExecutable(text);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString() << "\n" << text;
  if (!exe.ok()) return RunResult{};
  StatusOr<RunResult> r = RunExecutable(*exe, inputs, opts);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return RunResult{};
  return std::move(r).value();
}

// Input i (<= 8192 bytes) is copied to VMEM offset 8192*i; `body` runs; then
// `out_bytes` from VMEM offset 65536 become output 0.
inline std::string BodyProgram(const std::string& body,
                               const std::vector<size_t>& input_bytes,
                               size_t out_bytes) {
  std::string t = "tpux 1\n";
  for (size_t i = 0; i < input_bytes.size(); ++i) {
    t += "buffer in" + std::to_string(i) + " input " + std::to_string(i) +
         " u8[" + std::to_string(input_bytes[i]) +
         "] bytes=" + std::to_string(input_bytes[i]) + "\n";
  }
  t += "buffer out output 0 u8[" + std::to_string(out_bytes) +
       "] bytes=" + std::to_string(out_bytes) + "\n";
  t += "kernel k {\n  .vmem 131072\n";
  for (size_t i = 0; i < input_bytes.size(); ++i) {
    t += "  saddr s20, in" + std::to_string(i) + "\n";
    t += "  dmastart vmem[" + std::to_string(8192 * i) + "], hbm[s20], " +
         std::to_string(input_bytes[i]) + ", 0\n";
  }
  if (!input_bytes.empty()) t += "  dmawait 0\n";
  t += body + "\n";
  t += "  saddr s21, out\n";
  t += "  dmastart hbm[s21], vmem[65536], " + std::to_string(out_bytes) +
       ", 1\n  dmawait 1\n}\nlaunch k\n";
  return t;
}

// Runs `body` on inputs and returns output 0 reinterpreted as Out.
template <typename Out>
std::vector<Out> RunBody(const std::string& body,
                         const std::vector<std::vector<uint8_t>>& inputs,
                         size_t out_elems, RunReport* report = nullptr) {
  std::vector<size_t> sizes;
  for (const auto& in : inputs) sizes.push_back(in.size());
  RunResult r =
      RunTpux(BodyProgram(body, sizes, out_elems * sizeof(Out)), inputs);
  if (report != nullptr) *report = r.report;
  EXPECT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  if (r.outputs.empty()) return {};
  return FromBytes<Out>(r.outputs[0].bytes);
}

}  // namespace trench::tpu::testing
