// The embedded compiler describes itself (hloc --capabilities, from the
// "sources" columns of pass_registry.def and emitters.def): every
// registered pass and emitter is listed with source globs that match files
// of this tree, and the document reads as a target description.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "compiler/codegen/compile.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/streaming.h"
#include "compiler/driver/module_options.h"
#include "compiler/driver/target_driver.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/passes/pass_registry.h"
#include "triage/case/target_description.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

// The files of this checkout under `top` (relative, '/'-separated).
const std::vector<std::string>& FilesUnder(const std::string& top) {
  static std::map<std::string, std::vector<std::string>> cache;
  auto [it, added] = cache.try_emplace(top);
  if (!added) return it->second;
  const fs::path root(TRENCH_SOURCE_DIR);
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(root / top, ec)) {
    if (e.is_regular_file()) {
      it->second.push_back(fs::relative(e.path(), root).generic_string());
    }
  }
  return it->second;
}

// Whether `glob` matches a file of this checkout.
bool MatchesAFile(const std::string& glob) {
  const std::string top = glob.substr(0, glob.find('/'));
  for (const std::string& f : FilesUnder(top)) {
    if (hlo_diff::SourceGlobMatches(glob, f)) return true;
  }
  return false;
}

const hlo_diff::TargetDescription::Unit* Find(
    const std::vector<hlo_diff::TargetDescription::Unit>& units,
    std::string_view name) {
  for (const auto& u : units) {
    if (u.name == name) return &u;
  }
  return nullptr;
}

TEST(HlocDescriptionTest, EveryPassAndEmitterNamesFilesOfThisTree) {
  ASSERT_FALSE(MatchesAFile("compiler/passes/no_such_pass.*"));
  StatusOr<hlo_diff::TargetDescription> d =
      hlo_diff::ParseTargetDescription(hloc::Capabilities(), "hloc");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE(d->described());

  EXPECT_EQ(d->passes.size(), RegisteredPasses().size());
  for (const PassInfo& p : RegisteredPasses()) {
    const auto* u = Find(d->passes, p.name);
    ASSERT_NE(u, nullptr) << p.name;
    EXPECT_FALSE(u->sources.empty())
        << p.name << ": pass_registry.def gives it no sources";
    for (const std::string& g : u->sources) {
      EXPECT_TRUE(MatchesAFile(g)) << p.name << ": '" << g << "' matches "
                                   << "no file of the tree";
    }
  }

  std::set<std::string> emitted;
  EXPECT_EQ(d->emitters.size(), codegen::RegisteredEmitters().size());
  for (const codegen::EmitterInfo& e : codegen::RegisteredEmitters()) {
    const auto* u = Find(d->emitters, e.name);
    ASSERT_NE(u, nullptr) << e.name;
    EXPECT_FALSE(u->ops.empty()) << e.name << ": no X row of emitters.def";
    EXPECT_EQ(u->ops, e.ops) << e.name;
    EXPECT_FALSE(u->sources.empty())
        << e.name << ": emitters.def gives it no sources";
    for (const std::string& g : u->sources) {
      EXPECT_TRUE(MatchesAFile(g)) << e.name << ": '" << g << "' matches "
                                   << "no file of the tree";
    }
    emitted.insert(u->ops.begin(), u->ops.end());
  }
  // Every op the code generator compiles has an emitter, but the aliases
  // the buffer plan handles.
  for (const std::string& op : codegen::SupportedOps()) {
    if (op == "parameter" || op == "constant" || op == "tuple" ||
        op == "get-tuple-element") {
      continue;
    }
    EXPECT_TRUE(emitted.contains(op)) << op;
  }
  EXPECT_EQ(d->ops, codegen::SupportedOps());
}

// The files the daemon's focus used to find by their names still map to
// their pass or op.
TEST(HlocDescriptionTest, FilesMapToTheirPassOrOp) {
  StatusOr<hlo_diff::TargetDescription> d =
      hlo_diff::ParseTargetDescription(hloc::Capabilities(), "hloc");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  std::vector<std::string> passes, ops;
  d->NamesOfPath("compiler/passes/convolution_expander.cc", &passes, &ops);
  d->NamesOfPath("compiler/passes/fusion_order.cc", &passes, &ops);
  d->NamesOfPath("compiler/codegen/stream_fusion_reduce.cc", &passes, &ops);
  d->NamesOfPath("compiler/codegen/emit_dot_tiled.cc", &passes, &ops);
  d->NamesOfPath("compiler/codegen/kernel_builder.cc", &passes, &ops);
  EXPECT_EQ(passes, (std::vector<std::string>{"conv-expander", "fusion"}));
  EXPECT_EQ(ops, (std::vector<std::string>{"fusion", "dot"}));
}

// The streamed code generator's files say from which size they run, and
// the globs name files of this tree: the linear streamed loop from two
// chunks; the emitters' streamed halves, under the smallest VMEM a module
// may ask for, from an f32 array of that size.
TEST(HlocDescriptionTest, StreamedFilesAreLargeArraySources) {
  StatusOr<hlo_diff::TargetDescription> d =
      hlo_diff::ParseTargetDescription(hloc::Capabilities(), "hloc");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->large_arrays.size(), 2u);
  for (const auto& g : d->large_arrays) {
    for (const std::string& glob : g.sources) {
      EXPECT_TRUE(MatchesAFile(glob)) << glob;
    }
  }
  const auto loop = d->LargeArraysOfPath("compiler/codegen/streaming.cc");
  EXPECT_EQ(loop.from_elements, codegen::kStreamedFromElements);
  EXPECT_TRUE(loop.frontend_attributes.empty());
  const auto sort = d->LargeArraysOfPath("compiler/codegen/stream_sort.cc");
  EXPECT_EQ(sort.from_elements, hloc::kMinVmemBytes / 4);
  EXPECT_EQ(
      sort.frontend_attributes,
      (hlo_diff::FrontendAttributes{
          {hloc::kVmemBytesAttribute, std::to_string(hloc::kMinVmemBytes)}}));
  EXPECT_EQ(d->LargeArraysOfPath("compiler/codegen/emit_sort.cc").from_elements,
            0);
  EXPECT_EQ(d->LargeArraysOfPath("compiler/passes/fusion.cc").from_elements, 0);
}

// Every element type the capabilities list compiles (a copy of it), and
// the complex types are among them.
TEST(HlocDescriptionTest, EveryListedDtypeCompiles) {
  const Json caps = hloc::Capabilities();
  const Json* dtypes = caps.Find("dtypes");
  ASSERT_NE(dtypes, nullptr);
  std::set<std::string> listed;
  for (const Json& t : dtypes->array()) {
    const std::string name = t.string_value();
    listed.insert(name);
    auto m = ParseHloModule("HloModule m\nENTRY e {\n  p = " + name +
                            "[5] parameter(0)\n  ROOT c = " + name +
                            "[5] copy(p)\n}\n");
    ASSERT_TRUE(m.ok()) << name << ": " << m.status().ToString();
    EXPECT_TRUE(codegen::CompileModule(**m, codegen::CompileOptions()).ok())
        << name;
  }
  EXPECT_TRUE(listed.count("c64") && listed.count("c128")) << dtypes->Dump();
  EXPECT_TRUE(listed.count("f32") && listed.count("pred")) << dtypes->Dump();
}

}  // namespace
}  // namespace trench
