// Case bundles: write/read round trip, content addressing, clear errors on
// malformed cases, numpy compatibility of the inputs.
#include "triage/case/case_bundle.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <utility>

#include "compiler/ir/npy.h"
#include "tests/triage/case/hlo_diff_test_util.h"
#include "triage/case/verdict.h"

namespace trench::hlo_diff {
namespace {

namespace fs = std::filesystem;
using testing::AddCase;
using testing::F32;
using testing::TempDir;
using testing::WriteText;

TEST(CaseBundleTest, WriteReadRoundTrip) {
  TempDir tmp;
  Case c = AddCase();
  c.options.pass_limit = 3;
  c.options.disable_passes = {"cse"};
  c.origin["seed"] = 42;
  c.extra["note"] = "kept";
  const std::string dir = tmp / "case";
  ASSERT_TRUE(WriteCase(dir, c).ok());
  StatusOr<Case> back = ReadCase(dir);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->module_text, c.module_text);
  ASSERT_EQ(back->inputs.size(), 2u);
  EXPECT_TRUE(back->inputs[0] == c.inputs[0]);
  EXPECT_TRUE(back->inputs[1] == c.inputs[1]);
  EXPECT_EQ(back->options.pass_limit, std::optional<int64_t>(3));
  EXPECT_EQ(back->options.disable_passes, std::vector<std::string>{"cse"});
  EXPECT_EQ(back->origin, c.origin);
  EXPECT_EQ(back->extra, c.extra);
  EXPECT_FALSE(back->verdict.has_value());
  EXPECT_EQ(CaseSha256(*back), CaseSha256(c));
  // Writing over an existing case is refused.
  EXPECT_EQ(WriteCase(dir, c).code(), StatusCode::kFailedPrecondition);
}

TEST(CaseBundleTest, ContentAddressIgnoresAnnotations) {
  Case a = AddCase();
  Case b = AddCase();
  b.origin["trace"] = "x.hlo";
  b.verdict = Verdict();
  b.signature = Json::MakeObject();
  EXPECT_EQ(CaseSha256(a), CaseSha256(b));
  b.options.rewrite_limit = 1;
  EXPECT_NE(CaseSha256(a), CaseSha256(b));
  Case d = AddCase();
  d.inputs[1].SetFromDouble(0, 0.75);
  EXPECT_NE(CaseSha256(a), CaseSha256(d));
  EXPECT_EQ(CaseSha256(a).size(), 64u);
}

TEST(CaseBundleTest, StoreCaseIsIdempotent) {
  TempDir tmp;
  Case c = AddCase();
  StatusOr<std::string> first = StoreCase(tmp.path(), c);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, tmp / ("cases/" + CaseSha256(c)));
  c.origin["again"] = true;  // An annotation: same address.
  StatusOr<std::string> second = StoreCase(tmp.path(), c);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(tmp / "cases")) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);  // No temporaries left behind.
  EXPECT_TRUE(ReadCase(*first).ok());
}

TEST(CaseBundleTest, CaseJsonDescribesBf16Inputs) {
  const char* module = R"(HloModule b
ENTRY e {
  p = bf16[3] parameter(0)
  ROOT n = bf16[3] negate(p)
})";
  Literal in(Shape(PrimitiveType::BF16, {3}));
  for (int i = 0; i < 3; ++i) in.SetFromDouble(i, 1.5 * i);
  StatusOr<Case> c = MakeCase(module, {in});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Json j = CaseJson(*c);
  const Json& e = j["inputs"].array()[0];
  EXPECT_EQ(e.Find("dtype")->string_value(), "bf16");
  EXPECT_EQ(e.Find("npy_dtype")->string_value(), "<u2");
  ASSERT_NE(e.Find("note"), nullptr);
  TempDir tmp;
  ASSERT_TRUE(WriteCase(tmp / "c", *c).ok());
  StatusOr<Case> back = ReadCase(tmp / "c");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->inputs[0].element_type(), PrimitiveType::BF16);
  EXPECT_TRUE(back->inputs[0] == in);
}

TEST(CaseBundleTest, InputsAreReadableByNumpy) {
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no /usr/bin/python3 with numpy";
  }
  TempDir tmp;
  ASSERT_TRUE(WriteCase(tmp / "c", AddCase()).ok());
  const std::string cmd =
      "/usr/bin/python3 -c \"import numpy; "
      "a = numpy.load('" +
      tmp / "c/inputs/0.npy" +
      "'); "
      "b = numpy.load('" +
      tmp / "c/inputs/1.npy" +
      "'); "
      "assert a.dtype == numpy.float32 and a.shape == (2, 3), a; "
      "assert a.tolist() == [[1, 2, 3], [4, 5, 6]], a; "
      "assert abs(b.sum() - 6.75) < 1e-6, b\"";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// Writes the add case to tmp/c and returns the directory.
