// SHA-256 (FIPS 180-4), written out by hand so that the target side needs
// no crypto library. Used for content addresses (hlo-diff's case store)
// and signature hashes, not for security.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace trench {

// Incremental hasher: Update() any number of times, then Digest() once.
class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  void Update(std::string_view bytes) { Update(bytes.data(), bytes.size()); }
  // The 32-byte digest. REQUIRES: called at most once; no Update() after.
  std::array<uint8_t, 32> Digest();
  // Digest() as 64 lowercase hex digits.
  std::string HexDigest();

 private:
  void Block(const uint8_t* block);

  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_;
  size_t buf_len_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lowercase hex SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);

// Whether `s` is exactly `digits` lowercase hex digits (a Sha256Hex is 64,
// a git sha 40): the one check of ids that name content.
bool IsLowerHex(std::string_view s, size_t digits);

}  // namespace trench
