#include "compiler/passes/fusion_order.h"

#include <algorithm>

namespace trench {

ContractionOrder::ContractionOrder(const std::vector<int>& topological,
                                   int num_nodes)
    : pos_(num_nodes, -1), mark_(num_nodes, 0) {
  for (size_t i = 0; i < topological.size(); ++i) {
    pos_[topological[i]] = static_cast<int64_t>(i);
  }
}

ContractionOrder::Verdict ContractionOrder::Check(int a, int b,
                                                  const Neighbors& succ,
                                                  const Neighbors& pred,
                                                  int64_t budget) {
  if (pos_[a] > pos_[b]) std::swap(a, b);
  lo_ = a;
  hi_ = b;
  forward_.assign(1, a);
  backward_.assign(1, b);
  const int64_t lo_pos = pos_[a], hi_pos = pos_[b];
  auto unmark = [&] {
    for (int n : forward_) mark_[n] = 0;
    for (int n : backward_) mark_[n] = 0;
  };
  // Forward from a: nodes before b that a reaches without the direct edge.
  Verdict verdict = Verdict::kAcyclic;
  std::vector<int> next;
  mark_[a] = 1;
  for (size_t k = 0; k < forward_.size() && verdict == Verdict::kAcyclic; ++k) {
    const int n = forward_[k];
    next.clear();
    succ(n, next);
    for (int s : next) {
      if (s == b) {
        if (n != a) verdict = Verdict::kCycle;  // a -> ... -> n -> b.
        continue;
      }
      if (mark_[s] || pos_[s] > hi_pos) continue;
      mark_[s] = 1;
      forward_.push_back(s);
    }
    if (static_cast<int64_t>(forward_.size()) > budget) {
      verdict = Verdict::kTooFar;
    }
  }
  // Backward from b: nodes after a that reach b (none is in the forward
  // set, else a path a -> ... -> b was found above).
  mark_[b] = 1;
  for (size_t k = 0; k < backward_.size() && verdict == Verdict::kAcyclic;
       ++k) {
    next.clear();
    pred(backward_[k], next);
    for (int p : next) {
      if (p == a || mark_[p] || pos_[p] < lo_pos) continue;
      mark_[p] = 1;
      backward_.push_back(p);
    }
    if (static_cast<int64_t>(forward_.size() + backward_.size()) > budget) {
      verdict = Verdict::kTooFar;
    }
  }
  unmark();
  if (verdict != Verdict::kAcyclic) {
    forward_.clear();
    backward_.clear();
    lo_ = hi_ = -1;
  }
  return verdict;
}

void ContractionOrder::Contract(int keep) {
  if (lo_ < 0) return;
  auto by_pos = [&](int x, int y) { return pos_[x] < pos_[y]; };
  std::sort(forward_.begin(), forward_.end(), by_pos);
  std::sort(backward_.begin(), backward_.end(), by_pos);
  std::vector<int64_t> pool;
  pool.reserve(forward_.size() + backward_.size());
  for (int n : backward_) pool.push_back(pos_[n]);
  for (int n : forward_) pool.push_back(pos_[n]);
  std::sort(pool.begin(), pool.end());
  size_t k = 0;
  for (int n : backward_) pos_[n] = pool[k++];
  for (int n : forward_) pos_[n] = pool[k++];
  const int gone = keep == lo_ ? hi_ : lo_;
  pos_[keep] = pos_[hi_];
  pos_[gone] = -1;
  forward_.clear();
  backward_.clear();
  lo_ = hi_ = -1;
}

}  // namespace trench
