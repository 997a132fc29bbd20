#include "compiler/ir/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "compiler/ir/npy_header.h"

namespace trench {
namespace {

// Element i of the test pattern, for every dtype: ints i-2 (unsigned: i),
// floats (i-2.5)*0.5, pred i odd, complex ((i-2.5)*0.5, i).
double Pattern(PrimitiveType t, int64_t i) {
  if (t == PrimitiveType::PRED) return i % 2;
  if (IsUnsigned(t)) return static_cast<double>(i);
  if (IsSigned(t)) return static_cast<double>(i - 2);
  return (static_cast<double>(i) - 2.5) * 0.5;
}

Literal PatternLiteral(PrimitiveType t, std::vector<int64_t> dims) {
  Literal lit(Shape(t, std::move(dims)));
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (t == PrimitiveType::C64) {
      lit.mutable_data<c64>()[i] = c64(Pattern(t, i), i);
    } else if (t == PrimitiveType::C128) {
      lit.mutable_data<c128>()[i] = c128(Pattern(t, i), i);
    } else {
      lit.SetFromDouble(i, Pattern(t, i));
    }
  }
  return lit;
}

const PrimitiveType kAllTypes[] = {
    PrimitiveType::PRED, PrimitiveType::S8,   PrimitiveType::S16,
    PrimitiveType::S32,  PrimitiveType::S64,  PrimitiveType::U8,
    PrimitiveType::U16,  PrimitiveType::U32,  PrimitiveType::U64,
    PrimitiveType::F16,  PrimitiveType::BF16, PrimitiveType::F32,
    PrimitiveType::F64,  PrimitiveType::C64,  PrimitiveType::C128};

std::string Header(const std::string& dict, int major = 1) {
  std::string h = "\x93NUMPY";
  h += static_cast<char>(major);
  h += '\0';
  const size_t n = dict.size();
  h += static_cast<char>(n & 0xff);
  h += static_cast<char>(n >> 8);
  if (major > 1) h += std::string(2, '\0');
  return h + dict;
}

std::string ReadError(std::string_view bytes,
                      std::optional<PrimitiveType> as = {}) {
  auto lit = ReadNpy(bytes, as);
  EXPECT_FALSE(lit.ok());
  return lit.ok() ? "" : lit.status().message();
}

TEST(NpyTest, RoundTripsEveryDtype) {
  for (PrimitiveType t : kAllTypes) {
    Literal lit = PatternLiteral(t, {2, 3});
    const std::string bytes = WriteNpy(lit);
    EXPECT_EQ(bytes.find("{'descr': '" + NpyDescr(t) + "'"), 10u)
        << PrimitiveTypeName(t);
    EXPECT_EQ((bytes.size() - lit.bytes().size()) % 64, 0u);
    auto back = ReadNpy(bytes, t);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, lit) << PrimitiveTypeName(t);
  }
}

TEST(NpyTest, Bf16IsWrittenAsU2AndReadOnlyOnRequest) {
  Literal lit = PatternLiteral(PrimitiveType::BF16, {4});
  const std::string bytes = WriteNpy(lit);
  auto as_u16 = ReadNpy(bytes);
  ASSERT_TRUE(as_u16.ok());
  EXPECT_EQ(as_u16->element_type(), PrimitiveType::U16);
  EXPECT_EQ(as_u16->data<uint16_t>()[0], lit.data<bf16>()[0].bits);
  auto as_bf16 = ReadNpy(bytes, PrimitiveType::BF16);
  ASSERT_TRUE(as_bf16.ok());
  EXPECT_EQ(*as_bf16, lit);
  EXPECT_EQ(ReadError(bytes, PrimitiveType::F32),
            "npy: dtype u16 (descr '<u2') does not match the expected f32");
}

