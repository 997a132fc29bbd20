// The one command-line parser (base/flags.h): spellings, errors, --help,
// --version and the no-arguments rule.
#include "base/flags.h"

#include <gtest/gtest.h>

#include <sstream>

namespace trench {
namespace {

// A parser with one flag of each kind, and what it stores.
struct Tool {
  bool check = false;
  int jobs = 1;
  double rate = 1;
  uint64_t seed = 0;
  std::string out, module;
  std::vector<std::string> inputs, rest;
  int level = 0;
  FlagParser p{"tool", "MODULE [--check] [--out DIR]\n--list"};

  Tool() {
    p.set_description("Does things to MODULE.");
    p.set_epilog("exit: 0 ok, 2 usage");
    p.Bool("check", &check, "only check");
    p.Number("jobs", "N", &jobs, "workers");
    p.Number("rate", "R", &rate, "a rate");
    p.Number("seed", "N", &seed, "the seed");
    p.String("out", "DIR", &out, "where results go\nsecond line");
    p.Strings("input", "F", &inputs, "an input file");
    p.Custom("level", "L", "0..3", [this](const std::string& v) -> Status {
      if (v.size() != 1 || v[0] < '0' || v[0] > '3') {
        return InvalidArgument("expected 0..3, got '" + v + "'");
      }
      level = v[0] - '0';
      return Status::Ok();
    });
    p.Group("target flags");
    p.String("o", "FILE", &out, "short spelling");
    p.Positional("MODULE", &module, "the module");
  }
  Status Parse(std::vector<std::string> args) { return p.Parse(args); }
};

TEST(FlagParserTest, BothSpellingsBooleansAndRepeats) {
  Tool t;
  ASSERT_TRUE(
      t.Parse({"m.hlo", "--jobs=3", "--out", "d", "--check", "--input", "a",
               "--input=b", "--seed", "7", "--rate=0.5", "--level", "2"})
          .ok());
  EXPECT_EQ(t.module, "m.hlo");
  EXPECT_EQ(t.jobs, 3);
  EXPECT_EQ(t.out, "d");
  EXPECT_TRUE(t.check);
  EXPECT_EQ(t.inputs, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t.seed, 7u);
  EXPECT_EQ(t.rate, 0.5);
  EXPECT_EQ(t.level, 2);
  EXPECT_TRUE(t.p.Given("jobs"));
  EXPECT_FALSE(t.p.Given("o"));
  EXPECT_FALSE(t.p.help_requested());
}

TEST(FlagParserTest, OneLetterNamesTakeOneOrTwoDashes) {
  Tool t;
  ASSERT_TRUE(t.Parse({"m", "-o", "a"}).ok());
  EXPECT_EQ(t.out, "a");
  ASSERT_TRUE(t.Parse({"m", "--o=b"}).ok());
  EXPECT_EQ(t.out, "b");
}

TEST(FlagParserTest, LastValueWinsAndValuesMayStartWithADash) {
  Tool t;
  ASSERT_TRUE(t.Parse({"--out", "a", "--out", "-", "-o", "--x"}).ok());
  EXPECT_EQ(t.out, "--x");  // -o is the same variable, given last.
  Tool u;
  ASSERT_TRUE(u.Parse({"--out", "-"}).ok());
  EXPECT_EQ(u.out, "-");
}

TEST(FlagParserTest, DoubleDashEndsFlagsAndDashIsPositional) {
  Tool t;
  t.p.Rest("MORE", &t.rest, "more");
  ASSERT_TRUE(t.Parse({"-", "a", "--", "--check", "-h"}).ok());
  EXPECT_EQ(t.module, "-");
  EXPECT_EQ(t.rest, (std::vector<std::string>{"a", "--check", "-h"}));
  EXPECT_FALSE(t.check);
  EXPECT_FALSE(t.p.help_requested());
}

TEST(FlagParserTest, ErrorsNameTheFlag) {
  struct {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--bogus"}, "unknown flag --bogus"},
      {{"--bogus=1"}, "unknown flag --bogus"},
      {{"-x"}, "unknown flag -x"},
      {{"-out", "f"}, "unknown flag -out"},  // Long names: --out only.
      {{"m", "--jobs"}, "--jobs needs a value"},
      {{"--jobs", "x"}, "--jobs: expected an integer, got 'x'"},
      {{"--jobs=1.5"}, "--jobs: expected an integer, got '1.5'"},
      {{"--seed=-1"}, "--seed: expected an integer, got '-1'"},
      {{"--rate", "fast"}, "--rate: expected a number, got 'fast'"},
      {{"--level", "9"}, "--level: expected 0..3, got '9'"},
      {{"--check=yes"}, "--check takes no value"},
      {{"--help=1"}, "--help takes no value"},
      {{"a", "b"}, "unexpected argument 'b'"},
      {{}, "missing MODULE"},
  };
  for (const auto& c : cases) {
    Tool t;
    Status s = t.Parse(c.args);
    EXPECT_FALSE(s.ok()) << c.message;
    EXPECT_EQ(s.message(), c.message);
  }
}

TEST(FlagParserTest, SetterMessagesThatNameTheFlagAreKept) {
  FlagParser p("t", "");
  p.Custom("timeout", "S", "", [](const std::string& v) {
    return InvalidArgument("--timeout expects seconds > 0, got '" + v + "'");
  });
  EXPECT_EQ(p.Parse({"--timeout", "0"}).message(),
            "--timeout expects seconds > 0, got '0'");
}

TEST(FlagParserTest, NoArgumentsIsAnErrorUnlessAllowed) {
  FlagParser none("fuzz", "[--budget T]");
  std::string budget;
  none.String("budget", "T", &budget, "");
  EXPECT_EQ(none.Parse({}).message(), "no arguments given");
  FlagParser allowed("bugs", "[--json]");
  allowed.AllowNoArguments();
  EXPECT_TRUE(allowed.Parse({}).ok());
}

TEST(FlagParserTest, QuotedUnknownFlags) {
  FlagParser p("trench bugs", "");
  p.QuoteUnknownFlags();
  EXPECT_EQ(p.Parse({"--nope=1"}).message(), "unknown flag '--nope'");
}

TEST(FlagParserTest, HelpWinsAndIsGeneratedFromTheDeclarations) {
  Tool t;
  ASSERT_TRUE(t.Parse({"--bogus", "-h"}).ok());
  EXPECT_TRUE(t.p.help_requested());
  const std::string help = t.p.HelpText();
  for (const char* part :
       {"usage: tool MODULE [--check] [--out DIR]\n       tool --list\n",
        "Does things to MODULE.", "arguments:\n  MODULE ", "flags:\n",
        "  --jobs N ", "  --check ", "  --out DIR",
        "an input file (repeatable)\n", "target flags:\n  -o FILE ",
        "  -h, --help ", "  --version ", "exit: 0 ok, 2 usage"}) {
    EXPECT_NE(help.find(part), std::string::npos) << part << "\n" << help;
  }
  // Help texts start at one column; continuation lines too.
  const std::string indent(
      help.find("workers") - help.rfind('\n', help.find("workers")) - 1, ' ');
  EXPECT_NE(help.find("where results go\n" + indent + "second line"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("  --input F" + std::string(indent.size() - 11, ' ') +
                      "an input file"),
            std::string::npos)
      << help;
}

std::vector<char*> Argv(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return argv;
}

TEST(FlagParserTest, ParseOrExitPrintsAndReturnsExitCodes) {
  std::vector<std::string> args = {"tool", "--help"};
  std::ostringstream out, err;
  Tool help;
  std::vector<char*> argv = Argv(args);
  EXPECT_EQ(help.p.ParseOrExit(2, argv.data(), out, err), kFlagsExitOk);
  EXPECT_EQ(out.str(), help.p.HelpText());
  EXPECT_EQ(err.str(), "");

  args = {"tool", "--version"};
  argv = Argv(args);
  out.str("");
  Tool version;
  EXPECT_EQ(version.p.ParseOrExit(2, argv.data(), out, err), kFlagsExitOk);
  EXPECT_EQ(out.str(), std::string("tool ") + kTrenchVersion + "\n");

  args = {"tool", "m", "--bogus"};
  argv = Argv(args);
  out.str("");
  Tool bad;
  EXPECT_EQ(bad.p.ParseOrExit(3, argv.data(), out, err), kFlagsExitUsage);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str().rfind("tool: unknown flag --bogus; see --help\n"
                            "usage: tool MODULE",
                            0),
            0u)
      << err.str();

  args = {"tool"};
  argv = Argv(args);
  err.str("");
  Tool empty;
  EXPECT_EQ(empty.p.ParseOrExit(1, argv.data(), out, err), kFlagsExitUsage);
  EXPECT_NE(err.str().find("tool: missing MODULE"), std::string::npos);

  args = {"tool", "m", "--check"};
  argv = Argv(args);
  Tool ok;
  EXPECT_EQ(ok.p.ParseOrExit(3, argv.data(), out, err), std::nullopt);
  EXPECT_TRUE(ok.check);
}

TEST(FlagParserTest, VersionLineCanBeSet) {
  FlagParser p("hlo-bisect commits", "CASE_DIR");
  EXPECT_EQ(p.version(), std::string("hlo-bisect ") + kTrenchVersion);
  p.set_version("hloc 0.1 (tpux 1)");
  EXPECT_EQ(p.version(), "hloc 0.1 (tpux 1)");
}

}  // namespace
}  // namespace trench
