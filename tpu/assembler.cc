#include "tpu/assembler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "tpu/text_cursor.h"

namespace trench::tpu {
namespace {

struct Fixup {
  int32_t instr;
  std::string label;
  int line;
  int column;
};

class KernelParser {
 public:
  explicit KernelParser(Kernel* k) : k_(k) {}

  Status ParseLine(std::string_view text, int line);
  Status Finish(int line);

 private:
  Status ParseInstr(TextCursor& c);
  Status ParseOperand(TextCursor& c, char kind, Instr& in);
  StatusOr<int> Reg(TextCursor& c, char prefix, int limit);
  Status Mem(TextCursor& c, Instr& in);
  Status TypedImm(TextCursor& c, Instr& in);
  Status Imm(TextCursor& c, Instr& in);

  Kernel* k_;
  int line_ = 0;
  std::map<std::string, int32_t> labels_;
  std::vector<Fixup> fixups_;
};

StatusOr<int> KernelParser::Reg(TextCursor& c, char prefix, int limit) {
  c.SkipSpace();
  int col = c.column();
  ASSIGN_OR_RETURN(std::string_view id, c.IdentView());
  bool ok = id.size() >= 2 && id.size() <= 3 && id[0] == prefix;
  int n = 0;
  for (size_t i = 1; ok && i < id.size(); ++i) {
    ok = id[i] >= '0' && id[i] <= '9';
    n = 10 * n + (id[i] - '0');
  }
  if (!ok || n >= limit) {
    return c.ErrorAt(col, std::string("expected a register ") + prefix + "0.." +
                              prefix + std::to_string(limit - 1) + ", got '" +
                              std::string(id) + "'");
  }
  return n;
}

Status KernelParser::Mem(TextCursor& c, Instr& in) {
  if (in.nmem >= 2) return c.Error("too many memory operands");
  ASSIGN_OR_RETURN(std::string_view space, c.IdentView());
  MemRef m;
  if (space == "hbm") {
    m.space = MemSpace::kHbm;
  } else if (space == "vmem") {
    m.space = MemSpace::kVmem;
  } else if (space == "smem") {
    m.space = MemSpace::kSmem;
  } else {
    return c.Error("expected hbm, vmem or smem, got '" + std::string(space) +
                   "'");
  }
  RETURN_IF_ERROR(c.Expect('['));
  if (c.Peek() == 's') {
    ASSIGN_OR_RETURN(int base, Reg(c, 's', kNumSregs));
    m.base = static_cast<int8_t>(base);
    if (c.Peek() == '+' || c.Peek() == '-') {
      bool neg = c.Peek() == '-';
      c.Consume(c.Peek());
      ASSIGN_OR_RETURN(int64_t off, c.Int());
      if (off < 0) return c.Error("bad offset");
      m.offset = neg ? -off : off;
    }
  } else {
    ASSIGN_OR_RETURN(m.offset, c.Int());
  }
  RETURN_IF_ERROR(c.Expect(']'));
  in.mem[in.nmem++] = m;
  return Status::Ok();
}

Status KernelParser::Imm(TextCursor& c, Instr& in) {
  if (in.nimm >= kMaxImms) return c.Error("too many immediates");
  ASSIGN_OR_RETURN(in.imm[in.nimm], c.Int());
  ++in.nimm;
  return Status::Ok();
}

// An immediate whose meaning follows the type suffix: float types accept
// decimal, inf, nan, or 0x bit patterns; integer types accept integers.
Status KernelParser::TypedImm(TextCursor& c, Instr& in) {
  if (!IsFloatType(in.type)) {
    RETURN_IF_ERROR(Imm(c, in));
    int64_t v = in.imm[in.nimm - 1];
    if (!Is64Bit(in.type) && (v < INT32_MIN || v > int64_t{UINT32_MAX})) {
      return c.Error("immediate does not fit 32 bits");
    }
    return Status::Ok();
  }
  c.SkipSpace();
  int col = c.column();
  ASSIGN_OR_RETURN(std::string t, c.NumberText());
  bool f64 = in.type == DType::kF64;
  std::string_view body = t;
  if (body.substr(0, 2) == "0x") {
    TextCursor hc(t, 0);
    ASSIGN_OR_RETURN(int64_t bits, hc.Int());
    if (!f64 && static_cast<uint64_t>(bits) > UINT32_MAX) {
      return c.Error("f32 bit pattern does not fit 32 bits");
    }
    in.imm[in.nimm++] = bits;
    return Status::Ok();
  }
  char* end = nullptr;
  int64_t bits;
  if (f64) {
    double d = std::strtod(t.c_str(), &end);
    std::memcpy(&bits, &d, 8);
  } else {
    float f = std::strtof(t.c_str(), &end);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    bits = b;
  }
  if (end != t.c_str() + t.size() || t.empty()) {
    return c.ErrorAt(col, "bad floating-point immediate '" + t + "'");
  }
  in.imm[in.nimm++] = bits;
  return Status::Ok();
}

Status KernelParser::ParseOperand(TextCursor& c, char kind, Instr& in) {
  switch (kind) {
    case 'v': {
      ASSIGN_OR_RETURN(int r, Reg(c, 'v', kNumVregs));
      in.reg[in.nreg++] = static_cast<uint8_t>(r);
      return Status::Ok();
    }
    case 'm': {
      ASSIGN_OR_RETURN(int r, Reg(c, 'm', kNumMregs));
      in.reg[in.nreg++] = static_cast<uint8_t>(r);
      return Status::Ok();
    }
    case 's': {
      ASSIGN_OR_RETURN(int r, Reg(c, 's', kNumSregs));
      in.reg[in.nreg++] = static_cast<uint8_t>(r);
      return Status::Ok();
    }
    case 'a':
      return Mem(c, in);
    case 'i':
      return Imm(c, in);
    case 'f':
      return TypedImm(c, in);
    case 'x':
      if (c.Peek() == 's') {
        ASSIGN_OR_RETURN(int r, Reg(c, 's', kNumSregs));
        in.x_reg = static_cast<int8_t>(r);
        in.imm[in.nimm++] = 0;
        return Status::Ok();
      }
      return Imm(c, in);
    case 'l': {
      c.SkipSpace();
      int col = c.column();
      ASSIGN_OR_RETURN(std::string name, c.Ident());
      fixups_.push_back(
          {static_cast<int32_t>(k_->code.size()), name, line_, col});
      in.target = 0;  // Resolved in Finish().
      return Status::Ok();
    }
    case 'b': {
      ASSIGN_OR_RETURN(std::string_view name, c.IdentView());
      int32_t idx = -1;
      for (size_t i = 0; i < k_->symbols.size(); ++i) {
        if (k_->symbols[i] == name) idx = static_cast<int32_t>(i);
      }
      if (idx < 0) {
        idx = static_cast<int32_t>(k_->symbols.size());
        k_->symbols.emplace_back(name);
      }
      in.symbol = idx;
      return Status::Ok();
    }
  }
  return c.Error("internal: unknown operand kind");
}

Status KernelParser::ParseInstr(TextCursor& c) {
  c.SkipSpace();
  int col = c.column();
  ASSIGN_OR_RETURN(std::string_view word, c.IdentView());
  // mnemonic[.type[.type2]]: split in place (this runs once per emitted
  // instruction, so it allocates nothing).
  std::string_view parts[4];
  size_t nparts = 0;
  for (std::string_view rest = word;;) {
    const size_t dot = rest.find('.');
    if (nparts == 4) return c.Error("too many type suffixes");
    parts[nparts++] = rest.substr(0, dot);
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  std::optional<Opcode> op = OpcodeFromMnemonic(parts[0]);
  if (!op) {
    return c.ErrorAt(col, "unknown mnemonic '" + std::string(parts[0]) + "'");
  }
  Instr in;
  in.op = *op;
  if (nparts > 3) return c.Error("too many type suffixes");
  for (size_t i = 1; i < nparts; ++i) {
    std::optional<DType> t = DTypeFromName(parts[i]);
    if (!t) {
      return c.Error("unknown type suffix '" + std::string(parts[i]) + "'");
    }
    (i == 1 ? in.type : in.type2) = *t;
  }
  const OpInfo& info = GetOpInfo(in.op);
  bool first = true;
  bool optional = false;
  for (char kind : info.operands) {
    if (kind == '?') {
      optional = true;
      continue;
    }
    if (kind == '*') {
      while (c.Consume(',')) {
        for (int j = 0; j < 3; ++j) {
          if (j > 0) RETURN_IF_ERROR(c.Expect(','));
          RETURN_IF_ERROR(Imm(c, in));
        }
      }
      continue;
    }
    if (optional) {
      if (!c.Consume(',')) break;
      in.has_optional = true;
    } else if (!first) {
      RETURN_IF_ERROR(c.Expect(','));
    }
    first = false;
    RETURN_IF_ERROR(ParseOperand(c, kind, in));
  }
  if (c.Consume('@')) {
    ASSIGN_OR_RETURN(int m, Reg(c, 'm', kNumMregs));
    in.mask = static_cast<int8_t>(m);
  }
  if (!c.AtEnd())
    return c.Error("unexpected text '" + std::string(c.Rest()) + "'");
  Status s = ValidateInstr(in, INT32_MAX, k_->symbols.size());
  if (!s.ok()) return c.ErrorAt(col, s.message());
  k_->code.push_back(in);
  return Status::Ok();
}

Status KernelParser::ParseLine(std::string_view text, int line) {
  line_ = line;
  TextCursor c(text, line);
  if (c.AtEnd()) return Status::Ok();
  if (c.Peek() == '.') {
    c.Consume('.');
    ASSIGN_OR_RETURN(std::string d, c.Ident());
    if (d != "vmem") return c.Error("unknown directive ." + d);
    ASSIGN_OR_RETURN(k_->vmem_bytes, c.Int());
    if (k_->vmem_bytes < 0) return c.Error(".vmem must be >= 0");
    if (!c.AtEnd()) return c.Error("unexpected text after .vmem");
    return Status::Ok();
  }
  {
    TextCursor probe(text, line);
    StatusOr<std::string> id = probe.Ident();
    if (id.ok() && probe.Consume(':')) {
      if (labels_.count(*id)) return c.Error("duplicate label '" + *id + "'");
      int32_t idx = static_cast<int32_t>(k_->code.size());
      labels_[*id] = idx;
      k_->labels.push_back({idx, *id});
      if (probe.AtEnd()) return Status::Ok();
      return ParseInstr(probe);
    }
  }
  return ParseInstr(c);
}

Status KernelParser::Finish(int line) {
  for (const Fixup& f : fixups_) {
    auto it = labels_.find(f.label);
    if (it == labels_.end()) {
      return InvalidArgument(std::to_string(f.line) + ":" +
                             std::to_string(f.column) + ": unknown label '" +
                             f.label + "'");
    }
    k_->code[f.instr].target = it->second;
  }
  Status s = ValidateKernel(*k_);
  if (!s.ok()) {
    return InvalidArgument(std::to_string(line) + ":1: " + s.message());
  }
  return Status::Ok();
}

std::string FloatImm(DType t, int64_t bits) {
  char buf[40];
  if (t == DType::kF64) {
    double d;
    std::memcpy(&d, &bits, 8);
    if (std::isnan(d)) {
      std::snprintf(buf, sizeof buf, "0x%016llx",
                    static_cast<unsigned long long>(bits));
    } else {
      std::snprintf(buf, sizeof buf, "%.17g", d);
    }
  } else {
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, 4);
    if (std::isnan(f)) {
      std::snprintf(buf, sizeof buf, "0x%08x", b);
    } else {
      std::snprintf(buf, sizeof buf, "%.9g", f);
    }
  }
  return buf;
}

std::string LabelFor(const Kernel& k, int32_t target) {
  for (const Label& l : k.labels) {
    if (l.index == target) return l.name;
  }
  return "L" + std::to_string(target);
}

std::string MemText(const MemRef& m) {
  std::string s = std::string(MemSpaceName(m.space)) + "[";
  if (m.base >= 0) {
    s += "s" + std::to_string(m.base);
    if (m.offset > 0) s += "+" + std::to_string(m.offset);
    if (m.offset < 0) s += std::to_string(m.offset);
  } else {
    s += std::to_string(m.offset);
  }
  return s + "]";
}

}  // namespace

std::string PrintInstr(const Kernel& k, const Instr& in) {
  const OpInfo& info = GetOpInfo(in.op);
  std::string s(info.mnemonic);
  if (in.type != DType::kNone) s += "." + std::string(DTypeName(in.type));
  if (in.type2 != DType::kNone) s += "." + std::string(DTypeName(in.type2));
  int r = 0, m = 0, i = 0;
  bool first = true, optional = false;
  for (char kind : info.operands) {
    if (kind == '?') {
      optional = true;
      continue;
    }
    if (kind == '*') {
      for (; i + 2 < in.nimm; i += 3) {
        s += ", " + std::to_string(in.imm[i]) + ", " +
             std::to_string(in.imm[i + 1]) + ", " +
             std::to_string(in.imm[i + 2]);
      }
      continue;
    }
    if (optional && !in.has_optional) break;
    s += first ? " " : ", ";
    first = false;
    switch (kind) {
      case 'v':
      case 'm':
      case 's':
        s += kind + std::to_string(in.reg[r++]);
        break;
      case 'a':
        s += MemText(in.mem[m++]);
        break;
      case 'i':
        s += std::to_string(in.imm[i++]);
        break;
      case 'f':
        s += IsFloatType(in.type) ? FloatImm(in.type, in.imm[i])
                                  : std::to_string(in.imm[i]);
        ++i;
        break;
      case 'x':
        s += in.x_reg >= 0 ? "s" + std::to_string(in.x_reg)
                           : std::to_string(in.imm[i]);
        ++i;
        break;
      case 'l':
        s += LabelFor(k, in.target);
        break;
      case 'b':
        s += in.symbol >= 0 && in.symbol < static_cast<int>(k.symbols.size())
                 ? k.symbols[in.symbol]
                 : "?";
        break;
    }
  }
  if (in.mask >= 0) s += " @m" + std::to_string(in.mask);
  return s;
}

std::string PrintKernel(const Kernel& k) {
  std::string out = "kernel " + k.name + " {\n";
  out += "  .vmem " + std::to_string(k.vmem_bytes) + "\n";
  // Targets without labels get synthesized ones ("L<index>", the name
  // PrintInstr gives such a target too), in index order.
  std::vector<Label> labels = k.labels;
  std::vector<int32_t> unlabeled;
  for (const Instr& in : k.code) {
    if (in.target >= 0) unlabeled.push_back(in.target);
  }
  std::sort(unlabeled.begin(), unlabeled.end());
  unlabeled.erase(std::unique(unlabeled.begin(), unlabeled.end()),
                  unlabeled.end());
  for (int32_t t : unlabeled) {
    const bool found =
        std::any_of(k.labels.begin(), k.labels.end(),
                    [t](const Label& l) { return l.index == t; });
    if (!found) labels.push_back({t, "L" + std::to_string(t)});
  }
  std::stable_sort(
      labels.begin(), labels.end(),
      [](const Label& a, const Label& b) { return a.index < b.index; });
  size_t li = 0;
  for (size_t i = 0; i <= k.code.size(); ++i) {
    while (li < labels.size() && labels[li].index == (int)i) {
      out += labels[li++].name + ":\n";
    }
    if (i < k.code.size()) out += "  " + PrintInstr(k, k.code[i]) + "\n";
  }
  return out + "}\n";
}

StatusOr<std::vector<Kernel>> ParseKernels(std::string_view text,
                                           int first_line) {
  std::vector<std::string_view> lines = SplitLines(text);
  std::vector<Kernel> kernels;
  for (size_t i = 0; i < lines.size(); ++i) {
    int line = first_line + static_cast<int>(i);
    TextCursor c(lines[i], line);
    if (c.AtEnd()) continue;
    if (!c.ConsumeWord("kernel")) return c.Error("expected 'kernel NAME {'");
    Kernel k;
    ASSIGN_OR_RETURN(k.name, c.Ident());
    RETURN_IF_ERROR(c.Expect('{'));
    if (!c.AtEnd()) return c.Error("unexpected text after '{'");
    // One instruction per line at most: reserving for the lines up to
    // the closing brace spares the code vector's regrowth.
    size_t body = 0;
    while (i + 1 + body < lines.size() &&
           lines[i + 1 + body].find('}') == std::string_view::npos) {
      ++body;
    }
    k.code.reserve(body);
    KernelParser p(&k);
    bool closed = false;
    for (++i; i < lines.size(); ++i) {
      line = first_line + static_cast<int>(i);
      TextCursor e(lines[i], line);
      if (e.Consume('}')) {
        if (!e.AtEnd()) return e.Error("unexpected text after '}'");
        closed = true;
        break;
      }
      RETURN_IF_ERROR(p.ParseLine(lines[i], line));
    }
    if (!closed) {
      return InvalidArgument(std::to_string(line) + ":1: kernel " + k.name +
                             " is not closed by '}'");
    }
    RETURN_IF_ERROR(p.Finish(line));
    for (const Kernel& other : kernels) {
      if (other.name == k.name) {
        return InvalidArgument(std::to_string(line) + ":1: duplicate kernel " +
                               k.name);
      }
    }
    kernels.push_back(std::move(k));
  }
  return kernels;
}

StatusOr<Kernel> AssembleKernel(std::string_view name, int64_t vmem_bytes,
                                std::string_view body, int first_line) {
  TextCursor n(name, first_line);
  StatusOr<std::string_view> id = n.IdentView();
  if (!id.ok() || id->size() != name.size()) {
    return InvalidArgument("kernel name '" + std::string(name) +
                           "' is not an identifier");
  }
  if (vmem_bytes < 0) return InvalidArgument(".vmem must be >= 0");
  Kernel k;
  k.name = std::string(name);
  k.vmem_bytes = vmem_bytes;
  const std::vector<std::string_view> lines = SplitLines(body);
  k.code.reserve(lines.size());
  KernelParser p(&k);
  for (size_t i = 0; i < lines.size(); ++i) {
    RETURN_IF_ERROR(p.ParseLine(lines[i], first_line + static_cast<int>(i)));
  }
  RETURN_IF_ERROR(p.Finish(first_line + static_cast<int>(lines.size())));
  return k;
}

StatusOr<Kernel> ParseKernel(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<Kernel> ks, ParseKernels(text));
  if (ks.size() != 1) {
    return InvalidArgument("expected exactly one kernel, got " +
                           std::to_string(ks.size()));
  }
  return std::move(ks[0]);
}

}  // namespace trench::tpu
