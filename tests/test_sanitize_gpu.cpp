// Sanitize.*: small problems over every registered kernel and every scratch path, each checked
// against fp64. Small enough to run under compute-sanitizer (memcheck, racecheck, synccheck:
// `SANITIZE=1 scripts/gpu-check`), and fast in normal runs.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ex_problem_util.h"
#include "gpu_util.h"
#include "runtime/plan_choice.h"
#include "problem_util.h"
#include "registry/registry.h"

namespace gemmlab::test {
namespace {

struct KernelRun {
  const char* kernel;
  ProblemSpec spec;
};

// Runs each (kernel, problem) that the device can run against fp64; says which it cannot.
void check_runs(const std::vector<KernelRun>& runs) {
  const int cc = current_cc();
  for (const KernelRun& r : runs) {
    SCOPED_TRACE(std::string(r.kernel) + " " + describe(r.spec));
    DeviceProblem d(r.spec);
    ASSERT_EQ(d.error(), "");
    const KernelDesc* kd = find_kernel(r.kernel);
    if (kd) {
      if (const char* why = kernel_cannot_run(*kd, d.problem(), cc)) {
        std::printf("[  NOTE    ] %s not run on %s: %s\n", r.kernel, describe(r.spec).c_str(), why);
        continue;
      }
    }
    EXPECT_EQ(run_and_check(d, d.reference(), r.kernel), "");
  }
}

// A tile-aligned small problem and an edge one: odd sizes, both transposed, padded rows,
// misaligned base pointers, beta != 0.
TEST(Sanitize, EveryKernelSmallAndEdge) {
  GEMMLAB_REQUIRE_GPU();
  std::vector<KernelRun> runs;
  for (const KernelDesc& kd : all_kernels())
    for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16}) {
      if (!(kd.dtypes & dtype_bit(p))) continue;
      ProblemSpec edge = spec(p, 33, 17, 41, Op::T, Op::T);
      edge.pad_a = edge.pad_b = edge.pad_c = 3, edge.offset = 1, edge.beta = -0.5f;
      runs.push_back({kd.name, spec(p, 64, 64, 64)});
      runs.push_back({kd.name, edge});
    }
  check_runs(runs);
}

// The paths that use scratch, at the smallest sizes that take them.
TEST(Sanitize, ScratchPaths) {
  GEMMLAB_REQUIRE_GPU();
  using P = Precision;
  ProblemSpec realign = spec(P::FP32, 8192, 512, 512);
  realign.pad_b = 1;
  ProblemSpec packed = spec(P::BF16, 300, 300, 300, Op::T, Op::N);
  packed.pad_a = packed.pad_b = 3;
  const char* wgmma03 = "wgmma/03_tma_wgmma_ws_persistent";
  ProblemSpec decode_packed = spec(P::FP16, 100, 700, 3001);  // MN-major W, packed operands
  decode_packed.pad_a = decode_packed.pad_b = 3;
  check_runs({{kFp32ProductionKernel, spec(P::FP32, 256, 256, 2048)},        // split-k
              {kFp32ProductionKernel, spec(P::FP32, 257, 259, 1100)},        // strips, split
              {kFp32ProductionKernel, spec(P::FP32, 2500, 2500, 1024)},      // stream-k tail
              {kFp32ProductionKernel, spec(P::FP32, 8192, 512, 512, Op::N, Op::T)},  // B^T copy
              {kFp32ProductionKernel, realign},                              // realigned B
              {kFp32ProductionKernel, spec(P::FP32, 32, 4096, 4096, Op::N, Op::T)},  // 32-row, split
              {kFp32ProductionKernel, spec(P::FP32, 50, 1000, 3000, Op::T, Op::N)},  // 64-row, split
              {kFp32ProductionKernel, spec(P::FP32, 128, 128, 8192)},        // 64 splits, grouped sums
              {wgmma03, spec(P::BF16, 1024, 1024, 3072)},                    // stream-k
              {wgmma03, packed},                                             // packing
              {wgmma03, spec(P::BF16, 2048, 2048, 1000, Op::N, Op::T)},      // K-major B padded
              {wgmma03, spec(P::TF32, 300, 300, 300, Op::T, Op::N)},         // tf32 transposed B
              {"gemv/small_m", spec(P::BF16, 1, 4096, 4096, Op::N, Op::T)},  // depth split, k-contig
              {"gemv/small_m", spec(P::FP32, 3, 300, 5000)},                 // n-contig, split
              {"gemv/small_m", spec(P::FP16, 8, 33, 41, Op::T, Op::T)},      // edge, no split
              {"gemv/small_m", spec(P::FP32, 4096, 3, 4096, Op::N, Op::N)},  // swapped, split
              {"gemv/small_m", spec(P::BF16, 300, 16, 41, Op::T, Op::T)},    // swapped, edge
              {"gemv/mma", spec(P::BF16, 1, 4096, 4096, Op::N, Op::T)},      // k-contig, no split
              {"gemv/mma", spec(P::BF16, 9, 1000, 4100)},                    // n-contig, split
              {"gemv/mma", spec(P::FP16, 32, 33, 41, Op::T, Op::T)},         // edge, 4 tiles
              {"wgmma/split_k", spec(P::BF16, 136, 64, 9000)},               // slices + rest
              {"wgmma/decode", spec(P::BF16, 8, 1000, 8200, Op::N, Op::T)},  // 1 group, split
              {"wgmma/decode", decode_packed},                               // 2 groups, split
              {"wgmma/decode", spec(P::BF16, 3000, 7, 2049)},                // skinny, B copied^T
              {"wgmma/decode", spec(P::BF16, 3000, 40, 1000)},               // skinny, MN-major X
              {"wgmma/small", spec(P::BF16, 512, 512, 8192)},                // 128 x 64, split, staged
              {"wgmma/small", spec(P::BF16, 256, 256, 8192)},                // 64 x 32, split
              {"wgmma/small", spec(P::FP16, 300, 200, 1000, Op::T, Op::N)},  // MN-major X, staged
              {"wgmma/small", spec(P::TF32, 300, 200, 1000)},                // tf32, register-A W
              {"wgmma/small", spec(P::BF16, 64, 64, 65536)},                 // 32 splits, grouped sums
              {"wgmma/decode", spec(P::TF32, 8, 1000, 8200, Op::N, Op::T)}});  // tf32, split
}

