// Real sandboxed runs of the real tool binaries of this build
// (TRENCH_BINARY_DIR) through the SandboxToolBox, on tiny modules. A fake
// target (shell scripts that crash like a broken compiler) stands in for
// a buggy build where a failing case is needed.
#include "agents/sandbox_toolbox.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "agents/sandbox_toolbox_internal.h"
#include "git/git_repo.h"

namespace trench::agents {
namespace {

namespace fs = std::filesystem;

constexpr char kModule[] = R"(HloModule small

ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  a = f32[4] add(p0, p1)
  n = f32[4] negate(a)
  ROOT m = f32[4] multiply(n, p1)
}
)";

void WriteFile(const std::string& path, const std::string& text, int mode) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
}

class SandboxToolBoxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sandbox_toolbox_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    for (const char* d : {"", "/cases", "/scratch", "/fake"}) {
      fs::create_directories(root_ + d);
      ::chmod((root_ + d).c_str(), 0755);
    }
    // The broken target: every compile dies of SIGSEGV in "algsimp".
    const std::string crash =
        "#!/bin/sh\necho 'enter algsimp 0' >&2\necho 'fake: bad rewrite' "
        ">&2\nkill -SEGV $$\n";
    for (const char* b : {"hloc", "tpusim", "hlo-run"}) {
      WriteFile(root_ + "/fake/" + b, crash, 0755);
    }
  }
  void TearDown() override { fs::remove_all(root_); }

  ToolContext Context(bool fake_target = false) {
    ToolContext c;
    c.tools_dir = TRENCH_BINARY_DIR;
    c.bin_dir = fake_target ? root_ + "/fake" : TRENCH_BINARY_DIR;
    c.cases_dir = root_ + "/cases";
    c.scratch_dir = root_ + "/scratch";
    return c;
  }

  std::unique_ptr<SandboxToolBox> Box(const std::string& role, ToolContext c) {
    auto box = SandboxToolBox::Create(role, std::move(c));
    EXPECT_TRUE(box.ok()) << box.status().ToString();
    if (!box.ok()) return nullptr;
    return std::move(box).value();
  }

  // write_case of kModule; returns the case id.
  std::string StoreModule(SandboxToolBox& box) {
    Json args = Json::MakeObject();
    args["hlo"] = kModule;
    args["seed"] = 3;
    StatusOr<ToolResult> r = box.Call("write_case", args);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return "";
    EXPECT_TRUE(r->ok) << r->error;
    const Json* id = r->output.Find("case");
    return id && id->is_string() ? id->string_value() : "";
  }

  Json Args(const std::string& id) {
    Json a = Json::MakeObject();
    a["case"] = id;
    return a;
  }

  std::string root_;
};

TEST_F(SandboxToolBoxTest, WriteReadAndRunACase) {
  auto box = Box("reproducer", Context());
  ASSERT_NE(box, nullptr);
  Json args = Json::MakeObject();
  args["hlo"] = kModule;
  args["seed"] = 3;
  StatusOr<ToolResult> w = box->Call("write_case", args);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->ok) << w->error;
  const std::string id = w->output.Find("case")->string_value();
  EXPECT_EQ(id.size(), 64u);
  EXPECT_EQ(*w->output.Find("instructions"), Json(5));
  EXPECT_EQ(*w->output.Find("status"), Json("pass"));
  EXPECT_TRUE(fs::exists(root_ + "/cases/" + id + "/case.json"));
  // Same module and seed: same address.
  StatusOr<ToolResult> again = box->Call("write_case", args);
  ASSERT_TRUE(again.ok() && again->ok);
  EXPECT_EQ(*again->output.Find("case"), Json(id));

  StatusOr<ToolResult> read = box->Call("read_case", Args(id));
  ASSERT_TRUE(read.ok() && read->ok);
  EXPECT_EQ(*read->output.Find("hlo"), Json(kModule));
  EXPECT_EQ(*read->output.Find("case_json")->Find("origin")->Find("kind"),
            Json("agent"));

  Json run = Args(id);
  run["runs"] = 2;
  StatusOr<ToolResult> r = box->Call("run_case", run);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->ok) << r->error;
  EXPECT_EQ(*r->output.Find("runs"), Json(2));
  EXPECT_EQ(*r->output.Find("failures"), Json(0));
  EXPECT_EQ(*r->output.Find("status"), Json("pass"));
  EXPECT_EQ(r->output.Find("statuses")->size(), 2u);
  EXPECT_TRUE(r->output.Find("verdict")->is_object());
  // Every call's scratch dir is gone.
  EXPECT_TRUE(fs::is_empty(root_ + "/scratch"));
}

