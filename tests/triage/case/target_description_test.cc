// The target's description of itself (triage/case/target_description.h):
// what it reads from a manifest or hloc --capabilities, how files map to
// passes and ops, and the messages for malformed documents.
#include "triage/case/target_description.h"

#include <gtest/gtest.h>

namespace trench::hlo_diff {
namespace {

constexpr char kManifest[] = R"({
  "passes": [{"name": "cse", "sources": ["compiler/passes/cse.*"]},
             {"name": "fusion", "sources": ["compiler/passes/fusion/**"]}],
  "emitters": [{"name": "EmitReduce", "ops": ["reduce", "reduce-window"],
                "sources": ["compiler/codegen/emit_reduce.cc",
                            "compiler/codegen/stream_reduce?.cc"]}],
  "ops": ["add", "reduce"],
  "a_later_key": {"is": "ignored"}
})";

TEST(TargetDescriptionTest, FilesMapToPassesAndOps) {
  StatusOr<TargetDescription> d =
      ParseTargetDescriptionText(kManifest, "trench-target.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->described());
  EXPECT_EQ(d->AllOps(),
            (std::vector<std::string>{"add", "reduce", "reduce-window"}));
  std::vector<std::string> passes, ops;
  for (const char* path :
       {"compiler/passes/cse.cc", "compiler/passes/cse.h",
        "compiler/passes/cse_util.cc", "compiler/passes/fusion/order.cc",
        "compiler/passes/fusion.cc", "compiler/codegen/stream_reduce2.cc",
        "compiler/codegen/emit_reduce.cc", "README.md"}) {
    d->NamesOfPath(path, &passes, &ops);
  }
  EXPECT_EQ(passes, (std::vector<std::string>{"cse", "fusion"}));
  EXPECT_EQ(ops, (std::vector<std::string>{"reduce", "reduce-window"}));
  // The stored form reads back the same.
  StatusOr<TargetDescription> again =
      ParseTargetDescription(d->ToJson(), "stored");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->ToJson(), d->ToJson());
}

// A culprit's files: a pass's globs; "codegen" (the back end): every
// emitter's, each once.
TEST(TargetDescriptionTest, SourcesOfACulprit) {
  StatusOr<TargetDescription> d =
      ParseTargetDescriptionText(kManifest, "trench-target.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->SourcesOf("cse"),
            std::vector<std::string>{"compiler/passes/cse.*"});
  EXPECT_EQ(d->SourcesOf("codegen"),
            (std::vector<std::string>{"compiler/codegen/emit_reduce.cc",
                                      "compiler/codegen/stream_reduce?.cc"}));
  EXPECT_TRUE(d->SourcesOf("dce").empty());
  EXPECT_TRUE(d->SourcesOf("").empty());
}

TEST(TargetDescriptionTest, GlobsStayWithinAPathComponent) {
  EXPECT_TRUE(SourceGlobMatches("src/*.cc", "src/a.cc"));
  EXPECT_FALSE(SourceGlobMatches("src/*.cc", "src/x/a.cc"));
  EXPECT_TRUE(SourceGlobMatches("src/**", "src/x/a.cc"));
  EXPECT_FALSE(SourceGlobMatches("src/**", "src"));
  EXPECT_FALSE(SourceGlobMatches("src/**", "srcs/a.cc"));
  EXPECT_TRUE(SourceGlobMatches("*/emit_[ab].cc", "x/emit_b.cc"));
}

// Capabilities of a target that names no files (an older hloc): not an
// error, and not a description; its ops are still known.
TEST(TargetDescriptionTest, CapabilitiesWithoutSourcesDescribeNothing) {
  StatusOr<TargetDescription> d = ParseTargetDescriptionText(
      R"({"tool": "hloc", "ops": ["dot"],
          "passes": [{"name": "cse", "description": "x"}]})",
      "hloc --capabilities");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(d->described());
  EXPECT_EQ(d->AllOps(), std::vector<std::string>{"dot"});
  EXPECT_FALSE(ParseTargetDescriptionText("{}", "m")->described());
}