// wgmma/03's TMA-store epilogue (16-bit D, beta = 0): edge boxes, 2 entries with a gap, a bias and
// GELU; and a stream-k grid whose shared tiles end in it.
TEST(Sanitize, TmaStoreEpilogue) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/03 needs sm_90a";
  ExSpec a;
  a.precision = Precision::BF16, a.m = 129, a.n = 264, a.k = 70, a.op_b = Op::T;
  a.d_type = DType::BF16, a.null_c = true, a.bias = true, a.act = Activation::GeluTanh;
  a.ldd = 272, a.batch = 2, a.stride_d = 129 * 272 + 8;
  ExSpec b;
  b.precision = Precision::FP16, b.m = 1024, b.n = 1024, b.k = 3072, b.d_type = DType::F16;
  b.null_c = true;
  for (const ExSpec& s : {a, b}) expect_correct(s, "wgmma/03_tma_wgmma_ws_persistent");
}

// wgmma/03's 128 x 192 tile, alone and in CTA pairs (2 x 1 clusters, B multicast into both
// CTAs' stages, stages released on both): 192 single tiles on 132 CTAs, or 96 pair tiles on 66
// pairs, so some CTAs' second tile reuses the TMA store buffer half its first tile's last (third:
// odd) box went out of, and a 16-bit D's second tile runs its first k-blocks with the first
// tile's deferred boxes (K = 256: 4 k-blocks); bf16 D with a bias and GELU through TMA, and an
// fp32 D read in place (the staged stores). Then 128 x 256 pairs on 1000 rows (the last pair's second CTA has 104 rows; B's
// 3000-column rows read in place).
TEST(Sanitize, Wgmma03NarrowTileAndPairs) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/03 needs sm_90a";
  ExSpec a;
  a.precision = Precision::BF16, a.m = 1536, a.n = 3000, a.k = 256, a.op_b = Op::T;
  a.d_type = DType::BF16, a.null_c = true, a.bias = true, a.act = Activation::GeluTanh;
  ExSpec b = a;
  b.precision = Precision::FP16, b.d_type = DType::F32, b.null_c = false, b.beta = 0.5f;
  b.bias = false, b.act = Activation::None, b.in_place = true, b.op_b = Op::N;
  for (int plan : {2, 4}) {
    const ForcePlan force(PlanChoice{plan, 0});
    for (const ExSpec& s : {a, b}) expect_correct(s, "wgmma/03_tma_wgmma_ws_persistent");
  }
  b.m = 1000;
  const ForcePlan pairs(PlanChoice{3, 0});
  expect_correct(b, "wgmma/03_tma_wgmma_ws_persistent");
  a.m = 3000;  // 128 x 256 pairs: 12 x 12 pair tiles on at most 66 pairs, boxes deferred
  expect_correct(a, "wgmma/03_tma_wgmma_ws_persistent");
}

// wgmma/pingpong's turns: 162 tiles of 128 x 128 on at most 132 CTAs, so the second warpgroup
// of some CTAs runs its tile after the first's (turn barriers, ring laps: 6 k-blocks), bf16 D
// with a bias and GELU through TMA; and an fp32 D read in place (beta != 0: the staged stores).
TEST(Sanitize, PingpongTurns) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/pingpong needs sm_90a";
  ExSpec a;
  a.precision = Precision::BF16, a.m = 1152, a.n = 1152, a.k = 384, a.batch = 2;
  a.d_type = DType::BF16, a.null_c = true, a.bias = true, a.act = Activation::GeluTanh;
  ExSpec b = a;
  b.precision = Precision::FP16, b.d_type = DType::F32, b.null_c = false, b.beta = 0.5f;
  b.bias = false, b.act = Activation::None, b.in_place = true;
  for (const ExSpec& s : {a, b}) expect_correct(s, "wgmma/pingpong");
}

}  // namespace
}  // namespace gemmlab::test
