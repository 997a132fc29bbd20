#include "git/patch_apply.h"

#include <git2.h>

#include <memory>

#include "git/git_util.h"
#include "git/patch_normalize.h"
#include "git/unified_diff.h"

namespace trench::agents {
namespace {

using hlo_bisect::git::Blob;
using hlo_bisect::git::Commit;
using hlo_bisect::git::DefaultSignature;
using hlo_bisect::git::Diff;
using hlo_bisect::git::Index;
using hlo_bisect::git::LookupCommit;
using hlo_bisect::git::Object;
using hlo_bisect::git::OidHex;
using hlo_bisect::git::Reference;
using hlo_bisect::git::Signature;
using hlo_bisect::git::Tree;
using hlo_bisect::git::TreeEntry;
using hlo_bisect::git::TreeOf;
// Refuses refs that would move HEAD, the checked-out branch or
// `protected_ref`, and names that are not refs.
Status CheckWritableRef(git_repository* repo, const std::string& ref,
                        const std::string& protected_ref) {
  if (ref == "HEAD") return InvalidArgument("refusing to write HEAD");
  if (!protected_ref.empty() && ref == protected_ref) {
    return InvalidArgument("refusing to write the protected ref " + ref);
  }
  int valid = 0;
  if (ref.rfind("refs/", 0) != 0 ||
      git_reference_name_is_valid(&valid, ref.c_str()) < 0 || !valid) {
    return InvalidArgument("not a valid ref name: '" + ref + "'");
  }
  git_reference* head = nullptr;
  if (git_reference_lookup(&head, repo, "HEAD") == 0) {
    Reference owned(head);
    if (git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
        ref == git_reference_symbolic_target(head)) {
      return InvalidArgument("refusing to write " + ref +
                             ": HEAD points to it");
    }
  }
  return Status::Ok();
}

// git_apply's delta callback: remembers the file being patched, so that a
// failure can name it.
int RememberDelta(const git_diff_delta* delta, void* payload) {
  auto* path = static_cast<std::string*>(payload);
  const char* p =
      delta->new_file.path ? delta->new_file.path : delta->old_file.path;
  *path = p ? p : "";
  return 0;
}

StatusOr<std::string> BlobAt(git_repository* repo, git_tree* tree,
                             const std::string& path, const std::string& rev,
                             uint64_t max_bytes = UINT64_MAX) {
  git_tree_entry* entry = nullptr;
  const int rc = git_tree_entry_bypath(&entry, tree, path.c_str());
  if (rc == GIT_ENOTFOUND) return NotFound("no file '" + path + "' at " + rev);
  TRENCH_GIT_RETURN_IF_ERROR(rc, "cannot look up '" + path + "' at " + rev);
  TreeEntry owned(entry);
  if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB) {
    return InvalidArgument("'" + path + "' at " + rev + " is not a file");
  }
  if (max_bytes != UINT64_MAX) {
    git_odb* odb = nullptr;
    TRENCH_GIT_RETURN_IF_ERROR(git_repository_odb(&odb, repo),
                               "cannot open the object database");
    size_t size = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    const int header =
        git_odb_read_header(&size, &type, odb, git_tree_entry_id(entry));
    git_odb_free(odb);
    TRENCH_GIT_RETURN_IF_ERROR(header, "cannot read '" + path + "' at " + rev);
    if (size > max_bytes) {
      return InvalidArgument("'" + path + "' at " + rev + " is " +
                             std::to_string(size) + " bytes, more than the " +
                             std::to_string(max_bytes) + " read");
    }
  }
  git_blob* blob = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_blob_lookup(&blob, repo, git_tree_entry_id(entry)),
      "cannot read '" + path + "' at " + rev);
  Blob owned_blob(blob);
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob)),
                     git_blob_rawsize(blob));
}

// The mode of `path` in `tree` (0 when it is not there).
git_filemode_t ModeAt(git_tree* tree, const std::string& path) {
  git_tree_entry* entry = nullptr;
  if (git_tree_entry_bypath(&entry, tree, path.c_str()) != 0) {
    return GIT_FILEMODE_UNREADABLE;
  }
  TreeEntry owned(entry);
  return git_tree_entry_filemode(entry);
}

