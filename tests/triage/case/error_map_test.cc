// Error maps (triage/case/error_map.h): the grid, its JSON, and what a
// reader refuses.
#include "triage/case/error_map.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trench::hlo_diff {
namespace {

TEST(ErrorMapTest, CellsHoldTheWorstRatio) {
  // 2 x 2 elements in one cell each; allowed inf: not counted.
  ErrorMap g =
      ErrorGrid({1, 2, 3, 4}, {1, 2.5, 3, 4}, {1, 0.25, INFINITY, 1}, 2, 2);
  EXPECT_EQ(g.ToJson().Find("cells")->Dump(), "[[0.0,2.0],[null,0.0]]");
  // 200 columns fold into 64 cells; the worst element of a cell wins.
  std::vector<double> a(200, 0), n(200, 0), allowed(200, 1);
  a[199] = 5;
  ErrorMap wide = ErrorGrid(a, n, allowed, 1, 200);
  EXPECT_EQ(wide.cols, kMaxErrorMapSide);
  EXPECT_EQ(wide.cells[63], 5.0);
  EXPECT_EQ(wide.cells[0], 0.0);
}

TEST(ErrorMapTest, NonFiniteAndZeroAllowanceAreHuge) {
  ErrorMap g = ErrorGrid({NAN, 1, INFINITY, 1, NAN}, {1, NAN, 1, 1.5, NAN},
                         {1, 1, 1, 0, 1}, 1, 5);
  EXPECT_EQ(g.cells[0], kErrorMapHuge);
  EXPECT_EQ(g.cells[1], kErrorMapHuge);
  EXPECT_EQ(g.cells[2], kErrorMapHuge);
  EXPECT_EQ(g.cells[3], kErrorMapHuge);
  EXPECT_EQ(g.cells[4], 0.0);  // NaN where NaN was expected.
}

TEST(ErrorMapTest, OfLiteralsNeedsTheSameArrayDims) {
  Literal a(Shape(PrimitiveType::F32, {3, 2}));
  Literal n(Shape(PrimitiveType::F32, {3, 2}));
  Literal allowed(Shape(PrimitiveType::F32, {3, 2}));
  for (int i = 0; i < 6; ++i) allowed.SetFromDouble(i, 0.5);
  a.SetFromDouble(5, 2);
  std::optional<ErrorMap> m = ErrorMapOf(4, a, n, allowed);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->output, 4);
  EXPECT_EQ(m->rows, 3);
  EXPECT_EQ(m->cols, 2);
  EXPECT_EQ(m->cells[5], 4.0);
  Literal other(Shape(PrimitiveType::F32, {2, 3}));
  EXPECT_FALSE(ErrorMapOf(0, other, n, allowed).has_value());
  Literal scalar(Shape(PrimitiveType::F32, {}));
  std::optional<ErrorMap> s = ErrorMapOf(0, scalar, scalar, scalar);
  ASSERT_TRUE(s.has_value());  // A scalar is one cell.
  EXPECT_EQ(s->rows, 1);
  EXPECT_EQ(s->cols, 1);
}

TEST(ErrorMapTest, JsonRoundTrips) {
  ErrorMap g =
      ErrorGrid({1, 2, 3, 4}, {1, 2.5, 3, 4}, {1, 0.25, INFINITY, 1}, 2, 2);
  g.output = 2;
  g.shape = {2, 2};
  StatusOr<ErrorMap> back = ErrorMap::FromJson(g.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), g.ToJson());
}

TEST(ErrorMapTest, MalformedJsonIsRefusedNamingTheMember) {
  auto refused = [](const std::string& text) {
    StatusOr<Json> j = ParseJson(text);
    EXPECT_TRUE(j.ok()) << text;
    StatusOr<ErrorMap> m = ErrorMap::FromJson(*j);
    EXPECT_FALSE(m.ok()) << text;
    return m.ok() ? std::string() : m.status().message();
  };
  const std::string ok_head = R"({"output":0,"shape":[1,2],)";
  EXPECT_EQ(refused("[]"), "error_map: expected an object");
  EXPECT_NE(refused(R"({"shape":[],"rows":0,"cols":0,"cells":[]})")
                .find("error_map.output: missing"),
            std::string::npos);
  EXPECT_NE(refused(ok_head + R"("rows":65,"cols":1,"cells":[]})")
                .find("error_map.rows: expected an integer in [0, 64]"),
            std::string::npos);
  EXPECT_NE(refused(ok_head + R"("rows":1,"cols":2,"cells":[[1]]})")
                .find("error_map.cells: expected rows of 2 cells"),
            std::string::npos);
  EXPECT_NE(refused(ok_head + R"("rows":1,"cols":2,"cells":[[1,-1]]})")
                .find("error_map.cells: expected null or a number"),
            std::string::npos);
  EXPECT_NE(refused(ok_head + R"("rows":1,"cols":2,"cells":[[1,"x"]]})")
                .find("error_map.cells"),
            std::string::npos);
  EXPECT_NE(refused(R"({"output":0,"shape":[-1],"rows":0,"cols":0,"cells":[]})")
                .find("error_map.shape"),
            std::string::npos);
}

}  // namespace
}  // namespace trench::hlo_diff
