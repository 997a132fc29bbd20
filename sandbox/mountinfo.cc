#include "sandbox/mountinfo.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace trench::sandbox {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() &&
        std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::vector<MountEntry> ReadMountInfo() {
  std::vector<MountEntry> mounts;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    size_t sep = line.find(" - ");
    if (sep == std::string::npos) continue;
    std::istringstream left(line.substr(0, sep)), right(line.substr(sep + 3));
    std::string id, parent, dev, root, point, source;
    MountEntry m;
    left >> id >> parent >> dev >> root >> point;
    right >> m.fstype >> source >> m.options;
    m.point = Unescape(point);
    m.source = Unescape(source);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

}  // namespace trench::sandbox