TEST(NpyTest, ScalarsAndEmptyArrays) {
  Literal scalar = PatternLiteral(PrimitiveType::F32, {});
  EXPECT_NE(WriteNpy(scalar).find("'shape': (), }"), std::string::npos);
  EXPECT_EQ(*ReadNpy(WriteNpy(scalar)), scalar);
  Literal empty = PatternLiteral(PrimitiveType::S32, {0, 3});
  EXPECT_EQ(*ReadNpy(WriteNpy(empty)), empty);
  Literal vec = PatternLiteral(PrimitiveType::S32, {5});
  EXPECT_NE(WriteNpy(vec).find("'shape': (5,), }"), std::string::npos);
}

TEST(NpyTest, WritesVersion2WhenTheHeaderIsHuge) {
  Literal lit(Shape(PrimitiveType::U8, std::vector<int64_t>(30000, 1)));
  const std::string bytes = WriteNpy(lit);
  EXPECT_EQ(bytes[6], 2);
  auto back = ReadNpy(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->shape().rank(), 30000);
}

TEST(NpyTest, ReadsBigEndianAndFortranOrder) {
  // >i4 [1, 2]
  std::string be = Header(
      "{'descr': '>i4', 'fortran_order': False, "
      "'shape': (2,), }\n");
  be += std::string("\0\0\0\x01\0\0\0\x02", 8);
  auto lit = ReadNpy(be);
  ASSERT_TRUE(lit.ok()) << lit.status().ToString();
  EXPECT_EQ(lit->data<int32_t>()[0], 1);
  EXPECT_EQ(lit->data<int32_t>()[1], 2);
  // Column-major 2x3 [[0,1,2],[3,4,5]] is stored 0,3,1,4,2,5.
  std::string f = Header(
      "{'descr': '|u1', 'fortran_order': True, "
      "'shape': (2, 3), }\n");
  f += std::string("\0\x03\x01\x04\x02\x05", 6);
  auto fl = ReadNpy(f);
  ASSERT_TRUE(fl.ok()) << fl.status().ToString();
  EXPECT_EQ(*fl, PatternLiteral(PrimitiveType::U8, {2, 3}));
  // Big-endian complex swaps each part on its own.
  std::string c = Header(
      "{'descr': '>c8', 'fortran_order': False, "
      "'shape': (), }\n");
  c += std::string("\x3f\x80\0\0\x40\0\0\0", 8);  // 1 + 2i
  auto cl = ReadNpy(c);
  ASSERT_TRUE(cl.ok());
  EXPECT_EQ(cl->data<c64>()[0], c64(1, 2));
}

TEST(NpyTest, BoolBytesAreNormalized) {
  std::string b = Header(
      "{'descr': '|b1', 'fortran_order': False, "
      "'shape': (2,), }\n");
  b += std::string("\0\x07", 2);
  auto lit = ReadNpy(b);
  ASSERT_TRUE(lit.ok());
  EXPECT_EQ(lit->bytes()[1], 1);
}

