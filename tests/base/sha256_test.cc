// SHA-256 against the FIPS 180-2 test vectors (Appendix B) and the
// incremental interface against the one-shot one.
#include "base/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace trench {
namespace {

TEST(Sha256Test, EmptyString) {
  EXPECT_EQ(Sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Test, Fips180OneBlock) {  // B.1
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, Fips180TwoBlocks) {  // B.2: padding spills into a block.
  EXPECT_EQ(
      Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, Fips180MillionA) {  // B.3
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, PaddingBoundaries) {
  // 55 bytes: length fits the first block; 56: it needs a second one.
  EXPECT_EQ(Sha256Hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256Test, IncrementalMatchesOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data += char(i * 7 + 3);
  const std::string expected = Sha256Hex(data);
  for (size_t chunk : {1, 3, 63, 64, 65, 200}) {
    Sha256 h;
    for (size_t pos = 0; pos < data.size(); pos += chunk) {
      h.Update(std::string_view(data).substr(pos, chunk));
    }
    EXPECT_EQ(h.HexDigest(), expected) << "chunk " << chunk;
  }
}

}  // namespace
}  // namespace trench
