#include "compiler/ir/npy.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

#include "compiler/ir/npy_header.h"

namespace trench {
namespace {

// Literal data is stored in host order; .npy data we write is
// little-endian. Every supported host is little-endian.
static_assert(std::endian::native == std::endian::little,
              "npy I/O assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";

struct DescrCode {
  std::string_view code;
  PrimitiveType type;
};

constexpr DescrCode kCodes[] = {
    {"b1", PrimitiveType::PRED}, {"i1", PrimitiveType::S8},
    {"i2", PrimitiveType::S16},  {"i4", PrimitiveType::S32},
    {"i8", PrimitiveType::S64},  {"u1", PrimitiveType::U8},
    {"u2", PrimitiveType::U16},  {"u4", PrimitiveType::U32},
    {"u8", PrimitiveType::U64},  {"f2", PrimitiveType::F16},
    {"f4", PrimitiveType::F32},  {"f8", PrimitiveType::F64},
    {"c8", PrimitiveType::C64},  {"c16", PrimitiveType::C128},
};

struct Descr {
  PrimitiveType type;
  bool big_endian;
};

StatusOr<Descr> ParseDescr(std::string_view d) {
  const auto unsupported = [&] {
    return InvalidArgument("npy: unsupported descr '" + std::string(d) + "'");
  };
  if (d == "?") return Descr{PrimitiveType::PRED, false};
  if (d.empty()) return unsupported();
  char order = '=';
  std::string_view code = d;
  if (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=') {
    order = d[0];
    code = d.substr(1);
  }
  for (const DescrCode& c : kCodes) {
    if (c.code != code) continue;
    if (order == '|' && ByteWidth(c.type) > 1) {
      return InvalidArgument("npy: descr '" + std::string(d) +
                             "' has no byte order");
    }
    return Descr{c.type, order == '>'};
  }
  return unsupported();
}

uint32_t ReadLe(std::string_view b, size_t at, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) {
    v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  }
  return v;
}

// Number of elements, or an error if the product of the non-zero dims
// overflows int64 (Shape::element_count multiplies in order, so this
// keeps every partial product in range too).
StatusOr<int64_t> ElementCount(const std::vector<int64_t>& dims) {
  int64_t nonzero = 1;
  bool zero = false;
  for (int64_t d : dims) {
    if (d == 0) {
      zero = true;
    } else if (__builtin_mul_overflow(nonzero, d, &nonzero)) {
      return InvalidArgument("npy: shape is too large");
    }
  }
  return zero ? 0 : nonzero;
}

// Copies column-major `src` into row-major `dst`, `width` bytes an element.
void FortranToRowMajor(const std::vector<int64_t>& dims, int width,
                       const uint8_t* src, uint8_t* dst, int64_t count) {
  const size_t rank = dims.size();
  std::vector<int64_t> col_stride(rank, 1), index(rank, 0);
  for (size_t k = 1; k < rank; ++k) {
    col_stride[k] = col_stride[k - 1] * dims[k - 1];
  }
  int64_t src_off = 0;
  for (int64_t j = 0; j < count; ++j) {
    std::memcpy(dst + j * width, src + src_off * width, width);
    for (size_t k = rank; k-- > 0;) {  // Row-major increment.
      src_off += col_stride[k];
      if (++index[k] < dims[k]) break;
      src_off -= col_stride[k] * dims[k];
      index[k] = 0;
    }
  }
}

void SwapBytes(uint8_t* data, int64_t count, int width, PrimitiveType t) {
  const int unit = IsComplex(t) ? width / 2 : width;
  const int64_t units = count * (width / unit);
  for (int64_t i = 0; i < units; ++i)
    std::reverse(data + i * unit, data + (i + 1) * unit);
}

Status CheckType(const Descr& descr, std::string_view descr_text,
                 std::optional<PrimitiveType> as_type, PrimitiveType* out) {
  *out = descr.type;
  if (!as_type || *as_type == descr.type) return Status();
  if (*as_type == PrimitiveType::BF16 && descr.type == PrimitiveType::U16) {
    *out = PrimitiveType::BF16;
    return Status();
  }
  return InvalidArgument(
      "npy: dtype " + std::string(PrimitiveTypeName(descr.type)) + " (descr '" +
      std::string(descr_text) + "') does not match the expected " +
      std::string(PrimitiveTypeName(*as_type)));
}

}  // namespace

std::string NpyDescr(PrimitiveType type) {
  if (type == PrimitiveType::BF16) return "<u2";
  for (const DescrCode& c : kCodes) {
    if (c.type == type) {
      return std::string(ByteWidth(type) == 1 ? "|" : "<") +
             std::string(c.code);
    }
  }
  return "";
}

StatusOr<Literal> ReadNpy(std::string_view bytes,
                          std::optional<PrimitiveType> as_type) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic) {
    return InvalidArgument("npy: expected the magic string \\x93NUMPY");
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  const int minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return InvalidArgument("npy: unsupported format version " +
                           std::to_string(major) + "." + std::to_string(minor));
  }
  const size_t len_size = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_size) {
    return InvalidArgument("npy: truncated header length");
  }
  const size_t header_len = ReadLe(bytes, 8, static_cast<int>(len_size));
  const size_t data_start = 8 + len_size + header_len;
  if (data_start > bytes.size()) {
    return InvalidArgument("npy: truncated header: expected " +
                           std::to_string(header_len) + " bytes");
  }
  ASSIGN_OR_RETURN(npy::Header h,
                   npy::ParseHeader(bytes.substr(8 + len_size, header_len)));
  ASSIGN_OR_RETURN(Descr descr, ParseDescr(h.descr));
  PrimitiveType type;
  RETURN_IF_ERROR(CheckType(descr, h.descr, as_type, &type));
  ASSIGN_OR_RETURN(int64_t count, ElementCount(h.shape));
  const int width = ByteWidth(type);
  int64_t need;
  if (__builtin_mul_overflow(count, int64_t{width}, &need)) {
    return InvalidArgument("npy: shape is too large");
  }
  const size_t have = bytes.size() - data_start;
  if (have < static_cast<uint64_t>(need)) {
    return InvalidArgument("npy: truncated data: expected " +
                           std::to_string(need) + " bytes, got " +
                           std::to_string(have));
  }
  if (have > static_cast<uint64_t>(need)) {
    return InvalidArgument("npy: " + std::to_string(have - need) +
                           " trailing bytes after the data");
  }
  Literal lit(Shape(type, h.shape));
  uint8_t* dst = lit.mutable_bytes().data();
  const auto* src = reinterpret_cast<const uint8_t*>(bytes.data()) + data_start;
  if (count == 0) return lit;
  if (h.fortran_order && h.shape.size() > 1) {
    FortranToRowMajor(h.shape, width, src, dst, count);
  } else {
    std::memcpy(dst, src, static_cast<size_t>(need));
  }
  if (descr.big_endian && width > 1) SwapBytes(dst, count, width, type);
  if (type == PrimitiveType::PRED) {
    for (int64_t i = 0; i < count; ++i) dst[i] = dst[i] != 0;
  }
  return lit;
}