TEST(NpyTest, MalformedInputIsAnError) {
  const std::string ok_dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  EXPECT_EQ(ReadError("hello"), "npy: expected the magic string \\x93NUMPY");
  EXPECT_EQ(ReadError(Header(ok_dict, 4)),
            "npy: unsupported format version 4.0");
  EXPECT_EQ(ReadError(Header(ok_dict).substr(0, 20)),
            "npy: truncated header: expected 58 bytes");
  EXPECT_EQ(ReadError(Header(ok_dict) + "abc"),
            "npy: truncated data: expected 8 bytes, got 3");
  EXPECT_EQ(ReadError(Header(ok_dict) + std::string(9, 'x')),
            "npy: 1 trailing bytes after the data");
  EXPECT_EQ(ReadError(Header("{'fortran_order': False, 'shape': (), }")),
            "npy header: expected 'descr' at offset 39");
  EXPECT_EQ(ReadError(Header("{'descr': '<U3', 'fortran_order': False, "
                             "'shape': (), }")),
            "npy: unsupported descr '<U3'");
  EXPECT_EQ(ReadError(Header("{'descr': '|f4', 'fortran_order': False, "
                             "'shape': (), }")),
            "npy: descr '|f4' has no byte order");
  EXPECT_EQ(ReadError(Header("{'descr': [('a', '<f4')], 'fortran_order': "
                             "False, 'shape': (), }")),
            "npy header: expected a simple descr string (structured dtypes "
            "are not supported) at offset 10");
  EXPECT_EQ(ReadError(Header("{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (4294967296, 4294967296, 4), }")),
            "npy: shape is too large");
  EXPECT_EQ(ReadError(Header("{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (99999999999999999999,), }")),
            "npy header: expected a dimension that fits in int64 at offset "
            "51");
  EXPECT_EQ(ReadError(Header("{'descr': '<f4', 'fortran_order': maybe, "
                             "'shape': (), }")),
            "npy header: expected True or False at offset 34");
  EXPECT_EQ(ReadError(Header("{'descr': '<f4', 'descr': '<f4', "
                             "'fortran_order': False, 'shape': (), }")),
            "npy header: expected each key once, 'descr' appears twice at "
            "offset 17");
}

TEST(NpyHeaderTest, ParsesPythonDictForms) {
  auto h = npy::ParseHeader(
      "{\"descr\": \"<i8\", \"shape\": (3L, 4L), \"fortran_order\": True}  \n");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->descr, "<i8");
  EXPECT_TRUE(h->fortran_order);
  EXPECT_EQ(h->shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(npy::FormatHeader(*h),
            "{'descr': '<i8', 'fortran_order': True, 'shape': (3, 4), }");
}

TEST(NpyTest, FilesReportIoErrors) {
  auto missing = ReadNpyFile("/nonexistent/x.npy");
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_EQ(WriteNpyFile("/nonexistent/x.npy",
                         PatternLiteral(PrimitiveType::F32, {1}))
                .code(),
            StatusCode::kIoError);
  EXPECT_EQ(WriteNpyFile("/tmp/x.npy", Literal()).code(),
            StatusCode::kInvalidArgument);
}

// ---- Interoperability with Debian's numpy (python3-numpy). ----

bool HaveNumpy() {
  return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

class NumpyInteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveNumpy()) {
      GTEST_SKIP() << "numpy is not importable by /usr/bin/python3 "
                      "(apt-get install python3-numpy)";
    }
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("npy_interop_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int RunPython(const std::string& script) {
    const auto path = dir_ / "script.py";
    std::ofstream(path) << script;
    return std::system(
        ("/usr/bin/python3 " + path.string() + " " + dir_.string()).c_str());
  }

  std::filesystem::path dir_;
};

// The same pattern in numpy; `kind` names the numpy dtype char code.
constexpr char kPythonPattern[] = R"(
import sys, numpy as np
d = sys.argv[1]
def pattern(code, shape):
    i = np.arange(int(np.prod(shape)))
    dt = np.dtype(code)
    if dt.kind == 'b': v = (i % 2) == 1
    elif dt.kind == 'u': v = i
    elif dt.kind == 'i': v = i - 2
    elif dt.kind == 'c': v = (i - 2.5) * 0.5 + 1j * i
    else: v = (i - 2.5) * 0.5
    return v.astype(dt).reshape(shape)
codes = ['?', 'i1', 'i2', 'i4', 'i8', 'u1', 'u2', 'u4', 'u8',
         'f2', 'f4', 'f8', 'c8', 'c16']
)";

