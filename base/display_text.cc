// Escaping and one-lining untrusted text (display_text.h).
#include "base/display_text.h"

#include <cstdint>
#include <cstdio>

namespace trench {
namespace {

// The code point starting at text[i] and its length in bytes; length 0
// when the bytes there are not valid UTF-8.
struct Decoded {
  uint32_t cp = 0;
  size_t len = 0;
};

Decoded Decode(std::string_view text, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(text[i + k]); };
  const uint8_t c = b(0);
  if (c < 0x80) return {c, 1};
  size_t len = 0;
  uint32_t cp = 0, min = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return {};
  }
  if (i + len > text.size()) return {};
  for (size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, len};
}

bool IsControl(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 ||
         cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

bool IsSpace(uint32_t cp) {
  return cp == ' ' || (cp >= '\t' && cp <= '\r') || cp == 0x85 ||
         cp == 0x2028 || cp == 0x2029;
}

std::string Hex(const char* format, uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), format, static_cast<unsigned>(v));
  return buf;
}

}  // namespace

std::string EscapeControls(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const Decoded d = Decode(text, i);
    if (d.len == 0) {
      out += Hex("\\x%02x", static_cast<uint8_t>(text[i]));
      ++i;
      continue;
    }
    const bool kept = keep_newlines && (d.cp == '\n' || d.cp == '\t');
    if (!IsControl(d.cp) || kept) {
      out.append(text.substr(i, d.len));
    } else if (d.cp < 0x80) {
      out += Hex("\\x%02x", d.cp);
    } else {
      out += Hex("\\u{%04x}", d.cp);
    }
    i += d.len;
  }
  return out;
}

std::string OneLine(std::string_view text, size_t max_bytes) {
  std::string out;
  bool space = false;              // A space is owed before the next char.
  size_t cut = std::string::npos;  // Where "..." goes if the text is long.
  for (size_t i = 0; i < text.size();) {
    const Decoded d = Decode(text, i);
    if (d.len == 0) {  // Not UTF-8: dropped.
      ++i;
      continue;
    }
    const std::string_view ch = text.substr(i, d.len);
    i += d.len;
    if (IsSpace(d.cp)) {
      space = !out.empty();
      continue;
    }
    if (IsControl(d.cp)) continue;
    const size_t need = (space ? 1 : 0) + ch.size();
    if (cut == std::string::npos && out.size() + need > max_bytes - 3) {
      cut = out.size();
    }
    if (out.size() + need > max_bytes) {
      out.resize(cut);
      return out + "...";
    }
    if (space) out += ' ';
    space = false;
    out.append(ch);
  }
  return out;
}

}  // namespace trench
