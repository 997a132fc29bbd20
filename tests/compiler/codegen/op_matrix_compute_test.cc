// The op matrix, compute family: reduce (incl. variadic), reduce-window,
// dot, convolution, gather, scatter, sort, select-and-scatter (see
// op_matrix_test_util.h for the numerics).
#include <string>
#include <vector>

#include "tests/compiler/codegen/op_matrix_test_util.h"

namespace trench::codegen::op_matrix {
namespace {

std::string Module(const std::string& comps, const std::string& body) {
  return "HloModule m\n" + comps + "ENTRY e {\n" + body + "}\n";
}

std::string P(const std::string& name, int i, const std::string& shape) {
  return "  " + name + " = " + shape + " parameter(" + std::to_string(i) +
         ")\n";
}

std::string Init(const Gen& g) {
  return "  z = " + g.ct() + "[] constant(" + ZeroText(g.ct()) + ")\n";
}

// Sum over the last dim, over dim 0, over all dims.
std::string Reduce(const Gen& g) {
  const char* out[] = {"[3]", "[130]", "[]"};
  const char* dims[] = {"{1}", "{0}", "{0}"};
  return Module(BinaryComputation("sum", g.ct(), AddOp(g.ct())),
                ParamLines("a", 0, g, RaggedShape(g.index)) + Init(g) +
                    "  ROOT r = " + g.ct() + out[g.index] +
                    " reduce(a, z), dimensions=" + dims[g.index] +
                    ", to_apply=sum\n");
}

// Argmax with ties to the lower index: (value, index) pairs.
std::string ReduceVariadic(const Gen& g) {
  const std::string t = g.t;
  const std::string comp =
      "argmax {\n  a = " + t +
      "[] parameter(0)\n  ai = s32[] parameter(1)\n"
      "  b = " +
      t +
      "[] parameter(2)\n  bi = s32[] parameter(3)\n"
      "  gt = pred[] compare(a, b), direction=GT\n"
      "  eq = pred[] compare(a, b), direction=EQ\n"
      "  lt = pred[] compare(ai, bi), direction=LT\n"
      "  tie = pred[] and(eq, lt)\n  pick = pred[] or(gt, tie)\n"
      "  v = " +
      t +
      "[] select(pick, a, b)\n"
      "  i = s32[] select(pick, ai, bi)\n"
      "  ROOT r = (" +
      t + "[], s32[]) tuple(v, i)\n}\n";
  const std::vector<int64_t>& d = RaggedShape(g.index);
  const char* out[] = {"[3]", "[130]", "[]"};
  const char* dims[] = {"{1}", "{0}", "{0}"};
  const int iota_dim = g.index == 0 ? 1 : 0;
  return Module(comp,
                P("a", 0, t + Dims(d)) + "  ix = s32" + Dims(d) +
                    " iota(), iota_dimension=" + std::to_string(iota_dim) +
                    "\n  lo = " + t + "[] constant(" + LowestText(t) +
                    ")\n  big = s32[] constant(2147483647)\n  ROOT r = (" + t +
                    out[g.index] + ", s32" + out[g.index] +
                    ") reduce(a, ix, lo, big), dimensions=" + dims[g.index] +
                    ", to_apply=argmax\n");
}

std::string ReduceWindow(const Gen& g) {
  const char* out[] = {"[2,4]", "[5,43]", "[342]"};
  const char* win[] = {"size=2x2", "size=3x4 stride=2x3 pad=1_1x0_2",
                       "size=5 stride=3 pad=0_1"};
  return Module(BinaryComputation("sum", g.ct(), AddOp(g.ct())),
                ParamLines("a", 0, g, RaggedShape(g.index)) + Init(g) +
                    "  ROOT r = " + g.ct() + out[g.index] +
                    " reduce-window(a, z), window={" + win[g.index] +
                    "}, to_apply=sum\n");
}

// [3,5]x[5,7], [9,130]x[130,129], batched [2,7,33]x[2,33,9].
std::string Dot(const Gen& g) {
  const std::vector<std::vector<int64_t>> lhs = {{3, 5}, {9, 130}, {2, 7, 33}};
  const std::vector<std::vector<int64_t>> rhs = {
      {5, 7}, {130, 129}, {2, 33, 9}};
  const char* out[] = {"[3,7]", "[9,129]", "[2,7,9]"};
  const char* dims[] = {
      "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
      "rhs_contracting_dims={1}"};
  return Module("", ParamLines("a", 0, g, lhs[g.index]) +
                        ParamLines("b", 1, g, rhs[g.index]) +
                        "  ROOT r = " + g.ct() + out[g.index] + " dot(a, b), " +
                        dims[g.index] + "\n");
}

// 2-D NHWC with a 3x3 kernel; 1-D strided and padded.
std::string Convolution(const Gen& g) {
  const std::vector<std::vector<int64_t>> in = {{1, 9, 10, 3}, {2, 130, 3}};
  const std::vector<std::vector<int64_t>> k = {{3, 3, 3, 4}, {5, 3, 2}};
  const char* out[] = {"[1,7,8,4]", "[2,65,2]"};
  const char* rest[] = {"window={size=3x3}, dim_labels=b01f_01io->b01f",
                        "window={size=5 stride=2 pad=2_2}, "
                        "dim_labels=b0f_0io->b0f"};
  return Module("", ParamLines("a", 0, g, in[g.index]) +
                        ParamLines("w", 1, g, k[g.index]) +
                        "  ROOT r = " + g.ct() + out[g.index] +
                        " convolution(a, w), " + rest[g.index] + "\n");
}

// Random s32 indices in [-8, 7]: start indices are clamped.
std::string Gather(const Gen& g) {
  if (g.index == 0) {
    return Module("", P("a", 0, g.t + "[9,130]") + P("i", 1, "s32[5,2]") +
                          "  ROOT r = " + g.t +
                          "[5,7] gather(a, i), offset_dims={1}, "
                          "collapsed_slice_dims={0}, start_index_map={0,1}, "
                          "index_vector_dim=1, slice_sizes={1,7}\n");
  }
  return Module("", P("a", 0, g.t + "[1029]") + P("i", 1, "s32[6,1]") +
                        "  ROOT r = " + g.t +
                        "[6,10] gather(a, i), offset_dims={1}, "
                        "collapsed_slice_dims={}, start_index_map={0}, "
                        "index_vector_dim=1, slice_sizes={10}\n");
}

// Scatter-add; negative (out of bounds) indices are skipped. Magnitude
// variant: |operand| + sum of |updates| (indices unchanged).
std::string Scatter(const Gen& g) {
  const std::string comp = BinaryComputation("comb", g.ct(), AddOp(g.ct()));
  const std::vector<int64_t> a =
      g.index == 0 ? std::vector<int64_t>{9, 130} : std::vector<int64_t>{1029};
  const std::vector<int64_t> u =
      g.index == 0 ? std::vector<int64_t>{4, 7} : std::vector<int64_t>{6, 10};
  const std::string body = ParamLines("a", 0, g, a) +
                           P("i", 1, g.index == 0 ? "s32[4,2]" : "s32[6,1]") +
                           ParamLines("u", 2, g, u) + "  ROOT r = " + g.ct() +
                           Dims(a) +
                           " scatter(a, i, u), update_window_dims={1}, ";
  if (g.index == 0) {
    return Module(comp, body +
                            "inserted_window_dims={0}, "
                            "scatter_dims_to_operand_dims={0,1}, "
                            "index_vector_dim=1, to_apply=comb\n");
  }
  return Module(comp, body +
                          "inserted_window_dims={}, "
                          "scatter_dims_to_operand_dims={0}, "
                          "index_vector_dim=1, to_apply=comb\n");
}

// Program 0 sorts keys; program 1 sorts (key, iota) pairs stably; program
// 2 sorts [1029] descending.
std::string Sort(const Gen& g) {
  const std::string t = g.t;
  auto cmp = [&](const std::string& name, int operands,
                 const std::string& dir) {
    std::string s = name + " {\n";
    for (int i = 0; i < 2 * operands; ++i) {
      s += "  p" + std::to_string(i) + " = " + (i < 2 ? t : "s32") +
           "[] parameter(" + std::to_string(i) + ")\n";
    }
    return s + "  ROOT c = pred[] compare(p0, p1), direction=" + dir + "\n}\n";
  };
  const std::string d = Dims(RaggedShape(g.index));
  if (g.index == 1) {
    return Module(cmp("less", 2, "LT"),
                  P("a", 0, t + d) + "  ix = s32" + d +
                      " iota(), iota_dimension=1\n  ROOT r = (" + t + d +
                      ", s32" + d +
                      ") sort(a, ix), dimensions={1}, is_stable=true, "
                      "to_apply=less\n");
  }
  const std::string dir = g.index == 0 ? "LT" : "GT";
  return Module(cmp("cmp", 1, dir),
                P("a", 0, t + d) + "  ROOT r = " + t + d +
                    " sort(a), dimensions={" +
                    std::to_string(RaggedShape(g.index).size() - 1) +
                    "}, to_apply=cmp\n");
}

// Magnitude variant: the operand converted exactly (same selections),
// sources |x|.
std::string SelectAndScatter(const Gen& g) {
  const std::string t = g.ct();
  const std::string ge = "ge {\n  x = " + t + "[] parameter(0)\n  y = " + t +
                         "[] parameter(1)\n  ROOT r = pred[] compare(x, y), "
                         "direction=GE\n}\n";
  const std::vector<std::vector<int64_t>> src = {{2, 4}, {4, 64}, {257}};
  const char* win[] = {"size=2x2", "size=3x3 stride=2x2", "size=4 stride=4"};
  const std::vector<int64_t>& d = RaggedShape(g.index);
  return Module(ge + BinaryComputation("comb", t, AddOp(t)),
                ParamLines("a", 0, g, d, /*abs=*/false) +
                    ParamLines("s", 1, g, src[g.index]) + "  z = " + t +
                    "[] constant(" + ZeroText(t) + ")\n  ROOT r = " + t +
                    Dims(d) + " select-and-scatter(a, s, z), window={" +
                    win[g.index] + "}, select=ge, scatter=comb\n");
}

Numerics Contraction(const std::string& t) {
  return ExactUnlessFloat(t, Numerics::kContraction);
}

std::vector<OpSpec> Specs() {
  return {
      {"reduce", "", 3, Reduce, Contraction, 0, {5, 9, 1029}},
      {"reduce", "reduce_variadic", 3, ReduceVariadic},
      {"reduce-window", "", 3, ReduceWindow, Contraction, 0, {4, 12, 5}},
      {"dot", "", 3, Dot, Contraction, 0, {5, 130, 33}, true},
      {"convolution", "", 2, Convolution, Contraction, 0, {27, 15}, true},
      {"gather", "", 2, Gather},
      {"scatter", "", 2, Scatter, Contraction, 0, {5, 7}, false, true},
      {"sort", "", 3, Sort},
      {"select-and-scatter",
       "",
       3,
       SelectAndScatter,
       Contraction,
       0,
       {5, 5, 2},
       false,
       true},
  };
}

class OpMatrixCompute : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpMatrixCompute, Agrees) { ExpectCaseAgrees(GetParam()); }

INSTANTIATE_TEST_SUITE_P(OpMatrix, OpMatrixCompute,
                         ::testing::ValuesIn(MakeCases(Specs())), CaseName);

TEST(OpMatrixCoverage, ComputeOpsTakeTheirDtypes) {
  std::map<std::string, int> per_name;
  for (const OpCase& c : MakeCases(Specs())) {
    ++per_name[c.name.substr(0, c.name.rfind('_'))];
  }
  for (std::string op : {"reduce", "reduce_variadic", "reduce_window", "gather",
                         "scatter", "sort", "select_and_scatter"}) {
    EXPECT_GE(per_name[op], 12) << op;
  }
  for (std::string op : {"dot", "convolution"}) {
    EXPECT_GE(per_name[op], 11) << op;  // Numbers (pred is optional).
  }
}

}  // namespace
}  // namespace trench::codegen::op_matrix