std::string WrittenCase(const TempDir& tmp) {
  const std::string dir = tmp / "c";
  EXPECT_TRUE(WriteCase(dir, AddCase()).ok());
  return dir;
}

TEST(CaseBundleTest, MalformedCaseJsonNamesLineAndColumn) {
  TempDir tmp;
  const std::string dir = WrittenCase(tmp);
  WriteText(dir + "/case.json", "{\n  \"format\": 1,\n  \"inputs\": [\n}\n");
  StatusOr<Case> c = ReadCase(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(dir + "/case.json:4:1"),
            std::string::npos)
      << c.status().message();
}

TEST(CaseBundleTest, SchemaErrorsNameTheField) {
  TempDir tmp;
  const std::string dir = WrittenCase(tmp);
  StatusOr<Case> ok = ReadCase(dir);
  ASSERT_TRUE(ok.ok());
  Json j = CaseJson(*ok);
  j["options"]["pass_limit"] = "three";
  WriteText(dir + "/case.json", j.Dump());
  StatusOr<Case> c = ReadCase(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("options.pass_limit"), std::string::npos)
      << c.status().message();

  j = CaseJson(*ok);
  j["format"] = 2;
  WriteText(dir + "/case.json", j.Dump());
  EXPECT_NE(ReadCase(dir).status().message().find("format"), std::string::npos);

  j = CaseJson(*ok);
  j["inputs"].mutable_array()[1]["shape"] = Json::Array{Json(3), Json(2)};
  WriteText(dir + "/case.json", j.Dump());
  c = ReadCase(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("inputs[1]"), std::string::npos)
      << c.status().message();

  j = CaseJson(*ok);
  j["inputs"].mutable_array()[0]["file"] = "../escape.npy";
  WriteText(dir + "/case.json", j.Dump());
  EXPECT_NE(ReadCase(dir).status().message().find("inside the case"),
            std::string::npos);
}

TEST(CaseBundleTest, VerdictAndSignatureRoundTrip) {
  TempDir tmp;
  Case c = AddCase();
  Verdict v;
  v.status = VerdictStatus::kCompileCrash;
  v.message = "killed by SIGSEGV";
  v.case_sha = CaseSha256(c);
  v.compare = CompareKind::kExact;
  v.oracle.undetermined = 0;
  TargetResult t;
  t.status = TargetStatus::kCompileCrash;
  t.stage = "compile";
  t.message = "killed by SIGSEGV";
  t.last_pass = "cse";
  v.target = t;
  v.signature.status = v.status;
  v.signature.stage = "compile";
  v.signature.message = "killed by SIGSEGV";
  v.signature.pass = "cse";
  v.signature.sig = SignatureHash(v.signature);
  c.verdict = v;
  c.signature = v.signature.ToJson();
  const std::string dir = tmp / "c";
  ASSERT_TRUE(WriteCase(dir, c).ok());
  StatusOr<Case> back = ReadCase(dir);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->verdict.has_value());
  EXPECT_EQ(back->verdict->status, VerdictStatus::kCompileCrash);
  EXPECT_EQ(back->verdict->compare, CompareKind::kExact);
  EXPECT_EQ(back->verdict->last_pass(), "cse");
  EXPECT_EQ(back->verdict->signature.pass, std::optional<std::string>("cse"));
  EXPECT_EQ(back->verdict->signature.sig, v.signature.sig);
  EXPECT_EQ(back->verdict->ToJson().Dump(), v.ToJson().Dump());
  EXPECT_EQ(back->signature, c.signature);
  // The same JSON again (UpdateCaseJson of what was read).
  EXPECT_EQ(CaseJson(*back).Dump(), CaseJson(c).Dump());
  ASSERT_TRUE(UpdateCaseJson(dir, *back).ok());
  back = ReadCase(dir);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(CaseJson(*back).Dump(), CaseJson(c).Dump());
}