TEST(SandboxToolBoxVerdictTest, ABrainSeesNoErrorMaps) {
  StatusOr<Json> v = ParseJson(
      R"({"status":"mismatch","error_maps":[{"cells":[[1e9]]},{}],"x":1})");
  ASSERT_TRUE(v.ok());
  const Json shown = internal::VerdictForModel(*v);
  EXPECT_EQ(shown.Find("error_maps"), nullptr);
  EXPECT_EQ(*shown.Find("error_maps_left_out"), Json(2));
  EXPECT_EQ(*shown.Find("status"), Json("mismatch"));
  EXPECT_EQ(*shown.Find("x"), Json(1));
  // Without maps the verdict is unchanged.
  StatusOr<Json> plain = ParseJson(R"({"status":"pass"})");
  EXPECT_EQ(internal::VerdictForModel(*plain), *plain);
}

TEST_F(SandboxToolBoxTest, InvalidHloIsAFailedResultWithLineColumn) {
  auto box = Box("reproducer", Context());
  ASSERT_NE(box, nullptr);
  Json args = Json::MakeObject();
  args["hlo"] = "HloModule bad\n\nENTRY main {\n  p0 = f32[4] paramter(0)\n}\n";
  StatusOr<ToolResult> w = box->Call("write_case", args);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_FALSE(w->ok);
  EXPECT_NE(w->error.find("module.hlo:4:"), std::string::npos) << w->error;
  EXPECT_EQ(w->error.find(root_), std::string::npos) << w->error;
}

TEST_F(SandboxToolBoxTest, ABrokenTargetCrashesReducesAndLocalizes) {
  auto good = Box("minimizer", Context());
  ASSERT_NE(good, nullptr);
  const std::string id = StoreModule(*good);
  ASSERT_FALSE(id.empty());
  auto box = Box("minimizer", Context(/*fake_target=*/true));
  ASSERT_NE(box, nullptr);
  StatusOr<ToolResult> r = box->Call("run_case", Args(id));
  ASSERT_TRUE(r.ok() && r->ok) << (r.ok() ? r->error : r.status().ToString());
  EXPECT_EQ(*r->output.Find("status"), Json("compile_crash"));
  EXPECT_EQ(*r->output.Find("failures"), Json(1));

  Json reduce = Args(id);
  reduce["seconds"] = 120;
  StatusOr<ToolResult> red = box->Call("reduce_case", reduce);
  ASSERT_TRUE(red.ok()) << red.status().ToString();
  ASSERT_TRUE(red->ok) << red->error;
  const std::string small = red->output.Find("case")->string_value();
  EXPECT_NE(small, id);
  EXPECT_TRUE(fs::exists(root_ + "/cases/" + small + "/module.hlo"));
  const Json* before = red->output.Find("before")->Find("instructions");
  const Json* after = red->output.Find("after")->Find("instructions");
  ASSERT_TRUE(before && after);
  EXPECT_LT(after->number_value(), before->number_value());
  EXPECT_EQ(*red->output.Find("complete"), Json(true));

  StatusOr<ToolResult> loc = box->Call("localize_case", Args(small));
  ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  ASSERT_TRUE(loc->ok) << loc->error;
  EXPECT_EQ(*loc->output.Find("status"), Json("compile_crash"));
  ASSERT_TRUE(loc->output.Find("levels") && loc->output.Find("levels")->size());
}

