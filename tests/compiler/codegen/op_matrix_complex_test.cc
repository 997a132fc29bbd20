// The op matrix, complex rows: every op the oracle supports on c64/c128
// (elementwise complex arithmetic, real/imag/complex, compare EQ/NE,
// select, convert, data movement, sort, reduce, map) on the ragged shapes
// [3,5], [9,130], [1029] (see op_matrix_test_util.h). Ops whose complex
// results round several times (multiply, divide, abs, reductions) use the
// comparator's default tolerance (f32's / f64's per part), the rest are
// exact.
#include <string>
#include <vector>

#include "tests/compiler/codegen/op_matrix_test_util.h"

namespace trench::codegen::op_matrix {
namespace {

const std::vector<std::string> kCx = {"c64", "c128"};

std::string PartOf(const std::string& t) { return t == "c64" ? "f32" : "f64"; }

std::string Module(const std::string& body) {
  return "HloModule m\nENTRY e {\n" + body + "}\n";
}

std::string Unary(const std::string& op, bool to_part, const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  return Module("  a = " + g.t + d + " parameter(0)\n  ROOT r = " +
                (to_part ? PartOf(g.t) : g.t) + d + " " + op + "(a)\n");
}

std::string Binary(const std::string& op, const Gen& g) {
  const std::string s = g.t + Dims(RaggedShape(g.index));
  return Module("  a = " + s + " parameter(0)\n  b = " + s +
                " parameter(1)\n  ROOT r = " + s + " " + op + "(a, b)\n");
}

std::string MakeComplex(const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  const std::string p = PartOf(g.t) + d;
  return Module("  a = " + p + " parameter(0)\n  b = " + p +
                " parameter(1)\n  ROOT r = " + g.t + d + " complex(a, b)\n");
}

std::string Compare(const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  return Module("  a = " + g.t + d + " parameter(0)\n  b = " + g.t + d +
                " parameter(1)\n  e = pred" + d +
                " compare(a, b), direction=EQ\n  n = pred" + d +
                " compare(a, a), direction=NE\n  ROOT r = (pred" + d +
                ", pred" + d + ") tuple(e, n)\n");
}

std::string Select(const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  return Module("  p = pred" + d + " parameter(0)\n  a = " + g.t + d +
                " parameter(1)\n  b = " + g.t + d +
                " parameter(2)\n  ROOT r = " + g.t + d + " select(p, a, b)\n");
}

// Program 0: to the other complex type; 1: from f32; 2: from s64.
std::string Convert(const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  const char* from[] = {nullptr, "f32", "s64"};
  const std::string f = g.index == 0 ? (g.t == "c64" ? "c128" : "c64")
                                     : std::string(from[g.index % 3]);
  return Module("  a = " + f + d + " parameter(0)\n  ROOT r = " + g.t + d +
                " convert(a)\n");
}

std::string Movement(const std::string& op, const Gen& g) {
  const std::string t = g.t;
  const int i = g.index;
  const std::string in = t + (i == 0 ? "[3,5]" : i == 1 ? "[9,130]" : "[4,7]");
  std::string body = "  a = " + in + " parameter(0)\n";
  if (op == "broadcast") {
    body += "  ROOT r = " + t +
            (i == 0   ? "[3,2,5]"
             : i == 1 ? "[9,130,2]"
                      : "[3,4,7]") +
            " broadcast(a), dimensions=" +
            (i == 0   ? "{0,2}"
             : i == 1 ? "{0,1}"
                      : "{1,2}") +
            "\n";
  } else if (op == "transpose") {
    body += "  ROOT r = " + t +
            (i == 0   ? "[5,3]"
             : i == 1 ? "[130,9]"
                      : "[7,4]") +
            " transpose(a), dimensions={1,0}\n";
  } else if (op == "reshape") {
    body += "  ROOT r = " + t +
            (i == 0   ? "[15]"
             : i == 1 ? "[130,9]"
                      : "[28]") +
            " reshape(a)\n";
  } else if (op == "slice") {
    body += "  ROOT r = " + t +
            (i == 0   ? "[2,2]"
             : i == 1 ? "[4,60]"
                      : "[4,3]") +
            " slice(a), slice=" +
            (i == 0   ? "{[1:3], [0:5:3]}"
             : i == 1 ? "{[1:9:2], [5:125:2]}"
                      : "{[0:4], [1:7:2]}") +
            "\n";
  } else if (op == "reverse") {
    body += "  ROOT r = " + in + " reverse(a), dimensions={" +
            (i == 1 ? "1" : "0,1") + "}\n";
  } else if (op == "concatenate") {
    body += "  b = " + in + " parameter(1)\n  ROOT r = " + t +
            (i == 0   ? "[3,10]"
             : i == 1 ? "[18,130]"
                      : "[4,14]") +
            " concatenate(a, b), dimensions={" + (i == 1 ? "0" : "1") + "}\n";
  } else if (op == "pad") {
    body += "  v = " + t + "[] parameter(1)\n  ROOT r = " + t +
            (i == 0   ? "[6,10]"
             : i == 1 ? "[10,131]"
                      : "[5,6]") +
            " pad(a, v), padding=" +
            (i == 0   ? "1_2x0_1_1"
             : i == 1 ? "0_1x1_0"
                      : "0_1x-1_0") +
            "\n";
  } else if (op == "copy") {
    body += "  ROOT r = " + in + " copy(a)\n";
  } else if (op == "dynamic-slice") {
    body +=
        "  x = s32[] parameter(1)\n  y = s32[] parameter(2)\n  ROOT r = " + t +
        "[2,3] dynamic-slice(a, x, y), dynamic_slice_sizes={2,3}\n";
  } else if (op == "dynamic-update-slice") {
    body += "  u = " + t +
            "[2,3] parameter(1)\n  x = s32[] parameter(2)\n"
            "  y = s32[] parameter(3)\n  ROOT r = " +
            in + " dynamic-update-slice(a, u, x, y)\n";
  } else if (op == "gather") {
    const std::string cols = i == 0 ? "5" : i == 1 ? "130" : "7";
    body += "  k = s32[6,1] parameter(1)\n  ROOT r = " + t + "[6," + cols +
            "] gather(a, k), offset_dims={1}, collapsed_slice_dims={0}, "
            "start_index_map={0}, index_vector_dim=1, slice_sizes={1," +
            cols + "}\n";
  }
  return Module(body);
}

std::string Scatter(const Gen& g) {
  const std::string t = g.t;
  const std::string cols = g.index == 0 ? "5" : g.index == 1 ? "130" : "7";
  return "HloModule m\n" + BinaryComputation("add", t, "add") +
         "ENTRY e {\n  a = " + t + "[9," + cols +
         "] parameter(0)\n  k = s32[4] parameter(1)\n  u = " + t + "[4," +
         cols + "] parameter(2)\n  ROOT r = " + t + "[9," + cols +
         "] scatter(a, k, u), update_window_dims={1}, "
         "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
         "index_vector_dim=1, to_apply=add\n}\n";
}

// Sort by the real part (program 1: by the imaginary part, descending).
std::string Sort(const Gen& g) {
  const std::string t = g.t, p = PartOf(g.t);
  const std::string part = g.index == 1 ? "imag" : "real";
  const std::string dims = g.index == 0   ? "[3,5]"
                           : g.index == 1 ? "[130]"
                                          : "[9,13]";
  return "HloModule m\nless {\n  a = " + t + "[] parameter(0)\n  b = " + t +
         "[] parameter(1)\n  x = " + p + "[] " + part + "(a)\n  y = " + p +
         "[] " + part + "(b)\n  ROOT r = pred[] compare(x, y), direction=" +
         (g.index == 1 ? "GT" : "LT") + "\n}\nENTRY e {\n  a = " + t + dims +
         " parameter(0)\n  ROOT r = " + t + dims +
         " sort(a), dimensions={0}, "
         "is_stable=true, to_apply=less\n}\n";
}

std::string Reduce(const Gen& g) {
  const std::string t = g.t;
  const std::string op = g.index == 1 ? "multiply" : "add";
  const std::string in = g.index == 0   ? "[3,5]"
                         : g.index == 1 ? "[4,3]"
                                        : "[9,130]";
  const std::string out = g.index == 0 ? "[3]" : g.index == 1 ? "[3]" : "[9]";
  const std::string dim = g.index == 1 ? "0" : "1";
  return "HloModule m\n" + BinaryComputation("f", t, op) +
         "ENTRY e {\n  a = " + t + in + " parameter(0)\n  z = " + t +
         "[] parameter(1)\n  ROOT r = " + t + out +
         " reduce(a, z), dimensions={" + dim + "}, to_apply=f\n}\n";
}

std::string Map(const Gen& g) {
  const std::string s = g.t + Dims(RaggedShape(g.index));
  return "HloModule m\n" + BinaryComputation("f", g.t, "multiply") +
         "ENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
         " parameter(1)\n  ROOT r = " + s + " map(a, b), dimensions={" +
         (g.index == 2   ? "0"
          : g.index == 3 ? "0,1,2"
                         : "0,1") +
         "}, to_apply=f\n}\n";
}

Numerics Near(const std::string&) { return Numerics::kDefault; }

std::vector<OpSpec> Specs() {
  std::vector<OpSpec> specs;
  auto add = [&](const std::string& op, Generator gen, bool near = false) {
    OpSpec s;
    s.op = op;
    s.case_name = op + "_complex";
    s.gen = std::move(gen);
    if (near) s.numerics = Near;
    s.dtypes = kCx;
    specs.push_back(std::move(s));
  };
  for (const char* op : {"add", "subtract"}) {
    add(op, [op](const Gen& g) { return Binary(op, g); });
  }
  for (const char* op : {"multiply", "divide"}) {
    add(
        op, [op](const Gen& g) { return Binary(op, g); }, true);
  }
  add("negate", [](const Gen& g) { return Unary("negate", false, g); });
  add(
      "abs", [](const Gen& g) { return Unary("abs", true, g); }, true);
  add("real", [](const Gen& g) { return Unary("real", true, g); });
  add("imag", [](const Gen& g) { return Unary("imag", true, g); });
  add("complex", MakeComplex);
  add("compare", Compare);
  add("select", Select);
  add("convert", Convert);
  for (const char* op :
       {"broadcast", "transpose", "reshape", "slice", "reverse", "concatenate",
        "pad", "copy", "dynamic-slice", "dynamic-update-slice", "gather"}) {
    add(op, [op](const Gen& g) { return Movement(op, g); });
  }
  add("scatter", Scatter, true);
  add("sort", Sort);
  add("reduce", Reduce, true);
  add("map", Map, true);
  return specs;
}

class OpMatrixComplex : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpMatrixComplex, Agrees) { ExpectCaseAgrees(GetParam()); }

INSTANTIATE_TEST_SUITE_P(OpMatrix, OpMatrixComplex,
                         ::testing::ValuesIn(MakeCases(Specs())), CaseName);

// Every spec yields both complex cases (a generator the verifier rejects
// would silently drop a row).
TEST(OpMatrixComplexRows, EveryOpHasBothTypes) {
  EXPECT_EQ(MakeCases(Specs()).size(), 2 * Specs().size());
}

}  // namespace
}  // namespace trench::codegen::op_matrix