TEST(CaseBundleTest, MalformedVerdictNamesFileAndMember) {
  TempDir tmp;
  const std::string dir = WrittenCase(tmp);
  StatusOr<Case> ok = ReadCase(dir);
  ASSERT_TRUE(ok.ok());
  Case c = *ok;
  c.verdict = InvalidInputVerdict("m.hlo: bad");
  const Json good = CaseJson(c);
  const std::string path = dir + "/case.json";
  auto read_with = [&](const std::function<void(Json&)>& edit) {
    Json j = good;
    edit(j["verdict"]);
    WriteText(path, j.DumpPretty());
    return ReadCase(dir).status();
  };
  const std::pair<std::function<void(Json&)>, std::string> cases[] = {
      {[](Json& v) { v["status"] = "exploded"; },
       "verdict.status: unknown verdict status 'exploded'"},
      {[](Json& v) { v = Json::MakeObject(); }, "verdict.status: missing"},
      {[](Json& v) { v["signature"] = Json("mismatch"); },
       "verdict.signature: expected an object"},
      {[](Json& v) {
         v["status"] = "mismatch";
         v["signature"]["status"] = "mismatch";
         v["signature"]["dtype"] = "f32";
       },
       "verdict.signature.ops: missing"},
      {[](Json& v) { v = Json::MakeArray(); }, "verdict: expected an object"},
  };
  for (const auto& [edit, member] : cases) {
    Status st = read_with(edit);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(path + ": " + member), std::string::npos)
        << st.message();
  }
  // A null verdict is no verdict.
  Status st = read_with([](Json& v) { v = Json(); });
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(CaseBundleTest, MissingOrWrongInputFilesAreNamed) {
  TempDir tmp;
  const std::string dir = WrittenCase(tmp);
  fs::remove(dir + "/inputs/1.npy");
  StatusOr<Case> c = ReadCase(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("inputs/1.npy"), std::string::npos)
      << c.status().message();

  ASSERT_TRUE(WriteNpyFile(dir + "/inputs/1.npy", F32({3}, {1, 2, 3})).ok());
  c = ReadCase(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("inputs/1.npy: f32[3]"),
            std::string::npos)
      << c.status().message();

  WriteText(dir + "/inputs/1.npy", "\x93NUMPY garbage");
  c = ReadCase(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("inputs/1.npy"), std::string::npos)
      << c.status().message();
}

TEST(CaseBundleTest, BadModuleNamesFileLineColumn) {
  TempDir tmp;
  const std::string dir = WrittenCase(tmp);
  WriteText(dir + "/module.hlo",
            "HloModule m\n\nENTRY e {\n  p = f32[2 parameter(0)\n}\n");
  StatusOr<Case> c = ReadCase(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(dir + "/module.hlo:4:"),
            std::string::npos)
      << c.status().message();
  EXPECT_EQ(ReadCase(tmp / "nope").status().code(), StatusCode::kNotFound);
}

TEST(CaseBundleTest, MakeCaseChecksInputs) {
  StatusOr<Case> c = MakeCase(testing::kAddModule, {F32({2, 3}, {})});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("takes 2 input arrays, got 1"),
            std::string::npos)
      << c.status().message();
}

// An SPMD case on a mesh of 2: each device's inputs under inputs/<d>/,
// case.json's "mesh" and "device", an address of its own; malformed
// meshes and device orders are named.
Case SpmdCase() {
  std::vector<std::vector<Literal>> per_device;
  for (int d = 0; d < 2; ++d) {
    per_device.push_back({F32({2, 3}, {1, 2, 3, 4, 5, float(d)}),
                          F32({2, 3}, {0, 0, 0, 0, 0, float(10 * d)})});
  }
  StatusOr<Case> c = MakeSpmdCase(testing::kAddModule, DeviceMesh{1, 2},
                                  std::move(per_device));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : Case();
}

