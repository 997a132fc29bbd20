// The executable (.tpux): HBM buffer declarations, kernels, the launch
// sequence and the entry signature (the input/output/tap buffers).
//
// File format (text, versioned, line oriented; see tpu/ISA.md):
//
//   tpux 1
//   module add
//   slice 4                       ; optional: chips it is written for (1)
//   buffer x input 0 f32[10,200]{1,0} bytes=8000
//   buffer y output 0 f32[10,200]{1,0} bytes=8000
//   buffer c constant f32[2]{0} bytes=8 data=0000803f00000040
//   buffer t0 tap 0 f32[10]{0} bytes=40 label="fusion.3/add.2"
//   kernel add { ... }            ; assembly, see tpu/assembler.h
//   launch add
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tpu/isa.h"

namespace trench::tpu {

inline constexpr int kTpuxVersion = 1;

enum class BufferRole : uint8_t { kInput, kOutput, kTemp, kConstant, kTap };
std::string_view BufferRoleName(BufferRole r);

struct BufferDecl {
  std::string name;
  BufferRole role = BufferRole::kTemp;
  int index = -1;            // Position among inputs/outputs/taps, else -1.
  std::string dtype = "u8";  // Host element type name (metadata only).
  std::vector<int64_t> dims;
  std::vector<int64_t> layout;  // Minor-to-major; empty means none given.
  int64_t bytes = 0;
  std::string label;          // Taps: what value the buffer exposes.
  std::vector<uint8_t> data;  // Constants: initial contents (size bytes).
  bool operator==(const BufferDecl&) const = default;
};

struct Executable {
  std::string module = "module";
  // The slice (chips, SPMD) the program is written for: 1..kMaxSliceChips.
  int slice = 1;
  std::vector<BufferDecl> buffers;
  std::vector<Kernel> kernels;
  std::vector<std::string> launches;  // Kernel names, run in order.
  bool operator==(const Executable&) const = default;

  // Buffers of `role` ordered by index.
  std::vector<const BufferDecl*> BuffersWithRole(BufferRole role) const;
  const Kernel* FindKernel(std::string_view name) const;
};

// Checks: a slice of 1..kMaxSliceChips chips; unique buffer and kernel names;
// input/output/tap indices dense from 0; constants carry exactly `bytes` of
// data and others none; bytes consistent with dims for machine-known dtypes;
// every launch names a kernel; every `saddr` symbol names a buffer; every
// kernel validates. Returns InvalidArgument with the offending name.
Status ValidateExecutable(const Executable& exe);

// Serializes to the text format. REQUIRES: ValidateExecutable(exe).ok().
std::string WriteExecutable(const Executable& exe);
// Parses and validates. Malformed input yields InvalidArgument
// "line:col: message"; an unknown version yields Unimplemented.
StatusOr<Executable> ReadExecutable(std::string_view text);

Status WriteExecutableFile(const Executable& exe, const std::string& path);
StatusOr<Executable> ReadExecutableFile(const std::string& path);

}  // namespace trench::tpu
