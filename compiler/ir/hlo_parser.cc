// Module, computation and instruction structure of HLO text. Shapes,
// literals and typed attributes live in hlo_parser_{shape,literal,
// attributes}.cc.
#include "compiler/ir/hlo_parser.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/hlo_parser_internal.h"

namespace trench {
namespace {

using hlo_parser_internal::AttributeContext;
using hlo_parser_internal::ComputationRef;

// Opcodes that cannot work without their called computations; the parser
// insists on them so that accessors such as while_body() are safe.
int RequiredCallees(const HloInstruction& instr) {
  // Async wrapped forms (negate-start) name no computation.
  if (instr.attrs().FindRaw(kAsyncWrappedOpcodeKey)) return 0;
  switch (instr.opcode()) {
    case HloOpcode::kWhile:
    case HloOpcode::kSelectAndScatter:
      return 2;
    case HloOpcode::kFusion:
    case HloOpcode::kCall:
    case HloOpcode::kConditional:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kMap:
    case HloOpcode::kSort:
    case HloOpcode::kScatter:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAsyncStart:
      return 1;
    default:
      return 0;
  }
}

// Line and column of positions in one forward pass over the text: asking
// for increasing positions (as the parser does) costs O(text) in total.
class LineCursor {
 public:
  LineCursor(std::string_view text, int first_line)
      : text_(text), first_line_(first_line), line_(first_line) {}

  SourceLocation At(size_t p) {
    p = std::min(p, text_.size());
    if (p < pos_) pos_ = line_start_ = 0, line_ = first_line_;
    while (pos_ < p) {
      const void* nl = std::memchr(text_.data() + pos_, '\n', p - pos_);
      if (nl == nullptr) {
        pos_ = p;
        break;
      }
      ++line_;
      pos_ = line_start_ = static_cast<const char*>(nl) - text_.data() + 1;
    }
    return {static_cast<int32_t>(line_),
            static_cast<int32_t>(p - line_start_ + 1)};
  }

 private:
  std::string_view text_;
  int first_line_;
  int64_t line_;
  size_t pos_ = 0, line_start_ = 0;
};

class ModuleParser {
 public:
  ModuleParser(std::string_view text, int first_line)
      : lex_(text, first_line), lines_(text, first_line) {}

  StatusOr<std::unique_ptr<HloModule>> Run();

 private:
  using Scope = std::unordered_map<std::string, HloInstruction*>;

  Status ParseHeader();
  Status ParseComputation();
  Status ParseSignature();
  Status ParseInstruction(HloComputation* comp, Scope* scope,
                          HloInstruction** root);
  // Opcode and parenthesised operands of an instruction named `name`.
  StatusOr<std::unique_ptr<HloInstruction>> ParseInstructionBody(
      Shape shape, const std::string& name, HloComputation* comp, Scope* scope,
      int depth);
  StatusOr<HloOpcode> ParseOpcode(std::string* async_wrapped);
  StatusOr<std::unique_ptr<HloInstruction>> ParseOperands(
      std::unique_ptr<HloInstruction> instr, HloComputation* comp, Scope* scope,
      int depth);
  // True when `opcode(` follows: an operand written as an instruction.
  bool NestedInstructionFollows();
  // An unnamed operand instruction `shape opcode(...)`; it gets a
  // generated name and is added to `comp` before its user.
  // `shape_pos` is where its shape starts.
  StatusOr<HloInstruction*> ParseNestedInstruction(Shape shape,
                                                   size_t shape_pos,
                                                   HloComputation* comp,
                                                   Scope* scope, int depth);
  Status ParseAttributes(HloInstruction* instr, const Scope& scope,
                         size_t instr_pos);
  Status CheckParameters(const HloComputation& comp, size_t pos);
  Status ResolveCallees();
  // `name`, or `name.N` with the smallest N that makes it unique in the
  // module (XLA's parser uniquifies the same way); recorded as used.
  std::string UniqueName(const std::string& name);

  struct Fixup {
    HloInstruction* instr;
    std::vector<ComputationRef> refs;
  };

