// NumPy .npy files <-> array Literals.
//
// Read: format versions 1.0, 2.0 and 3.0; little- and big-endian data
// ('>' is byte-swapped); fortran_order True is transposed into our
// row-major order. Write: version 1.0, or 2.0 when the header does not fit
// 1.0's 16-bit length; always little-endian, C order.
//
// dtype mapping (descr): pred |b1, s8 |i1, u8 |u1, s16..s64 <i2..<i8,
// u16..u64 <u2..<u8, f16 <f2, f32 <f4, f64 <f8, c64 <c8, c128 <c16.
// NumPy has no bfloat16: bf16 is written as its bit patterns, <u2, and a
// <u2 file is read as bf16 only when the caller asks for bf16 (as_type).
// Bool bytes other than 0/1 read as true.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/literal.h"

namespace trench {

// Parses .npy bytes into an array literal (no layout on its shape).
// as_type, when given, is the element type the caller expects: the file's
// dtype must be that type, except that BF16 accepts <u2 (bits). Errors:
// InvalidArgument naming the problem ("npy header: expected 'descr'",
// "npy: truncated data: ...", "npy: unsupported descr '<U3'", a dtype
// other than as_type, shapes whose size overflows). Never crashes.
StatusOr<Literal> ReadNpy(std::string_view bytes,
                          std::optional<PrimitiveType> as_type = {});

// Reads the file at `path` and parses it as ReadNpy does; IoError when the
// file cannot be read. Messages are prefixed with the path.
StatusOr<Literal> ReadNpyFile(const std::string& path,
                              std::optional<PrimitiveType> as_type = {});

// The .npy bytes of an array literal (logical row-major data; the shape's
// layout is not written). REQUIRES: literal.shape().IsArray().
std::string WriteNpy(const Literal& literal);

// Writes WriteNpy(literal) to `path`. InvalidArgument for a non-array
// literal, IoError when the file cannot be written.
Status WriteNpyFile(const std::string& path, const Literal& literal);

// The descr WriteNpy uses for `type` ("<f4", "<u2" for bf16, ...).
// REQUIRES: IsArrayType(type).
std::string NpyDescr(PrimitiveType type);

}  // namespace trench
