// OpsNamedInText (builtin_brains.h): the opcodes a free-text report names.
#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/builtin_brains.h"
#include "compiler/ir/opcode.h"

namespace trench::agents {
namespace {

// Whether `word` is an op: one of `known`, or with none known an opcode
// of HLO (compiler/ir: the language the oracle evaluates), in its own
// spelling.
bool IsOp(const std::string& word, const std::set<std::string>& known) {
  if (!known.empty()) return known.contains(word);
  std::optional<HloOpcode> op = OpcodeFromName(word);
  return op && OpcodeName(*op) == word;
}

// Opcode names too common as words, or naming no computation.
bool Ignored(const std::string& word) {
  static const std::set<std::string> kIgnored = {
      "and",      "or",    "not",    "map",       "copy",     "call",
      "constant", "tuple", "domain", "parameter", "after-all"};
  return kIgnored.contains(word);
}

// Aliases people write for opcodes.
std::vector<std::string> Aliased(const std::string& word) {
  if (word == "matmul" || word == "gemm" || word == "einsum" ||
      word == "matmuls") {
    return {"dot"};
  }
  if (word == "conv" || word == "convolutions") return {"convolution"};
  if (word == "reduction" || word == "reductions" || word == "sum") {
    return {"reduce"};
  }
  if (word == "softmax") return {"exponential", "reduce", "divide"};
  return {};
}

}  // namespace

std::vector<std::string> OpsNamedInText(
    std::string_view text, const std::vector<std::string>& known_ops) {
  const std::set<std::string> known(known_ops.begin(), known_ops.end());
  std::vector<std::string> out;
  auto add = [&](const std::string& op) {
    if (out.size() < 16 && std::find(out.begin(), out.end(), op) == out.end())
      out.push_back(op);
  };
  std::string word;
  auto flush = [&] {
    if (!word.empty()) {
      if (IsOp(word, known) && !Ignored(word)) {
        add(word);
      } else {
        for (const std::string& op : Aliased(word)) add(op);
      }
    }
    word.clear();
  };
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_') {
      // "dynamic_slice" (as JAX spells it) is "dynamic-slice".
      word += c == '_' ? '-' : static_cast<char>(std::tolower(u));
    } else {
      flush();
    }
  }
  flush();
  return out;
}

}  // namespace trench::agents