TEST_F(SandboxToolBoxTest, PassingCasesCannotBeReducedOrLocalized) {
  auto box = Box("minimizer", Context());
  ASSERT_NE(box, nullptr);
  const std::string id = StoreModule(*box);
  ASSERT_FALSE(id.empty());
  StatusOr<ToolResult> red = box->Call("reduce_case", Args(id));
  ASSERT_TRUE(red.ok()) << red.status().ToString();
  EXPECT_FALSE(red->ok);
  EXPECT_NE(red->error.find("not interesting"), std::string::npos)
      << red->error;
  StatusOr<ToolResult> loc = box->Call("localize_case", Args(id));
  ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  EXPECT_FALSE(loc->ok);
  EXPECT_NE(loc->error.find("hlo-bisect"), std::string::npos) << loc->error;
}

TEST_F(SandboxToolBoxTest, FuzzStoresItsFindings) {
  auto box = Box("stress_test_author", Context(/*fake_target=*/true));
  ASSERT_NE(box, nullptr);
  StatusOr<Json> args = ParseJson(R"({"seconds": 2, "seed": 5})");
  StatusOr<ToolResult> f = box->Call("fuzz", *args);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE(f->ok) << f->error;
  EXPECT_GT(f->output.Find("programs")->number_value(), 0);
  const Json* findings = f->output.Find("findings");
  ASSERT_TRUE(findings && findings->size() > 0) << f->output.Dump();
  for (const Json& e : findings->array()) {
    const std::string id = e.Find("case")->string_value();
    EXPECT_TRUE(fs::exists(root_ + "/cases/" + id + "/case.json")) << id;
  }
}

// Module attributes go into generated HLO text: anything but plain
// NAME=VALUE tokens is refused before hlo-fuzz runs; plain ones run.
TEST_F(SandboxToolBoxTest, FuzzLargeAttributesAreTokens) {
  auto box = Box("stress_test_author", Context(/*fake_target=*/true));
  ASSERT_NE(box, nullptr);
  for (const char* bad :
       {R"(["x=\"}"])", R"(["novalue"])", R"(["a b=1"])", R"(["=1"])"}) {
    StatusOr<Json> args =
        ParseJson(std::string(R"({"seconds": 1, "large_elements": 64, )") +
                  R"("large_attributes": )" + bad + "}");
    ASSERT_TRUE(args.ok()) << bad;
    StatusOr<ToolResult> f = box->Call("fuzz", *args);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_FALSE(f->ok) << bad;
    EXPECT_NE(f->error.find("large_attributes"), std::string::npos) << f->error;
  }
  // More attributes than the tool takes: refused by its schema.
  StatusOr<Json> many = ParseJson(
      R"({"seconds": 1, "large_elements": 64, "large_attributes":
          ["a=1", "b=1", "c=1", "d=1", "e=1", "f=1", "g=1", "h=1", "i=1"]})");
  ASSERT_TRUE(many.ok());
  StatusOr<ToolResult> refused = box->Call("fuzz", *many);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument)
      << (refused.ok() ? refused->error : refused.status().ToString());
  StatusOr<Json> good = ParseJson(
      R"({"seconds": 1, "seed": 5, "large_elements": 64,
          "large_attributes": ["trench_vmem_bytes=65536"]})");
  StatusOr<ToolResult> f = box->Call("fuzz", *good);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(f->ok) << f->error;
}

TEST_F(SandboxToolBoxTest, ArgumentsAreCheckedBeforeAnythingRuns) {
  auto box = Box("reproducer", Context());
  ASSERT_NE(box, nullptr);
  Json run = Args(std::string(64, 'a'));
  run["runs"] = "3";
  StatusOr<ToolResult> r = box->Call("run_case", run);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "run_case: runs: expected an integer, got \"3\"");
  // A tool of another role is unknown to this box.
  r = box->Call("submit_patch", Json::MakeObject());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("unknown tool 'submit_patch'"),
            std::string::npos);
  // Case ids cannot name paths.
  const std::string sneaky = "../../../../etc/passwd" + std::string(42, 'a');
  r = box->Call("read_case", Args(sneaky));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok);
  EXPECT_NE(r->error.find("is not a case id"), std::string::npos);
  r = box->Call("read_case", Args(std::string(64, 'b')));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->error, "no stored case " + std::string(64, 'b'));
  EXPECT_TRUE(fs::is_empty(root_ + "/scratch"));
}

