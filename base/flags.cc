#include "base/flags.h"

#include <algorithm>
#include <cassert>

namespace trench {
namespace {

constexpr size_t kHelpColumn = 24;

// "  left" padded to the help column (or on its own line when too long),
// then `help` with its continuation lines indented to the column.
std::string HelpRow(const std::string& left, std::string_view help) {
  std::string row = "  " + left;
  if (row.size() + 2 > kHelpColumn) {
    row += "\n" + std::string(kHelpColumn, ' ');
  } else {
    row.append(kHelpColumn - row.size(), ' ');
  }
  for (char c : help) {
    row += c;
    if (c == '\n') row.append(kHelpColumn, ' ');
  }
  return row + "\n";
}

// `message` unless it already starts with `flag` (and a space or colon).
std::string NamingFlag(const std::string& flag, const std::string& message) {
  if (message.rfind(flag, 0) == 0 &&
      (message.size() == flag.size() || message[flag.size()] == ' ' ||
       message[flag.size()] == ':')) {
    return message;
  }
  return flag + ": " + message;
}

}  // namespace

FlagParser::FlagParser(std::string tool, std::string synopsis)
    : tool_(std::move(tool)), synopsis_(std::move(synopsis)) {
  version_ = tool_.substr(0, tool_.find(' ')) + " " + kTrenchVersion;
}

std::string FlagParser::Spelling(std::string_view name) {
  return (name.size() == 1 ? "-" : "--") + std::string(name);
}

void FlagParser::Add(Flag f) {
  assert(Find(f.name) == nullptr && "flag declared twice");
  assert(f.name != "help" && f.name != "h" && f.name != "version");
  f.group = group_;
  flags_.push_back(std::move(f));
}

const FlagParser::Flag* FlagParser::Find(std::string_view name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

void FlagParser::Bool(std::string_view name, bool* out, std::string_view help) {
  Switch(
      name, [out] { *out = true; }, help);
}

void FlagParser::Switch(std::string_view name, std::function<void()> on,
                        std::string_view help) {
  Flag f;
  f.name = name;
  f.help = help;
  f.is_bool = true;
  f.on = std::move(on);
  Add(std::move(f));
}

void FlagParser::String(std::string_view name, std::string_view value_name,
                        std::string* out, std::string_view help) {
  Custom(name, value_name, help, [out](const std::string& v) {
    *out = v;
    return Status::Ok();
  });
}

void FlagParser::Strings(std::string_view name, std::string_view value_name,
                         std::vector<std::string>* out, std::string_view help) {
  Custom(
      name, value_name, help,
      [out](const std::string& v) {
        out->push_back(v);
        return Status::Ok();
      },
      /*repeated=*/true);
}

void FlagParser::Custom(std::string_view name, std::string_view value_name,
                        std::string_view help, Setter set, bool repeated) {
  Flag f;
  f.name = name;
  f.value_name = value_name;
  f.help = help;
  f.repeated = repeated;
  f.set = std::move(set);
  Add(std::move(f));
}

void FlagParser::Positional(std::string_view name, std::string* out,
                            std::string_view help) {
  args_.push_back({std::string(name), std::string(help), out, nullptr});
}

void FlagParser::Rest(std::string_view name, std::vector<std::string>* out,
                      std::string_view help) {
  args_.push_back({std::string(name), std::string(help), nullptr, out});
}

bool FlagParser::Given(std::string_view name) const {
  return std::find(given_.begin(), given_.end(), name) != given_.end();
}

Status FlagParser::TakeFlag(const std::vector<std::string>& args, size_t* i) {
  const std::string& arg = args[*i];
  const size_t dashes = arg[1] == '-' ? 2 : 1;
  std::string name = arg.substr(dashes);
  std::optional<std::string> value;
  if (const size_t eq = name.find('='); eq != std::string::npos) {
    value = name.substr(eq + 1);
    name = name.substr(0, eq);
  }
  const std::string flag = Spelling(name);
  const bool builtin_help = name == (dashes == 1 ? "h" : "help");
  if (builtin_help || (name == "version" && dashes == 2)) {
    if (value) return InvalidArgument(flag + " takes no value");
    (builtin_help ? help_ : version_requested_) = true;
    return Status::Ok();
  }
  const Flag* f = Find(name);
  // "-name" is refused: a long name needs two dashes (a one-letter name
  // takes one or two).
  if (f == nullptr || (dashes == 1 && name.size() > 1)) {
    const std::string typed = arg.substr(0, arg.find('='));
    return InvalidArgument(quote_unknown_ ? "unknown flag '" + typed + "'"
                                          : "unknown flag " + typed);
  }
  given_.push_back(name);
  if (f->is_bool) {
    if (value) return InvalidArgument(flag + " takes no value");
    f->on();
    return Status::Ok();
  }
  if (!value) {
    if (*i + 1 >= args.size()) return InvalidArgument(flag + " needs a value");
    value = args[++*i];
  }
  Status s = f->set(*value);
  if (s.ok()) return s;
  return Status(s.code(), NamingFlag(flag, s.message()));
}

Status FlagParser::TakePositional(const std::string& arg, size_t* next) {
  if (*next >= args_.size()) {
    return InvalidArgument("unexpected argument '" + arg + "'");
  }
  Arg& a = args_[*next];
  if (a.rest != nullptr) {
    a.rest->push_back(arg);
  } else {
    *a.one = arg;
    ++*next;
  }
  return Status::Ok();
}

Status FlagParser::Parse(const std::vector<std::string>& args) {
  Status first;
  auto keep = [&first](Status s) {
    if (first.ok()) first = std::move(s);
  };
  size_t next_positional = 0;
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!flags_done && a == "--") {
      flags_done = true;
    } else if (!flags_done && a.size() > 1 && a[0] == '-') {
      keep(TakeFlag(args, &i));
    } else {
      keep(TakePositional(a, &next_positional));
    }
  }
  if (help_ || version_requested_) return Status::Ok();
  if (args.empty() && !allow_no_args_) {
    return InvalidArgument(args_.empty() ? "no arguments given"
                                         : "missing " + args_.front().name);
  }
  return first;
}

