#include "compiler/driver/coverage.h"

#include <link.h>

#include <cstring>

// SanitizerCoverage calls these from module constructors, once per
// instrumented module; all instrumented libraries are linked statically
// into the tool, so there is one table (repeated calls with the same range
// are ignored). Plain globals: they are set before main runs, possibly
// before this file's own dynamic initializers would.
namespace {
uint8_t* counters_begin = nullptr;
uint8_t* counters_end = nullptr;
const uintptr_t* pcs_begin = nullptr;
const uintptr_t* pcs_end = nullptr;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) void __sanitizer_cov_8bit_counters_init(
    uint8_t* start, uint8_t* stop) {
  if (start == stop || start == counters_begin) return;
  counters_begin = start;
  counters_end = stop;
}

__attribute__((visibility("default"))) void __sanitizer_cov_pcs_init(
    const uintptr_t* beg, const uintptr_t* end) {
  if (beg == end || beg == pcs_begin) return;
  pcs_begin = beg;
  pcs_end = end;
}

}  // extern "C"

namespace trench::coverage {

size_t Size() {
  if (counters_begin == nullptr || pcs_begin == nullptr) return 0;
  const size_t counters = static_cast<size_t>(counters_end - counters_begin);
  const size_t pcs = static_cast<size_t>(pcs_end - pcs_begin) / 2;
  return counters < pcs ? counters : pcs;  // Equal in a sane build.
}

bool Available() { return Size() > 0; }

void Reset() {
  if (counters_begin != nullptr) {
    std::memset(counters_begin, 0,
                static_cast<size_t>(counters_end - counters_begin));
  }
}

std::string HitsHex() {
  const size_t n = Size();
  std::string hex((n + 3) / 4, '0');
  static constexpr char kDigits[] = "0123456789abcdef";
  for (size_t d = 0; d < hex.size(); ++d) {
    unsigned v = 0;
    for (size_t b = 0; b < 4 && d * 4 + b < n; ++b) {
      if (counters_begin[d * 4 + b] != 0) v |= 1u << b;
    }
    hex[d] = kDigits[v];
  }
  return hex;
}

std::vector<size_t> HitsOfHex(const std::string& hex) {
  std::vector<size_t> out;
  for (size_t d = 0; d < hex.size(); ++d) {
    const char c = hex[d];
    unsigned v = c >= '0' && c <= '9'   ? c - '0'
                 : c >= 'a' && c <= 'f' ? c - 'a' + 10
                 : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                        : 0;
    for (size_t b = 0; b < 4; ++b) {
      if (v & (1u << b)) out.push_back(d * 4 + b);
    }
  }
  return out;
}

namespace {

struct BiasSearch {
  uintptr_t pc = 0;
  uintptr_t bias = 0;
};

// Finds the load bias (dlpi_addr: 0 for a fixed-address executable, the
// load address of a PIE) of the object whose segment holds `pc`.
int FindBias(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<BiasSearch*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (s->pc >= lo && s->pc < lo + ph.p_memsz) {
      s->bias = info->dlpi_addr;
      return 1;
    }
  }
  return 0;
}

}  // namespace

std::vector<uint64_t> PcOffsets() {
  std::vector<uint64_t> out;
  const size_t n = Size();
  if (n == 0) return out;
  BiasSearch search;
  search.pc = pcs_begin[0];
  dl_iterate_phdr(FindBias, &search);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(static_cast<uint64_t>(pcs_begin[2 * i] - search.bias));
  }
  return out;
}

}  // namespace trench::coverage
