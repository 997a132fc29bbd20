// HMAC-SHA256 against the test vectors of RFC 4231 (section 4).
#include "base/hmac.h"

#include <gtest/gtest.h>

#include <string>

namespace trench {
namespace {

std::string Bytes(size_t n, char c) { return std::string(n, c); }

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(
        std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

TEST(HmacSha256Test, Rfc4231Case1) {
  EXPECT_EQ(HmacSha256Hex(Bytes(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(HmacSha256Test, Rfc4231Case2KeyShorterThanOutput) {
  EXPECT_EQ(HmacSha256Hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(HmacSha256Test, Rfc4231Case3) {
  EXPECT_EQ(HmacSha256Hex(Bytes(20, '\xaa'), Bytes(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
}

TEST(HmacSha256Test, Rfc4231Case4) {
  EXPECT_EQ(HmacSha256Hex(Unhex("0102030405060708090a0b0c0d0e0f10111213141516"
                                "171819"),
                          Bytes(50, '\xcd')),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
}

TEST(HmacSha256Test, Rfc4231Case5TruncatedTo128Bits) {
  EXPECT_EQ(
      HmacSha256Hex(Bytes(20, '\x0c'), "Test With Truncation").substr(0, 32),
      "a3b6167473100ee06e0c796c2955552b");
}

TEST(HmacSha256Test, Rfc4231Case6KeyLongerThanBlock) {
  EXPECT_EQ(HmacSha256Hex(Bytes(131, '\xaa'),
                          "Test Using Larger Than Block-Size Key - Hash Key "
                          "First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HmacSha256Test, Rfc4231Case7KeyAndDataLongerThanBlock) {
  EXPECT_EQ(
      HmacSha256Hex(Bytes(131, '\xaa'),
                    "This is a test using a larger than block-size key and a "
                    "larger than block-size data. The key needs to be hashed "
                    "before being used by the HMAC algorithm."),
      "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HmacSha256Test, KeyOfExactlyOneBlockIsNotHashed) {
  // A 64-byte key is used as is; hashing it would give another MAC.
  const std::string key = Bytes(64, 'k');
  EXPECT_NE(HmacSha256Hex(key, "m"), HmacSha256Hex(Bytes(65, 'k'), "m"));
  EXPECT_EQ(HmacSha256(key, "m").size(), 32u);
}

}  // namespace
}  // namespace trench
