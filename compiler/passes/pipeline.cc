#include "compiler/passes/pipeline.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "compiler/ir/hlo_fingerprint.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/passes/pass_registry.h"

namespace trench {

namespace {

PassEnterHook pass_enter_hook = nullptr;

}  // namespace

void SetPassEnterHook(PassEnterHook hook) { pass_enter_hook = hook; }

void NotifyPassEnter(std::string_view pass, int64_t execution) {
  if (pass_enter_hook != nullptr) pass_enter_hook(pass, execution);
}

namespace {

StatusOr<int64_t> ParseCount(std::string_view flag, std::string_view value) {
  int64_t n = 0;
  auto [ptr, ec] =
      std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || ptr != value.data() + value.size() || n < 0) {
    return InvalidArgument(std::string(flag) +
                           " expects a non-negative integer, got '" +
                           std::string(value) + "'");
  }
  return n;
}

}  // namespace

StatusOr<bool> ParsePipelineFlag(std::string_view arg,
                                 PipelineOptions* options) {
  auto value_of =
      [&](std::string_view flag) -> std::optional<std::string_view> {
    if (arg.size() > flag.size() && arg.substr(0, flag.size()) == flag &&
        arg[flag.size()] == '=') {
      return arg.substr(flag.size() + 1);
    }
    if (arg == flag) return std::string_view();
    return std::nullopt;
  };
  if (auto v = value_of("--disable-passes")) {
    ASSIGN_OR_RETURN(std::vector<std::string> names, ParsePassList(*v));
    for (std::string& n : names) options->disabled_passes.push_back(n);
    return true;
  }
  if (auto v = value_of("--pass-limit")) {
    ASSIGN_OR_RETURN(options->pass_limit, ParseCount("--pass-limit", *v));
    return true;
  }
  if (auto v = value_of("--rewrite-limit")) {
    ASSIGN_OR_RETURN(options->rewrite_limit, ParseCount("--rewrite-limit", *v));
    return true;
  }
  if (auto v = value_of("--dump-dir")) {
    if (v->empty()) return InvalidArgument("--dump-dir expects a directory");
    options->dump_dir = std::string(*v);
    return true;
  }
  return false;
}

void PassPipeline::AddPass(std::unique_ptr<HloPass> pass, bool required) {
  Group g;
  g.passes.push_back(std::move(pass));
  g.required = required;
  groups_.push_back(std::move(g));
}

void PassPipeline::AddFixpointGroup(
    std::vector<std::unique_ptr<HloPass>> passes, int max_iterations) {
  Group g;
  g.passes = std::move(passes);
  g.max_iterations = std::max(1, max_iterations);
  groups_.push_back(std::move(g));
}

std::unique_ptr<PassPipeline> PassPipeline::CreateDefault(
    PipelineOptions options) {
  auto pipeline = std::make_unique<PassPipeline>(std::move(options));
  std::vector<std::unique_ptr<HloPass>> simplify;
  auto flush = [&] {
    if (!simplify.empty()) {
      pipeline->AddFixpointGroup(std::move(simplify), kSimplifyIterations);
      simplify.clear();
    }
  };
  for (const PassInfo& info : RegisteredPasses()) {
    if (info.stage == PassStage::kCodegen) continue;  // The codegen runs it.
    if (info.stage == PassStage::kSimplify) {
      simplify.push_back(info.create());
    } else {
      flush();
      pipeline->AddPass(info.create(), info.stage == PassStage::kRequired);
    }
  }
  flush();
  return pipeline;
}

Status PassPipeline::Dump(const HloModule& module,
                          const std::string& file) const {
  std::error_code ec;
  std::filesystem::create_directories(options_.dump_dir, ec);
  if (ec) {
    return IoError("cannot create dump directory " + options_.dump_dir + ": " +
                   ec.message());
  }
  const std::string path = options_.dump_dir + "/" + file;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  PrintHloModuleTo(module, [&out](std::string_view piece) {
    out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  });
  out.close();
  if (!out) return IoError("cannot write " + path);
  return Status::Ok();
}

