#include "orchestrator/pipeline/tool_runner.h"

#include <boost/asio/post.hpp>
#include <future>

namespace trench::orchestrator {

SandboxReport DescribeSandbox(const sandbox::Capabilities& caps,
                              bool namespaces_enabled) {
  SandboxReport r;
  r.text = caps.Describe();
  r.warning = caps.tier() == sandbox::Isolation::kNone;
  if (!namespaces_enabled) {
    const std::string kPrefix = "sandbox: runs use ";
    std::string machine =
        r.text.rfind(kPrefix, 0) == 0 ? r.text.substr(kPrefix.size()) : r.text;
    r.text = kPrefix +
             "NO isolation (sandbox.namespaces is false in the config; "
             "lost: " +
             sandbox::FallbackLoss() + "); the machine offers: " + machine;
    r.warning = true;
  }
  return r;
}

ToolRunner::ToolRunner(boost::asio::io_context& ioc, int max_concurrent)
    : ioc_(ioc), max_concurrent_(max_concurrent < 1 ? 1 : max_concurrent) {}

StatusOr<sandbox::Result> ToolRunner::Run(const sandbox::Options& options) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    slot_free_.wait(lock,
                    [&] { return killed_ || running_ < max_concurrent_; });
    if (killed_) return FailedPrecondition("shutting down: run refused");
    ++running_;
    ++total_runs_;
  }
  auto promise = std::make_shared<std::promise<StatusOr<sandbox::Result>>>();
  std::future<StatusOr<sandbox::Result>> done = promise->get_future();
  boost::asio::post(ioc_, [this, options, promise] {
    auto slot = std::make_shared<std::shared_ptr<sandbox::Process>>();
    StatusOr<std::shared_ptr<sandbox::Process>> p = sandbox::Spawn(
        ioc_, options, [this, promise, slot](StatusOr<sandbox::Result> r) {
          {
            std::lock_guard<std::mutex> lock(mu_);
            in_flight_.erase(*slot);
          }
          promise->set_value(std::move(r));
        });
    if (!p.ok()) {
      promise->set_value(p.status());
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    *slot = *p;
    in_flight_.insert(*p);
    if (killed_) (*p)->Kill();
  });
  StatusOr<sandbox::Result> r = done.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
  }
  slot_free_.notify_one();
  return r;
}

void ToolRunner::KillAll() {
  std::set<std::shared_ptr<sandbox::Process>> runs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    killed_ = true;
    runs = in_flight_;
  }
  slot_free_.notify_all();
  // Process::Kill is used on the loop's thread, as the sandbox requires.
  boost::asio::post(ioc_, [runs] {
    for (const auto& p : runs) p->Kill();
  });
}

int ToolRunner::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

int64_t ToolRunner::total_runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_runs_;
}

}  // namespace trench::orchestrator
