// The double-buffered slab loop (stream_slab.h).
#include "compiler/codegen/stream_slab.h"

#include "compiler/codegen/streaming.h"

namespace trench::codegen {
namespace {

int64_t ProductOf(std::vector<int64_t>::const_iterator b,
                  std::vector<int64_t>::const_iterator e) {
  int64_t p = 1;
  for (; b != e; ++b) p *= *b;
  return p;
}

}  // namespace

SlabPlan SlabGeometry(const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& red, int64_t p) {
  SlabPlan s;
  s.dims = dims;
  s.red = red;
  s.p = p;
  s.outer = ProductOf(dims.begin(), dims.begin() + p);
  s.inner = ProductOf(dims.begin() + p + 1, dims.end());
  s.p_kept = !s.Reduced(p);
  s.resident = !s.red.empty() && s.red.front() <= p;
  for (int64_t d = p + 1; d < static_cast<int64_t>(dims.size()); ++d) {
    if (!s.Reduced(d)) s.kept_inner *= dims[d];
  }
  return s;
}

StatusOr<SlabPlan> ChooseSlabPlan(
    const std::vector<int64_t>& dims, const std::vector<int64_t>& red,
    int64_t avail, const std::function<void(SlabPlan&)>& prepare,
    const std::function<int64_t(const SlabPlan&, int64_t)>& cost) {
  for (int64_t p = 0; p < static_cast<int64_t>(dims.size()); ++p) {
    SlabPlan s = SlabGeometry(dims, red, p);
    prepare(s);
    const int64_t b = LargestFitting(
        s.dims[p], [&](int64_t x) { return cost(s, x) <= avail; });
    if (b == 0) continue;
    s.b = b;
    s.blocks = (s.dims[p] + s.b - 1) / s.b;
    s.ragged = s.dims[p] - (s.blocks - 1) * s.b;
    return s;
  }
  return NotFound("no slab fits");
}

std::vector<int64_t> KeptTiling::Dims(int64_t width) const {
  std::vector<int64_t> d = {a, width};
  d.insert(d.end(), tail.begin(), tail.end());
  return d;
}

StatusOr<KeptTiling> ChooseKeptTiling(
    const std::vector<int64_t>& dims, const std::vector<int64_t>& red,
    const std::function<bool(const std::vector<int64_t>&,
                             const std::vector<int64_t>&)>& fits) {
  KeptTiling t;
  const int64_t rank = dims.size();
  while (t.q < rank && std::binary_search(red.begin(), red.end(), t.q)) {
    ++t.q;
  }
  if (t.q == 0 || t.q == rank) {
    return NotFound("no kept dim after a reduced one");
  }
  t.q_size = dims[t.q];
  t.a = ProductOf(dims.begin(), dims.begin() + t.q);
  t.inner = ProductOf(dims.begin() + t.q + 1, dims.end());
  t.tail.assign(dims.begin() + t.q + 1, dims.end());
  t.vred = {0};
  for (int64_t d : red) {
    if (d > t.q) t.vred.push_back(d - t.q + 1);
  }
  t.w = LargestFitting(dims[t.q],
                       [&](int64_t x) { return fits(t.Dims(x), t.vred); });
  if (t.w == 0) return NotFound("not even one index of the kept dim fits");
  t.blocks = (dims[t.q] + t.w - 1) / t.w;
  t.last_w = dims[t.q] - (t.blocks - 1) * t.w;
  return t;
}

SlabPlan SameSplit(const SlabPlan& full, const std::vector<int64_t>& dims) {
  SlabPlan s = SlabGeometry(dims, full.red, full.p);
  s.b = std::min(full.b, dims[full.p]);
  s.blocks = (dims[s.p] + s.b - 1) / s.b;
  s.ragged = dims[s.p] - (s.blocks - 1) * s.b;
  return s;
}

SlabFoldShape FoldShape(const SlabPlan& s, int64_t rows) {
  std::vector<int64_t> ld = {rows};
  ld.insert(ld.end(), s.dims.begin() + s.p + 1, s.dims.end());
  const std::vector<int64_t> lst = RowMajorStrides(ld);
  SlabFoldShape f;
  for (size_t d = 0; d < ld.size(); ++d) {
    if (s.Reduced(s.p + static_cast<int64_t>(d))) {
      f.loops.push_back({ld[d], 0, lst[d]});
    } else {
      f.out_dims.push_back(ld[d]);
      f.coeff.push_back(lst[d]);
    }
  }
  return f;
}

void BeginFoldTiles(KernelBuilder& kb, const SlabPlan& s, int64_t rows,
                    const SlabFoldShape& f, int base, int oidx, int tmp) {
  kb.BeginLinearTiles(s.SlabOutputs(rows));
  kb.LinearIndex();
  EmitIndexFromLinear(kb, 31, f.out_dims, f.coeff, 0, base, tmp);
  if (s.resident) {
    kb.Emit("vbcast.s32 " + VReg(oidx) + ", s9");
    kb.Emit("vadd.s32 " + VReg(oidx) + ", " + VReg(oidx) + ", v31");
  } else {
    kb.Splat(oidx, "s32", "0");
  }
}

void EmitFoldOffset(KernelBuilder& kb, const SlabFoldShape& f) {
  kb.Emit("simm s0, 0");
  for (size_t j = 0; j < f.loops.size(); ++j) {
    kb.Emit("sadd s0, s0, s" + I(10 + j));
  }
}

int64_t LayOutSlabSet(const SlabPlan& plan, std::vector<SlabArray>& arrays) {
  int64_t set = 0;
  for (SlabArray& a : arrays) {
    a.offset = set;
    set += VmemAligned(plan.b * plan.inner * a.elem_bytes);
  }
  return set;
}

void EmitResidentWriteBack(KernelBuilder& kb, const std::string& acc_mem,
                           int64_t vmem, const std::string& out,
                           const std::string& out_dtype, int64_t elements,
                           int64_t bytes, int64_t offset_word,
                           int64_t offset_scale) {
  if (acc_mem != out_dtype) {
    kb.BeginLinearTiles(elements);
    kb.LoadTile(0, acc_mem, vmem);
    kb.StoreTile(out_dtype, vmem, 0);
    kb.EndLinearTiles();
  }
  if (offset_word < 0) {
    kb.DmaOut(out, vmem, bytes);
    return;
  }
  kb.Emit("sld.s64 s28, vmem[" + I(offset_word) + "]");
  kb.Emit("smul s28, s28, " + I(offset_scale));
  kb.Emit("saddr s29, " + out);
  kb.Emit("sadd s29, s29, s28");
  kb.Emit("dmastart hbm[s29], vmem[" + I(vmem) + "], " + I(bytes) + ", 0");
  kb.Emit("dmawait 0");
}

void SlabLoop::EmitDmas(const std::string& set, int64_t rows, int sem) {
  for (size_t i = 0; i < arrays_.size(); ++i) {
    const int64_t e = arrays_[i].elem_bytes;
    kb_.Emit("saddr s28, " + arrays_[i].buffer);
    kb_.Emit("smul s29, s30, " + I(e));
    kb_.Emit("sadd s28, s28, s29");
    const std::string dst = "vmem[" + set + "+" + I(Address(i)) + "]";
    if (view_.row > 0 && s_.p == 0 && rows > 1) {
      // Rows of the box, hbm_row apart in HBM, dense in VMEM.
      kb_.Emit("dmastart " + dst + ", hbm[s28], " + I(view_.row * e) + ", " +
               I(sem) + ", " + I(rows) + ", " + I(view_.hbm_row * e) + ", " +
               I(view_.row * e));
      continue;
    }
    kb_.Emit("dmastart " + dst + ", hbm[s28], " + I(rows * s_.inner * e) +
             ", " + I(sem));
  }
}

void SlabLoop::EmitSlabDmas(const std::string& slab, const std::string& set) {
  // s30 = the slab's first input element: o * dims[p] * inner + j * b *
  // inner, with o = slab / blocks and j = slab % blocks.
  kb_.Emit("sdiv s28, " + slab + ", " + I(s_.blocks));
  kb_.Emit("srem s29, " + slab + ", " + I(s_.blocks));
  kb_.Emit("smul s30, s28, " + I(s_.dims[s_.p] * s_.inner));
  kb_.Emit("smul s31, s29, " + I(s_.b * s_.inner));
  kb_.Emit("sadd s30, s30, s31");
  kb_.Emit("scmpeq s24, s29, " + I(s_.blocks - 1));
  if (view_.row > 0) {
    // The box element s30 in HBM: (s30 / row) * hbm_row + s30 % row + base.
    kb_.Emit("sdiv s28, s30, " + I(view_.row));
    kb_.Emit("srem s29, s30, " + I(view_.row));
    kb_.Emit("smul s28, s28, " + I(view_.hbm_row));
    kb_.Emit("sadd s30, s28, s29");
    kb_.Emit("sld.s64 s31, vmem[" + I(view_.base_word) + "]");
    kb_.Emit("sadd s30, s30, s31");
  }
  auto sized = [&](int sem) -> Status {
    if (s_.ragged == s_.b) {
      EmitDmas(set, s_.b, sem);
      return Status::Ok();
    }
    return EmitBranch(
        kb_, "s24", "slab_ragged",
        [&] { return EmitDmas(set, s_.ragged, sem), Status::Ok(); },
        [&] { return EmitDmas(set, s_.b, sem), Status::Ok(); });
  };
  // Set 0 or 1 (semaphore 2 or 3) x full or ragged slab (size).
  (void)EmitBranch(
      kb_, set, "slab_set", [&] { return sized(3); }, [&] { return sized(2); });
}

void SlabLoop::EmitSlabStart(const std::string& dst) {
  kb_.Emit("sdiv s28, s18, " + I(s_.blocks));
  kb_.Emit("srem s29, s18, " + I(s_.blocks));
  kb_.Emit("smul s31, s28, " + I(s_.dims[s_.p] * s_.inner));
  kb_.Emit("smul " + dst + ", s29, " + I(s_.b * s_.inner));
  kb_.Emit("sadd " + dst + ", " + dst + ", s31");
}

void SlabLoop::EmitOutputOffset() {
  const std::vector<int64_t>& dims = s_.dims;
  // Result strides: the row-major strides of the kept dims.
  std::vector<int64_t> ost(dims.size(), 0);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (s_.Reduced(d)) continue;
    ost[d] = stride;
    stride *= dims[d];
  }
  kb_.Emit("sdiv s28, s18, " + I(s_.blocks));
  kb_.Emit("srem s29, s18, " + I(s_.blocks));
  kb_.Emit("simm s9, 0");
  int64_t ist = 1;  // Stride of dim d in the outer index (dims 0..p-1).
  for (int64_t d = s_.p - 1; d >= 0; --d) {
    if (!s_.Reduced(d) && dims[d] > 1) {
      kb_.Emit("sdiv s30, s28, " + I(ist));
      kb_.Emit("srem s30, s30, " + I(dims[d]));
      kb_.Emit("smul s30, s30, " + I(ost[d]));
      kb_.Emit("sadd s9, s9, s30");
    }
    ist *= dims[d];
  }
  if (s_.p_kept) {
    kb_.Emit("smul s30, s29, " + I(s_.b * ost[s_.p]));
    kb_.Emit("sadd s9, s9, s30");
  }
}