// A finish claim that names a case by anything but an id is answered with
// an error the model can act on, for every role whose claim names cases.
TEST_F(SandboxToolBoxTest, FinishRefusesClaimsWhoseIdsAreNotIds) {
  const std::string id(64, 'a');
  const std::vector<std::string> bad = {
      "../../../../tmp/ecoevil",
      std::string(64, 'A'),
      std::string(63, 'a'),
      std::string(65, 'a'),
      id.substr(0, 32) + std::string(1, '\0') + id.substr(33),
      id.substr(0, 63) + "\n"};
  for (const char* role : {"reproducer", "minimizer", "stress_test_author"}) {
    auto box = Box(role, Context());
    ASSERT_NE(box, nullptr);
    auto claim = [&](const std::string& c) {
      Json a = Json::MakeObject();
      a["outcome"] = "done";
      a["summary"] = "s";
      if (std::string(role) == "stress_test_author") {
        Json f = Json::MakeObject();
        f["case"] = c;
        f["status"] = "mismatch";
        f["signature"] = Json::MakeObject();
        f["signature"]["sig"] = "s1";
        a["findings"] = Json::MakeArray();
        a["findings"].push_back(f);
      } else {
        a["case"] = c;
      }
      return a;
    };
    for (const std::string& b : bad) {
      StatusOr<ToolResult> r = box->Call("finish", claim(b));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_FALSE(r->ok) << role << " " << Json(b).Dump();
      EXPECT_NE(r->error.find("must be a case id (64 lowercase hex digits)"),
                std::string::npos)
          << r->error;
    }
    StatusOr<ToolResult> r = box->Call("finish", claim(id));
    ASSERT_TRUE(r.ok() && r->ok) << role << " " << r->error;
  }
  // A minimizer's rounds name cases too.
  auto box = Box("minimizer", Context());
  ASSERT_NE(box, nullptr);
  StatusOr<ToolResult> r = box->Call(
      "finish", *ParseJson(R"({"outcome": "done", "summary": "s", "case": ")" +
                           id + R"(", "rounds": [{"case": "../x"}]})"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok);
  EXPECT_NE(r->error.find("rounds[0].case"), std::string::npos) << r->error;
  EXPECT_TRUE(fs::is_empty(root_ + "/cases"));
}

