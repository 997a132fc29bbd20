// One command-line parser for every tool: each tool declares its flags and
// positional arguments on a FlagParser, which parses argv, generates --help
// and answers --version, with the same spellings and errors everywhere.
//
// Spellings: a flag named "out" is `--out=V` or `--out V` (the next
// argument is the value, even when it starts with a dash); a one-letter name
// ("o") is `-o V`. A boolean flag is `--name` and takes no value. A repeated
// flag collects every occurrence; any other flag keeps its last value.
// `--` ends the flags (everything after it is positional); `-` alone is a
// positional (stdin, by convention). Built in: `-h`/`--help`, `--version`.
// (A one-letter name also takes two dashes, `--o V`; a longer one never
// takes one: `-out` is an unknown flag.)
//
// Errors name the flag: "unknown flag --bogus", "--jobs needs a value",
// "--jobs: expected an integer, got 'x'", "--help takes no value".
//
// Typical main:
//   FlagParser p("hlo-fmt", "MODULE [--check]");
//   p.Bool("check", &check, "print nothing; only report errors");
//   p.Positional("MODULE", &path, "path to the module, or - for stdin");
//   if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
//     return *exit;
//   }
//   if (path.empty()) return p.UsageError(err, "missing MODULE");
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/status.h"

namespace trench {

// The version every trench tool reports (hloc adds its tpux version).
inline constexpr char kTrenchVersion[] = "0.1";

// Exit codes of ParseOrExit and UsageError.
inline constexpr int kFlagsExitOk = 0;
inline constexpr int kFlagsExitUsage = 2;

// `text` as a number of type T, the whole text (no sign for unsigned
// types). InvalidArgument("expected an integer, got 'x'") or ("expected a
// number, got 'x'") otherwise; the message does not name a flag.
template <typename T>
StatusOr<T> ParseFlagNumber(std::string_view text) {
  static_assert(std::is_arithmetic_v<T>);
  T v{};
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() ||
      r.ptr != text.data() + text.size()) {
    return InvalidArgument(std::string(std::is_integral_v<T>
                                           ? "expected an integer"
                                           : "expected a number") +
                           ", got '" + std::string(text) + "'");
  }
  return v;
}

// Not thread-safe; one parser per command line. The pointers given to the
// declaration methods must outlive Parse.
class FlagParser {
 public:
  // Stores a flag's value. An error message that does not start with the
  // flag ("--name") gets "--name: " put in front, so every error names it.
  using Setter = std::function<Status(const std::string& value)>;

  // `tool` names the program in messages and usage ("hlo-diff",
  // "hlo-bisect commits"). `synopsis`: the usage lines without
  // "usage: <tool> ", one per line ("CASE_DIR [flags]\nMODULE.hlo ...").
  FlagParser(std::string tool, std::string synopsis);

  // Text shown by --help between the usage lines and the arguments: what
  // the tool does. `epilog`: text after the flags (exit codes, notes).
  void set_description(std::string text) { description_ = std::move(text); }
  void set_epilog(std::string text) { epilog_ = std::move(text); }
  // The line --version prints; default "<first word of tool> 0.1".
  void set_version(std::string line) { version_ = std::move(line); }
  // By default an empty command line is a usage error ("no tool starts
  // work when run with no arguments"); tools whose argument-free run is
  // harmless (listing, reading stdin) allow it.
  void AllowNoArguments() { allow_no_args_ = true; }
  // "unknown flag '--x'" instead of "unknown flag --x" (the `trench`
  // command's established wording).
  void QuoteUnknownFlags() { quote_unknown_ = true; }
  // The flags declared after this are listed under "`title`:" in --help.
  void Group(std::string title) { group_ = std::move(title); }

  // ---- Declarations. `name` without dashes; `help` may hold newlines.
  // REQUIRES: each name is declared once.
  void Bool(std::string_view name, bool* out, std::string_view help);
  // A boolean that runs `on` when given (e.g. --no-progress).
  void Switch(std::string_view name, std::function<void()> on,
              std::string_view help);
  void String(std::string_view name, std::string_view value_name,
              std::string* out, std::string_view help);
  // Repeated: every occurrence is appended to *out.
  void Strings(std::string_view name, std::string_view value_name,
               std::vector<std::string>* out, std::string_view help);
  // T: int, int64_t, uint64_t, double (ParseFlagNumber).
  template <typename T>
  void Number(std::string_view name, std::string_view value_name, T* out,
              std::string_view help) {
    Custom(name, value_name, help, [out](const std::string& v) -> Status {
      StatusOr<T> n = ParseFlagNumber<T>(v);
      if (!n.ok()) return n.status();
      *out = *n;
      return Status::Ok();
    });
  }
  // Any value: `set` checks and stores it. `repeated` only changes --help.
  void Custom(std::string_view name, std::string_view value_name,
              std::string_view help, Setter set, bool repeated = false);

  // Positional arguments, in order. A positional left out keeps its
  // value; whether it was required is the tool's check (tools with
  // several modes need different ones). `Rest` takes all that remain (an
  // empty name leaves it out of --help: extra arguments for the tool to
  // refuse in its own words).
  void Positional(std::string_view name, std::string* out,
                  std::string_view help);
  void Rest(std::string_view name, std::vector<std::string>* out,
            std::string_view help);

  // ---- Parsing.
  // Parses `args` (without the program name). Returns the first error
  // (unknown flag, missing or bad value, extra positional, no arguments
  // at all); with -h/--help or --version anywhere, returns OK and
  // help_requested() / version_requested() say so (help wins over errors).
  Status Parse(const std::vector<std::string>& args);
  // argv[1..argc-1].
  Status Parse(int argc, char** argv);
  bool help_requested() const { return help_; }
  bool version_requested() const { return version_requested_; }
  // Whether flag `name` appeared on the command line.
  bool Given(std::string_view name) const;

  // Parse, then: help -> HelpText() on `out`, returns 0; version -> the
  // version line on `out`, returns 0; error -> UsageError on `err`, returns
  // 2; else nullopt (run the tool).
  std::optional<int> ParseOrExit(int argc, char** argv, std::ostream& out,
                                 std::ostream& err);

  // Prints "<tool>: <message>" and the usage lines on `err`; returns 2.
  int UsageError(std::ostream& err, const std::string& message) const;

  // "usage: <tool> <synopsis>" (one line per synopsis line).
  std::string UsageLines() const;
  // The usage lines, description, arguments, flags by group, epilog.
  std::string HelpText() const;
  const std::string& tool() const { return tool_; }
  const std::string& version() const { return version_; }

 private:
  struct Flag {
    std::string name, value_name, help, group;
    bool is_bool = false, repeated = false;
    Setter set;                // Valued flags.
    std::function<void()> on;  // Booleans.
  };
  struct Arg {
    std::string name, help;
    std::string* one = nullptr;
    std::vector<std::string>* rest = nullptr;
  };

  void Add(Flag f);
  const Flag* Find(std::string_view name) const;
  // Applies args[*i] (a flag); advances *i past a separate value.
  Status TakeFlag(const std::vector<std::string>& args, size_t* i);
  Status TakePositional(const std::string& arg, size_t* next);
  static std::string Spelling(std::string_view name);

  std::string tool_, synopsis_, description_, epilog_, version_, group_;
  bool allow_no_args_ = false, quote_unknown_ = false;
  std::vector<Flag> flags_;
  std::vector<Arg> args_;
  std::vector<std::string> given_;
  bool help_ = false, version_requested_ = false;
};

}  // namespace trench
