// ustar writing and gzip (tar_gz.h).
#include "orchestrator/api/tar_gz.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;

constexpr size_t kBlock = 512;

// Writes `value` as `width - 1` octal digits and a NUL into `field`.
void Octal(char* field, size_t width, uint64_t value) {
  std::string digits(width - 1, '0');
  for (size_t i = width - 1; i-- > 0 && value > 0; value >>= 3) {
    digits[i] = static_cast<char>('0' + (value & 7));
  }
  std::memcpy(field, digits.data(), width - 1);
  field[width - 1] = '\0';
}

struct Entry {
  std::string name;  // Relative to the archive root, '/'-separated.
  fs::path path;
  bool directory = false;
  bool executable = false;
  uint64_t size = 0;
  int64_t mtime = 0;
};

Status AppendHeader(const Entry& e, std::string* out) {
  char h[kBlock] = {};
  std::string name = e.name + (e.directory ? "/" : "");
  std::string prefix;
  if (name.size() > 100) {
    // Split at a '/' so the name part fits 100 bytes, the prefix 155.
    size_t cut = name.rfind('/', name.size() - 2);
    while (cut != std::string::npos && name.size() - cut - 1 > 100) {
      cut = std::string::npos;  // The last component alone is too long.
    }
    if (cut == std::string::npos || cut > 155) {
      return InvalidArgument("path '" + e.name + "' is too long for ustar");
    }
    prefix = name.substr(0, cut);
    name = name.substr(cut + 1);
  }
  std::memcpy(h, name.data(), name.size());
  Octal(h + 100, 8, e.directory || e.executable ? 0755 : 0644);
  Octal(h + 108, 8, 0);
  Octal(h + 116, 8, 0);
  Octal(h + 124, 12, e.directory ? 0 : e.size);
  Octal(h + 136, 12, static_cast<uint64_t>(std::max<int64_t>(0, e.mtime)));
  std::memset(h + 148, ' ', 8);
  h[156] = e.directory ? '5' : '0';
  std::memcpy(h + 257, "ustar", 6);  // With its NUL.
  std::memcpy(h + 263, "00", 2);
  std::memcpy(h + 265, "root", 4);
  std::memcpy(h + 297, "root", 4);
  std::memcpy(h + 345, prefix.data(), prefix.size());
  uint64_t sum = 0;
  for (unsigned char c : h) sum += c;
  Octal(h + 148, 7, sum);
  h[155] = ' ';
  out->append(h, kBlock);
  return Status::Ok();
}

StatusOr<std::vector<Entry>> ListEntries(const fs::path& dir,
                                         const std::string& root) {
  std::vector<Entry> entries;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec) return IoError("cannot list " + dir.string() + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return IoError("cannot list " + dir.string() + ": " + ec.message());
    const fs::file_status st = it->symlink_status(ec);
    if (ec) continue;
    Entry e;
    e.path = it->path();
    e.name = root + "/" + fs::relative(e.path, dir).generic_string();
    if (fs::is_directory(st)) {
      e.directory = true;
    } else if (fs::is_regular_file(st)) {
      e.size = fs::file_size(e.path, ec);
      if (ec) return IoError("cannot read " + e.path.string());
      e.executable =
          (st.permissions() & fs::perms::owner_exec) != fs::perms::none;
    } else {
      continue;  // Links and special files are not archived.
    }
    struct stat sb;
    if (::lstat(e.path.c_str(), &sb) == 0) e.mtime = sb.st_mtime;
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return entries;
}

}  // namespace

StatusOr<std::string> Gzip(const std::string& data) {
  z_stream z{};
  // 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return Internal("zlib: deflateInit2 failed");
  }
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const size_t written = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Internal("zlib: deflate did not finish");
  out.resize(written);
  return out;
}

StatusOr<std::string> TarGzDirectory(const std::string& dir,
                                     const std::string& root_name,
                                     uint64_t max_bytes) {
  if (root_name.empty() || root_name == "." || root_name == ".." ||
      root_name.find('/') != std::string::npos) {
    return InvalidArgument("archive root '" + root_name +
                           "' is not one plain name");
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return NotFound("no case directory " + dir);
  }
  ASSIGN_OR_RETURN(std::vector<Entry> entries, ListEntries(dir, root_name));
  uint64_t total = 0;
  for (const Entry& e : entries) total += e.size;
  if (total > max_bytes) {
    return ResourceExhausted("the case holds " + std::to_string(total) +
                             " bytes, more than the " +
                             std::to_string(max_bytes) + " a download may");
  }
  std::string tar;
  tar.reserve(total + (entries.size() + 3) * kBlock * 2);
  Entry root;
  root.name = root_name;
  root.directory = true;
  RETURN_IF_ERROR(AppendHeader(root, &tar));
  for (const Entry& e : entries) {
    if (e.directory) {
      RETURN_IF_ERROR(AppendHeader(e, &tar));
      continue;
    }
    std::ifstream in(e.path, std::ios::binary);
    std::ostringstream body;
    body << in.rdbuf();
    if (!in && !in.eof()) return IoError("cannot read " + e.path.string());
    Entry sized = e;
    std::string bytes = std::move(body).str();
    sized.size = bytes.size();  // What was read, if it changed meanwhile.
    RETURN_IF_ERROR(AppendHeader(sized, &tar));
    tar += bytes;
    tar.append((kBlock - bytes.size() % kBlock) % kBlock, '\0');
  }
  tar.append(2 * kBlock, '\0');  // The end-of-archive marker.
  return Gzip(tar);
}

}  // namespace trench::orchestrator