TEST_F(SandboxToolBoxTest, MissingBinaryIsASetUpError) {
  ToolContext c = Context();
  c.tools_dir = root_ + "/fake";  // Has no hlo-diff.
  auto box = Box("reproducer", c);
  ASSERT_NE(box, nullptr);
  Json args = Json::MakeObject();
  args["hlo"] = kModule;
  EXPECT_EQ(box->Call("write_case", args).status().code(),
            StatusCode::kInternal);
  EXPECT_EQ(SandboxToolBox::Create("janitor", Context()).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(SandboxToolBoxTest, MalformedToolOutputIsAFailedResult) {
  auto good = Box("minimizer", Context());
  ASSERT_NE(good, nullptr);
  const std::string id = StoreModule(*good);
  ASSERT_FALSE(id.empty());
  // Tools that exit 0 but print no JSON object.
  fs::create_directories(root_ + "/tools");
  ::chmod((root_ + "/tools").c_str(), 0755);
  WriteFile(root_ + "/tools/hlo-bisect", "#!/bin/sh\necho '{\"levels\": ['\n",
            0755);
  WriteFile(root_ + "/tools/hlo-diff", "#!/bin/sh\necho '[1, 2]'\n", 0755);
  ToolContext c = Context();
  c.tools_dir = root_ + "/tools";
  auto box = Box("minimizer", c);
  ASSERT_NE(box, nullptr);
  StatusOr<ToolResult> loc = box->Call("localize_case", Args(id));
  ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  EXPECT_FALSE(loc->ok);
  EXPECT_NE(loc->error.find("hlo-bisect printed malformed JSON: 2:1:"),
            std::string::npos)
      << loc->error;
  StatusOr<ToolResult> run = box->Call("run_case", Args(id));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_FALSE(run->ok);
  EXPECT_EQ(run->error, "hlo-diff printed [1,2], not a JSON object");
}

TEST_F(SandboxToolBoxTest, GitToolsAndCallbacks) {
  auto repo = hlo_bisect::GitRepo::Init(root_ + "/repo");
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  auto base = (*repo)->CommitFiles(
      "", {{"src/a.cc", "int a = 1;\nint b = 2;\nint c = 3;\n"}}, "base",
      "refs/heads/main");
  ASSERT_TRUE(base.ok());
  auto culprit = (*repo)->CommitFiles(
      *base,
      {{"src/a.cc", "int a = 1;\nint b = 20;\nint c = 3;\n"},
       {"docs/n.md", "note\n"}},
      "culprit", "refs/heads/main");
  ASSERT_TRUE(culprit.ok());
  ToolContext c = Context();
  c.repo = root_ + "/repo";
  c.head = *culprit;
  Json seen;
  c.submit_patch = [&seen](const Json& args) -> StatusOr<Json> {
    seen = args;
    Json out = Json::MakeObject();
    out["candidate"] = 7;
    return out;
  };
  c.try_patch = [](const Json&) -> StatusOr<Json> {
    return FailedPrecondition("the patch does not apply: hunk 1");
  };
  auto box = Box("patch_drafter", c);
  ASSERT_NE(box, nullptr);

  Json args = Json::MakeObject();
  args["commit"] = culprit->substr(0, 10);
  StatusOr<ToolResult> d = box->Call("culprit_diff", args);
  ASSERT_TRUE(d.ok() && d->ok) << (d.ok() ? d->error : "");
  EXPECT_EQ(*d->output.Find("commit"), Json(*culprit));
  EXPECT_EQ(d->output.Find("files")->size(), 2u);
  const std::string diff = d->output.Find("diff")->string_value();
  EXPECT_NE(diff.find("-int b = 2;\n+int b = 20;"), std::string::npos) << diff;
  args["path"] = "src";
  d = box->Call("culprit_diff", args);
  ASSERT_TRUE(d.ok() && d->ok);
  EXPECT_EQ(*d->output.Find("files"), *ParseJson(R"(["src/a.cc"])"));

  StatusOr<Json> src =
      ParseJson(R"({"commit": "head", "path": "src/a.cc", "start": 2})");
  StatusOr<ToolResult> s = box->Call("read_source", *src);
  ASSERT_TRUE(s.ok() && s->ok);
  EXPECT_EQ(*s->output.Find("text"), Json("int b = 20;\nint c = 3;\n"));
  EXPECT_EQ(*s->output.Find("lines"), Json(3));
  (*src)["path"] = "src/missing.cc";
  s = box->Call("read_source", *src);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->ok);
  EXPECT_NE(s->error.find("no file 'src/missing.cc'"), std::string::npos);

  StatusOr<Json> patch = ParseJson(R"({"diff": "--- a\n", "rationale": "r"})");
  StatusOr<ToolResult> p = box->Call("submit_patch", *patch);
  ASSERT_TRUE(p.ok() && p->ok);
  EXPECT_EQ(*p->output.Find("candidate"), Json(7));
  EXPECT_EQ(seen, *patch);
  p = box->Call("try_patch", *ParseJson(R"({"diff": "x"})"));
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->ok);
  EXPECT_EQ(p->error, "the patch does not apply: hunk 1");
  p = box->Call("finish", *ParseJson(R"({"outcome": "done", "summary": "s"})"));
  ASSERT_TRUE(p.ok() && p->ok);
}

}  // namespace
}  // namespace trench::agents
