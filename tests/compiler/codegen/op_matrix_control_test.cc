// The op matrix, computations family: fusion, call, map, while,
// conditional (see op_matrix_test_util.h). Float results compare with the
// comparator's default tolerances (the called computations chain several
// ops); integers and pred exactly.
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

// Two binary ops of t: (x op1 y) op2 x. Numbers: multiply then add; pred:
// and then xor.
std::string Ops(const std::string& t, const std::string& shape,
                const std::string& x, const std::string& y,
                const std::string& out) {
  const bool pred = t == "pred";
  return "  " + out + "_m = " + shape + (pred ? " and(" : " multiply(") + x +
         ", " + y + ")\n  " + out + " = " + shape + (pred ? " xor(" : " add(") +
         out + "_m, " + x + ")\n";
}

// Program 0: a loop fusion of elementwise ops and a broadcast scalar;
// program 1: a fusion whose root is a reduce; program 2: a multi-output
// fusion (tuple root).
std::string Fusion(const Gen& g) {
  const std::string t = g.t;
  const std::string d = Dims(RaggedShape(g.index));
  const std::string s = t + d;
  std::string fused = "fused {\n" + P("x", 0, s) + P("y", 1, s);
  if (g.index == 1) {
    fused += Ops(t, s, "x", "y", "v") + "  z = " + t + "[] constant(" +
             ZeroText(t) + ")\n  ROOT r = " + t + "[130] reduce(v, z), " +
             "dimensions={0}, to_apply=sum\n}\n";
    return Module(BinaryComputation("sum", t, AddOp(t)) + fused,
                  P("a", 0, s) + P("b", 1, s) + "  ROOT f = " + t +
                      "[130] fusion(a, b), kind=kInput, calls=fused\n");
  }
  if (g.index == 2) {
    fused += Ops(t, s, "x", "y", "v") + "  w = " + s + " maximum(v, y)\n" +
             "  ROOT r = (" + s + ", " + s + ") tuple(v, w)\n}\n";
    return Module(fused, P("a", 0, s) + P("b", 1, s) + "  ROOT f = (" + s +
                             ", " + s +
                             ") fusion(a, b), kind=kLoop, calls=fused\n");
  }
  fused += "  c = " + t + "[] parameter(2)\n  cb = " + s +
           " broadcast(c), dimensions={}\n" + Ops(t, s, "x", "y", "v") +
           "  ROOT r = " + s + " maximum(v, cb)\n}\n";
  return Module(fused, P("a", 0, s) + P("b", 1, s) + P("c", 2, t + "[]") +
                           "  ROOT f = " + s +
                           " fusion(a, b, c), kind=kLoop, calls=fused\n");
}

std::string Call(const Gen& g) {
  const std::string s = g.t + Dims(RaggedShape(g.index));
  const std::string callee = "callee {\n" + P("x", 0, s) + P("y", 1, s) +
                             Ops(g.t, s, "x", "y", "v") + "  ROOT r = (" + s +
                             ", " + s + ") tuple(v, x)\n}\n";
  return Module(callee, P("a", 0, s) + P("b", 1, s) + "  c = (" + s + ", " + s +
                            ") call(a, b), to_apply=callee\n" + "  ROOT r = " +
                            s + " get-tuple-element(c), index=0\n");
}

std::string Map(const Gen& g) {
  const std::string s = g.t + Dims(RaggedShape(g.index));
  const std::string sc = g.t + "[]";
  const std::string f = "f {\n" + P("x", 0, sc) + P("y", 1, sc) +
                        Ops(g.t, sc, "x", "y", "v") + "  ROOT r = " + sc +
                        " maximum(v, y)\n}\n";
  return Module(f, P("a", 0, s) + P("b", 1, s) + "  ROOT r = " + s +
                       " map(a, b), dimensions={" +
                       (RaggedShape(g.index).size() == 2 ? "0,1" : "0") +
                       "}, to_apply=f\n");
}

