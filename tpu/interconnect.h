// Internal to tpu/: what the chips of a slice share. The links (each
// chip's outgoing link is busy while it sends), the sync flags and the
// signals on their way to them, and the remote DMAs (rdmastart) until
// both ends are done with them.
//
// A remote DMA's bytes are checked and marked peer-written in the
// receiver's HBM when it is issued (see PeerWrittenShadow); the data is
// copied at the sender's dmawait or when the receiver's flagwait consumes
// its signal, whichever the simulation reaches first, and that flagwait
// makes the bytes ordinary initialized memory.
//
// A flag's value is the number of signals that have landed and were not
// consumed; signals are kept per (chip, flag) sorted by landing cycle (then
// sender, then issue order), and a flagwait consumes the earliest. Not
// thread-safe: the slice runs its chips on one thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tpu/cost_model.h"
#include "tpu/machine.h"
#include "tpu/topology.h"

namespace trench::tpu {

inline constexpr int64_t kNever = INT64_MAX;

class Interconnect {
 public:
  Interconnect(const Topology& topology, const CostParams& params);

  // REQUIRES: one Machine per chip, by index; they outlive this.
  void Attach(std::vector<Machine*> chips);
  // Empties the flags, signals and transfers and frees the links (a run).
  void Reset();
  const Topology& topology() const { return topology_; }

  // The chip `peer` names for `what` (an opcode name), or nullptr after a
  // trap on M: outside the slice, or M itself.
  Machine* Peer(Machine& M, int64_t peer, std::string_view what);

  // Issues M's rdmastart of `p` (checked, its destination already marked
  // peer-written in `to`'s HBM) with `bytes` over M's link; the landing
  // signals `flag` of `to`. Sets p->done_cycle (the data has left) and
  // p->transfer.
  void SendTransfer(Machine& M, int to, int flag, int64_t bytes, PendingDma* p);
  // M's flagsignal: `flag` of `to` is incremented after the hops' latency.
  void SendSignal(Machine& M, int to, int flag);
  // The sender's dmawait for `transfer`: its data reaches the receiver's
  // HBM now if the receiver did not pull it already.
  void SenderDone(int transfer);

  // When `chip`, blocked since cycle `since` in flagwait(flag, count), can
  // go on with the signals sent so far: max(since, landing of the
  // count-th earliest signal); kNever when fewer were sent.
  int64_t WakeTime(int chip, int flag, int64_t count, int64_t since) const;
  // Signals sent to (chip, flag) and not consumed yet.
  int64_t Pending(int chip, int flag) const;
  // Consumes the `count` earliest signals of (chip, flag) and synchronizes
  // their transfers. REQUIRES: Pending(chip, flag) >= count.
  void Consume(int chip, int flag, int64_t count);

 private:
  struct Transfer {
    PendingDma dma;  // Source on `from`, destination in `to`'s HBM.
    int from = 0;
    int to = 0;
    bool delivered = false;    // The data is in the receiver's HBM.
    bool sender_done = false;  // The sender's dmawait completed it.
    bool consumed = false;     // The receiver's flagwait synchronized it.
  };
  struct Signal {
    int64_t land = 0;
    int from = 0;
    int64_t seq = 0;    // Issue order (the sender's order for one sender).
    int transfer = -1;  // The rdmastart it reports, or -1 (flagsignal).
  };

  int64_t Send(Machine& M, int to, int flag, int64_t bytes, int transfer);
  void Deliver(Transfer& t);
  void Release(int transfer);
  std::vector<Signal>& signals(int chip, int flag) {
    return signals_[chip * kNumFlags + flag];
  }
  const std::vector<Signal>& signals(int chip, int flag) const {
    return signals_[chip * kNumFlags + flag];
  }

  Topology topology_;
  const CostParams& params_;
  std::vector<Machine*> chips_;
  std::vector<int64_t> link_free_;            // Per chip: its link is free at.
  std::vector<std::vector<Signal>> signals_;  // [chip * kNumFlags + flag].
  std::vector<Transfer> transfers_;
  std::vector<int> free_transfers_;
  int64_t seq_ = 0;
};

}  // namespace trench::tpu