// Why hunk `k` of `f` does not fit `lines` at its stated place: the first
// pre-image line that differs there.
std::string Mismatch(const FileDiff& f, int k,
                     const std::vector<std::string>& lines) {
  const Hunk& h = f.hunks[k];
  std::string where = "hunk " + std::to_string(k + 1) + " (";
  if (h.line > 0) where += "patch line " + std::to_string(h.line) + ", ";
  where += "'@@ -" + std::to_string(h.old_start) + "," +
           std::to_string(h.old_count) + " +" + std::to_string(h.new_start) +
           "," + std::to_string(h.new_count) + " @@')";
  // Git numbering: with a count of 0 the start is the line before.
  int64_t at = h.old_count == 0 ? h.old_start : h.old_start - 1;
  for (const DiffLine& l : h.lines) {
    if (l.kind == '+') continue;
    const int64_t n = static_cast<int64_t>(lines.size());
    if (at < 0 || at >= n) {
      return where + " matches nowhere in the file: it expects " +
             ShownInMessage(l.text) + " at line " + std::to_string(at + 1) +
             ", the file has " + std::to_string(n) + " lines";
    }
    if (lines[at] != l.text) {
      return where + " matches nowhere in the file: at line " +
             std::to_string(at + 1) + " the file has " +
             ShownInMessage(lines[at]) + " where the hunk expects " +
             ShownInMessage(l.text) +
             " (context and '-' lines must be copied exactly)";
    }
    ++at;
  }
  return where + " overlaps the hunk before it";
}

// Checks each file of `diff` against `tree` and, like git apply, moves
// each hunk to the nearest place where its context matches exactly (no
// fuzz; libgit2 applies a hunk only at its stated line). Fills in the
// modes of deleted files. FailedPrecondition "patch does not apply to
// <sha>: <file>: <why>" when a file to change is missing, is not a
// regular file, a new file exists, or a hunk's context is nowhere.
Status FitToBase(git_repository* repo, git_tree* tree,
                 const std::string& base_sha, UnifiedDiff* diff) {
  for (FileDiff& f : diff->files) {
    const std::string fail =
        "patch does not apply to " + base_sha + ": " + f.path() + ": ";
    if (f.is_new) {
      if (ModeAt(tree, f.new_path) != GIT_FILEMODE_UNREADABLE) {
        return FailedPrecondition(fail +
                                  "the patch creates the file, but it exists");
      }
      continue;
    }
    const git_filemode_t mode = ModeAt(tree, f.old_path);
    if (mode == GIT_FILEMODE_UNREADABLE) {
      return FailedPrecondition(
          fail + "no such file (a new file needs '--- /dev/null')");
    }
    if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE) {
      return FailedPrecondition(fail + "not a regular file");
    }
    if (f.is_deleted) {
      f.old_mode = mode == GIT_FILEMODE_BLOB ? "100644" : "100755";
    }
    if (f.hunks.empty()) continue;
    ASSIGN_OR_RETURN(const std::string content,
                     BlobAt(repo, tree, f.old_path, base_sha));
    const std::vector<std::string> lines = SplitLines(content);
    std::vector<int> dropped;
    FileDiff moved = RelocateHunks(f, lines, &dropped);
    if (!dropped.empty()) {
      return FailedPrecondition(fail + Mismatch(f, dropped[0], lines));
    }
    f = std::move(moved);
  }
  return Status::Ok();
}

// The text libgit2 gets: git's format, hunks fitted to the base. A binary
// change keeps the original text (its data is not kept when parsed here).
StatusOr<std::string> TextToApply(git_repository* repo, git_tree* tree,
                                  const std::string& base_sha,
                                  const std::string& diff_text) {
  ASSIGN_OR_RETURN(UnifiedDiff diff, ParsePatchText(diff_text));
  for (const FileDiff& f : diff.files) {
    if (f.binary) return diff_text;
  }
  RETURN_IF_ERROR(FitToBase(repo, tree, base_sha, &diff));
  return RenderUnifiedDiff(diff);
}

}  // namespace

namespace {

// The unified diff from tree `from` (null: the empty tree) to `to`.
StatusOr<std::string> DiffTrees(git_repository* r, git_tree* from, git_tree* to,
                                const std::string& path_filter,
                                const std::string& what) {
  git_diff_options opts;
  git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
  std::string filter = path_filter;
  char* spec = filter.data();
  if (!filter.empty()) opts.pathspec = {&spec, 1};
  git_diff* diff = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_diff_tree_to_tree(&diff, r, from, to, &opts),
                             "cannot diff " + what);
  Diff owned_diff(diff);
  git_buf buf = GIT_BUF_INIT;
  TRENCH_GIT_RETURN_IF_ERROR(git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH),
                             "cannot print the diff of " + what);
  std::string text(buf.ptr ? buf.ptr : "", buf.size);
  git_buf_dispose(&buf);
  return text;
}

}  // namespace

