#include "git/git_repo.h"

#include <git2.h>
#include <git2/sys/mempack.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/sha256.h"
#include "git/git_util.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;

using git::Commit;
using git::ConflictIterator;
using git::DefaultSignature;
using git::Diff;
using git::Index;
using git::LookupCommit;
using git::Object;
using git::OidHex;
using git::Revwalk;
using git::Signature;
using git::Tree;
// Creates a commit of `tree` with the given parents and sets `ref` to it.
StatusOr<std::string> CreateCommit(git_repository* repo, git_tree* tree,
                                   const std::vector<git_commit*>& parents,
                                   const std::string& message,
                                   const std::string& ref) {
  ASSIGN_OR_RETURN(Signature sig, DefaultSignature(repo));
  git_oid oid;
  std::vector<const git_commit*> cparents(parents.begin(), parents.end());
  TRENCH_GIT_RETURN_IF_ERROR(
      git_commit_create(&oid, repo, nullptr, sig.get(), sig.get(), nullptr,
                        message.c_str(), tree, cparents.size(),
                        cparents.data()),
      "cannot create a commit");
  if (!ref.empty()) {
    git_reference* r = nullptr;
    TRENCH_GIT_RETURN_IF_ERROR(
        git_reference_create(
            &r, repo, ref.c_str(), &oid, /*force=*/1,
            ("trench: " + message.substr(0, message.find('\n'))).c_str()),
        "cannot point " + ref + " at the new commit");
    git_reference_free(r);
  }
  return OidHex(&oid);
}

std::string ReadFileText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr char kCheckoutStateFile[] = ".trench-checkout";

StatusOr<Tree> EmptyTree(git_repository* repo) {
  git_treebuilder* tb = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_treebuilder_new(&tb, repo, nullptr),
                             "cannot build the empty tree");
  git_oid empty;
  const int rc = git_treebuilder_write(&empty, tb);
  git_treebuilder_free(tb);
  if (rc < 0) return git::Error(rc, "cannot write the empty tree");
  git_tree* t = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_tree_lookup(&t, repo, &empty),
                             "cannot read the empty tree");
  return Tree(t);
}

struct WalkState {
  git_repository* repo;
  std::string dir;
  std::vector<std::string>* differing;
};

int CheckOnDisk(const char* root, const git_tree_entry* entry, void* payload) {
  if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB ||
      git_tree_entry_filemode(entry) == GIT_FILEMODE_LINK) {
    return 0;
  }
  auto* st = static_cast<WalkState*>(payload);
  const std::string path = std::string(root) + git_tree_entry_name(entry);
  const std::string full = st->dir + "/" + path;
  git_oid oid;
  // As checkout writes it: through the repository's filters for `path`.
  if (git_repository_hashfile(&oid, st->repo, full.c_str(), GIT_OBJECT_BLOB,
                              path.c_str()) < 0 ||
      !git_oid_equal(&oid, git_tree_entry_id(entry))) {
    st->differing->push_back(path);
  }
  return 0;
}

// The regular files of `tree` whose content on disk under `dir` differs
// (or that are missing).
StatusOr<std::vector<std::string>> DifferingFiles(git_repository* repo,
                                                  git_tree* tree,
                                                  const std::string& dir) {
  std::vector<std::string> out;
  WalkState st{repo, dir, &out};
  TRENCH_GIT_RETURN_IF_ERROR(
      git_tree_walk(tree, GIT_TREEWALK_PRE, CheckOnDisk, &st),
      "cannot compare " + dir + " with its tree");
  return out;
}

// Writes `tree` into `dir` against `baseline` (files equal in both are
// left alone), only `paths` when given.
Status CheckoutTree(git_repository* repo, git_tree* tree, git_tree* baseline,
                    const std::string& dir,
                    const std::vector<std::string>* paths) {
  git_checkout_options opts;
  git_checkout_options_init(&opts, GIT_CHECKOUT_OPTIONS_VERSION);
  // Never the repository's index: the worktree is a separate directory.
  opts.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DONT_UPDATE_INDEX;
  opts.target_directory = dir.c_str();
  opts.baseline = baseline;
  std::vector<char*> path_ptrs;
  if (paths) {
    for (const std::string& p : *paths) {
      path_ptrs.push_back(const_cast<char*>(p.c_str()));
    }
    opts.paths.strings = path_ptrs.data();
    opts.paths.count = path_ptrs.size();
    opts.checkout_strategy |= GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
  }
  TRENCH_GIT_RETURN_IF_ERROR(
      git_checkout_tree(repo, reinterpret_cast<git_object*>(tree), &opts),
      "checkout into " + dir);
  return Status::Ok();
}

}  // namespace

