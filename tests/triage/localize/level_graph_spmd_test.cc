// The graph level on SPMD cases: every device's taps against the SPMD
// oracle, the first diverging instruction named with the first device it
// diverges on; and the real target's per-device taps read back as the
// level reads them, in every target mode.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <vector>

#include "compiler/ir/npy.h"
#include "tests/triage/case/hlo_diff_test_util.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;
using hlo_diff::CaseOptions;
using hlo_diff::testing::F32;
using hlo_diff::testing::TempDir;

// On 4 replicas: twice = 2p, ar = the sum of every device's twice, out =
// -ar + the device's replica id.
constexpr char kSpmdModule[] = R"(HloModule spmd_graph

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p = f32[4] parameter(0)
  twice = f32[4] add(p, p)
  ar = f32[4] all-reduce(twice), replica_groups={}, to_apply=add
  id = u32[] replica-id()
  fid = f32[] convert(id)
  bid = f32[4] broadcast(fid), dimensions={}
  neg = f32[4] negate(ar)
  ROOT out = f32[4] add(neg, bid)
}
)";

constexpr int64_t kDevices = 4;

// Device d's input: [d, d + 1, d + 2, d + 3] / 4.
std::vector<float> Input(int64_t d) {
  std::vector<float> v;
  for (int k = 0; k < 4; ++k) v.push_back(static_cast<float>(d + k) / 4);
  return v;
}

hlo_diff::Case SpmdCase() {
  std::vector<std::vector<Literal>> per_device;
  for (int64_t d = 0; d < kDevices; ++d) {
    per_device.push_back({F32({4}, Input(d))});
  }
  StatusOr<hlo_diff::Case> c = hlo_diff::MakeSpmdCase(
      kSpmdModule, DeviceMesh{kDevices, 1}, std::move(per_device));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : hlo_diff::Case();
}

// The values every device should have: twice, ar, neg and out.
std::map<std::string, std::vector<float>> Expected(int64_t d) {
  std::vector<float> twice, ar(4, 0), neg, out;
  for (float x : Input(d)) twice.push_back(2 * x);
  for (int64_t e = 0; e < kDevices; ++e) {
    std::vector<float> in = Input(e);
    for (int k = 0; k < 4; ++k) ar[k] += 2 * in[k];
  }
  for (int k = 0; k < 4; ++k) {
    neg.push_back(-ar[k]);
    out.push_back(-ar[k] + static_cast<float>(d));
  }
  return {{"twice", twice}, {"ar", ar}, {"neg", neg}, {"out", out}};
}

// A scripted slice: tapped runs write each device's taps under out/<d>/
// as the real target does; `wrong[d]` perturbs device d's taps of those
// instructions. Every run fails.
class SliceTapProber : public Prober {
 public:
  explicit SliceTapProber(std::string dir) : dir_(std::move(dir)) {}
  std::map<int64_t, std::vector<std::string>> wrong;
  int runs = 0;

  StatusOr<Probe> Run(const CaseOptions& o, bool) override {
    ++runs;
    Probe p;
    p.status = "mismatch";
    p.stage = "run";
    if (o.taps != "all") return p;
    p.out_dir = dir_ + "/run" + std::to_string(runs) + "/out";
    for (int64_t d = 0; d < kDevices; ++d) {
      const std::string dev = p.out_dir + "/" + std::to_string(d);
      fs::create_directories(dev + "/taps");
      Json taps = Json::MakeArray();
      for (auto [label, values] : Expected(d)) {
        for (const std::string& w : wrong[d]) {
          if (w == label) values[1] += 8;
        }
        const std::string file = "taps/" + label + ".npy";
        EXPECT_TRUE(WriteNpyFile(dev + "/" + file, F32({4}, values)).ok());
        Json t = Json::MakeObject();
        t["label"] = label;
        t["file"] = file;
        taps.push_back(std::move(t));
      }
      p.device_taps.push_back(std::move(taps));
    }
    return p;
  }

 private:
  std::string dir_;
};

LocalizeOptions GraphOnly() {
  LocalizeOptions o;
  o.pass = o.rewrite = o.fusion = o.callee = o.branch = false;
  return o;
}

