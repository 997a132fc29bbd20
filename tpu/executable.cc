#include "tpu/executable.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>
#include <unordered_set>

#include "tpu/assembler.h"
#include "tpu/text_cursor.h"
#include "tpu/topology.h"

namespace trench::tpu {
namespace {

constexpr int64_t kMaxBufferBytes = int64_t{1} << 40;

std::string Hex(const std::vector<uint8_t>& d) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  s.reserve(d.size() * 2);
  for (uint8_t b : d) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

std::string IntList(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(v[i]);
  }
  return s;
}

StatusOr<std::vector<int64_t>> ParseIntList(TextCursor& c, char close) {
  std::vector<int64_t> v;
  if (c.Consume(close)) return v;
  do {
    ASSIGN_OR_RETURN(int64_t x, c.Int());
    v.push_back(x);
  } while (c.Consume(','));
  RETURN_IF_ERROR(c.Expect(close));
  return v;
}

StatusOr<BufferRole> ParseRole(TextCursor& c) {
  c.SkipSpace();
  int col = c.column();
  ASSIGN_OR_RETURN(std::string r, c.Ident());
  for (BufferRole role :
       {BufferRole::kInput, BufferRole::kOutput, BufferRole::kTemp,
        BufferRole::kConstant, BufferRole::kTap}) {
    if (BufferRoleName(role) == r) return role;
  }
  return c.ErrorAt(col, "unknown buffer role '" + r + "'");
}

Status ParseData(TextCursor& c, BufferDecl* b) {
  std::string_view rest = c.Rest();
  size_t n = 0;
  while (n < rest.size() && HexDigit(rest[n]) >= 0) ++n;
  if (n % 2 != 0) return c.Error("odd number of hex digits in data");
  b->data.resize(n / 2);
  for (size_t i = 0; i < n / 2; ++i) {
    b->data[i] = static_cast<uint8_t>(HexDigit(rest[2 * i]) * 16 +
                                      HexDigit(rest[2 * i + 1]));
  }
  TextCursor tail(rest.substr(n), 0);
  if (!tail.AtEnd()) return c.Error("bad character in data");
  return Status::Ok();
}

// buffer NAME ROLE [INDEX] DTYPE[DIMS]{LAYOUT} bytes=N [data=HEX] [label="."]
StatusOr<BufferDecl> ParseBuffer(TextCursor& c) {
  BufferDecl b;
  ASSIGN_OR_RETURN(b.name, c.Ident());
  ASSIGN_OR_RETURN(b.role, ParseRole(c));
  if (b.role == BufferRole::kInput || b.role == BufferRole::kOutput ||
      b.role == BufferRole::kTap) {
    ASSIGN_OR_RETURN(int64_t idx, c.Int());
    if (idx < 0 || idx > 1000000) return c.Error("bad buffer index");
    b.index = static_cast<int>(idx);
  }
  ASSIGN_OR_RETURN(b.dtype, c.Ident());
  RETURN_IF_ERROR(c.Expect('['));
  ASSIGN_OR_RETURN(b.dims, ParseIntList(c, ']'));
  if (c.Consume('{')) {
    ASSIGN_OR_RETURN(b.layout, ParseIntList(c, '}'));
  }
  bool have_bytes = false;
  while (!c.AtEnd()) {
    ASSIGN_OR_RETURN(std::string key, c.Ident());
    RETURN_IF_ERROR(c.Expect('='));
    if (key == "bytes") {
      ASSIGN_OR_RETURN(b.bytes, c.Int());
      if (b.bytes < 0 || b.bytes > kMaxBufferBytes) {
        return c.Error("bytes out of range");
      }
      have_bytes = true;
    } else if (key == "label") {
      ASSIGN_OR_RETURN(b.label, c.Quoted());
    } else if (key == "data") {
      c.SkipSpace();
      RETURN_IF_ERROR(ParseData(c, &b));
      break;
    } else {
      return c.Error("unknown buffer attribute '" + key + "'");
    }
  }
  if (!have_bytes) return c.Error("buffer " + b.name + " needs bytes=");
  return b;
}

Status CheckIndices(const Executable& exe, BufferRole role) {
  std::vector<const BufferDecl*> bs = exe.BuffersWithRole(role);
  for (size_t i = 0; i < bs.size(); ++i) {
    if (bs[i]->index != static_cast<int>(i)) {
      return InvalidArgument(std::string(BufferRoleName(role)) +
                             " indices must be 0.." +
                             std::to_string(bs.size() - 1) + " without gaps");
    }
  }
  return Status::Ok();
}

Status CheckBuffer(const BufferDecl& b) {
  bool indexed = b.role == BufferRole::kInput ||
                 b.role == BufferRole::kOutput || b.role == BufferRole::kTap;
  if (indexed != (b.index >= 0)) {
    return InvalidArgument("buffer " + b.name + ": bad index for its role");
  }
  if (b.bytes < 0 || b.bytes > kMaxBufferBytes) {
    return InvalidArgument("buffer " + b.name + ": bytes out of range");
  }
  bool constant = b.role == BufferRole::kConstant;
  if (constant ? static_cast<int64_t>(b.data.size()) != b.bytes
               : !b.data.empty()) {
    return InvalidArgument("buffer " + b.name +
                           ": data must be given for constants only, "
                           "with exactly bytes= bytes");
  }
  if (!b.layout.empty() && b.layout.size() != b.dims.size()) {
    return InvalidArgument("buffer " + b.name + ": layout rank != dims rank");
  }
  std::optional<DType> t = DTypeFromName(b.dtype);
  if (t) {
    // A zero-size array has 0 bytes whatever its other dims (which may be
    // huge: f32[1000000000000,0]), so only nonempty products can overflow.
    const bool empty =
        std::find(b.dims.begin(), b.dims.end(), 0) != b.dims.end();
    int64_t n = empty ? 0 : DTypeBytes(*t);
    for (int64_t d : b.dims) {
      if (d < 0 || (!empty && n > kMaxBufferBytes / d)) {
        return InvalidArgument("buffer " + b.name + ": bad dims");
      }
      n *= d;
    }
    if (n != b.bytes) {
      return InvalidArgument("buffer " + b.name +
                             ": bytes=" + std::to_string(b.bytes) +
                             " but shape needs " + std::to_string(n));
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view BufferRoleName(BufferRole r) {
  switch (r) {
    case BufferRole::kInput:
      return "input";
    case BufferRole::kOutput:
      return "output";
    case BufferRole::kTemp:
      return "temp";
    case BufferRole::kConstant:
      return "constant";
    case BufferRole::kTap:
      return "tap";
  }
  return "?";
}

std::vector<const BufferDecl*> Executable::BuffersWithRole(
    BufferRole role) const {
  std::vector<const BufferDecl*> out;
  for (const BufferDecl& b : buffers) {
    if (b.role == role) out.push_back(&b);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const BufferDecl* a, const BufferDecl* b) {
                     return a->index < b->index;
                   });
  return out;
}

const Kernel* Executable::FindKernel(std::string_view name) const {
  for (const Kernel& k : kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

Status ValidateExecutable(const Executable& exe) {
  if (exe.slice < 1 || exe.slice > kMaxSliceChips) {
    return InvalidArgument("slice " + std::to_string(exe.slice) +
                           ": a slice has 1.." +
                           std::to_string(kMaxSliceChips) + " chips");
  }
  // Names by hash: an executable of a whole model has tens of thousands
  // of buffers and kernels.
  std::unordered_set<std::string_view> buffers, kernels;
  buffers.reserve(exe.buffers.size());
  kernels.reserve(exe.kernels.size());
  for (const BufferDecl& b : exe.buffers) {
    RETURN_IF_ERROR(CheckBuffer(b));
    if (!buffers.insert(b.name).second) {
      return InvalidArgument("duplicate buffer " + b.name);
    }
  }
  for (BufferRole r :
       {BufferRole::kInput, BufferRole::kOutput, BufferRole::kTap}) {
    RETURN_IF_ERROR(CheckIndices(exe, r));
  }
  for (const Kernel& k : exe.kernels) {
    RETURN_IF_ERROR(ValidateKernel(k));
    if (!kernels.insert(k.name).second) {
      return InvalidArgument("duplicate kernel " + k.name);
    }
    for (const std::string& sym : k.symbols) {
      if (!buffers.contains(sym)) {
        return InvalidArgument("kernel " + k.name + " uses unknown buffer " +
                               sym);
      }
    }
  }
  for (const std::string& l : exe.launches) {
    if (!kernels.contains(l)) {
      return InvalidArgument("launch of unknown kernel " + l);
    }
  }
  return Status::Ok();
}

std::string WriteExecutable(const Executable& exe) {
  std::string out = "tpux " + std::to_string(kTpuxVersion) + "\n";
  out += "module " + exe.module + "\n";
  if (exe.slice != 1) out += "slice " + std::to_string(exe.slice) + "\n";
  for (const BufferDecl& b : exe.buffers) {
    out += "buffer " + b.name + " " + std::string(BufferRoleName(b.role));
    if (b.index >= 0) out += " " + std::to_string(b.index);
    out += " " + b.dtype + "[" + IntList(b.dims) + "]";
    if (!b.layout.empty()) out += "{" + IntList(b.layout) + "}";
    out += " bytes=" + std::to_string(b.bytes);
    if (!b.label.empty()) out += " label=" + Quote(b.label);
    if (!b.data.empty()) out += " data=" + Hex(b.data);
    out += "\n";
  }
  for (const Kernel& k : exe.kernels) out += PrintKernel(k);
  for (const std::string& l : exe.launches) out += "launch " + l + "\n";
  return out;
}

StatusOr<Executable> ReadExecutable(std::string_view text) {
  std::vector<std::string_view> lines = SplitLines(text);
  Executable exe;
  bool have_slice = false;
  size_t i = 0;
  while (i < lines.size() && TextCursor(lines[i], i + 1).AtEnd()) ++i;
  {
    TextCursor c(i < lines.size() ? lines[i] : std::string_view(), i + 1);
    if (!c.ConsumeWord("tpux"))
      return c.Error("not a .tpux file (no 'tpux' header)");
    ASSIGN_OR_RETURN(int64_t version, c.Int());
    if (version != kTpuxVersion) {
      return Unimplemented("tpux version " + std::to_string(version) +
                           " is not supported (this reader: " +
                           std::to_string(kTpuxVersion) + ")");
    }
    if (!c.AtEnd()) return c.Error("unexpected text after version");
  }
  for (++i; i < lines.size(); ++i) {
    TextCursor c(lines[i], i + 1);
    if (c.AtEnd()) continue;
    if (c.ConsumeWord("module")) {
      ASSIGN_OR_RETURN(exe.module, c.Ident());
    } else if (c.ConsumeWord("slice")) {
      if (have_slice) return c.Error("a second 'slice' line");
      have_slice = true;
      c.SkipSpace();
      const int col = c.column();
      ASSIGN_OR_RETURN(int64_t n, c.Int());
      if (n < 1 || n > kMaxSliceChips) {
        return c.ErrorAt(col, "slice " + std::to_string(n) +
                                  ": a slice has 1.." +
                                  std::to_string(kMaxSliceChips) + " chips");
      }
      exe.slice = static_cast<int>(n);
    } else if (c.ConsumeWord("buffer")) {
      ASSIGN_OR_RETURN(BufferDecl b, ParseBuffer(c));
      exe.buffers.push_back(std::move(b));
      continue;
    } else if (c.ConsumeWord("launch")) {
      ASSIGN_OR_RETURN(std::string k, c.Ident());
      exe.launches.push_back(k);
    } else if (c.ConsumeWord("kernel")) {
      size_t end = i;
      while (end < lines.size() && TextCursor(lines[end], 0).Peek() != '}') {
        ++end;
      }
      std::string block;
      for (size_t j = i; j <= end && j < lines.size(); ++j) {
        block += std::string(lines[j]) + "\n";
      }
      ASSIGN_OR_RETURN(std::vector<Kernel> ks,
                       ParseKernels(block, static_cast<int>(i + 1)));
      for (Kernel& k : ks) exe.kernels.push_back(std::move(k));
      i = end;
      continue;
    } else {
      return c.Error("expected module, slice, buffer, kernel or launch");
    }
    if (!c.AtEnd()) return c.Error("unexpected text");
  }
  Status s = ValidateExecutable(exe);
  if (!s.ok()) return InvalidArgument("invalid executable: " + s.message());
  return exe;
}

Status WriteExecutableFile(const Executable& exe, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return IoError("cannot open " + path + " for writing");
  f << WriteExecutable(exe);
  f.close();
  if (!f) return IoError("error writing " + path);
  return Status::Ok();
}

StatusOr<Executable> ReadExecutableFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return IoError("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  StatusOr<Executable> exe = ReadExecutable(ss.str());
  if (!exe.ok()) return exe.status().WithContext(path);
  return exe;
}

}  // namespace trench::tpu