Json CommitInfo::ToJson() const {
  Json j = Json::MakeObject();
  j["sha"] = sha;
  j["short"] = ShortSha();
  j["summary"] = summary;
  j["author"] = author;
  j["time"] = time;
  return j;
}

StatusOr<std::unique_ptr<GitRepo>> GitRepo::Open(const std::string& path) {
  git::EnsureInit();
  git_repository* repo = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_repository_open_ext(&repo, path.c_str(),
                              GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr),
      "cannot open a git repository at " + path);
  std::unique_ptr<GitRepo> r(new GitRepo(repo));
  // One we may only read (the daemon's mirror, shown read-only to a
  // sandboxed build): what we write (the empty tree of a first checkout,
  // a revert) lives in memory for this GitRepo.
  if (!r->Writable()) RETURN_IF_ERROR(r->KeepNewObjectsInMemory());
  return r;
}

StatusOr<std::unique_ptr<GitRepo>> GitRepo::Init(const std::string& path) {
  git::EnsureInit();
  git_repository* repo = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_repository_init(&repo, path.c_str(), /*bare=*/0),
      "cannot create a git repository at " + path);
  return std::unique_ptr<GitRepo>(new GitRepo(repo));
}

GitRepo::~GitRepo() { git_repository_free(repo_); }

std::string GitRepo::git_dir() const { return git_repository_path(repo_); }

StatusOr<std::string> GitRepo::Resolve(const std::string& revspec) const {
  ASSIGN_OR_RETURN(Commit c, LookupCommit(repo_, revspec));
  return OidHex(git_commit_id(c.get()));
}

StatusOr<CommitInfo> GitRepo::Describe(const std::string& revspec) const {
  ASSIGN_OR_RETURN(Commit c, LookupCommit(repo_, revspec));
  CommitInfo info;
  info.sha = OidHex(git_commit_id(c.get()));
  const char* summary = git_commit_summary(c.get());
  info.summary = summary ? summary : "";
  const git_signature* a = git_commit_author(c.get());
  info.author = std::string(a->name ? a->name : "") + " <" +
                (a->email ? a->email : "") + ">";
  info.time = a->when.time;
  return info;
}

StatusOr<std::string> GitRepo::CommitFiles(
    const std::string& parent_rev, const std::vector<FileChange>& changes,
    const std::string& message, const std::string& ref,
    const std::string& merge_rev) {
  if (parent_rev.empty() && !merge_rev.empty()) {
    return InvalidArgument("a merge needs a first parent");
  }
  git_index* raw_index = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_index_new(&raw_index),
                             "cannot create an index");
  Index index(raw_index);
  std::vector<Commit> parent;
  if (!parent_rev.empty()) {
    ASSIGN_OR_RETURN(Commit p, LookupCommit(repo_, parent_rev));
    ASSIGN_OR_RETURN(Tree t, git::TreeOf(p.get()));
    TRENCH_GIT_RETURN_IF_ERROR(git_index_read_tree(index.get(), t.get()),
                               "cannot read the tree of " + parent_rev);
    parent.push_back(std::move(p));
  }
  if (!merge_rev.empty()) {
    ASSIGN_OR_RETURN(Commit m, LookupCommit(repo_, merge_rev));
    parent.push_back(std::move(m));
  }
  for (const FileChange& ch : changes) {
    if (!ch.content) {
      TRENCH_GIT_RETURN_IF_ERROR(
          git_index_remove_bypath(index.get(), ch.path.c_str()),
          "cannot remove " + ch.path);
      continue;
    }
    git_index_entry entry = {};
    entry.path = ch.path.c_str();
    entry.mode =
        ch.executable ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
    entry.file_size = static_cast<uint32_t>(ch.content->size());
    TRENCH_GIT_RETURN_IF_ERROR(
        git_blob_create_from_buffer(&entry.id, repo_, ch.content->data(),
                                    ch.content->size()),
        "cannot store " + ch.path);
    TRENCH_GIT_RETURN_IF_ERROR(git_index_add(index.get(), &entry),
                               "cannot add " + ch.path);
  }
  git_oid tree_oid;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_index_write_tree_to(&tree_oid, index.get(), repo_),
      "cannot write the tree");
  git_tree* tree = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_tree_lookup(&tree, repo_, &tree_oid),
                             "cannot read the new tree");
  Tree owned_tree(tree);
  std::vector<git_commit*> parents;
  for (Commit& p : parent) parents.push_back(p.get());
  return CreateCommit(repo_, tree, parents, message, ref);
}

