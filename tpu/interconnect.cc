#include "tpu/interconnect.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>

namespace trench::tpu {

Interconnect::Interconnect(const Topology& topology, const CostParams& params)
    : topology_(topology), params_(params) {}

void Interconnect::Attach(std::vector<Machine*> chips) {
  chips_ = std::move(chips);
  link_free_.assign(chips_.size(), 0);
  signals_.assign(chips_.size() * kNumFlags, {});
}

void Interconnect::Reset() {
  std::fill(link_free_.begin(), link_free_.end(), 0);
  for (std::vector<Signal>& s : signals_) s.clear();
  transfers_.clear();
  free_transfers_.clear();
  seq_ = 0;
}

Machine* Interconnect::Peer(Machine& M, int64_t peer, std::string_view what) {
  const int64_t n = static_cast<int64_t>(chips_.size());
  if (peer < 0 || peer >= n) {
    M.Trap(std::string(what) + ": peer chip " + std::to_string(peer) +
           " is outside the slice (chips 0.." + std::to_string(n - 1) + ", " +
           topology_.ToString() + ")");
    return nullptr;
  }
  if (peer == M.chip) {
    M.Trap(std::string(what) + ": peer chip " + std::to_string(peer) +
           " is this chip (a local copy is dmastart)");
    return nullptr;
  }
  return chips_[peer];
}

int64_t Interconnect::Send(Machine& M, int to, int flag, int64_t bytes,
                           int transfer) {
  int64_t& free = link_free_[M.chip];
  const int64_t sent = std::max(M.cycle, free) + LinkSendCycles(params_, bytes);
  free = sent;
  const Signal s{
      sent + topology_.Hops(M.chip, to) * params_.link_latency_cycles, M.chip,
      seq_++, transfer};
  // Ties in landing go by sender, then the sender's order: not by which
  // chip the scheduler happened to run first.
  std::vector<Signal>& list = signals(to, flag);
  auto at = std::upper_bound(list.begin(), list.end(), s,
                             [](const Signal& a, const Signal& b) {
                               return std::tie(a.land, a.from, a.seq) <
                                      std::tie(b.land, b.from, b.seq);
                             });
  list.insert(at, s);
  return sent;
}

void Interconnect::SendTransfer(Machine& M, int to, int flag, int64_t bytes,
                                PendingDma* p) {
  int index;
  if (free_transfers_.empty()) {
    index = static_cast<int>(transfers_.size());
    transfers_.emplace_back();
  } else {
    index = free_transfers_.back();
    free_transfers_.pop_back();
  }
  p->transfer = index;
  p->done_cycle = Send(M, to, flag, bytes, index);
  Transfer& t = transfers_[index];
  t = Transfer{*p, M.chip, to};
}

void Interconnect::SendSignal(Machine& M, int to, int flag) {
  Send(M, to, flag, 0, -1);
}

void Interconnect::Deliver(Transfer& t) {
  if (t.delivered) return;
  t.delivered = true;
  const Region& src = chips_[t.from]->region(t.dma.src_space);
  Region& dst = chips_[t.to]->hbm;
  ForEachChunk(t.dma, [&](int64_t so, int64_t dof) {
    std::memmove(dst.data() + t.dma.dst + dof, src.data() + t.dma.src + so,
                 t.dma.chunk);
    return true;
  });
}

void Interconnect::Release(int transfer) {
  const Transfer& t = transfers_[transfer];
  if (t.sender_done && t.consumed) free_transfers_.push_back(transfer);
}

void Interconnect::SenderDone(int transfer) {
  Transfer& t = transfers_[transfer];
  Deliver(t);
  t.sender_done = true;
  Release(transfer);
}

int64_t Interconnect::WakeTime(int chip, int flag, int64_t count,
                               int64_t since) const {
  const std::vector<Signal>& list = signals(chip, flag);
  if (static_cast<int64_t>(list.size()) < count) return kNever;
  return count <= 0 ? since : std::max(since, list[count - 1].land);
}

int64_t Interconnect::Pending(int chip, int flag) const {
  return static_cast<int64_t>(signals(chip, flag).size());
}

void Interconnect::Consume(int chip, int flag, int64_t count) {
  std::vector<Signal>& list = signals(chip, flag);
  Region& hbm = chips_[chip]->hbm;
  for (int64_t i = 0; i < count; ++i) {
    if (list[i].transfer < 0) continue;
    Transfer& t = transfers_[list[i].transfer];
    Deliver(t);
    ForEachChunk(t.dma, [&](int64_t, int64_t dof) {
      hbm.SetShadow(t.dma.dst + dof, t.dma.chunk, kInitialized);
      return true;
    });
    t.consumed = true;
    Release(list[i].transfer);
  }
  list.erase(list.begin(), list.begin() + count);
}

}  // namespace trench::tpu