Status FlagParser::Parse(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return Parse(args);
}

std::optional<int> FlagParser::ParseOrExit(int argc, char** argv,
                                           std::ostream& out,
                                           std::ostream& err) {
  Status s = Parse(argc, argv);
  if (help_) {
    out << HelpText();
    return kFlagsExitOk;
  }
  if (version_requested_) {
    out << version_ << "\n";
    return kFlagsExitOk;
  }
  if (!s.ok()) return UsageError(err, s.message());
  return std::nullopt;
}

int FlagParser::UsageError(std::ostream& err,
                           const std::string& message) const {
  err << tool_ << ": " << message << "; see --help\n" << UsageLines();
  return kFlagsExitUsage;
}

std::string FlagParser::UsageLines() const {
  std::string s;
  size_t start = 0;
  while (start <= synopsis_.size()) {
    size_t end = synopsis_.find('\n', start);
    if (end == std::string::npos) end = synopsis_.size();
    s += (s.empty() ? "usage: " : "       ") + tool_ + " " +
         synopsis_.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return s;
}

std::string FlagParser::HelpText() const {
  std::string s = UsageLines();
  if (!description_.empty()) s += "\n" + description_ + "\n";
  if (!args_.empty()) {
    s += "\narguments:\n";
    for (const Arg& a : args_) {
      if (!a.name.empty()) s += HelpRow(a.name, a.help);
    }
  }
  std::vector<std::string> groups = {""};
  for (const Flag& f : flags_) {
    if (std::find(groups.begin(), groups.end(), f.group) == groups.end()) {
      groups.push_back(f.group);
    }
  }
  for (const std::string& g : groups) {
    s += "\n" + (g.empty() ? std::string("flags") : g) + ":\n";
    for (const Flag& f : flags_) {
      if (f.group != g) continue;
      std::string left = Spelling(f.name);
      if (!f.is_bool) left += " " + f.value_name;
      s += HelpRow(left, f.help + (f.repeated ? " (repeatable)" : ""));
    }
    if (g.empty()) {
      s += HelpRow("-h, --help", "print this help and exit");
      s += HelpRow("--version", "print the version and exit");
    }
  }
  if (!epilog_.empty()) s += "\n" + epilog_ + "\n";
  return s;
}

}  // namespace trench