Status PassPipeline::RunOne(HloPass* pass, bool required, HloModule* module,
                            PassContext* ctx, bool* changed) {
  *changed = false;
  PassRunStats st;
  st.pass = std::string(pass->name());
  st.required = required;
  const auto& disabled = options_.disabled_passes;
  const bool is_disabled =
      std::find(disabled.begin(), disabled.end(), st.pass) != disabled.end();
  if (required && is_disabled) {
    return InvalidArgument("pass '" + st.pass +
                           "' is required (it expands ops the code generator "
                           "does not emit) and cannot be disabled");
  }
  if (!required && (is_disabled || (options_.pass_limit >= 0 &&
                                    executions_ >= options_.pass_limit))) {
    st.skipped = true;
    stats_.push_back(st);
    return Status::Ok();
  }
  PassContext unlimited;
  if (required) ctx = &unlimited;
  st.execution = required ? executions_ : ++executions_;
  const uint64_t before =
      fingerprint_ ? *fingerprint_ : HloModuleFingerprint(*module);
  fingerprint_.reset();  // Set again once the pass ran and was checked.
  const int64_t rewrites_before = ctx->rewrites_allowed();
  NotifyPassEnter(st.pass, st.execution);
  const auto start = std::chrono::steady_clock::now();
  StatusOr<bool> result = pass->Run(module, ctx);
  st.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  st.rewrites = ctx->rewrites_allowed() - rewrites_before;
  if (!result.ok()) {
    return result.status().WithContext("pass '" + st.pass + "' (execution " +
                                       std::to_string(st.execution) + ")");
  }
  st.changed = *result;
  stats_.push_back(st);
  const uint64_t after = HloModuleFingerprint(*module);
  const bool really_changed = after != before;
  if (really_changed != st.changed) {
    return Internal(
        "pass '" + st.pass + "' (execution " + std::to_string(st.execution) +
        ") reported changed=" + (st.changed ? "true" : "false") +
        " but the module " + (really_changed ? "changed" : "did not change"));
  }
  if (st.changed) {
    Status v = VerifyModule(*module, nullptr, options_.verify_options);
    if (!v.ok()) {
      return Internal("module fails verification after pass '" + st.pass +
                      "' (execution " + std::to_string(st.execution) +
                      "): " + v.message());
    }
  }
  if (!options_.dump_dir.empty()) {
    char prefix[32];
    std::snprintf(prefix, sizeof(prefix), "%02lld.",
                  static_cast<long long>(st.execution));
    RETURN_IF_ERROR(Dump(
        *module,
        prefix + std::string(required ? "required." : "") + st.pass + ".hlo"));
  }
  fingerprint_ = after;
  *changed = st.changed;
  return Status::Ok();
}

StatusOr<bool> PassPipeline::Run(HloModule* module, PassContext* ctx) {
  for (const std::string& name : options_.disabled_passes) {
    if (FindPass(name) == nullptr) {
      RETURN_IF_ERROR(ParsePassList(name).status());
    }
  }
  fingerprint_.reset();  // The module may have changed since a last Run.
  Status v = VerifyModule(*module, nullptr, options_.verify_options);
  if (!v.ok()) {
    return InvalidArgument("input module does not verify: " + v.message());
  }
  if (!options_.dump_dir.empty()) {
    RETURN_IF_ERROR(Dump(*module, "00.input.hlo"));
  }
  bool any_changed = false;
  for (Group& group : groups_) {
    for (int iter = 0; iter < group.max_iterations; ++iter) {
      bool group_changed = false;
      for (auto& pass : group.passes) {
        bool changed = false;
        RETURN_IF_ERROR(
            RunOne(pass.get(), group.required, module, ctx, &changed));
        group_changed |= changed;
      }
      any_changed |= group_changed;
      if (!group_changed) break;
      if (group.max_iterations > 1 && iter + 1 == group.max_iterations) {
        ctx->Log("pipeline: fixpoint group starting with '" +
                 std::string(group.passes.front()->name()) +
                 "' hit its cap of " + std::to_string(group.max_iterations) +
                 " iterations");
      }
    }
  }
  return any_changed;
}

}  // namespace trench