TEST(TargetDescriptionTest, TheCoverageFlavourAndItsFlags) {
  StatusOr<TargetDescription> d = ParseTargetDescriptionText(
      R"({"passes": [{"name": "cse", "sources": ["c/cse.cc"]}],
          "coverage": {"kind": "sancov", "instrumented": false,
                       "cmake_flags": ["-DTRENCH_TARGET_COVERAGE=ON",
                                       "-DCMAKE_CXX_COMPILER=clang++"]}})",
      "hloc --capabilities");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->offers_coverage);
  EXPECT_EQ(d->coverage_cmake_flags,
            (std::vector<std::string>{"-DTRENCH_TARGET_COVERAGE=ON",
                                      "-DCMAKE_CXX_COMPILER=clang++"}));
  // Kept through the stored form.
  StatusOr<TargetDescription> back =
      ParseTargetDescription(d->ToJson(), "stored");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->offers_coverage);
  EXPECT_EQ(back->coverage_cmake_flags, d->coverage_cmake_flags);
  // Offered without flags (a target built by its own command), and not.
  EXPECT_TRUE(
      ParseTargetDescriptionText(R"({"coverage": {}})", "m")->offers_coverage);
  EXPECT_FALSE(ParseTargetDescriptionText("{}", "m")->offers_coverage);
  EXPECT_EQ(ParseTargetDescriptionText("{}", "m")->ToJson().Find("coverage"),
            nullptr);
}

TEST(TargetDescriptionTest, LargeArraySourcesAndTheirSize) {
  StatusOr<TargetDescription> d = ParseTargetDescriptionText(
      R"({"emitters": [{"name": "EmitSort", "ops": ["sort"],
                        "sources": ["cg/emit_sort.cc", "cg/stream_sort.*"]}],
          "large_arrays": [{"from_elements": 65536,
                            "sources": ["cg/streaming.*", "cg/big.cc"]},
                           {"from_elements": 100000,
                            "frontend_attributes": {"vmem": "65536"},
                            "sources": ["cg/stream_*", "cg/big.cc"]}]})",
      "hloc --capabilities");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  auto elements = [&](const char* path) {
    return d->LargeArraysOfPath(path).from_elements;
  };
  EXPECT_EQ(elements("cg/stream_sort.cc"), 100000);
  EXPECT_EQ(d->LargeArraysOfPath("cg/stream_sort.cc").frontend_attributes,
            (FrontendAttributes{{"vmem", "65536"}}));
  EXPECT_EQ(elements("cg/streaming.h"), 65536);
  EXPECT_TRUE(
      d->LargeArraysOfPath("cg/streaming.h").frontend_attributes.empty());
  // In two groups: the one of the larger size.
  EXPECT_EQ(elements("cg/big.cc"), 100000);
  EXPECT_EQ(elements("cg/emit_sort.cc"), 0);
  EXPECT_EQ(elements("cg/sub/stream_x.cc"), 0);
  StatusOr<TargetDescription> back =
      ParseTargetDescription(d->ToJson(), "stored");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->large_arrays.size(), 2u);
  EXPECT_EQ(back->large_arrays[1].from_elements, 100000);
  EXPECT_EQ(back->large_arrays[1].sources, d->large_arrays[1].sources);
  EXPECT_EQ(back->large_arrays[1].frontend_attributes,
            d->large_arrays[1].frontend_attributes);
  // Absent: nothing is large, and the stored form says nothing.
  StatusOr<TargetDescription> none = ParseTargetDescriptionText("{}", "m");
  EXPECT_EQ(none->LargeArraysOfPath("cg/stream_sort.cc").from_elements, 0);
  EXPECT_EQ(none->ToJson().Find("large_arrays"), nullptr);
  EXPECT_TRUE(IsFrontendAttribute("trench_vmem_bytes", "65536"));
  EXPECT_TRUE(IsFrontendAttribute("a.b-c", ""));
  EXPECT_FALSE(IsFrontendAttribute("", "1"));
  EXPECT_FALSE(IsFrontendAttribute("a", "x\""));
  EXPECT_FALSE(IsFrontendAttribute("a b", "1"));
  EXPECT_FALSE(IsFrontendAttribute("a", std::string(65, '1')));
  EXPECT_EQ(ParseFrontendAttribute("trench_vmem_bytes=65536")->second, "65536");
  EXPECT_FALSE(ParseFrontendAttribute("a=\"}").ok());
  EXPECT_FALSE(ParseFrontendAttribute("novalue").ok());
}