void SlabLoop::Start() {
  kb_.Emit("simm s18, 0");
  kb_.Emit("simm s19, 0");
  EmitSlabDmas("s18", "s19");
}

Status SlabLoop::Run(const std::function<Status(int64_t rows)>& body) {
  const int64_t slabs = s_.slabs();
  const std::string loop = kb_.NewLabel("slab");
  kb_.PlaceLabel(loop);
  if (slabs > 1 && !arrays_.empty()) {
    // Prefetch slab s18 + 1 into the other set.
    const std::string skip = kb_.NewLabel("slab_noprefetch");
    kb_.Emit("sadd s22, s18, 1");
    kb_.Emit("scmplt s23, s22, " + I(slabs));
    kb_.Emit("brz s23, " + skip);
    kb_.Emit("simm s23, " + I(set_bytes_));
    kb_.Emit("ssub s23, s23, s19");
    EmitSlabDmas("s22", "s23");
    kb_.PlaceLabel(skip);
  }
  if (!arrays_.empty()) {
    (void)EmitBranch(
        kb_, "s19", "slab_wait",
        [&] { return kb_.Emit("dmawait 3"), Status::Ok(); },
        [&] { return kb_.Emit("dmawait 2"), Status::Ok(); });
  }
  EmitOutputOffset();
  if (s_.ragged == s_.b) {
    RETURN_IF_ERROR(body(s_.b));
  } else {
    kb_.Emit("scmpeq s31, s29, " + I(s_.blocks - 1));
    RETURN_IF_ERROR(EmitBranch(
        kb_, "s31", "slab_part", [&] { return body(s_.ragged); },
        [&] { return body(s_.b); }));
  }
  kb_.Emit("sadd s18, s18, 1");
  kb_.Emit("simm s22, " + I(set_bytes_));
  kb_.Emit("ssub s19, s22, s19");
  kb_.Emit("scmplt s22, s18, " + I(slabs));
  kb_.Emit("brnz s22, " + loop);
  return Status::Ok();
}

}  // namespace trench::codegen