// (counter, x, y): 5 iterations of x = x op y (program 2: the trip count
// is a parameter in [-8, 7], so sometimes zero iterations).
std::string While(const Gen& g) {
  const std::string s = g.t + Dims(RaggedShape(g.index));
  const std::string tt = "(s32[], " + s + ", " + s + ", s32[])";
  const std::string body =
      "body {\n" + P("p", 0, tt) +
      "  i = s32[] get-tuple-element(p), index=0\n  x = " + s +
      " get-tuple-element(p), index=1\n  y = " + s +
      " get-tuple-element(p), index=2\n  n = s32[] get-tuple-element(p), "
      "index=3\n  one = s32[] constant(1)\n  i1 = s32[] add(i, one)\n" +
      "  x1 = " + s + (g.t == "pred" ? " xor(x, y)\n" : " add(x, y)\n") +
      "  ROOT r = " + tt + " tuple(i1, x1, y, n)\n}\n";
  const std::string cond =
      "cond {\n" + P("p", 0, tt) +
      "  i = s32[] get-tuple-element(p), index=0\n"
      "  n = s32[] get-tuple-element(p), index=3\n"
      "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n";
  const std::string n =
      g.index == 2 ? P("n", 2, "s32[]") : "  n = s32[] constant(5)\n";
  return Module(body + cond,
                P("a", 0, s) + P("b", 1, s) + n +
                    "  zero = s32[] constant(0)\n  init = " + tt +
                    " tuple(zero, a, b, n)\n  w = " + tt +
                    " while(init), condition=cond, body=body\n  ROOT r = " + s +
                    " get-tuple-element(w), index=1\n");
}

// Program 0 and 2: pred-selected two branches; program 1: an s32 index
// into three branches (random index in [-8, 7]: out of range selects the
// last branch).
std::string Conditional(const Gen& g) {
  const std::string s = g.t + Dims(RaggedShape(g.index));
  const std::string tt = "(" + s + ", " + s + ")";
  auto branch = [&](const std::string& name, const std::string& op) {
    return name + " {\n" + P("p", 0, tt) + "  x = " + s +
           " get-tuple-element(p), index=0\n  y = " + s +
           " get-tuple-element(p), index=1\n  ROOT r = " + s + " " + op +
           "(x, y)\n}\n";
  };
  const bool pred = g.t == "pred";
  const std::string comps = branch("b0", pred ? "and" : "add") +
                            branch("b1", pred ? "or" : "maximum") +
                            branch("b2", pred ? "xor" : "minimum");
  const std::string ops =
      P("a", 0, s) + P("b", 1, s) + "  t = " + tt + " tuple(a, b)\n";
  if (g.index == 1) {
    return Module(comps, ops + P("k", 2, "s32[]") + "  ROOT r = " + s +
                             " conditional(k, t, t, t), "
                             "branch_computations={b0, b1, b2}\n");
  }
  return Module(comps, ops + P("k", 2, "pred[]") + "  ROOT r = " + s +
                           " conditional(k, t, t), true_computation=b0, "
                           "false_computation=b1\n");
}

Numerics DefaultIfFloat(const std::string& t) {
  return ExactUnlessFloat(t, Numerics::kDefault);
}

std::vector<OpSpec> Specs() {
  return {
      {"fusion", "", 3, Fusion, DefaultIfFloat},
      {"call", "", 3, Call, DefaultIfFloat},
      {"map", "", 3, Map, DefaultIfFloat},
      {"while", "", 3, While, DefaultIfFloat},
      {"conditional", "", 3, Conditional, DefaultIfFloat},
  };
}

class OpMatrixControl : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpMatrixControl, Agrees) { ExpectCaseAgrees(GetParam()); }

INSTANTIATE_TEST_SUITE_P(OpMatrix, OpMatrixControl,
                         ::testing::ValuesIn(MakeCases(Specs())), CaseName);

TEST(OpMatrixCoverage, ComputationOpsTakeEveryDtype) {
  std::map<std::string, int> per_op;
  for (const OpCase& c : MakeCases(Specs())) ++per_op[c.op];
  for (const OpSpec& s : Specs()) EXPECT_EQ(per_op[s.op], 13) << s.op;
}

}  // namespace
}  // namespace trench::codegen::op_matrix
