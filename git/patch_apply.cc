#include "git/patch_apply.h"

#include <git2.h>

#include <memory>

#include "git/git_util.h"
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

// libgit2 applies a hunk only at its stated line. Like git apply, move each
// hunk to the nearest place where its context matches exactly (no fuzz).
// The text is returned as is when it is not ours to move (it does not
// parse here, holds a binary change, or a file is missing: libgit2 then
// says why); FailedPrecondition when a hunk's context is nowhere.
StatusOr<std::string> MoveHunksOntoBase(git_repository* repo, git_tree* tree,
                                        const std::string& base_sha,
                                        const std::string& text) {
  StatusOr<UnifiedDiff> diff = ParseUnifiedDiff(text);
  if (!diff.ok()) return text;
  for (FileDiff& f : diff->files) {
    if (f.binary) return text;
    if (f.is_new || f.hunks.empty()) continue;
    StatusOr<std::string> content = BlobAt(repo, tree, f.old_path, base_sha);
    if (!content.ok()) return text;
    std::vector<int> dropped;
    f = RelocateHunks(f, SplitLines(*content), &dropped);
    if (!dropped.empty()) {
      return FailedPrecondition("patch does not apply to " + base_sha + ": " +
                                f.old_path + " (the context of hunk " +
                                std::to_string(dropped[0] + 1) +
                                " is not in the file)");
    }
  }
  return RenderUnifiedDiff(*diff);
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
  git_diff_options opts;
  git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
  std::string filter = path_filter;
  char* spec = filter.data();
  if (!filter.empty()) opts.pathspec = {&spec, 1};
  git_diff* diff = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_diff_tree_to_tree(&diff, r, parent_tree.get(), tree.get(), &opts),
      "cannot diff " + rev + " against its parent");
  Diff owned_diff(diff);
  git_buf buf = GIT_BUF_INIT;
  TRENCH_GIT_RETURN_IF_ERROR(git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH),
                             "cannot print the diff of " + rev);
  std::string text(buf.ptr ? buf.ptr : "", buf.size);
  git_buf_dispose(&buf);
  return text;
}

StatusOr<std::string> ApplyPatchOnto(hlo_bisect::GitRepo& repo,
                                     const std::string& base_rev,
                                     const std::string& diff_text,
                                     const std::string& message,
                                     const std::string& ref,
                                     const std::string& protected_ref) {
  git_repository* r = repo.raw();
  if (!ref.empty()) RETURN_IF_ERROR(CheckWritableRef(r, ref, protected_ref));
  if (diff_text.empty()) return InvalidArgument("the patch is empty");
  git_diff* parsed = nullptr;
  if (git_diff_from_buffer(&parsed, diff_text.data(), diff_text.size()) < 0) {
    return InvalidArgument("the patch does not parse" +
                           hlo_bisect::git::LastErrorText());
  }
  Diff diff(parsed);
  if (git_diff_num_deltas(diff.get()) == 0) {
    return InvalidArgument("the patch holds no file change");
  }
  ASSIGN_OR_RETURN(Commit base, LookupCommit(r, base_rev));
  const std::string base_sha = OidHex(git_commit_id(base.get()));
  ASSIGN_OR_RETURN(Tree base_tree, TreeOf(base.get()));
  ASSIGN_OR_RETURN(const std::string moved,
                   MoveHunksOntoBase(r, base_tree.get(), base_sha, diff_text));
  if (moved != diff_text) {
    git_diff* reparsed = nullptr;
    if (git_diff_from_buffer(&reparsed, moved.data(), moved.size()) < 0) {
      return Internal("the moved patch does not parse" +
                      hlo_bisect::git::LastErrorText());
    }
    diff.reset(reparsed);
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