StatusOr<std::string> DiffOfCommit(const hlo_bisect::GitRepo& repo,
                                   const std::string& rev,
                                   const std::string& path_filter) {
  git_repository* r = repo.raw();
  ASSIGN_OR_RETURN(Commit commit, LookupCommit(r, rev));
  ASSIGN_OR_RETURN(Tree tree, TreeOf(commit.get()));
  Tree parent_tree;
  if (git_commit_parentcount(commit.get()) > 0) {
    git_commit* parent = nullptr;
    TRENCH_GIT_RETURN_IF_ERROR(git_commit_parent(&parent, commit.get(), 0),
                               "cannot read the first parent of " + rev);
    Commit owned(parent);
    ASSIGN_OR_RETURN(parent_tree, TreeOf(parent));
  }
  return DiffTrees(r, parent_tree.get(), tree.get(), path_filter,
                   rev + " against its parent");
}

StatusOr<std::string> DiffBetween(const hlo_bisect::GitRepo& repo,
                                  const std::string& from_rev,
                                  const std::string& to_rev) {
  git_repository* r = repo.raw();
  ASSIGN_OR_RETURN(Commit from, LookupCommit(r, from_rev));
  ASSIGN_OR_RETURN(Commit to, LookupCommit(r, to_rev));
  ASSIGN_OR_RETURN(Tree from_tree, TreeOf(from.get()));
  ASSIGN_OR_RETURN(Tree to_tree, TreeOf(to.get()));
  return DiffTrees(r, from_tree.get(), to_tree.get(), "",
                   to_rev + " against " + from_rev);
}

StatusOr<std::string> ApplyPatchOnto(hlo_bisect::GitRepo& repo,
                                     const std::string& base_rev,
                                     const std::string& diff_text,
                                     const std::string& message,
                                     const std::string& ref,
                                     const std::string& protected_ref) {
  git_repository* r = repo.raw();
  if (!ref.empty()) RETURN_IF_ERROR(CheckWritableRef(r, ref, protected_ref));
  ASSIGN_OR_RETURN(Commit base, LookupCommit(r, base_rev));
  const std::string base_sha = OidHex(git_commit_id(base.get()));
  ASSIGN_OR_RETURN(Tree base_tree, TreeOf(base.get()));
  ASSIGN_OR_RETURN(const std::string text,
                   TextToApply(r, base_tree.get(), base_sha, diff_text));
  git_diff* parsed = nullptr;
  if (git_diff_from_buffer(&parsed, text.data(), text.size()) < 0) {
    return InvalidArgument("the patch does not parse" +
                           hlo_bisect::git::LastErrorText());
  }
  Diff diff(parsed);
  if (git_diff_num_deltas(diff.get()) == 0) {
    return InvalidArgument("the patch holds no file change");
  }

  std::string failing_path;
  git_apply_options opts;
  git_apply_options_init(&opts, GIT_APPLY_OPTIONS_VERSION);
  opts.delta_cb = RememberDelta;
  opts.payload = &failing_path;
  git_index* applied = nullptr;
  if (git_apply_to_tree(&applied, r, base_tree.get(), diff.get(), &opts) < 0) {
    return FailedPrecondition("patch does not apply to " + base_sha + ": " +
                              failing_path + hlo_bisect::git::LastErrorText());
  }
  Index index(applied);
  git_oid tree_oid;
  TRENCH_GIT_RETURN_IF_ERROR(git_index_write_tree_to(&tree_oid, index.get(), r),
                             "cannot write the patched tree");
  git_tree* new_tree = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_tree_lookup(&new_tree, r, &tree_oid),
                             "cannot read the patched tree");
  Tree owned_tree(new_tree);
  ASSIGN_OR_RETURN(Signature sig, DefaultSignature(r));
  git_oid commit_oid;
  const git_commit* parents[] = {base.get()};
  TRENCH_GIT_RETURN_IF_ERROR(
      git_commit_create(&commit_oid, r, nullptr, sig.get(), sig.get(), nullptr,
                        message.c_str(), new_tree, 1, parents),
      "cannot create the patch commit");
  if (!ref.empty()) {
    git_reference* out = nullptr;
    TRENCH_GIT_RETURN_IF_ERROR(
        git_reference_create(&out, r, ref.c_str(), &commit_oid,
                             /*force=*/1, "trench: patch"),
        "cannot set " + ref);
    git_reference_free(out);
  }
  return OidHex(&commit_oid);
}

StatusOr<std::string> ReadFileAt(const hlo_bisect::GitRepo& repo,
                                 const std::string& rev,
                                 const std::string& path, uint64_t max_bytes) {
  git_repository* r = repo.raw();
  ASSIGN_OR_RETURN(Commit commit, LookupCommit(r, rev));
  ASSIGN_OR_RETURN(Tree tree, TreeOf(commit.get()));
  return BlobAt(r, tree.get(), path, rev, max_bytes);
}

}  // namespace trench::agents
