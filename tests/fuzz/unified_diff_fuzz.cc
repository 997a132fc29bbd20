// fuzz-libs: trench_git
// Parses arbitrary bytes as a unified diff (git/unified_diff.h; LLM
// replies and commit diffs reach this parser). A diff that parses must
// render to text that parses back to the same rendering; reverting twice
// is stable; its hunks, moved onto a file made of their own pre-images,
// apply there, and the revert of that undoes them. The same bytes as a
// drafted patch (git/patch_normalize.h): what ParsePatchText accepts has
// only safe paths, and its git-format rendering is accepted again and
// renders the same (normalising is idempotent).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "git/patch_normalize.h"
#include "git/unified_diff.h"

namespace {

using trench::agents::FileDiff;
using trench::agents::UnifiedDiff;

void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "unified_diff_fuzz: %s\n", what);
  std::abort();
}

void CheckFile(const FileDiff& f) {
  std::vector<std::string> lines;
  for (const auto& h : f.hunks) {
    for (const auto& l : h.lines) {
      if (l.kind != '+') lines.push_back(l.text);
    }
  }
  const FileDiff moved = trench::agents::RelocateHunks(f, lines, nullptr);
  auto after = trench::agents::ApplyHunks(moved, lines);
  Check(after.ok(), "relocated hunks do not apply");
  UnifiedDiff one;
  one.files.push_back(moved);
  const UnifiedDiff back = trench::agents::InvertDiff(one);
  auto restored = trench::agents::ApplyHunks(back.files[0], *after);
  Check(restored.ok() && *restored == lines, "the revert does not undo");
}

}  // namespace

void CheckPatchText(std::string_view text) {
  auto patch = trench::agents::ParsePatchText(text);
  if (!patch.ok()) return;
  for (const FileDiff& f : patch->files) {
    Check(f.old_path.empty() ||
              trench::agents::UnsafePathReason(f.old_path).empty(),
          "an unsafe old path was accepted");
    Check(f.new_path.empty() ||
              trench::agents::UnsafePathReason(f.new_path).empty(),
          "an unsafe new path was accepted");
  }
  const std::string git = trench::agents::RenderUnifiedDiff(*patch);
  auto again = trench::agents::ParsePatchText(git);
  Check(again.ok(), "the normalised patch is refused");
  Check(trench::agents::RenderUnifiedDiff(*again) == git,
        "normalising is not idempotent");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckPatchText(text);
  auto parsed = trench::agents::ParseUnifiedDiff(text);
  if (!parsed.ok()) return 0;
  const std::string rendered = trench::agents::RenderUnifiedDiff(*parsed);
  auto again = trench::agents::ParseUnifiedDiff(rendered);
  Check(again.ok(), "the rendering does not parse");
  Check(trench::agents::RenderUnifiedDiff(*again) == rendered,
        "the rendering does not round-trip");
  const UnifiedDiff twice =
      trench::agents::InvertDiff(trench::agents::InvertDiff(*parsed));
  const std::string t2 = trench::agents::RenderUnifiedDiff(twice);
  Check(trench::agents::RenderUnifiedDiff(trench::agents::InvertDiff(
            trench::agents::InvertDiff(twice))) == t2,
        "reverting twice is not stable");
  for (const FileDiff& f : parsed->files) CheckFile(f);
  return 0;
}