StatusOr<Literal> ReadNpyFile(const std::string& path,
                              std::optional<PrimitiveType> as_type) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError(path + ": read failed");
  auto lit = ReadNpy(ss.str(), as_type);
  if (!lit.ok()) return lit.status().WithContext(path);
  return lit;
}

std::string WriteNpy(const Literal& literal) {
  npy::Header h;
  h.descr = NpyDescr(literal.element_type());
  h.shape = literal.shape().dims();
  std::string header = npy::FormatHeader(h);
  // Pad with spaces so the data starts at a multiple of 64, then '\n'.
  size_t prefix = 10;
  size_t total = prefix + header.size() + 1;
  if (total + (64 - total % 64) % 64 - prefix > 0xffff) {
    prefix = 12;
    total = prefix + header.size() + 1;
  }
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic);
  out += static_cast<char>(prefix == 10 ? 1 : 2);
  out += '\0';
  const uint32_t len = static_cast<uint32_t>(header.size());
  for (size_t i = 0; i < prefix - 8; ++i) {
    out += static_cast<char>((len >> (8 * i)) & 0xff);
  }
  out += header;
  const auto data = literal.bytes();
  out.append(reinterpret_cast<const char*>(data.data()), data.size());
  return out;
}

Status WriteNpyFile(const std::string& path, const Literal& literal) {
  if (!literal.shape().IsArray()) {
    return InvalidArgument(path + ": cannot write " +
                           literal.shape().ToString(false) + " as .npy");
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return IoError(path + ": cannot open for writing");
  const std::string bytes = WriteNpy(literal);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return IoError(path + ": write failed");
  return Status();
}

}  // namespace trench