// The targets of older commits print one group as an object (a replayed
// history builds them): it is read as one group; other types are not.
TEST(TargetDescriptionTest, LargeArraysAsOneObjectIsOneGroup) {
  StatusOr<TargetDescription> d = ParseTargetDescriptionText(
      R"({"large_arrays": {"from_elements": 65536,
                           "sources": ["compiler/codegen/stream_*"]}})",
      "m");
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->large_arrays.size(), 1u);
  EXPECT_EQ(
      d->LargeArraysOfPath("compiler/codegen/stream_sort.cc").from_elements,
      65536);
  StatusOr<TargetDescription> bad = ParseTargetDescriptionText(
      R"({"large_arrays": {"from_elements": 0, "sources": ["a.cc"]}})", "m");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("m: large_arrays.from_elements"),
            std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(ParseTargetDescriptionText(R"({"large_arrays": 3})", "m").ok());
}

// A stranger's hloc may describe itself with too much: more groups or
// attributes than a description may hold are refused, not loaded.
TEST(TargetDescriptionTest, OversizedLargeArraysAreRefused) {
  std::string groups = "[";
  for (size_t i = 0; i <= kMaxLargeGroups; ++i) {
    groups += std::string(i ? "," : "") +
              R"({"from_elements": 9, "sources": ["a.cc"]})";
  }
  StatusOr<TargetDescription> many =
      ParseTargetDescriptionText(R"({"large_arrays": )" + groups + "]}", "m");
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("m: large_arrays: more than"),
            std::string::npos)
      << many.status().message();
  std::string attrs = "{";
  for (size_t i = 0; i <= kMaxFrontendAttributes; ++i) {
    attrs +=
        std::string(i ? "," : "") + "\"a" + std::to_string(i) + "\": \"1\"";
  }
  StatusOr<TargetDescription> wide = ParseTargetDescriptionText(
      R"({"large_arrays": [{"from_elements": 9, "sources": ["a.cc"],
                            "frontend_attributes": )" +
          attrs + "}}]}",
      "m");
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.status().message().find(
                "m: large_arrays[0].frontend_attributes: more than"),
            std::string::npos)
      << wide.status().message();
}