TEST(LevelGraphSpmdTest, NamesTheFirstInstructionAndTheFirstDeviceThatDiverge) {
  TempDir tmp;
  SliceTapProber target(tmp.path());
  // Devices 1 and 3 get the all-reduce wrong (and so what follows it);
  // device 2 only its last add.
  target.wrong[1] = {"ar", "neg", "out"};
  target.wrong[2] = {"out"};
  target.wrong[3] = {"ar", "neg", "out"};
  StatusOr<Localization> l = Localize(SpmdCase(), target, GraphOnly());
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->levels.size(), 1u);
  const LevelResult& g = l->levels[0];
  EXPECT_EQ(g.result, "found") << g.summary;
  EXPECT_EQ(l->findings.instruction, "ar");
  EXPECT_EQ(l->findings.opcode, "all-reduce");
  EXPECT_EQ(l->findings.device, 1);
  const Json* culprit = g.evidence.Find("instruction");
  ASSERT_TRUE(culprit && culprit->is_object()) << g.evidence.Dump();
  EXPECT_EQ(culprit->Find("device")->int64_value(), 1);
  ASSERT_EQ(culprit->Find("diverging_devices")->size(), 2u);
  EXPECT_EQ(culprit->Find("diverging_devices")->array()[1].int64_value(), 3);
  EXPECT_EQ(culprit->Find("check")->Find("max_abs_error")->number_value(), 8);
  // Its operand agrees on every device.
  EXPECT_EQ(culprit->Find("operands")->array()[0].Find("value")->string_value(),
            "agrees");
  EXPECT_NE(g.summary.find("on device 1 (2 of 4 devices diverge)"),
            std::string::npos)
      << g.summary;
  EXPECT_EQ(g.evidence.Find("devices")->int64_value(), kDevices);
}

TEST(LevelGraphSpmdTest, ALaterDeviceAloneIsNamed) {
  TempDir tmp;
  SliceTapProber target(tmp.path());
  target.wrong[2] = {"out"};
  StatusOr<Localization> l = Localize(SpmdCase(), target, GraphOnly());
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->findings.instruction, "out");
  EXPECT_EQ(l->findings.device, 2);
}

TEST(LevelGraphSpmdTest, EveryDeviceAgreeingNamesNone) {
  TempDir tmp;
  SliceTapProber target(tmp.path());
  StatusOr<Localization> l = Localize(SpmdCase(), target, GraphOnly());
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->levels[0].result, "none") << l->levels[0].summary;
  EXPECT_EQ(l->findings.device, -1);
}

// The real target writes per-device taps that ReadTap finds: each
// device's values are its own (the replica id shows in `out`).
TEST(LevelGraphSpmdTest, TheSliceTapsEveryDeviceInEveryMode) {
  for (hlo_diff::TargetMode mode :
       {hlo_diff::TargetMode::kHlocTpusim, hlo_diff::TargetMode::kHloRun,
        hlo_diff::TargetMode::kServe}) {
    TempDir tmp;
    TargetProber prober(SpmdCase(), hlo_diff::testing::RealTarget(mode),
                        tmp.path());
    CaseOptions o;
    o.taps = "all";
    for (bool dump : {false, true}) {
      StatusOr<Probe> p = prober.Run(o, dump);
      ASSERT_TRUE(p.ok()) << p.status().message();
      ASSERT_EQ(p->status, "pass") << p->verdict.message;
      ASSERT_EQ(p->device_taps.size(), static_cast<size_t>(kDevices));
      for (int64_t d = 0; d < kDevices; ++d) {
        for (const auto& [label, want] : Expected(d)) {
          StatusOr<Literal> tap = ReadTap(*p, label, PrimitiveType::F32, d);
          if (label == "neg" && !tap.ok()) continue;  // May be fused away.
          ASSERT_TRUE(tap.ok())
              << label << " on " << d << ": " << tap.status().message();
          for (int k = 0; k < 4; ++k) {
            EXPECT_EQ(tap->GetAsDouble(k), want[k])
                << label << "[" << k << "] on device " << d;
          }
        }
      }
      EXPECT_FALSE(ReadTap(*p, "ar", PrimitiveType::F32, kDevices).ok());
    }
  }
}

}  // namespace
}  // namespace trench::hlo_bisect
