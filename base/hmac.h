// HMAC-SHA256 (RFC 2104 over FIPS 180-4's SHA-256, base/sha256.h): the
// signature of trench's webhook bodies ("X-Trench-Signature: sha256=<hex>",
// orchestrator/notify/). Checked against RFC 4231's test vectors.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace trench {

// The 32-byte HMAC-SHA256 of `message` under `key` (any length: a key
// longer than the 64-byte block is hashed first, as RFC 2104 says).
std::array<uint8_t, 32> HmacSha256(std::string_view key,
                                   std::string_view message);
// The same as 64 lowercase hex digits.
std::string HmacSha256Hex(std::string_view key, std::string_view message);

}  // namespace trench
