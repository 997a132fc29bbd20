// The collective emitters (emit_all_reduce.cc, emit_collectives_move.cc)
// on slices of 2..8 chips: every device's outputs against the SPMD oracle,
// with replica groups in list and iota form and every group mode; and a
// ring whose synchronization is removed, which the simulator's race
// detection must catch.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tests/compiler/codegen/spmd_test_util.h"

namespace trench::codegen::testing {
namespace {

std::string Reducer(const std::string& t, const std::string& op) {
  return "HloModule m\nred {\n  x = " + t + "[] parameter(0)\n  y = " + t +
         "[] parameter(1)\n" + ReducerRoot(t, op) + "}\n";
}

// An entry computing `root` (a collective over p) from p = t[dims].
std::string Module(const std::string& header, const std::string& param,
                   const std::string& root) {
  return header + "ENTRY e {\n  p = " + param +
         " parameter(0)\n  ROOT r = " + root + "\n}\n";
}

std::string Iota(const DeviceMesh& mesh) {
  const std::string n = std::to_string(mesh.size());
  return "[1," + n + "]<=[" + n + "]";
}

// Groups of two neighbours, listed backwards: {{1,0},{3,2},...}.
std::string PairsBackwards(const DeviceMesh& mesh) {
  std::string s = "{";
  for (int64_t d = 0; d + 1 < mesh.size(); d += 2) {
    s += (d ? ",{" : "{") + std::to_string(d + 1) + "," + std::to_string(d) +
         "}";
  }
  return s + "}";
}

// Every device in one group (flattened ids), iota form, and pairs in list
// form, for each op of each type.
TEST(CollectivesTest, AllReduceMatchesOracleOnEveryMesh) {
  uint64_t seed = 1;
  for (const DeviceMesh& mesh : kTestMeshes) {
    for (const std::string& groups :
         {Iota(mesh), PairsBackwards(mesh),
          std::string("[2,") + std::to_string(mesh.size() / 2) + "]<=[" +
              std::to_string(mesh.size()) + "]"}) {
      ExpectSpmdMatchesOracle(
          Module(Reducer("f32", "add"), "f32[37]",
                 "f32[37] all-reduce(p), channel_id=1, replica_groups=" +
                     groups + ", use_global_device_ids=true, to_apply=red"),
          mesh, seed++);
    }
  }
}

TEST(CollectivesTest, AllReduceReductionsAndTypes) {
  const DeviceMesh mesh{1, 4};
  uint64_t seed = 100;
  const std::string attrs =
      ", channel_id=3, replica_groups=[1,4]<=[4], use_global_device_ids=true, "
      "to_apply=red";
  for (const char* t : {"f32", "s32", "u8", "s64", "f64", "s16"}) {
    for (const char* op : {"add", "maximum", "minimum", "multiply"}) {
      ExpectSpmdMatchesOracle(
          Module(Reducer(t, op), std::string(t) + "[3,70]",
                 std::string(t) + "[3,70] all-reduce(p)" + attrs),
          mesh, seed++);
    }
  }
  for (const char* op : {"and", "or"}) {
    ExpectSpmdMatchesOracle(Module(Reducer("pred", op), "pred[1100]",
                                   "pred[1100] all-reduce(p)" + attrs),
                            mesh, seed++);
    ExpectSpmdMatchesOracle(
        Module(Reducer("u32", op), "u32[9]", "u32[9] all-reduce(p)" + attrs),
        mesh, seed++);
  }
  // bf16 over pairs: one rounding, the same in either order.
  ExpectSpmdMatchesOracle(
      Module(Reducer("bf16", "add"), "bf16[2,65]",
             "bf16[2,65] all-reduce(p), channel_id=3, replica_groups={{0,1},"
             "{2,3}}, use_global_device_ids=true, to_apply=red"),
      mesh, seed++);
}

// No channel_id: replica groups; channel_id without global ids: replicas
// with all their partitions.
TEST(CollectivesTest, AllReduceGroupModes) {
  const DeviceMesh mesh{2, 2};
  const std::string h = Reducer("f32", "add");
  ExpectSpmdMatchesOracle(Module(h, "f32[5]",
                                 "f32[5] all-reduce(p), replica_groups={}, "
                                 "to_apply=red"),
                          mesh, 7);
  ExpectSpmdMatchesOracle(
      Module(h, "f32[5]",
             "f32[5] all-reduce(p), replica_groups={{0,1}}, "
             "channel_id=2, use_global_device_ids=false, "
             "to_apply=red"),
      mesh, 8);
  ExpectSpmdMatchesOracle(Module(h, "f32[5]",
                                 "f32[5] all-reduce(p), channel_id=2, "
                                 "replica_groups=[2,2]<=[2,2]T(1,0), "
                                 "use_global_device_ids=true, to_apply=red"),
                          mesh, 9);
  ExpectSpmdMatchesOracle(
      Module(h, "f32[5]",
             "f32[5] all-reduce(p), replica_groups={{0},{1}}, "
             "to_apply=red"),
      {2, 1}, 10);
}

// XLA lets an all-reduce's groups differ in size (only all-reduce): each
// size runs its own ring, and a chip alone keeps its value.
TEST(CollectivesTest, AllReduceGroupsOfDifferentSizes) {
  const std::string h = Reducer("f32", "add");
  ExpectSpmdMatchesOracle(Module(h, "f32[5,3]",
                                 "f32[5,3] all-reduce(p), "
                                 "replica_groups={{0,1,2},{3}}, to_apply=red"),
                          {4, 1}, 21);
  ExpectSpmdMatchesOracle(Module(h, "f32[7]",
                                 "f32[7] all-reduce(p), channel_id=3, "
                                 "replica_groups={{2},{0,3},{1}}, "
                                 "use_global_device_ids=true, to_apply=red"),
                          {2, 2}, 22);
  ExpectSpmdMatchesOracle(
      Module(Reducer("s32", "maximum"), "s32[9]",
             "s32[9] all-reduce(p), replica_groups={{5,1,7},{0,2,3,4,6}}, "
             "to_apply=red"),
      {8, 1}, 23);
  // Combined operands, and the whole pipeline around it.
  const std::string text = h +
                           "ENTRY e {\n"
                           "  a = f32[10] parameter(0)\n"
                           "  b = f32[3,3] parameter(1)\n"
                           "  ROOT r = (f32[10], f32[3,3]) all-reduce(a, b), "
                           "replica_groups={{1},{0,2,3}}, to_apply=red\n}\n";
  ExpectSpmdMatchesOracle(text, {4, 1}, 24, {}, /*full_pipeline=*/true);
}

TEST(CollectivesTest, CombinedAllReduceOfATuple) {
  const std::string text = Reducer("f32", "add") +
                           "ENTRY e {\n"
                           "  a = f32[10] parameter(0)\n"
                           "  b = f32[3,3] parameter(1)\n"
                           "  ROOT r = (f32[10], f32[3,3]) all-reduce(a, b), "
                           "channel_id=1, replica_groups=[1,4]<=[4], "
                           "use_global_device_ids=true, to_apply=red\n}\n";
  ExpectSpmdMatchesOracle(text, {2, 2}, 11);
}

TEST(CollectivesTest, DeviceIds) {
  for (const DeviceMesh& mesh : kTestMeshes) {
    ExpectSpmdMatchesOracle(
        "HloModule m\nENTRY e {\n  a = u32[] partition-id()\n"
        "  b = u32[] replica-id()\n  ROOT t = (u32[], u32[]) tuple(a, b)\n}\n",
        mesh, 1, ComparisonOptions::Exact());
  }
}

TEST(CollectivesTest, AllGatherAlongEachDimension) {
  uint64_t seed = 200;
  for (const DeviceMesh& mesh : kTestMeshes) {
    const int64_t n = mesh.size();
    const std::string g = std::to_string(2 * n);
    ExpectSpmdMatchesOracle(
        Module("HloModule m\n", "f32[2,3]",
               "f32[" + g +
                   ",3] all-gather(p), channel_id=1, "
                   "replica_groups=" +
                   Iota(mesh) + ", dimensions={0}, use_global_device_ids=true"),
        mesh, seed++, ComparisonOptions::Exact());
    ExpectSpmdMatchesOracle(
        Module("HloModule m\n", "s8[2,3,2]",
               "s8[2," + std::to_string(3 * n) +
                   ",2] all-gather(p), channel_id=1, replica_groups=" +
                   Iota(mesh) + ", dimensions={1}, use_global_device_ids=true"),
        mesh, seed++, ComparisonOptions::Exact());
    ExpectSpmdMatchesOracle(
        Module("HloModule m\n", "bf16[3,5]",
               "bf16[3,10] all-gather(p), channel_id=1, replica_groups=" +
                   PairsBackwards(mesh) +
                   ", dimensions={1}, use_global_device_ids=true"),
        mesh, seed++, ComparisonOptions::Exact());
  }
}

TEST(CollectivesTest, ReduceScatterChunks) {
  uint64_t seed = 300;
  for (const DeviceMesh& mesh : kTestMeshes) {
    const int64_t n = mesh.size();
    ExpectSpmdMatchesOracle(
        Module(Reducer("f32", "add"), "f32[" + std::to_string(2 * n) + ",3]",
               "f32[2,3] reduce-scatter(p), channel_id=1, replica_groups=" +
                   Iota(mesh) +
                   ", dimensions={0}, use_global_device_ids=true, "
                   "to_apply=red"),
        mesh, seed++);
    ExpectSpmdMatchesOracle(
        Module(Reducer("s32", "maximum"), "s32[3,4]",
               "s32[3,2] reduce-scatter(p), channel_id=1, replica_groups=" +
                   PairsBackwards(mesh) +
                   ", dimensions={1}, use_global_device_ids=true, "
                   "to_apply=red"),
        mesh, seed++, ComparisonOptions::Exact());
  }
}

TEST(CollectivesTest, AllToAll) {
  uint64_t seed = 400;
  for (const DeviceMesh& mesh : kTestMeshes) {
    const std::string n = std::to_string(mesh.size());
    ExpectSpmdMatchesOracle(Module("HloModule m\n", "f32[" + n + ",3]",
                                   "f32[" + n +
                                       ",3] all-to-all(p), channel_id=1, "
                                       "replica_groups=" +
                                       Iota(mesh) + ", dimensions={0}"),
                            {1, mesh.size()}, seed++,
                            ComparisonOptions::Exact());
    ExpectSpmdMatchesOracle(
        Module("HloModule m\n", "s32[3,4]",
               "s32[3,4] all-to-all(p), replica_groups=" +
                   PairsBackwards(mesh) + ", dimensions={1}"),
        {mesh.size(), 1}, seed++, ComparisonOptions::Exact());
  }
}

// A reducing collective `kind` (all-reduce, reduce-scatter) of p = t[in]
// into t[out] over all n partitions of a 1 x n mesh (iota groups, global
// ids) with reducer `op`; `dims` the reduce-scatter's ", dimensions={d}".
std::string OverAllPartitions(const std::string& kind, const std::string& t,
                              const std::string& op, const std::string& in,
                              const std::string& out, int64_t n,
                              const std::string& dims = "") {
  const std::string k = std::to_string(n);
  return Module(Reducer(t, op), t + "[" + in + "]",
                t + "[" + out + "] " + kind +
                    "(p), channel_id=1, replica_groups=[1," + k + "]<=[" + k +
                    "], use_global_device_ids=true" + dims + ", to_apply=red");
}

// Operands larger than VMEM: reduced in pieces of at most 4 MiB, one ring
// after the other on the same scratch areas (the race detection checks
// that reuse), with a short last piece; a combined one whose first
// operand is split and whose second is not.
TEST(CollectivesTest, AllReduceLargerThanVmem) {
  ExpectSpmdMatchesOracle(
      OverAllPartitions("all-reduce", "f32", "add", "4200007", "4200007", 4),
      {1, 4}, 480);
  ExpectSpmdMatchesOracle(
      Reducer("s32", "maximum") +
          "ENTRY e {\n  a = s32[3000001] parameter(0)\n"
          "  b = s32[77] parameter(1)\n"
          "  ROOT r = (s32[3000001], s32[77]) all-reduce(a, b), "
          "replica_groups={{0,1}}, to_apply=red\n}\n",
      {2, 1}, 481, ComparisonOptions::Exact());
}

// Reduce-scatters of operands larger than the 16 MiB of VMEM (so only
// pieces compile): in blocks of rows (scatter dimension 1), and in parts
// of one slab (dimension 0, a single outer index), alternating two halves
// of the scratch.
TEST(CollectivesTest, ReduceScatterInPieces) {
  ExpectSpmdMatchesOracle(
      OverAllPartitions("reduce-scatter", "s32", "add", "4000,1100", "4000,550",
                        2, ", dimensions={1}"),
      {1, 2}, 490, ComparisonOptions::Exact());
  ExpectSpmdMatchesOracle(
      OverAllPartitions("reduce-scatter", "f32", "maximum", "8,600000",
                        "2,600000", 4, ", dimensions={0}"),
      {1, 4}, 491, ComparisonOptions::Exact());
}

// In a 64 KiB VMEM (a module's trench_vmem_bytes) the pieces are 16 KiB:
// many pieces of small arrays, each scratch half reused many times.
TEST(CollectivesTest, PiecesFollowASmallVmem) {
  constexpr int64_t kVmem = 64 << 10;
  const ComparisonOptions exact = ComparisonOptions::Exact();
  ExpectSpmdMatchesOracle(
      OverAllPartitions("all-reduce", "s32", "add", "20011", "20011", 4),
      {1, 4}, 495, exact, false, kVmem);
  ExpectSpmdMatchesOracle(
      OverAllPartitions("reduce-scatter", "s32", "add", "64,600", "64,300", 2,
                        ", dimensions={1}"),
      {1, 2}, 496, exact, false, kVmem);
  ExpectSpmdMatchesOracle(
      OverAllPartitions("reduce-scatter", "f32", "maximum", "4,9000", "1,9000",
                        4, ", dimensions={0}"),
      {1, 4}, 497, exact, false, kVmem);
}

// Complex all-reduce and reduce-scatter (c64: a u64 pair per element,
// c128: two halves), with add and multiply (complex multiply, not per
// part) folded in ring order; on every mesh for add, in pieces of a small
// VMEM too.
TEST(CollectivesTest, ComplexAllReduceAndReduceScatter) {
  uint64_t seed = 520;
  for (const char* t : {"c64", "c128"}) {
    for (const char* op : {"add", "multiply"}) {
      ExpectSpmdMatchesOracle(
          OverAllPartitions("all-reduce", t, op, "3,70", "3,70", 4), {1, 4},
          seed++);
      ExpectSpmdMatchesOracle(OverAllPartitions("reduce-scatter", t, op, "4,6",
                                                "4,3", 2, ", dimensions={1}"),
                              {1, 2}, seed++);
    }
    for (const DeviceMesh& mesh : kTestMeshes) {
      const std::string n = std::to_string(mesh.size());
      ExpectSpmdMatchesOracle(
          OverAllPartitions("reduce-scatter", t, "add", n + ",5", "1,5",
                            mesh.size(), ", dimensions={0}"),
          mesh, seed++);
    }
    ExpectSpmdMatchesOracle(
        OverAllPartitions("all-reduce", t, "add", "5003", "5003", 4), {1, 4},
        seed++, ComparisonOptions(), false, 64 << 10);
  }
}

// An operand larger than the 16 MiB of VMEM, split along its minor
// dimension: the chunks go from HBM to the peers' scratch by strided DMAs,
// nothing is staged in VMEM.
TEST(CollectivesTest, AllToAllLargerThanVmem) {
  ExpectSpmdMatchesOracle(Module("HloModule m\n", "u8[64,290000]",
                                 "u8[64,290000] all-to-all(p), channel_id=1, "
                                 "replica_groups=[1,2]<=[2], dimensions={1}"),
                          {1, 2}, 470, ComparisonOptions::Exact());
}

// The tuple form: no dimensions, one operand per member; result i on
// member p is operand p of member i.
TEST(CollectivesTest, TupleAllToAll) {
  uint64_t seed = 450;
  for (const DeviceMesh& mesh : kTestMeshes) {
    const int64_t n = mesh.size();
    std::string params, operands, shapes;
    for (int64_t k = 0; k < n; ++k) {
      params += "  p" + std::to_string(k) + " = s16[3,5] parameter(" +
                std::to_string(k) + ")\n";
      operands += (k ? ", p" : "p") + std::to_string(k);
      shapes += k ? ", s16[3,5]" : "s16[3,5]";
    }
    ExpectSpmdMatchesOracle("HloModule m\nENTRY e {\n" + params +
                                "  ROOT r = (" + shapes + ") all-to-all(" +
                                operands + "), replica_groups=" + Iota(mesh) +
                                "\n}\n",
                            {n, 1}, seed++, ComparisonOptions::Exact());
  }
  // Two groups of two on four devices, across partitions.
  ExpectSpmdMatchesOracle(
      "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n"
      "  b = f32[4] parameter(1)\n"
      "  ROOT r = (f32[4], f32[4]) all-to-all(a, b), channel_id=1, "
      "replica_groups={{1,0}}\n}\n",
      {2, 2}, seed++, ComparisonOptions::Exact());
  // Cross-replica (no channel_id) on 2 x 2: groups of replicas within
  // each partition, with f16 operands.
  ExpectSpmdMatchesOracle(
      "HloModule m\nENTRY e {\n  a = f16[5,15,37,2] parameter(0)\n"
      "  b = f16[5,15,37,2] parameter(1)\n"
      "  ROOT r = (f16[5,15,37,2], f16[5,15,37,2]) all-to-all(a, b), "
      "replica_groups={{0,1}}\n}\n",
      {2, 2}, seed++, ComparisonOptions::Exact());
  ExpectSpmdMatchesOracle(
      "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n"
      "  b = f32[4] parameter(1)\n"
      "  ROOT r = (f32[4], f32[4]) all-to-all(a, b), "
      "replica_groups={{0,1}}\n}\n",
      {2, 2}, seed++, ComparisonOptions::Exact());
  // Operands in another layout than the results.
  ExpectSpmdMatchesOracle(
      "HloModule m\nENTRY e {\n  a = f32[3,5]{0,1} parameter(0)\n"
      "  b = f32[3,5]{0,1} parameter(1)\n"
      "  ROOT r = (f32[3,5]{1,0}, f32[3,5]{1,0}) all-to-all(a, b), "
      "replica_groups={{0,1}}\n}\n",
      {2, 1}, seed++, ComparisonOptions::Exact(), /*full_pipeline=*/true);
  // An unseeded finding of the demo (2026-12-06), reduced: a bitcast of a
  // result whose operand was in another layout. The oracle once read the
  // operand's layout off the value and disagreed with the target.
  ExpectSpmdMatchesOracle(
      "HloModule m\nENTRY e {\n  p = f16[5,15,37,2]{3,0,1,2} parameter(0)\n"
      "  a = (f16[5,15,37,2], f16[5,15,37,2]) all-to-all(p, p), "
      "replica_groups={{0,1}}\n"
      "  g = f16[5,15,37,2] get-tuple-element(a), index=1\n"
      "  ROOT b = f16[5,15,37,2] bitcast(g)\n}\n",
      {2, 2}, seed++, ComparisonOptions::Exact(), /*full_pipeline=*/true);
}

TEST(CollectivesTest, CollectivePermute) {
  uint64_t seed = 500;
  for (const DeviceMesh& mesh : kTestMeshes) {
    const int64_t n = mesh.size();
    // A rotation, and a shift that leaves device 0 without a source.
    std::string rotate = "{", shift = "{";
    for (int64_t d = 0; d < n; ++d) {
      rotate += (d ? ",{" : "{") + std::to_string(d) + "," +
                std::to_string((d + 1) % n) + "}";
      if (d + 1 < n) {
        shift += (d ? ",{" : "{") + std::to_string(d) + "," +
                 std::to_string(d + 1) + "}";
      }
    }
    for (const std::string& pairs : {rotate + "}", shift + "}"}) {
      ExpectSpmdMatchesOracle(
          Module("HloModule m\n", "f32[4,33]",
                 "f32[4,33] collective-permute(p), channel_id=1, "
                 "source_target_pairs=" +
                     pairs),
          {1, n}, seed++, ComparisonOptions::Exact());
    }
  }
}

// The combined form: several operands of different types and sizes, each
// permuted alike, into a tuple; one larger than the 64 KiB zero block
// (with a tail), so a device no pair targets gets zeros over all of it.
TEST(CollectivesTest, CombinedCollectivePermute) {
  uint64_t seed = 550;
  for (const DeviceMesh& mesh : {DeviceMesh{1, 2}, DeviceMesh{1, 4}}) {
    const int64_t n = mesh.size();
    std::string shift = "{";
    for (int64_t d = 0; d + 1 < n; ++d) {
      shift += (d ? ",{" : "{") + std::to_string(d) + "," +
               std::to_string(d + 1) + "}";
    }
    shift += "}";
    const std::string text =
        "HloModule m\nENTRY e {\n  a = f32[4,33] parameter(0)\n"
        "  b = s32[7] parameter(1)\n  c = u8[70001] parameter(2)\n"
        "  ROOT r = (f32[4,33], s32[7], u8[70001]) collective-permute(a, b, "
        "c), channel_id=1, source_target_pairs=" +
        shift + "\n}\n";
    ExpectSpmdMatchesOracle(text, mesh, seed++, ComparisonOptions::Exact());
  }
}

// The whole compiler (passes, then the emitters) on a program mixing ids
// and collectives.
TEST(CollectivesTest, FullPipelineProgram) {
  const std::string text = Reducer("f32", "add") +
                           "ENTRY e {\n"
                           "  p = f32[8,16] parameter(0)\n"
                           "  id = u32[] partition-id()\n"
                           "  f = f32[] convert(id)\n"
                           "  b = f32[8,16] broadcast(f), dimensions={}\n"
                           "  x = f32[8,16] multiply(p, b)\n"
                           "  ar = f32[8,16] all-reduce(x), channel_id=1, "
                           "replica_groups=[1,4]<=[4], "
                           "use_global_device_ids=true, to_apply=red\n"
                           "  ag = f32[32,16] all-gather(ar), channel_id=2, "
                           "replica_groups=[1,4]<=[4], dimensions={0}, "
                           "use_global_device_ids=true\n"
                           "  ROOT e = f32[32,16] exponential(ag)\n}\n";
  ExpectSpmdMatchesOracle(text, {1, 4}, 12, ComparisonOptions(),
                          /*full_pipeline=*/true);
}

// A ring that waits on the wrong flag: each send is followed by a bare
// flagsignal on flag 1, and the receivers wait for that one instead of the
// transfer's own signal (flag 0). The data has landed by then, but no
// flagwait consumed its signal: the race detection reports the read.
TEST(CollectivesTest, MissingSynchronizationIsARace) {
  std::unique_ptr<HloModule> m =
      Parse(Module(Reducer("f32", "add"), "f32[64]",
                   "f32[64] all-reduce(p), channel_id=1, replica_groups="
                   "[1,4]<=[4], use_global_device_ids=true, to_apply=red"));
  ASSERT_NE(m, nullptr);
  auto exe = CompileForMesh(*m, {1, 4}, false);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  std::string broken_text;
  std::istringstream lines(tpu::WriteExecutable(*exe));
  int sends = 0;
  for (std::string line; std::getline(lines, line);) {
    const size_t wait = line.find("flagwait 0, 1");
    if (wait != std::string::npos) line.replace(wait, 13, "flagwait 1, 1");
    broken_text += line + "\n";
    const size_t send = line.find("rdmastart s11,");
    if (send != std::string::npos) {
      broken_text += line.substr(0, send) + "flagsignal s11, 1\n";
      ++sends;
    }
  }
  ASSERT_GT(sends, 0);
  auto broken = tpu::ReadExecutable(broken_text);
  ASSERT_TRUE(broken.ok()) << broken.status().ToString();
  // Intact, the same program runs clean.
  EXPECT_EQ(RunOnSlice(*m, *exe, {1, 4}, 3).result.report.status,
            tpu::RunStatus::kOk);
  SpmdRun run = RunOnSlice(*m, *broken, {1, 4}, 3);
  const tpu::RunReport& rep = run.result.report;
  EXPECT_EQ(rep.status, tpu::RunStatus::kMemoryError) << rep.message;
  EXPECT_EQ(rep.memory_error, tpu::MemoryErrorKind::kUnsynchronizedPeerAccess)
      << rep.message;
  EXPECT_NE(rep.message.find("written by chip"), std::string::npos)
      << rep.message;
}

TEST(CollectivesTest, MeshLargerThanTheSliceIsRefused) {
  std::unique_ptr<HloModule> m =
      Parse("HloModule m\nENTRY e {\n  ROOT a = u32[] partition-id()\n}\n");
  ASSERT_NE(m, nullptr);
  auto exe = CompileForMesh(*m, {4, 4}, false);
  ASSERT_FALSE(exe.ok());
  EXPECT_NE(exe.status().message().find("slice"), std::string::npos);
}

}  // namespace
}  // namespace trench::codegen::testing
