// The op matrix, data movement family: parameter, constant, iota,
// broadcast, reshape, bitcast, transpose, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, reverse, tuple,
// get-tuple-element (see op_matrix_test_util.h). All exact.
#include <string>
#include <vector>

#include "tests/compiler/codegen/op_matrix_test_util.h"

namespace trench::codegen::op_matrix {
namespace {

// "HloModule m\nENTRY e {\n" + body + "}\n".
std::string Entry(const std::string& body) {
  return "HloModule m\nENTRY e {\n" + body + "}\n";
}

std::string P(const std::string& name, int i, const std::string& shape) {
  return "  " + name + " = " + shape + " parameter(" + std::to_string(i) +
         ")\n";
}

std::string Parameter(const Gen& g) {
  return Entry("  ROOT a = " + g.t + Dims(RaggedShape(g.index)) +
               " parameter(0)\n");
}

// A constant of the ragged shape with values cycling through -8..7.
std::string Constant(const Gen& g) {
  const std::vector<int64_t>& d = RaggedShape(g.index);
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  std::string values;
  for (int64_t i = 0; i < n; ++i) {
    if (d.size() == 2 && i % d[1] == 0)
      values += (i ? "}, {" : "{");
    else if (i)
      values += ", ";
    values += ScalarText(g.t, static_cast<int>(i * 7 % 16) - 8);
  }
  if (d.size() == 2) values += "}";
  return Entry("  ROOT c = " + g.t + Dims(d) + " constant({" + values + "})\n");
}

std::string Iota(const Gen& g) {
  const std::vector<int64_t>& d = RaggedShape(g.index);
  return Entry("  ROOT i = " + g.t + Dims(d) + " iota(), iota_dimension=" +
               std::to_string(d.size() - 1) + "\n");
}

// [5] -> [3,5] along dim 1; [9] -> [9,130] along dim 0; scalar -> [1029].
std::string Broadcast(const Gen& g) {
  const std::vector<int64_t>& d = RaggedShape(g.index);
  const std::string in = g.index == 0 ? "[5]" : g.index == 1 ? "[9]" : "[]";
  const std::string dims = g.index == 0 ? "{1}" : g.index == 1 ? "{0}" : "{}";
  return Entry(P("a", 0, g.t + in) + "  ROOT r = " + g.t + Dims(d) +
               " broadcast(a), dimensions=" + dims + "\n");
}

// [3,5] -> [5,3]; [9,130] -> [3,390]; [1029] -> [3,7,49].
std::string ReshapeLike(const std::string& op, const Gen& g) {
  const char* out[] = {"[5,3]", "[3,390]", "[3,7,49]"};
  return Entry(P("a", 0, g.t + Dims(RaggedShape(g.index))) +
               "  ROOT r = " + g.t + out[g.index] + " " + op + "(a)\n");
}

std::string Transpose(const Gen& g) {
  const char* in[] = {"[3,5]", "[9,130]", "[2,3,129]"};
  const char* out[] = {"[5,3]", "[130,9]", "[129,2,3]"};
  const char* perm[] = {"{1,0}", "{1,0}", "{2,0,1}"};
  return Entry(P("a", 0, g.t + in[g.index]) + "  ROOT r = " + g.t +
               out[g.index] + " transpose(a), dimensions=" + perm[g.index] +
               "\n");
}

std::string Slice(const Gen& g) {
  const char* out[] = {"[2,3]", "[4,19]", "[340]"};
  const char* cfg[] = {"{[1:3], [0:5:2]}", "{[1:8:2], [3:130:7]}",
                       "{[5:1025:3]}"};
  return Entry(P("a", 0, g.t + Dims(RaggedShape(g.index))) + "  ROOT r = " +
               g.t + out[g.index] + " slice(a), slice=" + cfg[g.index] + "\n");
}

// Start indices are random s32 in [-8, 7]: clamping is exercised.
std::string DynamicSlice(const Gen& g) {
  const std::vector<int64_t>& d = RaggedShape(g.index);
  const char* sizes[] = {"{2,3}", "{4,100}", "{1000}"};
  const char* out[] = {"[2,3]", "[4,100]", "[1000]"};
  std::string body = P("a", 0, g.t + Dims(d)), idx;
  for (size_t i = 0; i < d.size(); ++i) {
    const std::string n = "i" + std::to_string(i);
    body += P(n, i + 1, "s32[]");
    idx += ", " + n;
  }
  return Entry(body + "  ROOT r = " + g.t + out[g.index] + " dynamic-slice(a" +
               idx + "), dynamic_slice_sizes=" + sizes[g.index] + "\n");
}

std::string DynamicUpdateSlice(const Gen& g) {
  const std::vector<int64_t>& d = RaggedShape(g.index);
  const char* upd[] = {"[2,3]", "[4,100]", "[1000]"};
  std::string body = P("a", 0, g.t + Dims(d)) + P("u", 1, g.t + upd[g.index]),
              idx;
  for (size_t i = 0; i < d.size(); ++i) {
    const std::string n = "i" + std::to_string(i);
    body += P(n, i + 2, "s32[]");
    idx += ", " + n;
  }
  return Entry(body + "  ROOT r = " + g.t + Dims(d) +
               " dynamic-update-slice(a, u" + idx + ")\n");
}

std::string Concatenate(const Gen& g) {
  const char* a[] = {"[3,5]", "[9,130]", "[1029]"};
  const char* b[] = {"[3,2]", "[4,130]", "[7]"};
  const char* c[] = {"[3,9]", "[1,130]", "[130]"};
  const char* out[] = {"[3,16]", "[14,130]", "[1166]"};
  const char* dim[] = {"1", "0", "0"};
  return Entry(P("a", 0, g.t + a[g.index]) + P("b", 1, g.t + b[g.index]) +
               P("c", 2, g.t + c[g.index]) + "  ROOT r = " + g.t +
               out[g.index] + " concatenate(a, b, c), dimensions={" +
               dim[g.index] + "}\n");
}

// Low, high (negative too) and interior padding.
std::string Pad(const Gen& g) {
  const char* out[] = {"[6,12]", "[26,131]", "[2058]"};
  const char* cfg[] = {"1_2x0_3_1", "-1_2_2x-3_4_0", "2_-1_1"};
  return Entry(P("a", 0, g.t + Dims(RaggedShape(g.index))) +
               P("v", 1, g.t + "[]") + "  ROOT r = " + g.t + out[g.index] +
               " pad(a, v), padding=" + cfg[g.index] + "\n");
}

std::string Reverse(const Gen& g) {
  const char* dims[] = {"{0,1}", "{1}", "{0}"};
  const std::string d = Dims(RaggedShape(g.index));
  return Entry(P("a", 0, g.t + d) + "  ROOT r = " + g.t + d +
               " reverse(a), dimensions=" + dims[g.index] + "\n");
}

std::string Tuple(const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  return Entry(P("a", 0, g.t + d) + P("b", 1, g.t + "[7]") + "  ROOT r = (" +
               g.t + d + ", " + g.t + "[7], " + g.t + d + ") tuple(a, b, a)\n");
}

// A tuple parameter; element 1 is the result.
std::string GetTupleElement(const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  const std::string tt = "(s32[2], " + g.t + d + ")";
  return Entry(P("p", 0, tt) + "  ROOT r = " + g.t + d +
               " get-tuple-element(p), index=1\n");
}

std::vector<OpSpec> Specs() {
  return {
      {"parameter", "", 3, Parameter},
      {"constant", "", 3, Constant},
      {"iota", "", 3, Iota},
      {"broadcast", "", 3, Broadcast},
      {"reshape", "", 3,
       [](const Gen& g) { return ReshapeLike("reshape", g); }},
      {"bitcast", "", 3,
       [](const Gen& g) { return ReshapeLike("bitcast", g); }},
      {"transpose", "", 3, Transpose},
      {"slice", "", 3, Slice},
      {"dynamic-slice", "", 3, DynamicSlice},
      {"dynamic-update-slice", "", 3, DynamicUpdateSlice},
      {"concatenate", "", 3, Concatenate},
      {"pad", "", 3, Pad},
      {"reverse", "", 3, Reverse},
      {"tuple", "", 3, Tuple},
      {"get-tuple-element", "", 3, GetTupleElement},
  };
}

class OpMatrixDataMovement : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpMatrixDataMovement, Agrees) { ExpectCaseAgrees(GetParam()); }

INSTANTIATE_TEST_SUITE_P(OpMatrix, OpMatrixDataMovement,
                         ::testing::ValuesIn(MakeCases(Specs())), CaseName);

// Data movement takes every type (iota: not pred).
TEST(OpMatrixCoverage, DataMovementOpsTakeEveryDtype) {
  std::map<std::string, int> per_op;
  for (const OpCase& c : MakeCases(Specs())) ++per_op[c.op];
  for (const OpSpec& s : Specs()) {
    EXPECT_GE(per_op[s.op], s.op == "iota" ? 12 : 13) << s.op;
  }
}

}  // namespace
}  // namespace trench::codegen::op_matrix