TEST(CaseBundleTest, SpmdCasesKeepEachDevicesInputs) {
  TempDir tmp;
  const Case c = SpmdCase();
  ASSERT_EQ(c.inputs.size(), 4u);
  const std::string dir = tmp / "spmd";
  ASSERT_TRUE(WriteCase(dir, c).ok());
  EXPECT_TRUE(fs::exists(dir + "/inputs/1/0.npy"));
  EXPECT_FALSE(fs::exists(dir + "/inputs/0.npy"));
  StatusOr<Case> back = ReadCase(dir);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->mesh.partitions, 2);
  ASSERT_EQ(back->inputs.size(), 4u);
  EXPECT_TRUE(back->inputs[3] == c.inputs[3]);
  EXPECT_EQ(CaseSha256(*back), CaseSha256(c));
  // The same inputs on one device are another case.
  Case one = c;
  one.mesh = DeviceMesh{};
  EXPECT_NE(CaseSha256(one), CaseSha256(c));
  // Per-device arguments for the oracle.
  auto m = ParseCaseModule(c.module_text, "m");
  ASSERT_TRUE(m.ok());
  StatusOr<std::vector<std::vector<Literal>>> args = DeviceArguments(**m, c);
  ASSERT_TRUE(args.ok()) << args.status().ToString();
  ASSERT_EQ(args->size(), 2u);
  EXPECT_EQ((*args)[1][1].GetAsDouble(5), 10);

  Json j = CaseJson(c);
  j["mesh"]["partitions"] = 0;
  WriteText(dir + "/case.json", j.Dump());
  EXPECT_NE(ReadCase(dir).status().message().find(
                "mesh.partitions: expected an integer in 1..4096"),
            std::string::npos)
      << ReadCase(dir).status().message();
  j = CaseJson(c);
  j["mesh"]["chips"] = 2;
  WriteText(dir + "/case.json", j.Dump());
  EXPECT_NE(ReadCase(dir).status().message().find("mesh: unknown key 'chips'"),
            std::string::npos);
  j = CaseJson(c);
  j["inputs"].mutable_array()[2]["device"] = 0;
  WriteText(dir + "/case.json", j.Dump());
  EXPECT_NE(ReadCase(dir).status().message().find(
                "inputs[2].device: expected 1 (inputs are device-major)"),
            std::string::npos)
      << ReadCase(dir).status().message();
  j = CaseJson(c);
  j["mesh"]["partitions"] = 3;
  WriteText(dir + "/case.json", j.Dump());
  EXPECT_NE(ReadCase(dir).status().message().find("per device (3)"),
            std::string::npos)
      << ReadCase(dir).status().message();
  EXPECT_FALSE(MakeSpmdCase(testing::kAddModule, DeviceMesh{1, 3}, {}).ok());
  // Hostile: a small case.json making every device read one file.
  j = CaseJson(c);
  j["inputs"].mutable_array()[2]["file"] = "inputs/0/0.npy";
  WriteText(dir + "/case.json", j.Dump());
  EXPECT_NE(ReadCase(dir).status().message().find(
                "inputs[2].file: 'inputs/0/0.npy' is inputs[0]'s too"),
            std::string::npos)
      << ReadCase(dir).status().message();
  j = CaseJson(c);
  j["mesh"]["partitions"] = 4097;
  WriteText(dir + "/case.json", j.Dump());
  EXPECT_NE(ReadCase(dir).status().message().find(
                "mesh.partitions: expected an integer in 1..4096, got 4097"),
            std::string::npos)
      << ReadCase(dir).status().message();
}

// A target that runs one device (its hloc describes no slice): an SPMD
// case is target_unsupported, and no target run is started for it.
TEST(CaseBundleTest, SpmdCasesAreNotRunOnASingleDeviceTarget) {
  TempDir tmp;
  TargetSpec spec = testing::RealTarget(TargetMode::kHlocTpusim);
  spec.hloc = testing::WriteScript(tmp / "hloc", "echo '{}'\n");
  TargetRunner runner(spec);
  StatusOr<Verdict> v = ComputeVerdict(SpmdCase(), runner, tmp / "work");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->status, VerdictStatus::kTargetUnsupported);
  EXPECT_NE(v->message.find("a mesh of 1 x 2 devices"), std::string::npos)
      << v->message;
  EXPECT_FALSE(v->target.has_value());
  EXPECT_FALSE(fs::exists(tmp / "work"));
}

TEST(CaseBundleTest, OptionsToFlags) {
  CaseOptions o;
  o.disable_passes = {"cse", "dce"};
  o.rewrite_limit = 7;
  o.taps = "all";
  EXPECT_EQ(o.ToFlags(),
            (std::vector<std::string>{"--disable-passes=cse,dce",
                                      "--rewrite-limit=7", "--taps=all"}));
  StatusOr<CaseOptions> back = CaseOptions::FromJson(o.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->ToJson(), o.ToJson());
  Json bad = Json::MakeObject();
  bad["pass_limt"] = 3;
  EXPECT_NE(CaseOptions::FromJson(bad).status().message().find(
                "options.pass_limt: unknown option"),
            std::string::npos);
}

}  // namespace
}  // namespace trench::hlo_diff
