#include "tpu/chip.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "tpu/assembler.h"
#include "tpu/interconnect.h"

namespace trench::tpu {
namespace {

// How the run loop dispatches an instruction.
enum Route : uint8_t {
  kRouteScalar,
  kRouteVector,
  kRouteVectorMemory,
  kRouteTranscendental,
  kRouteCrossLane,
  kRouteMatrix,
  kRouteDma,
  kRouteLink,
};

Route RouteOf(const Instr& in) {
  const OpInfo& info = GetOpInfo(in.op);
  switch (info.unit) {
    case Unit::kScalar:
      return kRouteScalar;
    case Unit::kVector:
      return info.cost == CostClass::kVectorMem ? kRouteVectorMemory
                                                : kRouteVector;
    case Unit::kTranscendental:
      return kRouteTranscendental;
    case Unit::kCrossLane:
      return kRouteCrossLane;
    case Unit::kMatrix:
      return kRouteMatrix;
    case Unit::kDma:
      return kRouteDma;
    case Unit::kLink:
      return kRouteLink;
  }
  return kRouteScalar;
}

constexpr uint32_t kPoisonLane = 0x7fc0deadu;  // A NaN, and a large integer.

}  // namespace

StatusOr<std::unique_ptr<Program>> Program::Build(Executable exe,
                                                  const SimOptions& opts) {
  if (opts.vmem_bytes < 0 || opts.smem_bytes < 0 || opts.guard_bytes < 0) {
    return InvalidArgument("negative memory size in SimOptions");
  }
  auto prog = std::make_unique<Program>();
  Program& P = *prog;
  P.exe = std::move(exe);
  std::vector<HbmBuffer> bufs;
  for (const BufferDecl& b : P.exe.buffers) {
    bufs.push_back(
        {b.name, 0, b.bytes,
         b.role == BufferRole::kInput || b.role == BufferRole::kConstant});
  }
  P.layout = HbmLayout(bufs, opts.guard_bytes);
  if (P.layout.total_size() > opts.max_hbm_bytes) {
    return ResourceExhausted(
        "executable needs " + std::to_string(P.layout.total_size()) +
        " bytes of HBM, limit " + std::to_string(opts.max_hbm_bytes));
  }
  for (const Kernel& k : P.exe.kernels) {
    P.vmem_bytes =
        std::max(P.vmem_bytes, std::min(k.vmem_bytes, opts.vmem_bytes));
  }
  for (const HbmBuffer& b : P.layout.buffers()) {
    P.buffer_base.push_back(b.base);
  }

  // Names by hash (whole models have tens of thousands of each); the
  // executable was validated, so every name is found once.
  std::unordered_map<std::string_view, size_t> buffer_index, kernel_index;
  buffer_index.reserve(P.exe.buffers.size());
  for (size_t i = 0; i < P.exe.buffers.size(); ++i) {
    buffer_index.emplace(P.exe.buffers[i].name, i);
  }
  for (const Kernel& k : P.exe.kernels) {
    std::vector<int64_t> addr;
    for (const std::string& sym : k.symbols) {
      if (auto it = buffer_index.find(sym); it != buffer_index.end()) {
        addr.push_back(P.buffer_base[it->second]);
      }
    }
    P.symbol_addr.push_back(std::move(addr));
    std::vector<Decoded> dec;
    for (const Instr& in : k.code) {
      const CostClass c = GetOpInfo(in.op).cost;
      int64_t cyc = opts.cost.cycles[static_cast<int>(c)];
      if (Is64Bit(in.type) || Is64Bit(in.type2)) cyc *= opts.cost.wide_factor;
      dec.push_back({RouteOf(in), static_cast<uint8_t>(c), cyc});
    }
    P.decoded.push_back(std::move(dec));
  }
  kernel_index.reserve(P.exe.kernels.size());
  for (size_t i = 0; i < P.exe.kernels.size(); ++i) {
    kernel_index.emplace(P.exe.kernels[i].name, i);
  }
  for (const std::string& name : P.exe.launches) {
    if (auto it = kernel_index.find(name); it != kernel_index.end()) {
      P.launch_kernel.push_back(it->second);
    }
  }
  P.inputs = P.exe.BuffersWithRole(BufferRole::kInput);
  return prog;
}

Chip::Chip(const Program& prog, const SimOptions& opts, int id, int nchips,
           Interconnect* ici)
    : prog_(prog), opts_(opts), id_(id), m_(std::make_unique<Machine>()) {
  Machine& M = *m_;
  M.layout = &prog_.layout;
  M.hbm.Reset(prog_.layout.total_size());
  M.smem.Reset(opts_.smem_bytes);
  M.vmem.Reset(prog_.vmem_bytes);
  M.vmem_capacity = opts_.vmem_bytes;
  M.params = &opts_.cost;
  M.dmas.reserve(kMaxDmasInFlight);
  M.chip = id;
  M.nchips = nchips;
  M.ici = ici;
  bound_.assign(prog_.inputs.size(), {});
  is_bound_.assign(prog_.inputs.size(), false);
}

Chip::~Chip() = default;

int64_t Chip::clock() const { return m_->cycle; }
int Chip::wait_flag() const { return m_->wait_flag; }
int64_t Chip::wait_count() const { return m_->wait_count; }

Status Chip::BindInput(int index, std::span<const uint8_t> bytes) {
  const int n = static_cast<int>(prog_.inputs.size());
  if (index < 0 || index >= n) {
    return InvalidArgument("input index " + std::to_string(index) +
                           " out of range (" + std::to_string(n) + " inputs)");
  }
  const BufferDecl& b = *prog_.inputs[index];
  if (static_cast<int64_t>(bytes.size()) != b.bytes) {
    return InvalidArgument("input " + std::to_string(index) + " (" + b.name +
                           ") needs " + std::to_string(b.bytes) +
                           " bytes, got " + std::to_string(bytes.size()));
  }
  bound_[index].assign(bytes.begin(), bytes.end());
  is_bound_[index] = true;
  return Status::Ok();
}

Status Chip::CheckBound() const {
  for (size_t i = 0; i < is_bound_.size(); ++i) {
    if (!is_bound_[i]) {
      return FailedPrecondition("input " + std::to_string(i) + " (" +
                                prog_.inputs[i]->name + ") is not bound");
    }
  }
  return Status::Ok();
}

void Chip::Reset() {
  Machine& M = *m_;
  const Executable& exe = prog_.exe;
  M.hbm.SetShadow(0, M.hbm.size(), kUnallocated);
  prog_.layout.InitShadow(&M.hbm);
  for (size_t i = 0; i < exe.buffers.size(); ++i) {
    const BufferDecl& b = exe.buffers[i];
    uint8_t* p = M.hbm.data() + prog_.buffer_base[i];
    if (b.bytes == 0) continue;
    if (b.role == BufferRole::kConstant) {
      std::memcpy(p, b.data.data(), b.bytes);
      M.hbm.SetShadow(prog_.buffer_base[i], b.bytes, kReadOnly);
    } else if (b.role != BufferRole::kInput) {
      std::memset(p, 0xff, b.bytes);
    }
  }
  for (size_t i = 0; i < prog_.inputs.size(); ++i) {
    int64_t base = prog_.buffer_base[prog_.inputs[i] - exe.buffers.data()];
    if (bound_[i].empty()) continue;
    std::memcpy(M.hbm.data() + base, bound_[i].data(), bound_[i].size());
    M.hbm.SetShadow(base, bound_[i].size(), kReadOnly);
  }
  M.cycle = 0;
  M.dma_free_cycle = 0;
  M.dmas.clear();
  M.pause = Pause::kNone;
  stats_.clear();
  stats_.reserve(prog_.launch_kernel.size());
  report_ = RunReport();
  state_ = State::kReady;
  launch_ = 0;
  pc_ = -1;
  steps_ = 0;
}

void Chip::Locate(RunReport* r) const {
  r->chip = id_;
  if (launch_ >= static_cast<int>(prog_.launch_kernel.size())) return;
  const Kernel& k = prog_.exe.kernels[prog_.launch_kernel[launch_]];
  r->kernel = k.name;
  r->launch = launch_;
  // A chip blocked in flagwait has moved past it.
  r->instruction_index = state_ == State::kWaiting ? pc_ - 1 : pc_;
  if (r->instruction_index >= 0 &&
      r->instruction_index < static_cast<int64_t>(k.code.size())) {
    r->instruction = PrintInstr(k, k.code[r->instruction_index]);
  }
}

std::string Chip::Where() const {
  RunReport r;
  Locate(&r);
  if (r.kernel.empty()) return "after its last launch";
  std::string s = "kernel " + r.kernel;
  if (r.instruction.empty()) return s;
  return s + ", instruction " + std::to_string(r.instruction_index) + " `" +
         r.instruction + "`";
}

Chip::State Chip::Fail(int64_t pc, bool timeout) {
  const int li = launch_;
  const Kernel& k = prog_.exe.kernels[prog_.launch_kernel[li]];
  const Fault& f = m_->fault;
  RunReport* r = &report_;
  r->kernel = k.name;
  r->launch = li;
  r->instruction_index = pc;
  r->chip = id_;
  if (pc >= 0 && pc < static_cast<int64_t>(k.code.size())) {
    r->instruction = PrintInstr(k, k.code[pc]);
  }
  std::string where =
      pc < 0 ? "kernel " + k.name + " (at launch)"
             : "kernel " + k.name + ", instruction " + std::to_string(pc) +
                   (r->instruction.empty() ? "" : " `" + r->instruction + "`");
  r->message = where + ": " + f.message;
  if (timeout) {
    r->status = RunStatus::kTimeout;
  } else {
    r->status = f.is_trap ? RunStatus::kTrap : RunStatus::kMemoryError;
    if (!f.is_trap) {
      r->memory_error = f.kind;
      r->memory_space = std::string(MemSpaceName(f.space));
      r->address = f.address;
    }
  }
  return state_ = State::kFailed;
}

bool Chip::BeginLaunch() {
  Machine& M = *m_;
  const int ki = prog_.launch_kernel[launch_];
  const Kernel& k = prog_.exe.kernels[ki];
  stats_.push_back(KernelStats{});
  KernelStats& st = stats_.back();
  st.kernel = k.name;
  st.launches = 1;
  M.stats = &st;
  kernel_start_ = M.cycle;
  if (k.vmem_bytes > M.vmem_capacity) {
    M.MemFault(MemoryErrorKind::kVmemOverCapacity, MemSpace::kVmem,
               M.vmem_capacity, k.vmem_bytes, false);
    M.fault.message = "vmem_over_capacity: kernel declares .vmem " +
                      std::to_string(k.vmem_bytes) +
                      " bytes, over the VMEM capacity of " +
                      std::to_string(M.vmem_capacity);
    Fail(-1, false);
    return false;
  }
  M.vmem_declared = k.vmem_bytes;
  M.vmem.SetShadow(0, k.vmem_bytes, kUninitialized);
  M.vmem.SetShadow(k.vmem_bytes, M.vmem.size() - k.vmem_bytes, kUnallocated);
  M.smem.SetShadow(0, M.smem.size(), kUninitialized);
  std::memset(M.s, 0, sizeof M.s);
  std::fill(&M.v[0][0], &M.v[0][0] + kNumVregs * kVregElems, kPoisonLane);
  std::memset(M.m, 0, sizeof M.m);
  M.mxu_loaded = 0;
  M.symbol_addr = prog_.symbol_addr[ki].data();
  pc_ = 0;
  return true;
}

// The run loop of one kernel, from pc_ until `until`. Returns kReady with
// pc_ >= 0 when the turn ends inside the kernel, with pc_ == -1 (and the
// next launch selected) when the kernel ended.
Chip::State Chip::Execute(int64_t until) {
  Machine& M = *m_;
  const int ki = prog_.launch_kernel[launch_];
  const Kernel& k = prog_.exe.kernels[ki];
  KernelStats& st = stats_.back();
  const Instr* code = k.code.data();
  const Decoded* dec = prog_.decoded[ki].data();
  const int64_t n = static_cast<int64_t>(k.code.size());
  // One comparison per instruction covers both the turn and the limit.
  const int64_t stop = std::min(until, opts_.max_cycles);
  int64_t pc = pc_;
  while (pc < n) {
    if (steps_ >= opts_.max_steps || M.cycle >= stop) {
      if (steps_ < opts_.max_steps && M.cycle < opts_.max_cycles) {
        pc_ = pc;
        return State::kReady;
      }
      M.fault = Fault();
      M.fault.message = steps_ >= opts_.max_steps
                            ? "step limit of " +
                                  std::to_string(opts_.max_steps) +
                                  " instructions reached"
                            : "cycle limit of " +
                                  std::to_string(opts_.max_cycles) + " reached";
      st.cycles = M.cycle - kernel_start_;
      return Fail(pc, true);
    }
    const Instr& in = code[pc];
    const Decoded& d = dec[pc];
    ++steps_;
    ++st.instructions;
    ++st.instructions_by_class[d.cost_class];
    M.cycle += d.cycles;
    int64_t next = pc + 1;
    bool ok;
    switch (d.route) {
      case kRouteScalar:
        next = pc;
        ok = ExecScalar(M, in, k, &next);
        break;
      case kRouteVector:
        ok = ExecVector(M, in);
        break;
      case kRouteVectorMemory:
        ok = ExecVectorMemory(M, in);
        break;
      case kRouteTranscendental:
        ok = ExecTranscendental(M, in);
        break;
      case kRouteCrossLane:
        ok = ExecCrossLane(M, in);
        break;
      case kRouteMatrix:
        ok = ExecMatrix(M, in);
        break;
      case kRouteDma:
        ok = ExecDma(M, in);
        break;
      default:
        ok = ExecLink(M, in);
        break;
    }
    if (!ok) {
      if (M.pause != Pause::kNone) {
        const Pause p = M.pause;
        M.pause = Pause::kNone;
        pc_ = next;
        return p == Pause::kFlagWait ? State::kWaiting : State::kReady;
      }
      if (M.fault.message.empty()) M.Trap("internal: unhandled instruction");
      st.cycles = M.cycle - kernel_start_;
      return Fail(pc, false);
    }
    pc = next;
  }
  st.cycles = M.cycle - kernel_start_;
  if (!M.dmas.empty()) {
    M.Trap("kernel ended with " + std::to_string(M.dmas.size()) +
           " DMA(s) in flight (missing dmawait)");
    return Fail(n, false);
  }
  ++launch_;
  pc_ = -1;
  return State::kReady;
}

Chip::State Chip::Run(int64_t until) {
  const int nl = static_cast<int>(prog_.launch_kernel.size());
  while (launch_ < nl) {
    if (pc_ < 0 && !BeginLaunch()) return State::kFailed;
    const State s = Execute(until);
    if (s != State::kReady) return state_ = s;
    if (pc_ >= 0) return state_ = State::kReady;
  }
  return state_ = State::kDone;
}

void Chip::FinishWait(int64_t wake) {
  FinishFlagWait(*m_, wake);
  state_ = State::kReady;
}

int64_t Chip::Finish(CostReport* cost) {
  if (pc_ >= 0 && !stats_.empty() && state_ != State::kFailed) {
    stats_.back().cycles = m_->cycle - kernel_start_;
  }
  *cost = MakeCostReport(stats_);
  return steps_;
}

OutputBuffer Chip::Collect(const BufferDecl& b, RunReport* report) const {
  const Region& hbm = m_->hbm;
  OutputBuffer o{b.name, b.role,   b.index, b.dtype,
                 b.dims, b.layout, b.label, {}};
  const int64_t base = prog_.buffer_base[&b - prog_.exe.buffers.data()];
  const uint8_t* p = hbm.data() + base;
  o.bytes.assign(p, p + b.bytes);
  int64_t bad = hbm.FindNot(base, b.bytes, kInitialized);
  if (bad < 0 || report->status != RunStatus::kOk) return o;
  int64_t count = 0;
  for (int64_t i = 0; i < b.bytes; ++i) {
    count += hbm.shadow(base + i) != kInitialized;
  }
  report->status = RunStatus::kMemoryError;
  report->memory_space = "hbm";
  report->address = bad;
  report->chip = id_;
  const std::string what = std::string(BufferRoleName(b.role)) + " buffer '" +
                           b.name + "' has " + std::to_string(count) +
                           " bytes ";
  if (IsPeerWritten(hbm.shadow(bad))) {
    report->memory_error = MemoryErrorKind::kUnsynchronizedPeerAccess;
    report->message = what + "not synchronized (chip " +
                      std::to_string(PeerWriter(hbm.shadow(bad))) +
                      " wrote them by rdmastart; no flagwait consumed its "
                      "signal), first at offset " +
                      std::to_string(bad - base);
  } else {
    report->memory_error = MemoryErrorKind::kUninitializedOutput;
    report->message =
        what + "never written, first at offset " + std::to_string(bad - base);
  }
  return o;
}

}  // namespace trench::tpu
