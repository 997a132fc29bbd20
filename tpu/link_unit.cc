// The link unit (ICI): rdmastart to a peer chip's HBM, flagsignal and
// flagwait. Sending ends the chip's turn (Pause::kYield) so that the
// slice's scheduler sees the signal in cycle order; flagwait always blocks
// (Pause::kFlagWait) and the scheduler resumes the chip, through
// FinishFlagWait, once it is the earliest chip and its signals have landed.
#include <string>

#include "tpu/interconnect.h"
#include "tpu/machine.h"

namespace trench::tpu {

bool ExecLink(Machine& M, const Instr& in) {
  switch (in.op) {
    case Opcode::kRDmaStart: {
      Machine* peer = M.ici->Peer(M, M.s[in.reg[0]], "rdmastart");
      if (peer == nullptr || !StartDma(M, in, peer)) return false;
      M.pause = Pause::kYield;
      return false;
    }
    case Opcode::kFlagSignal: {
      Machine* peer = M.ici->Peer(M, M.s[in.reg[0]], "flagsignal");
      if (peer == nullptr) return false;
      M.ici->SendSignal(M, peer->chip, static_cast<int>(in.imm[0]));
      M.stats->link_signals++;
      M.pause = Pause::kYield;
      return false;
    }
    case Opcode::kFlagWait: {
      const int64_t count = in.x_reg >= 0 ? M.s[in.x_reg] : in.imm[1];
      if (count < 0) {
        return M.Trap("flagwait count " + std::to_string(count) +
                      " is negative");
      }
      if (count == 0) return true;
      M.wait_flag = static_cast<int>(in.imm[0]);
      M.wait_count = count;
      M.pause = Pause::kFlagWait;
      return false;
    }
    default:
      return M.Trap("internal: not a link instruction");
  }
}

void FinishFlagWait(Machine& M, int64_t wake) {
  M.ici->Consume(M.chip, M.wait_flag, M.wait_count);
  if (wake > M.cycle) {
    M.stats->flag_stall_cycles += wake - M.cycle;
    M.cycle = wake;
  }
}

}  // namespace trench::tpu