TEST(TargetDescriptionTest, MalformedDocumentsAreRejectedWithWhereAndWhat) {
  const std::pair<const char*, const char*> cases[] = {
      {"[1, 2]", "m: the document: expected an object"},
      {R"({"passes": {}})", "m: passes: expected an array of objects"},
      {R"({"passes": [7]})", "m: passes[0]: expected an object"},
      {R"({"passes": [{"sources": ["a"]}]})",
       "m: passes[0].name: expected a non-empty string"},
      {R"({"passes": [{"name": "a", "sources": "a.cc"}]})",
       "m: passes[0].sources: expected an array of source globs"},
      {R"({"passes": [{"name": "a", "sources": ["a.cc", 3]}]})",
       "m: passes[0].sources[1]: expected a non-empty string"},
      {R"({"passes": [{"name": "a", "sources": ["/src/a.cc"]}]})",
       "m: passes[0].sources[0]: '/src/a.cc' is absolute"},
      {R"({"passes": [{"name": "a", "sources": ["src/../../a.cc"]}]})",
       "m: passes[0].sources[0]: 'src/../../a.cc' leaves the repository"},
      {R"({"passes": [{"name": "a", "sources": ["a.cc"]},
                      {"name": "a", "sources": ["b.cc"]}]})",
       "m: passes[1].name: pass 'a' is listed twice"},
      {R"({"passes": [{"name": "a", "sources": ["a.cc"]}, {"name": "b"}]})",
       "m: passes[1].sources: 'b' has no source globs"},
      {R"({"emitters": [{"name": "E", "sources": ["e.cc"]}]})",
       "m: emitters[0].ops: an emitter names the ops it compiles"},
      {R"({"emitters": [{"name": "E", "ops": ["add"]}]})",
       "m: emitters[0].sources: 'E' has no source globs"},
      {R"({"ops": "add"})", "m: ops: expected an array of op names"},
      // Names go into flags and onto terminals: no separators, no escapes.
      {R"({"passes": [{"name": "cse,dce", "sources": ["a.cc"]}]})",
       "m: passes[0].name: \"cse,dce\" is not a pass name"},
      {R"({"passes": [{"name": "cse\u001b[2J", "sources": ["a.cc"]}]})",
       "m: passes[0].name: \"cse\\u001b[2J\" is not a pass name"},
      {R"({"emitters": [{"name": "E\u0007", "ops": ["add"],
                         "sources": ["e.cc"]}]})",
       "m: emitters[0].name: \"E\\u0007\" is not a name to show"},
      {R"({"emitters": [{"name": "E", "ops": ["add -x"],
                         "sources": ["e.cc"]}]})",
       "m: emitters[0].ops[0]: \"add -x\" is not an op name"},
      {R"({"passes": [{"name": "a", "sources": ["a\n.cc"]}]})",
       "m: passes[0].sources[0]: \"a\\n.cc\" is not a source glob"},
      {R"({"ops": ["add\u0085"]})", "m: ops[0]: \"add"},
      {R"({"coverage": "yes"})", "m: coverage: expected an object"},
      {R"({"coverage": {"cmake_flags": "-DX=ON"}})",
       "m: coverage.cmake_flags: expected an array of strings"},
      // The flags go into the daemon's build command: nothing a shell reads.
      {R"j({"coverage": {"cmake_flags": ["-DX=ON", "-DY=$(id)"]}})j",
       "m: coverage.cmake_flags[1]: \"-DY=$(id)\" is not -DNAME=VALUE"},
      {R"({"coverage": {"cmake_flags": ["-DX=a b"]}})",
       "m: coverage.cmake_flags[0]: \"-DX=a b\" is not -DNAME=VALUE"},
      {R"({"coverage": {"cmake_flags": [1]}})",
       "m: coverage.cmake_flags[0]: it is not -DNAME=VALUE"},
      {R"({"large_arrays": {}})",
       "m: large_arrays.from_elements: expected an integer from 1 to"},
      {R"({"large_arrays": "x"})",
       "m: large_arrays: expected an array of objects"},
      {R"({"large_arrays": [3]})", "m: large_arrays[0]: expected an object"},
      {R"({"large_arrays": [{"sources": ["a.cc"]}]})",
       "m: large_arrays[0].from_elements: expected an integer from 1 to"},
      {R"({"large_arrays": [{"from_elements": 0, "sources": ["a.cc"]}]})",
       "m: large_arrays[0].from_elements: expected an integer from 1 to"},
      {R"({"large_arrays": [{"from_elements": 1e9, "sources": ["a.cc"]}]})",
       "m: large_arrays[0].from_elements: expected an integer from 1 to"},
      {R"({"large_arrays": [{"from_elements": 18446744073709551615,
                             "sources": ["a.cc"]}]})",
       "m: large_arrays[0].from_elements: expected an integer from 1 to"},
      {R"({"large_arrays": [{"from_elements": 100}]})",
       "m: large_arrays[0].sources: expected at least one glob"},
      {R"({"large_arrays": [{"from_elements": 9, "sources": ["a"],
                             "frontend_attributes": []}]})",
       "m: large_arrays[0].frontend_attributes: expected an object"},
      {R"({"large_arrays": [{"from_elements": 9, "sources": ["a"],
                             "frontend_attributes": {"v": "1\"}"}}]})",
       "m: large_arrays[0].frontend_attributes.\"v\": expected a name"},
      {R"({"large_arrays": [{"from_elements": 9, "sources": ["a"],
                             "frontend_attributes": {"v": 7}}]})",
       "m: large_arrays[0].frontend_attributes.\"v\": expected a name"},
      {R"({"large_arrays": [{"from_elements": 9, "sources": ["a"]},
                            {"from_elements": 100, "sources": ["/a.cc"]}]})",
       "m: large_arrays[1].sources[0]: '/a.cc' is absolute"},
  };
  for (const auto& [doc, message] : cases) {
    StatusOr<TargetDescription> d = ParseTargetDescriptionText(doc, "m");
    ASSERT_FALSE(d.ok()) << doc;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << doc;
    EXPECT_EQ(d.status().message().rfind(message, 0), 0u)
        << doc << "\n"
        << d.status().message();
  }
  // Emitter names with spaces and globs with non-ASCII letters are fine.
  EXPECT_TRUE(ParseTargetDescriptionText(
                  R"x({"emitters": [{"name": "Emit Reduce (rows)",
                                     "ops": ["reduce-window"],
                                     "sources": ["src/\u00e9t\u00e9/*.cc"]}]})x",
                  "m")
                  .ok());
  StatusOr<TargetDescription> text =
      ParseTargetDescriptionText("{\"passes\": [", "trench-target.json at ab");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message().rfind("trench-target.json at ab: ", 0), 0u)
      << text.status().message();
}

}  // namespace
}  // namespace trench::hlo_diff
