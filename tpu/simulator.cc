#include "tpu/simulator.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "tpu/assembler.h"
#include "tpu/machine.h"

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
  }
  return kRouteScalar;
}

constexpr uint32_t kPoisonLane = 0x7fc0deadu;  // A NaN, and a large integer.

}  // namespace

// Per instruction, computed once at Create().
struct Decoded {
  uint8_t route;  // A Route.
  uint8_t cost_class;
  int64_t cycles;
};

std::string_view RunStatusName(RunStatus s) {
  switch (s) {
    case RunStatus::kOk:
      return "ok";
    case RunStatus::kMemoryError:
      return "memory_error";
    case RunStatus::kTimeout:
      return "timeout";
    case RunStatus::kTrap:
      return "trap";
  }
  return "?";
}

Simulator::Simulator(Executable exe, const SimOptions& options)
    : exe_(std::move(exe)), opts_(options), m_(std::make_unique<Machine>()) {}

Simulator::~Simulator() = default;

StatusOr<std::unique_ptr<Simulator>> Simulator::Create(
    Executable exe, const SimOptions& options) {
  RETURN_IF_ERROR(ValidateExecutable(exe));
  std::unique_ptr<Simulator> sim(new Simulator(std::move(exe), options));
  RETURN_IF_ERROR(sim->Prepare());
  return sim;
}

Status Simulator::Prepare() {
  if (opts_.vmem_bytes < 0 || opts_.smem_bytes < 0 || opts_.guard_bytes < 0) {
    return InvalidArgument("negative memory size in SimOptions");
  }
  std::vector<HbmBuffer> bufs;
  for (const BufferDecl& b : exe_.buffers) {
    bufs.push_back(
        {b.name, 0, b.bytes,
         b.role == BufferRole::kInput || b.role == BufferRole::kConstant});
  }
  Machine& M = *m_;
  M.layout = HbmLayout(bufs, opts_.guard_bytes);
  if (M.layout.total_size() > opts_.max_hbm_bytes) {
    return ResourceExhausted(
        "executable needs " + std::to_string(M.layout.total_size()) +
        " bytes of HBM, limit " + std::to_string(opts_.max_hbm_bytes));
  }
  M.hbm.Reset(M.layout.total_size());
  M.smem.Reset(opts_.smem_bytes);
  int64_t vmem = 0;
  for (const Kernel& k : exe_.kernels) {
    vmem = std::max(vmem, std::min(k.vmem_bytes, opts_.vmem_bytes));
  }
  M.vmem.Reset(vmem);
  M.vmem_capacity = opts_.vmem_bytes;
  M.params = &opts_.cost;
  M.dmas.reserve(kMaxDmasInFlight);
  for (const HbmBuffer& b : M.layout.buffers()) buffer_base_.push_back(b.base);

  // Names by hash (whole models have tens of thousands of each); the
  // executable was validated, so every name is found once.
  std::unordered_map<std::string_view, size_t> buffer_index, kernel_index;
  buffer_index.reserve(exe_.buffers.size());
  for (size_t i = 0; i < exe_.buffers.size(); ++i) {
    buffer_index.emplace(exe_.buffers[i].name, i);
  }
  for (const Kernel& k : exe_.kernels) {
    std::vector<int64_t> addr;
    for (const std::string& sym : k.symbols) {
      if (auto it = buffer_index.find(sym); it != buffer_index.end()) {
        addr.push_back(buffer_base_[it->second]);
      }
    }
    symbol_addr_.push_back(std::move(addr));
    std::vector<Decoded> dec;
    for (const Instr& in : k.code) {
      const CostClass c = GetOpInfo(in.op).cost;
      int64_t cyc = opts_.cost.cycles[static_cast<int>(c)];
      if (Is64Bit(in.type) || Is64Bit(in.type2)) cyc *= opts_.cost.wide_factor;
      dec.push_back({RouteOf(in), static_cast<uint8_t>(c), cyc});
    }
    decoded_.push_back(std::move(dec));
  }
  kernel_index.reserve(exe_.kernels.size());
  for (size_t i = 0; i < exe_.kernels.size(); ++i) {
    kernel_index.emplace(exe_.kernels[i].name, i);
  }
  for (const std::string& name : exe_.launches) {
    if (auto it = kernel_index.find(name); it != kernel_index.end()) {
      launch_kernel_.push_back(it->second);
    }
  }
  inputs_ = exe_.BuffersWithRole(BufferRole::kInput);
  bound_.assign(inputs_.size(), {});
  is_bound_.assign(inputs_.size(), false);
  return Status::Ok();
}