StatusOr<bool> GitRepo::Contains(const std::string& rev,
                                 const std::string& ancestor_rev) const {
  ASSIGN_OR_RETURN(Commit c, LookupCommit(repo_, rev));
  ASSIGN_OR_RETURN(Commit a, LookupCommit(repo_, ancestor_rev));
  const git_oid* c_id = git_commit_id(c.get());
  const git_oid* a_id = git_commit_id(a.get());
  if (git_oid_equal(c_id, a_id)) return true;
  const int desc = git_graph_descendant_of(repo_, c_id, a_id);
  if (desc < 0) return git::Error(desc, "cannot relate two commits");
  return desc == 1;
}

StatusOr<std::vector<std::string>> GitRepo::FirstParentRange(
    const std::string& good_rev, const std::string& bad_rev) const {
  ASSIGN_OR_RETURN(Commit good, LookupCommit(repo_, good_rev));
  ASSIGN_OR_RETURN(Commit bad, LookupCommit(repo_, bad_rev));
  const git_oid* g = git_commit_id(good.get());
  const git_oid* b = git_commit_id(bad.get());
  if (git_oid_equal(g, b)) {
    return InvalidArgument("good and bad are the same commit " + OidHex(g));
  }
  const int desc = git_graph_descendant_of(repo_, b, g);
  if (desc < 0) return git::Error(desc, "cannot relate good and bad");
  if (desc == 0) {
    return FailedPrecondition("good " + OidHex(g) +
                              " is not an ancestor of bad " + OidHex(b));
  }
  git_revwalk* raw = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_revwalk_new(&raw, repo_),
                             "cannot walk history");
  Revwalk walk(raw);
  TRENCH_GIT_RETURN_IF_ERROR(
      git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL),
      "cannot sort the walk");
  TRENCH_GIT_RETURN_IF_ERROR(git_revwalk_simplify_first_parent(walk.get()),
                             "cannot simplify the walk");
  TRENCH_GIT_RETURN_IF_ERROR(git_revwalk_push(walk.get(), b),
                             "cannot walk from bad");
  TRENCH_GIT_RETURN_IF_ERROR(git_revwalk_hide(walk.get(), g),
                             "cannot hide good");
  std::vector<std::string> out;
  git_oid oid;
  int rc;
  while ((rc = git_revwalk_next(&oid, walk.get())) == 0) {
    out.push_back(OidHex(&oid));
  }
  if (rc != GIT_ITEROVER) return git::Error(rc, "cannot walk history");
  std::reverse(out.begin(), out.end());
  return out;
}

Status GitRepo::CheckoutTo(const std::string& rev,
                           const std::string& dir_arg) const {
  // libgit2 wants the target directory absolute.
  const std::string dir = fs::absolute(dir_arg).lexically_normal().string();
  ASSIGN_OR_RETURN(Commit target, LookupCommit(repo_, rev));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError("cannot create " + dir + ": " + ec.message());
  const fs::path state = fs::path(dir) / kCheckoutStateFile;
  // The baseline: the tree checked out last, or the empty tree.
  Tree baseline;
  std::string previous = ReadFileText(state);
  while (!previous.empty() && std::isspace(previous.back()))
    previous.pop_back();
  git_oid prev_oid;
  if (previous.size() == GIT_OID_HEXSZ &&
      git_oid_fromstr(&prev_oid, previous.c_str()) == 0) {
    git_commit* prev = nullptr;
    if (git_commit_lookup(&prev, repo_, &prev_oid) == 0) {
      Commit owned(prev);
      StatusOr<Tree> t = git::TreeOf(prev);
      if (t.ok()) baseline = std::move(*t);
    }
  }
  if (!baseline) {
    ASSIGN_OR_RETURN(baseline, EmptyTree(repo_));
  }
  // The state is invalid while files are being written.
  fs::remove(state, ec);
  ASSIGN_OR_RETURN(Tree tree, git::TreeOf(target.get()));
  Status st = CheckoutTree(repo_, tree.get(), baseline.get(), dir, nullptr);
  if (!st.ok()) return st.WithContext("cannot check out " + rev);
  // Files equal in both trees but modified or deleted on disk (libgit2
  // leaves them alone): written again, against the empty tree so that
  // each one differs.
  ASSIGN_OR_RETURN(std::vector<std::string> dirty,
                   DifferingFiles(repo_, tree.get(), dir));
  if (!dirty.empty()) {
    ASSIGN_OR_RETURN(Tree none, EmptyTree(repo_));
    st = CheckoutTree(repo_, tree.get(), none.get(), dir, &dirty);
    if (!st.ok()) return st.WithContext("cannot check out " + rev);
  }
  std::ofstream out(state, std::ios::binary | std::ios::trunc);
  out << OidHex(git_commit_id(target.get())) << "\n";
  out.close();
  if (!out) return IoError("cannot write " + state.string());
  return Status::Ok();
}

