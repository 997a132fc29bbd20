// HMAC-SHA256, RFC 2104: H((K ^ opad) || H((K ^ ipad) || message)).
#include "base/hmac.h"

#include "base/sha256.h"

namespace trench {

std::array<uint8_t, 32> HmacSha256(std::string_view key,
                                   std::string_view message) {
  constexpr size_t kBlock = 64;
  std::array<uint8_t, kBlock> k{};  // The key, zero-padded to a block.
  if (key.size() > kBlock) {
    Sha256 h;
    h.Update(key);
    const std::array<uint8_t, 32> d = h.Digest();
    std::copy(d.begin(), d.end(), k.begin());
  } else {
    std::copy(key.begin(), key.end(), k.begin());
  }
  std::array<uint8_t, kBlock> ipad, opad;
  for (size_t i = 0; i < kBlock; ++i) {
    ipad[i] = k[i] ^ 0x36;
    opad[i] = k[i] ^ 0x5c;
  }
  Sha256 inner;
  inner.Update(ipad.data(), ipad.size());
  inner.Update(message);
  const std::array<uint8_t, 32> inner_digest = inner.Digest();
  Sha256 outer;
  outer.Update(opad.data(), opad.size());
  outer.Update(inner_digest.data(), inner_digest.size());
  return outer.Digest();
}

std::string HmacSha256Hex(std::string_view key, std::string_view message) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : HmacSha256(key, message)) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace trench