Status Simulator::BindInput(int index, std::span<const uint8_t> bytes) {
  if (index < 0 || index >= num_inputs()) {
    return InvalidArgument("input index " + std::to_string(index) +
                           " out of range (" + std::to_string(num_inputs()) +
                           " inputs)");
  }
  const BufferDecl& b = *inputs_[index];
  if (static_cast<int64_t>(bytes.size()) != b.bytes) {
    return InvalidArgument("input " + std::to_string(index) + " (" + b.name +
                           ") needs " + std::to_string(b.bytes) +
                           " bytes, got " + std::to_string(bytes.size()));
  }
  bound_[index].assign(bytes.begin(), bytes.end());
  is_bound_[index] = true;
  return Status::Ok();
}

void Simulator::ResetMemory() {
  Machine& M = *m_;
  M.hbm.SetShadow(0, M.hbm.size(), kUnallocated);
  M.layout.InitShadow(&M.hbm);
  for (size_t i = 0; i < exe_.buffers.size(); ++i) {
    const BufferDecl& b = exe_.buffers[i];
    uint8_t* p = M.hbm.data() + buffer_base_[i];
    if (b.bytes == 0) continue;
    if (b.role == BufferRole::kConstant) {
      std::memcpy(p, b.data.data(), b.bytes);
      M.hbm.SetShadow(buffer_base_[i], b.bytes, kReadOnly);
    } else if (b.role != BufferRole::kInput) {
      std::memset(p, 0xff, b.bytes);
    }
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    int64_t base = buffer_base_[inputs_[i] - exe_.buffers.data()];
    if (bound_[i].empty()) continue;
    std::memcpy(M.hbm.data() + base, bound_[i].data(), bound_[i].size());
    M.hbm.SetShadow(base, bound_[i].size(), kReadOnly);
  }
  M.cycle = 0;
  M.dma_free_cycle = 0;
  M.dmas.clear();
}

void Simulator::Fail(RunReport* r, int launch, int64_t pc, bool timeout) {
  const Kernel& k = exe_.kernels[launch_kernel_[launch]];
  const Fault& f = m_->fault;
  r->kernel = k.name;
  r->launch = launch;
  r->instruction_index = pc;
  if (pc >= 0 && pc < static_cast<int64_t>(k.code.size())) {
    r->instruction = PrintInstr(k, k.code[pc]);
  }
  std::string where =
      pc < 0 ? "kernel " + k.name + " (at launch)"
             : "kernel " + k.name + ", instruction " + std::to_string(pc) +
                   (r->instruction.empty() ? "" : " `" + r->instruction + "`");
  if (timeout) {
    r->status = RunStatus::kTimeout;
    r->message = where + ": " + f.message;
    return;
  }
  r->status = f.is_trap ? RunStatus::kTrap : RunStatus::kMemoryError;
  r->message = where + ": " + f.message;
  if (!f.is_trap) {
    r->memory_error = f.kind;
    r->memory_space = std::string(MemSpaceName(f.space));
    r->address = f.address;
  }
}

