#include "compiler/ir/shape_inference.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/ir/hlo_parser.h"

namespace trench {
namespace {

// Parses `hlo` and infers the shape of the instruction named `name`.
// Returns the shape's text, or "ERROR: <message>" (also for parse errors,
// which then fail the test).
std::string Infer(std::string_view hlo, const std::string& name) {
  auto module = ParseHloModule(hlo);
  if (!module.ok()) {
    ADD_FAILURE() << "parse error: " << module.status().ToString();
    return "PARSE ERROR";
  }
  for (HloComputation* comp : (*module)->computations()) {
    if (HloInstruction* instr = comp->GetInstructionWithName(name)) {
      StatusOr<Shape> shape = InferShape(*instr);
      if (!shape.ok()) return "ERROR: " + shape.status().message();
      return shape->ToString();
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return "NOT FOUND";
}

// The entry computation `{ body }` of a module with no other computation.
std::string Entry(const std::string& body) {
  return "HloModule m\nENTRY %e {\n" + body + "\n}\n";
}

// A module whose entry can call %add_f32 (f32 reducer), %add_s32,
// %lt_f32 (comparator) and %max_pair ((f32, s32) variadic reducer).
std::string WithHelpers(const std::string& body) {
  return R"(HloModule m
%add_f32 {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %r = f32[] add(%x, %y)
}
%add_s32 {
  %x = s32[] parameter(0)
  %y = s32[] parameter(1)
  ROOT %r = s32[] add(%x, %y)
}
%lt_f32 {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %r = pred[] compare(%x, %y), direction=LT
}
%lt_f32_s32 {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = s32[] parameter(2)
  %d = s32[] parameter(3)
  ROOT %r = pred[] compare(%a, %b), direction=LT
}
%max_pair {
  %a = f32[] parameter(0)
  %b = s32[] parameter(1)
  %c = f32[] parameter(2)
  %d = s32[] parameter(3)
  %m = f32[] maximum(%a, %c)
  %n = s32[] maximum(%b, %d)
  ROOT %t = (f32[], s32[]) tuple(%m, %n)
}
ENTRY %e {
)" + body +
         "\n}\n";
}

#define EXPECT_ERROR(result, substring)                     \
  do {                                                      \
    const std::string r_ = (result);                        \
    EXPECT_EQ(r_.rfind("ERROR: ", 0), 0u) << r_;            \
    EXPECT_NE(r_.find(substring), std::string::npos) << r_; \
  } while (0)

// ---- Elementwise. ----

TEST(ShapeInferenceElementwise, BinaryArithmetic) {
  const std::string ok = Entry(R"(
    %a = f32[2,3]{1,0} parameter(0)
    %b = f32[2,3]{0,1} parameter(1)
    ROOT %add.3 = f32[2,3] add(%a, %b))");
  EXPECT_EQ(Infer(ok, "add.3"), "f32[2,3]");  // Layout-free.
  const std::string bad = Entry(R"(
    %a = f32[2] parameter(0)
    %b = f32[3] parameter(1)
    ROOT %add.3 = f32[2] add(%a, %b))");
  EXPECT_EQ(Infer(bad, "add.3"),
            "ERROR: %add.3: add operands have different shapes f32[2] and "
            "f32[3]");
  const std::string types = Entry(R"(
    %a = f32[2] parameter(0)
    %b = bf16[2] parameter(1)
    ROOT %m = f32[2] multiply(%a, %b))");
  EXPECT_ERROR(
      Infer(types, "m"),
      "%m: multiply operands have different shapes f32[2] and bf16[2]");
}

TEST(ShapeInferenceElementwise, BinaryTypeRules) {
  const std::string preds = Entry(R"(
    %a = pred[4] parameter(0)
    %b = pred[4] parameter(1)
    %add = pred[4] add(%a, %b)
    %sub = pred[4] subtract(%a, %b)
    %div = pred[4] divide(%a, %b)
    %max = pred[4] maximum(%a, %b)
    ROOT %and = pred[4] and(%a, %b))");
  EXPECT_EQ(Infer(preds, "add"), "pred[4]");  // XLA: logical or.
  EXPECT_ERROR(Infer(preds, "sub"),
               "%sub: subtract expects numeric (non-pred) operands, got pred");
  EXPECT_ERROR(Infer(preds, "div"), "divide expects numeric (non-pred)");
  EXPECT_EQ(Infer(preds, "max"), "pred[4]");
  EXPECT_EQ(Infer(preds, "and"), "pred[4]");
  const std::string floats = Entry(R"(
    %a = f32[4] parameter(0)
    %b = f32[4] parameter(1)
    %or = f32[4] or(%a, %b)
    %shl = f32[4] shift-left(%a, %b)
    %atan = f32[4] atan2(%a, %b)
    %pow = f32[4] power(%a, %b)
    ROOT %c = c64[4] complex(%a, %b))");
  EXPECT_ERROR(Infer(floats, "or"), "%or: or expects integer or pred operands");
  EXPECT_ERROR(Infer(floats, "shl"), "shift-left expects integer operands");
  EXPECT_EQ(Infer(floats, "atan"), "f32[4]");
  EXPECT_EQ(Infer(floats, "pow"), "f32[4]");
  EXPECT_EQ(Infer(floats, "c"), "c64[4]");
  const std::string ints = Entry(R"(
    %a = s32[4] parameter(0)
    %b = s32[4] parameter(1)
    %atan = s32[4] atan2(%a, %b)
    %rem = s32[4] remainder(%a, %b)
    ROOT %sra = s32[4] shift-right-arithmetic(%a, %b))");
  EXPECT_ERROR(Infer(ints, "atan"), "atan2 expects floating-point or complex");
  EXPECT_EQ(Infer(ints, "rem"), "s32[4]");
  EXPECT_EQ(Infer(ints, "sra"), "s32[4]");
}

TEST(ShapeInferenceElementwise, Unary) {
  const std::string hlo = Entry(R"(
    %f = f32[3]{0} parameter(0)
    %s = s32[3] parameter(1)
    %u = u32[3] parameter(2)
    %c = c64[3] parameter(3)
    %p = pred[3] parameter(4)
    %floor = f32[3] floor(%f)
    %floor_s = s32[3] floor(%s)
    %sin_s = s32[3] sine(%s)
    %exp_c = c64[3] exponential(%c)
    %erf_c = c64[3] erf(%c)
    %fin = pred[3] is-finite(%f)
    %abs_c = f32[3] abs(%c)
    %abs_p = pred[3] abs(%p)
    %abs_u = u32[3] abs(%u)
    %neg_u = u32[3] negate(%u)
    %sign_u = u32[3] sign(%u)
    %not_p = pred[3] not(%p)
    %not_f = f32[3] not(%f)
    %clz = s32[3] count-leading-zeros(%s)
    %clz_f = f32[3] count-leading-zeros(%f)
    %pop = u32[3] popcnt(%u)
    %rne = f32[3] round-nearest-even(%f)
    %cbrt = f32[3] cbrt(%f)
    %real = f32[3] real(%c)
    ROOT %copy = f32[3] copy(%f))");
  EXPECT_EQ(Infer(hlo, "floor"), "f32[3]");
  EXPECT_ERROR(Infer(hlo, "floor_s"),
               "%floor_s: floor expects floating-point operands, got s32");
  EXPECT_ERROR(Infer(hlo, "sin_s"), "sine expects floating-point or complex");
  EXPECT_EQ(Infer(hlo, "exp_c"), "c64[3]");
  EXPECT_ERROR(Infer(hlo, "erf_c"), "erf expects floating-point operands");
  EXPECT_EQ(Infer(hlo, "fin"), "pred[3]");
  EXPECT_EQ(Infer(hlo, "abs_c"), "f32[3]");
  EXPECT_ERROR(Infer(hlo, "abs_p"), "abs expects signed integer");
  EXPECT_ERROR(Infer(hlo, "abs_u"), "abs expects signed integer");
  EXPECT_EQ(Infer(hlo, "neg_u"), "u32[3]");
  EXPECT_ERROR(Infer(hlo, "sign_u"), "sign expects signed integer");
  EXPECT_EQ(Infer(hlo, "not_p"), "pred[3]");
  EXPECT_ERROR(Infer(hlo, "not_f"), "not expects integer or pred");
  EXPECT_EQ(Infer(hlo, "clz"), "s32[3]");
  EXPECT_ERROR(Infer(hlo, "clz_f"), "count-leading-zeros expects integer");
  EXPECT_EQ(Infer(hlo, "pop"), "u32[3]");
  EXPECT_EQ(Infer(hlo, "rne"), "f32[3]");
  EXPECT_EQ(Infer(hlo, "cbrt"), "f32[3]");
  EXPECT_EQ(Infer(hlo, "real"), "f32[3]");
  EXPECT_EQ(Infer(hlo, "copy"), "f32[3]");
}

TEST(ShapeInferenceElementwise, CompareSelectClamp) {
  const std::string hlo = Entry(R"(
    %a = f32[2] parameter(0)
    %b = f32[2] parameter(1)
    %i = s32[2] parameter(2)
    %p = pred[2] parameter(3)
    %lo = f32[] parameter(4)
    %ps = pred[] parameter(5)
    %lt = pred[2] compare(%a, %b), direction=LT
    %lt_total = pred[2] compare(%a, %b), direction=LT, type=TOTALORDER
    %lt_signed = pred[2] compare(%a, %b), direction=LT, type=SIGNED
    %lt_mixed = pred[2] compare(%a, %i), direction=LT
    %sel = f32[2] select(%p, %a, %b)
    %sel_f = f32[2] select(%a, %a, %b)
    %sel_scalar = f32[2] select(%ps, %a, %b)
    %clamp = f32[2] clamp(%lo, %a, %lo)
    %clamp_arr = f32[2] clamp(%a, %a, %b)
    ROOT %clamp_bad = f32[2] clamp(%i, %a, %b))");
  EXPECT_EQ(Infer(hlo, "lt"), "pred[2]");
  EXPECT_EQ(Infer(hlo, "lt_total"), "pred[2]");
  EXPECT_ERROR(Infer(hlo, "lt_signed"),
               "comparison type SIGNED does not apply to f32 operands");
  EXPECT_ERROR(Infer(hlo, "lt_mixed"),
               "compare operands have different shapes f32[2] and s32[2]");
  EXPECT_EQ(Infer(hlo, "sel"), "f32[2]");
  EXPECT_ERROR(Infer(hlo, "sel_f"), "predicate must be pred, got f32[2]");
  EXPECT_ERROR(Infer(hlo, "sel_scalar"),
               "predicate pred[] does not have the dimensions of f32[2]");
  EXPECT_EQ(Infer(hlo, "clamp"), "f32[2]");
  EXPECT_EQ(Infer(hlo, "clamp_arr"), "f32[2]");
  EXPECT_ERROR(Infer(hlo, "clamp_bad"),
               "min s32[2] must be a scalar or have the shape of operand");
}

TEST(ShapeInferenceElementwise, Conversions) {
  const std::string hlo = Entry(R"(
    %f = f32[2] parameter(0)
    %c = c64[2] parameter(1)
    %u8 = u8[2,4] parameter(2)
    %u8b = u8[2,3] parameter(3)
    %cvt = bf16[2] convert(%f)
    %cvt_c = f32[2] convert(%c)
    %t = (f32[2]) tuple(%f)
    %cvt_t = f32[2] convert(%t)
    %bc_same = s32[2] bitcast-convert(%f)
    %bc_narrow = u8[2,4] bitcast-convert(%f)
    %bc_wide = f32[2] bitcast-convert(%u8)
    %bc_bad = f32[2] bitcast-convert(%u8b)
    %rp = f32[2] reduce-precision(%f), exponent_bits=5, mantissa_bits=10
    ROOT %rp_bad = f32[2] reduce-precision(%f), exponent_bits=0, mantissa_bits=10)");
  EXPECT_EQ(Infer(hlo, "cvt"), "bf16[2]");
  EXPECT_EQ(Infer(hlo, "cvt_c"), "f32[2]");  // Keeps the real part.
  EXPECT_ERROR(Infer(hlo, "cvt_t"), "operand must be an array, got (f32[2])");
  EXPECT_EQ(Infer(hlo, "bc_same"), "s32[2]");
  EXPECT_EQ(Infer(hlo, "bc_narrow"), "u8[2,4]");
  EXPECT_EQ(Infer(hlo, "bc_wide"), "f32[2]");
  EXPECT_ERROR(Infer(hlo, "bc_bad"), "needs a minor dimension of size 4");
  EXPECT_EQ(Infer(hlo, "rp"), "f32[2]");
  EXPECT_ERROR(Infer(hlo, "rp_bad"), "needs exponent_bits >= 1, got 0");
}

TEST(ShapeInferenceElementwise, Map) {
  const std::string hlo = WithHelpers(R"(
    %a = f32[4] parameter(0)
    %b = f32[4] parameter(1)
    %i = s32[4] parameter(2)
    %map = f32[4] map(%a, %b), dimensions={0}, to_apply=%add_f32
    ROOT %map_bad = f32[4] map(%a, %i), dimensions={0}, to_apply=%add_f32)");
  EXPECT_EQ(Infer(hlo, "map"), "f32[4]");
  EXPECT_ERROR(Infer(hlo, "map_bad"),
               "to_apply computation %add_f32 must take");
}

// ---- Structural. ----

TEST(ShapeInferenceStructural, ParameterConstantIota) {
  const std::string hlo = Entry(R"(
    %p = f32[2,3]{0,1} parameter(0)
    %c = s32[3] constant({1,2,3})
    %iota = s32[4,5] iota(), iota_dimension=1
    %iota_bad = s32[4,5] iota(), iota_dimension=2
    ROOT %iota_scalar = s32[] iota(), iota_dimension=0)");
  EXPECT_EQ(Infer(hlo, "p"), "f32[2,3]");
  EXPECT_EQ(Infer(hlo, "c"), "s32[3]");
  EXPECT_EQ(Infer(hlo, "iota"), "s32[4,5]");
  EXPECT_ERROR(Infer(hlo, "iota_bad"), "iota_dimension 2 is out of range");
  EXPECT_ERROR(Infer(hlo, "iota_scalar"), "result must not be a scalar");
}

TEST(ShapeInferenceStructural, BroadcastReshapeBitcastTranspose) {
  const std::string hlo = Entry(R"(
    %p = f32[3] parameter(0)
    %q = f32[2,3] parameter(1)
    %bc = f32[2,3,4] broadcast(%p), dimensions={1}
    %bc_scalar_dims = f32[2,3] broadcast(%p), dimensions={}
    %bc_mismatch = f32[3,2] broadcast(%p), dimensions={1}
    %bc_range = f32[2,3] broadcast(%p), dimensions={2}
    %rs = f32[6] reshape(%q)
    %rs_bad = f32[7] reshape(%q)
    %bitcast = s32[3,2] bitcast(%q)
    %bitcast_bad = f16[6] bitcast(%q)
    %tr = f32[3,2] transpose(%q), dimensions={1,0}
    ROOT %tr_bad = f32[3,2] transpose(%q), dimensions={1,1})");
  EXPECT_EQ(Infer(hlo, "bc"), "f32[2,3,4]");
  EXPECT_ERROR(Infer(hlo, "bc_scalar_dims"),
               "dimensions {} must have one entry per dimension of operand");
  EXPECT_ERROR(Infer(hlo, "bc_mismatch"),
               "operand f32[3] dimension 0 does not match result f32[3,2] "
               "dimension 1");
  EXPECT_ERROR(Infer(hlo, "bc_range"), "out of range for rank 2");
  EXPECT_EQ(Infer(hlo, "rs"), "f32[6]");
  EXPECT_ERROR(Infer(hlo, "rs_bad"),
               "reshape changes the element count: f32[2,3] to f32[7]");
  EXPECT_EQ(Infer(hlo, "bitcast"), "s32[3,2]");
  EXPECT_ERROR(Infer(hlo, "bitcast_bad"), "changes the byte size");
  EXPECT_EQ(Infer(hlo, "tr"), "f32[3,2]");
  EXPECT_ERROR(Infer(hlo, "tr_bad"), "repeats dimension 1");
}

TEST(ShapeInferenceStructural, SliceConcatenatePadReverse) {
  const std::string hlo = Entry(R"(
    %p = f32[10,4] parameter(0)
    %q = f32[3,4] parameter(1)
    %r = f32[3,5] parameter(2)
    %z = f32[] parameter(3)
    %sl = f32[5,2] slice(%p), slice={[0:10:2], [1:3]}
    %sl_odd = f32[4,4] slice(%p), slice={[1:8:2], [0:4]}
    %sl_bad = f32[5,2] slice(%p), slice={[0:11], [0:4]}
    %sl_rank = f32[5] slice(%p), slice={[0:5]}
    %cat = f32[13,4] concatenate(%p, %q), dimensions={0}
    %cat_bad = f32[13,4] concatenate(%p, %r), dimensions={0}
    %cat_dim = f32[13,4] concatenate(%p, %q), dimensions={2}
    %pad = f32[12,9] pad(%p, %z), padding=1_1x-1_0_2
    %pad_neg = f32[1,4] pad(%p, %z), padding=-6_-5x0_0
    %pad_interior = f32[10,4] pad(%p, %z), padding=0_0x0_0_-1
    %rev = f32[10,4] reverse(%p), dimensions={0,1}
    ROOT %rev_bad = f32[10,4] reverse(%p), dimensions={2})");
  EXPECT_EQ(Infer(hlo, "sl"), "f32[5,2]");
  EXPECT_EQ(Infer(hlo, "sl_odd"), "f32[4,4]");
  EXPECT_ERROR(Infer(hlo, "sl_bad"),
               "slice [0:11:1] is out of range for dimension 0 of f32[10,4]");
  EXPECT_ERROR(Infer(hlo, "sl_rank"), "has 1 slice dimensions");
  EXPECT_EQ(Infer(hlo, "cat"), "f32[13,4]");
  EXPECT_ERROR(Infer(hlo, "cat_bad"),
               "operands f32[10,4] and f32[3,5] differ outside dimension 0");
  EXPECT_ERROR(Infer(hlo, "cat_dim"), "out of range for rank 2");
  EXPECT_EQ(Infer(hlo, "pad"), "f32[12,9]");  // 4 - 1 + 3 * 2 = 9.
  EXPECT_ERROR(Infer(hlo, "pad_neg"),
               "makes dimension 0 of f32[10,4] negative");
  EXPECT_ERROR(Infer(hlo, "pad_interior"), "negative interior padding");
  EXPECT_EQ(Infer(hlo, "rev"), "f32[10,4]");
  EXPECT_ERROR(Infer(hlo, "rev_bad"), "out of range for rank 2");
}

// ---- Indexing. ----

TEST(ShapeInferenceIndexing, DynamicSliceAndUpdate) {
  const std::string hlo = Entry(R"(
    %p = f32[8,6] parameter(0)
    %u = f32[2,6] parameter(1)
    %big = f32[9,6] parameter(2)
    %i = s32[] parameter(3)
    %j = s32[] parameter(4)
    %k = s64[] parameter(5)
    %f = f32[] parameter(6)
    %ds = f32[2,3] dynamic-slice(%p, %i, %j), dynamic_slice_sizes={2,3}
    %ds_big = f32[9,3] dynamic-slice(%p, %i, %j), dynamic_slice_sizes={9,3}
    %ds_mixed = f32[2,3] dynamic-slice(%p, %i, %k), dynamic_slice_sizes={2,3}
    %ds_float = f32[2,3] dynamic-slice(%p, %i, %f), dynamic_slice_sizes={2,3}
    %ds_count = f32[2,3] dynamic-slice(%p, %i), dynamic_slice_sizes={2,3}
    %dus = f32[8,6] dynamic-update-slice(%p, %u, %i, %j)
    ROOT %dus_big = f32[8,6] dynamic-update-slice(%p, %big, %i, %j))");
  EXPECT_EQ(Infer(hlo, "ds"), "f32[2,3]");
  EXPECT_ERROR(Infer(hlo, "ds_big"),
               "dynamic_slice_sizes {9,3} do not fit in operand f32[8,6]");
  EXPECT_ERROR(Infer(hlo, "ds_mixed"), "integer scalars of one type");
  EXPECT_ERROR(Infer(hlo, "ds_float"), "integer scalars of one type");
  EXPECT_ERROR(Infer(hlo, "ds_count"),
               "has 1 start indices for an operand of rank 2");
  EXPECT_EQ(Infer(hlo, "dus"), "f32[8,6]");
  EXPECT_ERROR(Infer(hlo, "dus_big"),
               "update f32[9,6] does not fit in operand f32[8,6]");
}

TEST(ShapeInferenceIndexing, Gather) {
  const std::string hlo = Entry(R"(
    %table = f32[100,16] parameter(0)
    %ids = s32[4,7] parameter(1)
    %ids2 = s32[5,2] parameter(2)
    %batched = f32[3,10,16] parameter(3)
    %bids = s32[3,5,1] parameter(4)
    %emb = f32[4,7,16] gather(%table, %ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,16}
    %win = f32[5,2,3] gather(%table, %ids2), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}
    %bat = f32[3,5,16] gather(%batched, %bids), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,16}
    %bad_collapse = f32[4,7,16] gather(%table, %ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={2,16}
    %bad_map = f32[4,7,16] gather(%table, %ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=2, slice_sizes={1,16}
    ROOT %bad_sizes = f32[4,7,16] gather(%table, %ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,17})");
  EXPECT_EQ(Infer(hlo, "emb"), "f32[4,7,16]");
  EXPECT_EQ(Infer(hlo, "win"), "f32[5,2,3]");
  EXPECT_EQ(Infer(hlo, "bat"), "f32[3,5,16]");
  EXPECT_ERROR(Infer(hlo, "bad_collapse"),
               "collapses dimension 0 whose slice size 2 is not 1");
  EXPECT_ERROR(Infer(hlo, "bad_map"),
               "index map {0,1} has 2 entries but index vectors have 1");
  EXPECT_ERROR(Infer(hlo, "bad_sizes"), "do not fit in operand f32[100,16]");
}

TEST(ShapeInferenceIndexing, Scatter) {
  const std::string hlo = WithHelpers(R"(
    %op = f32[100,16] parameter(0)
    %op2 = s32[100,16] parameter(1)
    %idx = s32[4,1] parameter(2)
    %upd = f32[4,16] parameter(3)
    %upd2 = s32[4,16] parameter(4)
    %bad_upd = f32[4,17] parameter(5)
    %sc = f32[100,16] scatter(%op, %idx, %upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add_f32
    %sc2 = (f32[100,16], s32[100,16]) scatter(%op, %op2, %idx, %upd, %upd2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%max_pair
    %sc_reducer = f32[100,16] scatter(%op, %idx, %upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add_s32
    ROOT %sc_big = f32[100,16] scatter(%op, %idx, %bad_upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add_f32)");
  EXPECT_EQ(Infer(hlo, "sc"), "f32[100,16]");
  EXPECT_EQ(Infer(hlo, "sc2"), "(f32[100,16], s32[100,16])");
  EXPECT_ERROR(Infer(hlo, "sc_reducer"),
               "computation %add_s32 has signature (s32[], s32[]) -> s32[], "
               "expected (f32[], f32[]) -> f32[]");
  EXPECT_ERROR(Infer(hlo, "sc_big"), "window dimension 1 is larger than");
}

// ---- Reductions and sort. ----

TEST(ShapeInferenceReduce, Reduce) {
  const std::string hlo = WithHelpers(R"(
    %p = f32[2,3,4] parameter(0)
    %q = s32[2,3,4] parameter(1)
    %z = f32[] parameter(2)
    %zi = s32[] parameter(3)
    %red = f32[3] reduce(%p, %z), dimensions={0,2}, to_apply=%add_f32
    %all = f32[] reduce(%p, %z), dimensions={0,1,2}, to_apply=%add_f32
    %pair = (f32[2], s32[2]) reduce(%p, %q, %z, %zi), dimensions={1,2}, to_apply=%max_pair
    %wrong_fn = f32[3] reduce(%p, %z), dimensions={0,2}, to_apply=%add_s32
    %wrong_dim = f32[3] reduce(%p, %z), dimensions={3}, to_apply=%add_f32
    ROOT %odd = f32[3] reduce(%p, %q, %z), dimensions={0}, to_apply=%add_f32)");
  EXPECT_EQ(Infer(hlo, "red"), "f32[3]");
  EXPECT_EQ(Infer(hlo, "all"), "f32[]");
  EXPECT_EQ(Infer(hlo, "pair"), "(f32[2], s32[2])");
  EXPECT_ERROR(Infer(hlo, "wrong_fn"),
               "%wrong_fn: reduce computation %add_s32 has signature");
  EXPECT_ERROR(Infer(hlo, "wrong_dim"), "out of range for rank 3");
  EXPECT_ERROR(Infer(hlo, "odd"), "needs N inputs and N init values");
}

TEST(ShapeInferenceReduce, ReduceWindowAndSelectAndScatter) {
  const std::string hlo = WithHelpers(R"(
    %p = f32[4,6] parameter(0)
    %q = s32[4,6] parameter(1)
    %z = f32[] parameter(2)
    %zi = s32[] parameter(3)
    %src = f32[2,3] parameter(4)
    %src_bad = f32[2,2] parameter(5)
    %rw = f32[2,3] reduce-window(%p, %z), window={size=2x2 stride=2x2}, to_apply=%add_f32
    %rw_pad = f32[5,6] reduce-window(%p, %z), window={size=2x3 pad=1_1x1_1}, to_apply=%add_f32
    %rw_dil = f32[6,6] reduce-window(%p, %z), window={size=2x1 lhs_dilate=2x1}, to_apply=%add_f32
    %rw_pair = (f32[3,5], s32[3,5]) reduce-window(%p, %q, %z, %zi), window={size=2x2}, to_apply=%max_pair
    %rw_rank = f32[2,3] reduce-window(%p, %z), window={size=2}, to_apply=%add_f32
    %sas = f32[4,6] select-and-scatter(%p, %src, %z), window={size=2x2 stride=2x2}, select=%lt_f32, scatter=%add_f32
    %sas_bad = f32[4,6] select-and-scatter(%p, %src_bad, %z), window={size=2x2 stride=2x2}, select=%lt_f32, scatter=%add_f32
    ROOT %sas_fn = f32[4,6] select-and-scatter(%p, %src, %z), window={size=2x2 stride=2x2}, select=%add_f32, scatter=%add_f32)");
  EXPECT_EQ(Infer(hlo, "rw"), "f32[2,3]");
  EXPECT_EQ(Infer(hlo, "rw_pad"), "f32[5,6]");
  EXPECT_EQ(Infer(hlo, "rw_dil"), "f32[6,6]");  // (4-1)*2+1 = 7, 7-2+1.
  EXPECT_EQ(Infer(hlo, "rw_pair"), "(f32[3,5], s32[3,5])");
  EXPECT_ERROR(Infer(hlo, "rw_rank"), "window has 1 dimension(s), expected 2");
  EXPECT_EQ(Infer(hlo, "sas"), "f32[4,6]");
  EXPECT_ERROR(Infer(hlo, "sas_bad"),
               "source f32[2,2] does not match the windows of operand");
  EXPECT_ERROR(Infer(hlo, "sas_fn"),
               "computation %add_f32 has signature (f32[], f32[]) -> f32[], "
               "expected (f32[], f32[]) -> pred[]");
}

TEST(ShapeInferenceReduce, Sort) {
  const std::string hlo = WithHelpers(R"(
    %k = f32[3,8] parameter(0)
    %v = s32[3,8] parameter(1)
    %w = s32[3,9] parameter(2)
    %s1 = f32[3,8] sort(%k), dimensions={1}, to_apply=%lt_f32
    %s2 = (f32[3,8], s32[3,8]) sort(%k, %v), dimensions={1}, to_apply=%lt_f32_s32
    %s_cmp = (f32[3,8], s32[3,8]) sort(%k, %v), dimensions={1}, to_apply=%lt_f32
    %s_dims = (f32[3,8], s32[3,9]) sort(%k, %w), dimensions={1}, to_apply=%lt_f32_s32
    ROOT %s_axis = f32[3,8] sort(%k), dimensions={2}, to_apply=%lt_f32)");
  EXPECT_EQ(Infer(hlo, "s1"), "f32[3,8]");
  EXPECT_EQ(Infer(hlo, "s2"), "(f32[3,8], s32[3,8])");
  EXPECT_ERROR(Infer(hlo, "s_cmp"),
               "expected (f32[], f32[], s32[], s32[]) -> pred[]");
  EXPECT_ERROR(Infer(hlo, "s_dims"), "operands have different dimensions");
  EXPECT_ERROR(Infer(hlo, "s_axis"), "out of range for rank 2");
}

// ---- Contractions. ----

TEST(ShapeInferenceContraction, Dot) {
  const std::string hlo = Entry(R"(
    %a = f32[2,3] parameter(0)
    %b = f32[3,5] parameter(1)
    %ba = bf16[7,2,3] parameter(2)
    %bb = bf16[7,5,3] parameter(3)
    %mm = f32[2,5] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
    %bmm = f32[7,2,5] dot(%ba, %bb), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
    %outer = f32[2,3,3,5] dot(%a, %b)
    %bad = f32[2,5] dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
    %int_result = s32[2,5] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
    %i8 = s8[2,3] parameter(4)
    %j8 = s8[3,5] parameter(5)
    %widened = s32[2,5] dot(%i8, %j8), lhs_contracting_dims={1}, rhs_contracting_dims={0}
    %i32 = s32[2,3] parameter(6)
    %narrowed = s8[2,5] dot(%i32, %j8), lhs_contracting_dims={1}, rhs_contracting_dims={0}
    ROOT %range = f32[2,5] dot(%a, %b), lhs_contracting_dims={2}, rhs_contracting_dims={0})");
  EXPECT_EQ(Infer(hlo, "mm"), "f32[2,5]");
  EXPECT_EQ(Infer(hlo, "bmm"), "f32[7,2,5]");  // Preferred type f32.
  EXPECT_EQ(Infer(hlo, "outer"), "f32[2,3,3,5]");
  EXPECT_ERROR(Infer(hlo, "bad"),
               "dot contracting dimension sizes differ: f32[2,3] and f32[3,5]");
  EXPECT_ERROR(Infer(hlo, "range"), "out of range for rank 2");
  EXPECT_ERROR(Infer(hlo, "int_result"),
               "result type s32 is not floating-point for operands f32[2,3] "
               "and f32[3,5]");
  EXPECT_EQ(Infer(hlo, "widened"), "s32[2,5]");
  EXPECT_ERROR(Infer(hlo, "narrowed"), "result type s8 is narrower than");
}

TEST(ShapeInferenceContraction, Convolution) {
  const std::string hlo = Entry(R"(
    %img = f32[1,8,8,3] parameter(0)
    %k = f32[3,3,3,16] parameter(1)
    %dw = f32[3,3,1,3] parameter(2)
    %nchw = f32[2,4,10,10] parameter(3)
    %oihw = f32[6,4,5,5] parameter(4)
    %bg_in = f32[4,5,5,2] parameter(5)
    %bg_k = f32[4,3,3,2] parameter(6)
    %same = f32[1,8,8,16] convolution(%img, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
    %strided = f32[1,3,3,16] convolution(%img, %k), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f
    %depthwise = f32[1,6,6,3] convolution(%img, %dw), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=3
    %nchw_out = f32[2,6,3,3] convolution(%nchw, %oihw), window={size=5x5 stride=2x2 rhs_dilate=1x1}, dim_labels=bf01_oi01->bf01
    %batch_grouped = f32[3,3,1,2] convolution(%bg_in, %bg_k), window={size=3x3}, dim_labels=f01b_i01o->01bf, batch_group_count=2
    %win_mismatch = f32[1,8,8,16] convolution(%img, %k), window={size=2x2}, dim_labels=b01f_01io->b01f
    ROOT %features = f32[1,6,6,16] convolution(%img, %dw), window={size=3x3}, dim_labels=b01f_01io->b01f)");
  EXPECT_EQ(Infer(hlo, "same"), "f32[1,8,8,16]");
  EXPECT_EQ(Infer(hlo, "strided"), "f32[1,3,3,16]");
  EXPECT_EQ(Infer(hlo, "depthwise"), "f32[1,6,6,3]");
  EXPECT_EQ(Infer(hlo, "nchw_out"), "f32[2,6,3,3]");
  EXPECT_EQ(Infer(hlo, "batch_grouped"), "f32[3,3,1,2]");
  EXPECT_ERROR(Infer(hlo, "win_mismatch"),
               "window size 2 does not match kernel spatial dimension 3");
  EXPECT_ERROR(Infer(hlo, "features"),
               "input features 3 / feature_group_count 1 must equal kernel "
               "input features 1");
}

// ---- Tuples, calls and control flow. ----

TEST(ShapeInferenceControl, TupleAndGetTupleElement) {
  const std::string hlo = Entry(R"(
    %a = f32[2]{0} parameter(0)
    %b = s32[] parameter(1)
    %t = (f32[2], s32[]) tuple(%a, %b)
    %g = s32[] get-tuple-element(%t), index=1
    %g_bad = s32[] get-tuple-element(%t), index=2
    ROOT %g_array = s32[] get-tuple-element(%a), index=0)");
  EXPECT_EQ(Infer(hlo, "t"), "(f32[2], s32[])");
  EXPECT_EQ(Infer(hlo, "g"), "s32[]");
  EXPECT_ERROR(Infer(hlo, "g_bad"),
               "index 2 is out of range for (f32[2], s32[])");
  EXPECT_ERROR(Infer(hlo, "g_array"), "operand must be a tuple, got f32[2]");
}

TEST(ShapeInferenceControl, FusionCallWhileConditional) {
  const std::string hlo = R"(HloModule m
%fused {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  ROOT %m = f32[4] multiply(%x, %y)
}
%cond {
  %s = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body {
  %s = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %v = f32[4] get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  ROOT %t = (s32[], f32[4]) tuple(%j, %v)
}
%bad_body {
  %s = (s32[], f32[4]) parameter(0)
  ROOT %i = s32[] get-tuple-element(%s), index=0
}
%neg {
  %x = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%x)
}
%other {
  %x = s32[] parameter(0)
  %one = f32[] constant(1)
  ROOT %c = f32[4] broadcast(%one), dimensions={}
}
ENTRY %e {
  %a = f32[4] parameter(0)
  %b = f32[4] parameter(1)
  %p = pred[] parameter(2)
  %k = s32[] parameter(3)
  %c = s32[4] parameter(4)
  %f = f32[4] fusion(%a, %b), kind=kLoop, calls=%fused
  %f_bad = f32[4] fusion(%a, %c), kind=kLoop, calls=%fused
  %call = f32[4] call(%a), to_apply=%neg
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]) tuple(%zero, %a)
  %w = (s32[], f32[4]) while(%init), condition=%cond, body=%body
  %w_bad = (s32[], f32[4]) while(%init), condition=%cond, body=%bad_body
  %w_cond = (s32[], f32[4]) while(%init), condition=%body, body=%body
  %cnd = f32[4] conditional(%p, %a, %b), true_computation=%neg, false_computation=%neg
  %cnd_idx = f32[4] conditional(%k, %a, %k), branch_computations={%neg, %other}
  %cnd_args = f32[4] conditional(%p, %a), true_computation=%neg, false_computation=%neg
  ROOT %cnd_f = f32[4] conditional(%a, %a, %b), true_computation=%neg, false_computation=%neg
}
)";
  EXPECT_EQ(Infer(hlo, "f"), "f32[4]");
  EXPECT_ERROR(Infer(hlo, "f_bad"),
               "fused computation %fused parameter 1 has shape f32[4], given "
               "s32[4]");
  EXPECT_EQ(Infer(hlo, "call"), "f32[4]");
  EXPECT_EQ(Infer(hlo, "w"), "(s32[], f32[4])");
  EXPECT_ERROR(Infer(hlo, "w_bad"),
               "body computation %bad_body returns s32[], expected the loop "
               "state (s32[], f32[4])");
  EXPECT_ERROR(Infer(hlo, "w_cond"),
               "condition computation %body must return pred[]");
  EXPECT_EQ(Infer(hlo, "cnd"), "f32[4]");
  EXPECT_EQ(Infer(hlo, "cnd_idx"), "f32[4]");
  EXPECT_ERROR(Infer(hlo, "cnd_args"), "has 2 branches but 1 branch operands");
  EXPECT_ERROR(Infer(hlo, "cnd_f"), "branch index must be pred[] or s32[]");
}

TEST(ShapeInferenceControl, TokensAndBarriers) {
  const std::string hlo = Entry(R"(
    %a = f32[2] parameter(0)
    %t0 = token[] after-all()
    %t1 = token[] after-all(%t0, %t0)
    %t_arr = token[] after-all(%t0, %a)
    %dep = f32[2] add-dependency(%a, %t1)
    %dep_bad = f32[2] add-dependency(%a, %a)
    %tup = (f32[2], token[]) tuple(%a, %t1)
    ROOT %ob = (f32[2], token[]) opt-barrier(%tup))");
  EXPECT_EQ(Infer(hlo, "t0"), "token[]");
  EXPECT_EQ(Infer(hlo, "t1"), "token[]");
  EXPECT_EQ(Infer(hlo, "t_arr"), "token[]");  // Orders after an array.
  EXPECT_EQ(Infer(hlo, "dep"), "f32[2]");
  EXPECT_ERROR(Infer(hlo, "dep_bad"), "operand 1 must be a token");
  EXPECT_EQ(Infer(hlo, "ob"), "(f32[2], token[])");
}

TEST(ShapeInferenceMisc, CopyStartDynamicReshapeStochasticConvertCholesky) {
  const std::string hlo = Entry(R"(
    %a = f32[4,4] parameter(0)
    %bits = u32[4,4] parameter(1)
    %bits16 = u16[4,4] parameter(2)
    %n = s32[] parameter(3)
    %m = s32[] parameter(4)
    %s = s32[8] parameter(5)
    %cs = (f32[4,4], f32[4,4], u32[]) copy-start(%a)
    %cd = f32[4,4] copy-done(%cs)
    %cd_bad = f32[4,4] copy-done(%a)
    %dr = s32[<=2,<=4] dynamic-reshape(%s, %n, %m)
    %dr_count = s32[<=2,<=4] dynamic-reshape(%s, %n)
    %dr_size = s32[<=3,<=4] dynamic-reshape(%s, %n, %m)
    %sc = bf16[4,4] stochastic-convert(%a, %bits)
    %sc_bits = bf16[4,4] stochastic-convert(%a, %bits16)
    %chol = f32[4,4] cholesky(%a)
    ROOT %chol_bad = f32[8] cholesky(%s))");
  EXPECT_EQ(Infer(hlo, "cs"), "(f32[4,4], f32[4,4], u32[])");
  EXPECT_EQ(Infer(hlo, "cd"), "f32[4,4]");
  EXPECT_ERROR(Infer(hlo, "cd_bad"), "operand must be a copy-start tuple");
  EXPECT_EQ(Infer(hlo, "dr"), "s32[<=2,<=4]");
  EXPECT_ERROR(Infer(hlo, "dr_count"),
               "needs one size operand per result dimension of s32[<=2,<=4], "
               "has 1");
  EXPECT_ERROR(Infer(hlo, "dr_size"), "changes the element count");
  EXPECT_EQ(Infer(hlo, "sc"), "bf16[4,4]");
  EXPECT_ERROR(Infer(hlo, "sc_bits"), "unsigned random bits of its width");
  EXPECT_EQ(Infer(hlo, "chol"), "f32[4,4]");
  EXPECT_ERROR(Infer(hlo, "chol_bad"),
               "expects a floating-point or complex operand, got s32[8]");
}

// All-reduce and all-to-all keep their operands' shapes whatever the mesh.
TEST(ShapeInferenceCollective, AllReduceAndAllToAll) {
  const std::string hlo = WithHelpers(R"(
    %a = f32[4,6] parameter(0)
    %b = s32[3] parameter(1)
    %ar = f32[4,6] all-reduce(%a), replica_groups={}, to_apply=%add_f32
    %ar2 = (f32[4,6], s32[3]) all-reduce(%a, %b), replica_groups={}, to_apply=%add_f32
    %ata = f32[4,6] all-to-all(%a), replica_groups={{0,1}}, dimensions={1}
    %ata_bad = f32[4,6] all-to-all(%a), replica_groups={{0,1}}, dimensions={2}
    %ata2 = (f32[4,6], s32[3]) all-to-all(%a, %b), replica_groups={{0,1}}
    %ata1 = (s32[3]) all-to-all(%b), replica_groups={{0,1}}
    ROOT %t = (f32[4,6]) tuple(%ar))");
  EXPECT_EQ(Infer(hlo, "ar"), "f32[4,6]");
  EXPECT_EQ(Infer(hlo, "ar2"), "(f32[4,6], s32[3])");
  EXPECT_EQ(Infer(hlo, "ata"), "f32[4,6]");
  EXPECT_ERROR(Infer(hlo, "ata_bad"), "dimensions");
  EXPECT_EQ(Infer(hlo, "ata2"), "(f32[4,6], s32[3])");
  EXPECT_EQ(Infer(hlo, "ata1"), "(s32[3])");
}

TEST(ShapeInference, OpsWithoutRuleAreUnimplemented) {
  const std::string hlo = Entry(R"(
    %a = f32[2] parameter(0)
    ROOT %cc = f32[2] custom-call(%a), custom_call_target="foo")");
  auto module = ParseHloModule(hlo);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const HloInstruction* cc = (*module)->entry_computation()->root_instruction();
  StatusOr<Shape> shape = InferShape(*cc);
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.status().code(), StatusCode::kUnimplemented);
  EXPECT_FALSE(HasShapeInferenceRule(HloOpcode::kCustomCall));
  EXPECT_TRUE(HasShapeInferenceRule(HloOpcode::kAllReduce));
  EXPECT_FALSE(HasShapeInferenceRule(HloOpcode::kAllGather));
  EXPECT_TRUE(HasShapeInferenceRule(HloOpcode::kAdd));
  EXPECT_TRUE(HasShapeInferenceRule(HloOpcode::kScatter));
}

// ---- Malformed instructions built through the API never crash. ----

TEST(ShapeInference, MalformedInstructions) {
  auto a =
      HloInstruction::CreateParameter(0, Shape(PrimitiveType::F32, {2}), "a");
  auto add = HloInstruction::Create(
      HloOpcode::kAdd, Shape(PrimitiveType::F32, {2}), {a.get()}, "add");
  EXPECT_EQ(InferShape(*add).status().message(),
            "%add: add expects 2 operand(s), has 1");
  auto constant = HloInstruction::Create(
      HloOpcode::kConstant, Shape(PrimitiveType::F32, {}), {}, "c");
  EXPECT_EQ(InferShape(*constant).status().message(),
            "%c: constant has no value");
  auto reduce =
      HloInstruction::Create(HloOpcode::kReduce, Shape(PrimitiveType::F32, {}),
                             {a.get(), a.get()}, "r");
  EXPECT_NE(InferShape(*reduce).status().message().find(
                "init value 0 must be a scalar"),
            std::string::npos);
  auto gather =
      HloInstruction::Create(HloOpcode::kGather, Shape(PrimitiveType::F32, {}),
                             {a.get(), a.get()}, "g");
  EXPECT_EQ(InferShape(*gather).status().message(),
            "%g: gather has no gather dimension numbers");
  auto conv = HloInstruction::Create(HloOpcode::kConvolution,
                                     Shape(PrimitiveType::F32, {}),
                                     {a.get(), a.get()}, "conv");
  conv->mutable_attrs().conv_dnums = ConvDimNumbers{};
  conv->mutable_attrs().conv_dnums->input_spatial = {5};
  EXPECT_FALSE(InferShape(*conv).ok());
  auto sort = HloInstruction::Create(
      HloOpcode::kSort, Shape(PrimitiveType::F32, {2}), {a.get()}, "s");
  sort->mutable_attrs().dimensions = {0};
  EXPECT_EQ(InferShape(*sort).status().message(),
            "%s: sort expects 1 called computation(s), has 0");
  sort->AddCalledComputation(nullptr);
  EXPECT_EQ(InferShape(*sort).status().message(),
            "%s: sort is missing its comparator computation");
}

}  // namespace
}  // namespace trench