StatusOr<RevertResult> GitRepo::RevertOnto(const std::string& culprit_rev,
                                           const std::string& base_rev) {
  ASSIGN_OR_RETURN(Commit culprit, LookupCommit(repo_, culprit_rev));
  ASSIGN_OR_RETURN(Commit base, LookupCommit(repo_, base_rev));
  const std::string culprit_sha = OidHex(git_commit_id(culprit.get()));
  const std::string base_sha = OidHex(git_commit_id(base.get()));
  // A merge is reverted against its first parent (git revert -m 1).
  const unsigned mainline = git_commit_parentcount(culprit.get()) > 1 ? 1 : 0;
  if (git_commit_parentcount(culprit.get()) == 0) {
    return FailedPrecondition("cannot revert root commit " + culprit_sha);
  }
  git_index* raw = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_revert_commit(&raw, repo_, culprit.get(), base.get(), mainline,
                        nullptr),
      "cannot revert " + culprit_sha + " on " + base_sha);
  Index index(raw);
  if (git_index_has_conflicts(index.get())) {
    std::vector<std::string> paths;
    git_index_conflict_iterator* it_raw = nullptr;
    if (git_index_conflict_iterator_new(&it_raw, index.get()) == 0) {
      ConflictIterator it(it_raw);
      const git_index_entry *ancestor, *ours, *theirs;
      while (git_index_conflict_next(&ancestor, &ours, &theirs, it.get()) ==
             0) {
        const git_index_entry* e = ours ? ours : theirs ? theirs : ancestor;
        if (e) paths.push_back(e->path);
      }
    }
    std::string list;
    for (const std::string& p : paths) list += (list.empty() ? "" : ", ") + p;
    return FailedPrecondition("revert of " + culprit_sha.substr(0, 12) +
                              " on " + base_sha.substr(0, 12) +
                              " conflicts in: " + list);
  }
  git_oid tree_oid;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_index_write_tree_to(&tree_oid, index.get(), repo_),
      "cannot write the reverted tree");
  git_tree* tree_raw = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_tree_lookup(&tree_raw, repo_, &tree_oid),
                             "cannot read the reverted tree");
  Tree tree(tree_raw);
  ASSIGN_OR_RETURN(Tree base_tree, git::TreeOf(base.get()));
  // The patch hash: what the revert changes, as a unified diff.
  git_diff* diff_raw = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_diff_tree_to_tree(&diff_raw, repo_, base_tree.get(), tree.get(),
                            nullptr),
      "cannot diff the revert");
  Diff diff(diff_raw);
  git_buf buf = GIT_BUF_INIT;
  const int rc = git_diff_to_buf(&buf, diff.get(), GIT_DIFF_FORMAT_PATCH);
  if (rc < 0) return git::Error(rc, "cannot print the revert's patch");
  const std::string patch(buf.ptr ? buf.ptr : "", buf.size);
  git_buf_dispose(&buf);

  const char* summary = git_commit_summary(culprit.get());
  const std::string message =
      "Revert \"" + std::string(summary ? summary : "") +
      "\"\n\nThis reverts commit " + culprit_sha + ".\n";
  RevertResult r;
  r.branch = "refs/heads/trench/revert-" + culprit_sha.substr(0, 12) + "-on-" +
             base_sha.substr(0, 12);
  // A repository we may only read: the commit lives in memory (Open).
  if (in_memory_) r.branch.clear();
  r.patch_hash = Sha256Hex(patch).substr(0, 16);
  ASSIGN_OR_RETURN(
      r.sha, CreateCommit(repo_, tree.get(), {base.get()}, message, r.branch));
  return r;
}

bool GitRepo::Writable() const {
  const char* dir = git_repository_path(repo_);
  return dir != nullptr &&
         ::access((std::string(dir) + "/objects").c_str(), W_OK) == 0 &&
         ::access(dir, W_OK) == 0;
}

Status GitRepo::KeepNewObjectsInMemory() {
  if (in_memory_) return Status::Ok();
  git_odb* odb = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_repository_odb(&odb, repo_),
                             "cannot open the object database");
  git_odb_backend* mempack = nullptr;
  int rc = git_mempack_new(&mempack);
  if (rc == 0) {
    // Above the disk backends: new objects go to memory.
    rc = git_odb_add_backend(odb, mempack, 999);
  }
  git_odb_free(odb);
  if (rc < 0) return git::Error(rc, "cannot add an in-memory object store");
  in_memory_ = true;
  return Status::Ok();
}

}  // namespace trench::hlo_bisect