bool Simulator::Launch(int li, RunReport* report) {
  Machine& M = *m_;
  const int ki = launch_kernel_[li];
  const Kernel& k = exe_.kernels[ki];
  stats_.push_back(KernelStats{});
  KernelStats& st = stats_.back();
  st.kernel = k.name;
  st.launches = 1;
  M.stats = &st;
  const int64_t start_cycle = M.cycle;
  if (k.vmem_bytes > M.vmem_capacity) {
    M.MemFault(MemoryErrorKind::kVmemOverCapacity, MemSpace::kVmem,
               M.vmem_capacity, k.vmem_bytes, false);
    M.fault.message = "vmem_over_capacity: kernel declares .vmem " +
                      std::to_string(k.vmem_bytes) +
                      " bytes, over the VMEM capacity of " +
                      std::to_string(M.vmem_capacity);
    Fail(report, li, -1, false);
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
  M.symbol_addr = symbol_addr_[ki];

  const Instr* code = k.code.data();
  const Decoded* dec = decoded_[ki].data();
  const int64_t n = static_cast<int64_t>(k.code.size());
  int64_t pc = 0;
  while (pc < n) {
    if (steps_ >= opts_.max_steps || M.cycle >= opts_.max_cycles) {
      M.fault = Fault();
      M.fault.message = steps_ >= opts_.max_steps
                            ? "step limit of " +
                                  std::to_string(opts_.max_steps) +
                                  " instructions reached"
                            : "cycle limit of " +
                                  std::to_string(opts_.max_cycles) + " reached";
      st.cycles = M.cycle - start_cycle;
      Fail(report, li, pc, true);
      return false;
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
      default:
        ok = ExecDma(M, in);
        break;
    }
    if (!ok) {
      if (M.fault.message.empty()) M.Trap("internal: unhandled instruction");
      st.cycles = M.cycle - start_cycle;
      Fail(report, li, pc, false);
      return false;
    }
    pc = next;
  }
  st.cycles = M.cycle - start_cycle;
  if (!M.dmas.empty()) {
    M.Trap("kernel ended with " + std::to_string(M.dmas.size()) +
           " DMA(s) in flight (missing dmawait)");
    Fail(report, li, n, false);
    return false;
  }
  return true;
}

OutputBuffer Simulator::Collect(const BufferDecl& b, RunReport* report) {
  OutputBuffer o{b.name, b.role,   b.index, b.dtype,
                 b.dims, b.layout, b.label, {}};
  const int64_t base = buffer_base_[&b - exe_.buffers.data()];
  const uint8_t* p = m_->hbm.data() + base;
  o.bytes.assign(p, p + b.bytes);
  int64_t bad = m_->hbm.FindNot(base, b.bytes, kInitialized);
  if (bad >= 0 && report->status == RunStatus::kOk) {
    int64_t count = 0;
    for (int64_t i = 0; i < b.bytes; ++i) {
      count += m_->hbm.shadow(base + i) != kInitialized;
    }
    report->status = RunStatus::kMemoryError;
    report->memory_error = MemoryErrorKind::kUninitializedOutput;
    report->memory_space = "hbm";
    report->address = bad;
    report->message = std::string(BufferRoleName(b.role)) + " buffer '" +
                      b.name + "' has " + std::to_string(count) +
                      " bytes never written, first at offset " +
                      std::to_string(bad - base);
  }
  return o;
}

StatusOr<RunResult> Simulator::Run() {
  for (size_t i = 0; i < is_bound_.size(); ++i) {
    if (!is_bound_[i]) {
      return FailedPrecondition("input " + std::to_string(i) + " (" +
                                inputs_[i]->name + ") is not bound");
    }
  }
  ResetMemory();
  stats_.clear();
  stats_.reserve(launch_kernel_.size());
  steps_ = 0;
  RunResult result;
  for (int li = 0; li < static_cast<int>(launch_kernel_.size()); ++li) {
    if (!Launch(li, &result.report)) break;
  }
  result.report.steps = steps_;
  result.report.cost = MakeCostReport(stats_);
  for (const BufferDecl* b : exe_.BuffersWithRole(BufferRole::kOutput)) {
    result.outputs.push_back(Collect(*b, &result.report));
  }
  for (const BufferDecl* b : exe_.BuffersWithRole(BufferRole::kTap)) {
    result.taps.push_back(Collect(*b, &result.report));
  }
  return result;
}

StatusOr<RunResult> RunExecutable(
    const Executable& exe, const std::vector<std::vector<uint8_t>>& inputs,
    const SimOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Simulator> sim,
                   Simulator::Create(exe, options));
  if (static_cast<int>(inputs.size()) != sim->num_inputs()) {
    return InvalidArgument("executable takes " +
                           std::to_string(sim->num_inputs()) + " inputs, got " +
                           std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    RETURN_IF_ERROR(sim->BindInput(static_cast<int>(i), inputs[i]));
  }
  return sim->Run();
}

}  // namespace trench::tpu