  HloLexer lex_;
  LineCursor lines_;
  std::unique_ptr<HloModule> module_;
  std::unordered_map<std::string, HloComputation*> comps_;
  std::vector<Fixup> fixups_;
  HloComputation* entry_ = nullptr;
  // Instruction names used so far in the module.
  std::unordered_set<std::string> used_names_;
};

std::string ModuleParser::UniqueName(const std::string& name) {
  std::string unique = name;
  for (int64_t k = 1; used_names_.count(unique); ++k) {
    unique = name + "." + std::to_string(k);
  }
  used_names_.insert(unique);
  return unique;
}

StatusOr<std::unique_ptr<HloModule>> ModuleParser::Run() {
  module_ = std::make_unique<HloModule>("");
  RETURN_IF_ERROR(ParseHeader());
  if (lex_.AtEnd()) return lex_.Error("computation");
  while (!lex_.AtEnd()) RETURN_IF_ERROR(ParseComputation());
  RETURN_IF_ERROR(ResolveCallees());
  module_->set_entry_computation(entry_ ? entry_
                                        : module_->computations().back());
  return std::move(module_);
}

Status ModuleParser::ParseHeader() {
  if (!lex_.TryConsumeWord("HloModule")) return Status::Ok();
  lex_.SkipSpace();
  const size_t begin = lex_.pos();
  size_t e = begin;
  const std::string_view text = lex_.text();
  while (e < lex_.end() && !std::isspace(static_cast<unsigned char>(text[e])) &&
         text[e] != ',') {
    ++e;
  }
  if (e == begin) return lex_.Error("module name");
  module_->set_name(std::string(text.substr(begin, e - begin)));
  lex_.set_pos(e);
  std::unordered_set<std::string> seen;
  while (lex_.TryConsume(',')) {
    lex_.SkipSpace();
    const size_t key_pos = lex_.pos();
    std::string key(lex_.ConsumeWord());
    if (key.empty()) return lex_.Error("module attribute name");
    if (!seen.insert(key).second) {
      return lex_.ErrorAt(key_pos, "duplicate module attribute '" + key + "'");
    }
    RETURN_IF_ERROR(lex_.Expect('='));
    size_t b, v_end;
    RETURN_IF_ERROR(lex_.ScanRawValue(&b, &v_end));
    module_->mutable_header_attrs().emplace_back(
        key, std::string(text.substr(b, v_end - b)));
  }
  return Status::Ok();
}

Status ModuleParser::ParseSignature() {
  RETURN_IF_ERROR(lex_.Expect('('));
  if (!lex_.TryConsume(')')) {
    do {
      // Only the shapes matter (the parameter instructions are
      // authoritative); names are any run of name characters.
      lex_.TryConsume('%');
      if (lex_.ConsumeWord().empty()) return lex_.Error("parameter name");
      RETURN_IF_ERROR(lex_.Expect(':'));
      RETURN_IF_ERROR(hlo_parser_internal::ParseShape(lex_, 1).status());
    } while (lex_.TryConsume(','));
    RETURN_IF_ERROR(lex_.Expect(')'));
  }
  RETURN_IF_ERROR(lex_.Expect("->"));
  return hlo_parser_internal::ParseShape(lex_, 1).status();
}

Status ModuleParser::ParseComputation() {
  lex_.SkipSpace();
  const size_t start = lex_.pos();
  const bool is_entry = lex_.TryConsumeWord("ENTRY");
  lex_.SkipSpace();
  const size_t name_pos = lex_.pos();
  ASSIGN_OR_RETURN(std::string name, lex_.ParseName("computation name"));
  if (comps_.count(name)) {
    return lex_.ErrorAt(name_pos, "duplicate computation name '" + name + "'");
  }
  if (is_entry && entry_) {
    return lex_.ErrorAt(start, "more than one ENTRY computation");
  }
  if (lex_.Peek() == '(') RETURN_IF_ERROR(ParseSignature());
  RETURN_IF_ERROR(lex_.Expect('{'));
  auto comp = std::make_unique<HloComputation>(name);
  Scope scope;
  HloInstruction* root = nullptr;
  while (!lex_.TryConsume('}')) {
    if (lex_.AtEnd()) {
      return lex_.Error("'}' closing computation '" + name + "'");
    }
    RETURN_IF_ERROR(ParseInstruction(comp.get(), &scope, &root));
  }
  if (comp->instruction_count() == 0) {
    return lex_.ErrorAt(name_pos,
                        "computation '" + name + "' has no instructions");
  }
  comp->set_root_instruction(root ? root : comp->instructions().back());
  RETURN_IF_ERROR(CheckParameters(*comp, name_pos));
  HloComputation* added = module_->AddComputation(std::move(comp));
  comps_[name] = added;
  if (is_entry) entry_ = added;
  return Status::Ok();
}

Status ModuleParser::CheckParameters(const HloComputation& comp, size_t pos) {
  for (int64_t i = 0; i < comp.num_parameters(); ++i) {
    if (comp.parameter_instruction(i) == nullptr) {
      return lex_.ErrorAt(
          pos, "computation '" + comp.name() + "' has no parameter(" +
                   std::to_string(i) + ") but has parameter(" +
                   std::to_string(comp.num_parameters() - 1) + ")");
    }
  }
  return Status::Ok();
}

StatusOr<HloOpcode> ModuleParser::ParseOpcode(std::string* async_wrapped) {
  lex_.SkipSpace();
  const size_t pos = lex_.pos();
  std::string_view word = lex_.ConsumeWord();
  if (word.empty()) return lex_.Error("opcode");
  if (std::optional<HloOpcode> op = OpcodeFromName(word)) return *op;
  static const std::pair<std::string_view, HloOpcode> kAsync[] = {
      {"-start", HloOpcode::kAsyncStart},
      {"-update", HloOpcode::kAsyncUpdate},
      {"-done", HloOpcode::kAsyncDone}};
  for (const auto& [suffix, op] : kAsync) {
    if (word.size() > suffix.size() && word.ends_with(suffix)) {
      std::string_view wrapped = word.substr(0, word.size() - suffix.size());
      if (OpcodeFromName(wrapped)) {
        *async_wrapped = std::string(wrapped);
        return op;
      }
    }
  }
  return lex_.ErrorAt(pos, "unknown opcode '" + std::string(word) + "'");
}

Status ModuleParser::ParseInstruction(HloComputation* comp, Scope* scope,
                                      HloInstruction** root) {
  lex_.SkipSpace();
  const size_t start = lex_.pos();
  const bool is_root = lex_.TryConsumeWord("ROOT");
  lex_.SkipSpace();
  const size_t name_pos = lex_.pos();
  const SourceLocation location = lines_.At(name_pos);
  ASSIGN_OR_RETURN(std::string name, lex_.ParseName("instruction name"));
  if (scope->count(name)) {
    return lex_.ErrorAt(name_pos, "duplicate instruction name '" + name +
                                      "' in computation '" + comp->name() +
                                      "'");
  }
  RETURN_IF_ERROR(lex_.Expect('='));
  ASSIGN_OR_RETURN(Shape shape, hlo_parser_internal::ParseShape(lex_, 1));
  ASSIGN_OR_RETURN(
      std::unique_ptr<HloInstruction> instr,
      ParseInstructionBody(std::move(shape), UniqueName(name), comp, scope, 1));
  instr->set_source_location(location);
  RETURN_IF_ERROR(ParseAttributes(instr.get(), *scope, start));
  if (is_root && *root) {
    return lex_.ErrorAt(
        start, "computation '" + comp->name() + "' has more than one ROOT");
  }
  HloInstruction* added = comp->AddInstruction(std::move(instr));
  if (is_root) *root = added;
  (*scope)[name] = added;
  return Status::Ok();
}

StatusOr<std::unique_ptr<HloInstruction>> ModuleParser::ParseInstructionBody(
    Shape shape, const std::string& name, HloComputation* comp, Scope* scope,
    int depth) {
  RETURN_IF_ERROR(hlo_parser_internal::CheckDepth(lex_, depth));
  std::string wrapped;
  ASSIGN_OR_RETURN(HloOpcode opcode, ParseOpcode(&wrapped));
  auto instr = std::make_unique<HloInstruction>(opcode, shape, name);
  if (!wrapped.empty()) {
    instr->mutable_attrs().raw.emplace_back(kAsyncWrappedOpcodeKey, wrapped);
  }
  RETURN_IF_ERROR(lex_.Expect('('));
  if (opcode == HloOpcode::kParameter) {
    lex_.SkipSpace();
    const size_t at = lex_.pos();
    ASSIGN_OR_RETURN(int64_t n, lex_.ParseInt("parameter number"));
    if (n < 0 || n > (int64_t{1} << 20)) {
      return lex_.ErrorAt(
          at, "parameter number " + std::to_string(n) + " is out of range");
    }
    if (n < comp->num_parameters() && comp->parameter_instruction(n)) {
      return lex_.ErrorAt(at, "duplicate parameter(" + std::to_string(n) +
                                  ") in computation '" + comp->name() + "'");
    }
    instr->mutable_attrs().parameter_number = n;
  } else if (opcode == HloOpcode::kConstant) {
    ASSIGN_OR_RETURN(Literal lit,
                     hlo_parser_internal::ParseLiteral(lex_, shape, depth));
    instr->set_literal(std::move(lit));
  } else {
    return ParseOperands(std::move(instr), comp, scope, depth);
  }
  RETURN_IF_ERROR(lex_.Expect(')'));
  return instr;
}

StatusOr<std::unique_ptr<HloInstruction>> ModuleParser::ParseOperands(
    std::unique_ptr<HloInstruction> instr, HloComputation* comp, Scope* scope,
    int depth) {
  if (lex_.TryConsume(')')) return instr;
  do {
    if (hlo_parser_internal::PeekShape(lex_)) {
      const size_t shape_pos = lex_.pos();
      ASSIGN_OR_RETURN(Shape shape,
                       hlo_parser_internal::ParseShape(lex_, depth + 1));
      if (NestedInstructionFollows()) {
        ASSIGN_OR_RETURN(HloInstruction * nested,
                         ParseNestedInstruction(std::move(shape), shape_pos,
                                                comp, scope, depth + 1));
        instr->AddOperand(nested);
        continue;
      }
    }
    lex_.SkipSpace();
    const size_t at = lex_.pos();
    ASSIGN_OR_RETURN(std::string name, lex_.ParseName("operand"));
    auto it = scope->find(name);
    if (it == scope->end()) {
      return lex_.ErrorAt(at, "operand '" + name +
                                  "' is not defined before its use in "
                                  "computation '" +
                                  comp->name() + "'");
    }
    instr->AddOperand(it->second);
  } while (lex_.TryConsume(','));
  RETURN_IF_ERROR(lex_.Expect(')'));
  return instr;
}

bool ModuleParser::NestedInstructionFollows() {
  lex_.SkipSpace();
  const size_t save = lex_.pos();
  const bool word = !lex_.ConsumeWord().empty();
  const bool paren = word && lex_.PeekRaw() == '(';
  lex_.set_pos(save);
  return paren;
}

StatusOr<HloInstruction*> ModuleParser::ParseNestedInstruction(
    Shape shape, size_t shape_pos, HloComputation* comp, Scope* scope,
    int depth) {
  const SourceLocation location = lines_.At(shape_pos);
  const size_t start = lex_.pos();
  const std::string name = UniqueName(std::string(lex_.PeekWord()) + ".nested");
  ASSIGN_OR_RETURN(
      std::unique_ptr<HloInstruction> instr,
      ParseInstructionBody(std::move(shape), name, comp, scope, depth));
  const int required = RequiredCallees(*instr);
  if (required > 0) {
    return lex_.ErrorAt(start, "a nested " +
                                   std::string(OpcodeName(instr->opcode())) +
                                   " cannot have its called computations");
  }
  instr->set_source_location(location);
  HloInstruction* added = comp->AddInstruction(std::move(instr));
  (*scope)[name] = added;
  return added;
}

Status ModuleParser::ParseAttributes(HloInstruction* instr, const Scope& scope,
                                     size_t instr_pos) {
  AttributeContext ctx;
  ctx.defined = &scope;
  std::unordered_set<std::string> seen;
  while (lex_.TryConsume(',')) {
    lex_.SkipSpace();
    const size_t key_pos = lex_.pos();
    std::string key(lex_.ConsumeWord());
    if (key.empty()) return lex_.Error("attribute name");
    if (!seen.insert(key).second || key == kAsyncWrappedOpcodeKey) {
      return lex_.ErrorAt(key_pos, "duplicate attribute '" + key + "'");
    }
    RETURN_IF_ERROR(
        hlo_parser_internal::CheckAttributeName(lex_, key, key_pos));
    RETURN_IF_ERROR(lex_.Expect('='));
    size_t b, e;
    RETURN_IF_ERROR(lex_.ScanRawValue(&b, &e));
    RETURN_IF_ERROR(
        hlo_parser_internal::ParseAttribute(key, lex_.Sub(b, e), instr, &ctx));
  }
  Fixup fixup{instr, {}};
  if (ctx.slot0 || ctx.slot1) {
    if (!ctx.slot0 || !ctx.slot1 || !ctx.list.empty()) {
      return lex_.ErrorAt(
          instr_pos, "instruction '" + instr->name() +
                         "' needs both computations of a pair (condition/body, "
                         "true_computation/false_computation, select/scatter) "
                         "and no other called computation");
    }
    fixup.refs = {*ctx.slot0, *ctx.slot1};
  } else {
    fixup.refs = std::move(ctx.list);
  }
  const int required = RequiredCallees(*instr);
  if (static_cast<int>(fixup.refs.size()) < required) {
    return lex_.ErrorAt(
        instr_pos, std::string(OpcodeName(instr->opcode())) + " '" +
                       instr->name() + "' needs " + std::to_string(required) +
                       " called computation(s), e.g. " +
                       (required == 2 ? "condition= and body="
                        : instr->opcode() == HloOpcode::kFusion ? "calls="
                                                                : "to_apply="));
  }
  if (!fixup.refs.empty()) fixups_.push_back(std::move(fixup));
  return Status::Ok();
}

Status ModuleParser::ResolveCallees() {
  for (const Fixup& f : fixups_) {
    for (const ComputationRef& ref : f.refs) {
      auto it = comps_.find(ref.name);
      if (it == comps_.end()) {
        return lex_.ErrorAt(ref.pos,
                            "computation '" + ref.name + "' is not defined");
      }
      f.instr->AddCalledComputation(it->second);
    }
    if (f.instr->opcode() == HloOpcode::kFusion) {
      f.instr->fused_computation()->set_fusion_instruction(f.instr);
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    int first_line) {
  ModuleParser parser(text, first_line);
  return parser.Run();
}

}  // namespace trench