TEST_F(NumpyInteropTest, ReadsWhatNumpyWrites) {
  const std::string script = std::string(kPythonPattern) + R"(
for c in codes:
    a = pattern(c, (2, 3, 4))
    np.save(d + '/le_' + c + '.npy', a)
    np.save(d + '/be_' + c + '.npy', a.astype(a.dtype.newbyteorder('>')))
    np.save(d + '/fo_' + c + '.npy', np.asfortranarray(a))
    for v in [(2, 0), (3, 0)]:
        with open(d + '/v%d_' % v[0] + c + '.npy', 'wb') as f:
            np.lib.format.write_array(f, a, version=v)
np.save(d + '/scalar.npy', np.float32(-1.25))
np.save(d + '/empty.npy', np.zeros((0, 3), np.float32))
)";
  ASSERT_EQ(RunPython(script), 0);
  const char* codes[] = {"?",  "i1", "i2", "i4", "i8", "u1", "u2",
                         "u4", "u8", "f2", "f4", "f8", "c8", "c16"};
  const PrimitiveType types[] = {
      PrimitiveType::PRED, PrimitiveType::S8,  PrimitiveType::S16,
      PrimitiveType::S32,  PrimitiveType::S64, PrimitiveType::U8,
      PrimitiveType::U16,  PrimitiveType::U32, PrimitiveType::U64,
      PrimitiveType::F16,  PrimitiveType::F32, PrimitiveType::F64,
      PrimitiveType::C64,  PrimitiveType::C128};
  for (size_t k = 0; k < std::size(codes); ++k) {
    const Literal want = PatternLiteral(types[k], {2, 3, 4});
    for (const char* prefix : {"le_", "be_", "fo_", "v2_", "v3_"}) {
      const std::string path =
          (dir_ / (prefix + std::string(codes[k]) + ".npy")).string();
      auto got = ReadNpyFile(path, types[k]);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_EQ(*got, want) << path << ": " << got->Summary();
    }
  }
  auto scalar = ReadNpyFile((dir_ / "scalar.npy").string());
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->shape().rank(), 0);
  EXPECT_EQ(scalar->data<float>()[0], -1.25f);
  auto empty = ReadNpyFile((dir_ / "empty.npy").string());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->shape().dims(), (std::vector<int64_t>{0, 3}));
}

TEST_F(NumpyInteropTest, NumpyReadsWhatWeWrite) {
  const std::pair<PrimitiveType, const char*> types[] = {
      {PrimitiveType::PRED, "?"}, {PrimitiveType::S8, "i1"},
      {PrimitiveType::S16, "i2"}, {PrimitiveType::S32, "i4"},
      {PrimitiveType::S64, "i8"}, {PrimitiveType::U8, "u1"},
      {PrimitiveType::U16, "u2"}, {PrimitiveType::U32, "u4"},
      {PrimitiveType::U64, "u8"}, {PrimitiveType::F16, "f2"},
      {PrimitiveType::F32, "f4"}, {PrimitiveType::F64, "f8"},
      {PrimitiveType::C64, "c8"}, {PrimitiveType::C128, "c16"}};
  for (const auto& [t, code] : types) {
    ASSERT_TRUE(WriteNpyFile((dir_ / (std::string(code) + ".npy")).string(),
                             PatternLiteral(t, {2, 3, 4}))
                    .ok());
  }
  ASSERT_TRUE(WriteNpyFile((dir_ / "bf16.npy").string(),
                           PatternLiteral(PrimitiveType::BF16, {2, 3, 4}))
                  .ok());
  const std::string script = std::string(kPythonPattern) + R"(
for c in codes:
    a = np.load(d + '/' + c + '.npy')
    want = pattern(c, (2, 3, 4))
    assert a.dtype == want.dtype and a.shape == want.shape, (c, a.dtype)
    assert np.array_equal(a, want), (c, a, want)
b = np.load(d + '/bf16.npy')
f = pattern('f4', (2, 3, 4))
assert b.dtype == np.uint16 and b.shape == (2, 3, 4)
assert np.array_equal(b, (f.view(np.uint32) >> 16).astype(np.uint16))
)";
  EXPECT_EQ(RunPython(script), 0);
}

}  // namespace
}  // namespace trench
