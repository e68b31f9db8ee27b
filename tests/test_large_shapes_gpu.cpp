// GPU tests of the production kernels' own paths on shapes the every-kernel list does not reach:
// tiles, splits, stream-k tails, swaps, every plan variant gemm-tune may pick, padded rows; each
// checked against fp64 by kernel_check.h, and the grids pinned down on an H100 SXM.
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ex_problem_util.h"
#include "gpu_util.h"
#include "kernel_check.h"
#include "kernels/wgmma/plan.h"
#include "runtime/plan_choice.h"
#include "runtime/device_props.h"
#include "runtime/reserve_sms.h"
#include "reference/reference.h"
#include "registry/registry.h"
#include "registry/tuning.h"

namespace gemmlab::test {
namespace {

// simt/sgemm copies B^T transposed (and runs NT as NN, TT as TN) only when the copy is cheap next to
// the GEMM, so the small shapes above never take that path; 2048^3 does.
TEST(LargeShapes, SgemmTransposedBCopy) {
  GEMMLAB_REQUIRE_GPU();
  for (Op a : {Op::N, Op::T})
    for (int pad : {0, 3})
      check_kernel({Precision::FP32, {2048, 2048, 2048}, a, Op::T, pad, pad == 0},
                   kFp32ProductionKernel);
}

// simt/sgemm gives the last wave of 128 x 256 tiles a stream-k tail when that wave would leave many
// SMs idle: 2500 x 2500 x 1024 has 200 tiles, 1.5 waves on 132 SMs. Checked against fp64 in the
// layouts that reach the 128 x 256 tile (NN, NT through the transposed copy, TN) and with
// misaligned rows (realigned first); on an H100 SXM the launch must be the tail alone (one block
// per SM instead of one per tile).
TEST(LargeShapes, SgemmStreamKTail) {
  GEMMLAB_REQUIRE_GPU();
  const char* kName = kFp32ProductionKernel;
  if (const unsigned grid = h100_grid(kName, Precision::FP32, 2500, 2500, 1024))
    EXPECT_EQ(grid, 132u);
  for (auto [a, b] : {std::pair{Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}})
    for (int pad : {0, 3})
      check_kernel({Precision::FP32, {2500, 2500, 1024}, a, b, pad, pad != 0}, kName);
}

// simt/sgemm's decode tiles (M <= 32: 32 x 256, M <= 64: 64 x 256, sgemm_plan.h) split in depth
// until they fill the GPU: rows 17, 32 (one full tile), 33, 64 and 50 (a partial tile whose last
// warps hold no row), an edge column tile (n = 4000), depths that are not a multiple of the
// 16-deep k-tile nor of the split, every op, 16-byte and misaligned rows; on an H100 SXM the
// 32 x 4096 x 14336 launch fills the SMs (16 tiles x 16 splits).
TEST(LargeShapes, SgemmDecodeTiles) {
  GEMMLAB_REQUIRE_GPU();
  const char* kName = kFp32ProductionKernel;
  if (const unsigned grid = h100_grid(kName, Precision::FP32, 32, 4096, 14336))
    EXPECT_GE(grid, 132u);
  for (Shape shape : {Shape{17, 4096, 4103}, Shape{32, 4000, 4096}, Shape{33, 1000, 20001},
                      Shape{50, 4096, 4096}, Shape{64, 300, 257}})
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (int pad : {0, 3}) check_kernel({Precision::FP32, shape, a, b, pad, pad == 0}, kName);
}

// wgmma/decode (16-bit, M <= 256, swapped: tokens on wgmma's N side): every token width (8 ..
// 256; 100 and 200 leave warps of padding tokens), one and two consumer warpgroups, an edge strip
// (n = 4000, 129), depths that are neither a multiple of the 64-deep stage nor of the split, k = 1,
// both layouts of B, 16-byte and misaligned rows (packed). Every depth split it offers as a
// variant is checked too. On an H100 SXM, 1 x 4096 x 4096 runs 64 whole strips (plan.cpp).
TEST(LargeShapes, WgmmaDecodeTokensStripsAndSplits) {
  GEMMLAB_REQUIRE_GPU();
  const char* kName = "wgmma/decode";
  if (const unsigned grid = h100_grid(kName, Precision::BF16, 1, 4096, 4096)) EXPECT_EQ(grid, 64u);
  for (Precision prec : {Precision::BF16, Precision::FP16})
    for (Shape shape : {Shape{1, 4000, 4103}, Shape{7, 1000, 20001}, Shape{16, 4096, 4096},
                        Shape{33, 300, 257}, Shape{100, 1000, 3001}, Shape{200, 129, 1},
                        Shape{256, 520, 2000}})
      for (Op b : {Op::N, Op::T})
        for (int pad : {0, 3}) check_kernel({prec, shape, Op::N, b, pad, pad == 0}, kName);
  int runs = 0;
  for (Shape shape : {Shape{5, 1000, 3001}, Shape{130, 700, 5000}}) {
    const int n = check_every_variant({Precision::BF16, shape, Op::N, Op::T, 0, true}, kName);
    EXPECT_GT(n, 2) << "depth splits to choose among";
    runs += n;
  }
  std::printf("[  NOTE    ] wgmma/decode: %d forced plans checked against fp64\n", runs);
}

// wgmma/decode's skinny mode (n <= 64 columns of C as the tokens, op(A) the weight): every
// transpose (B stored k x n is read MN-major in 64-wide chunks; a k x 1 vector as K-major), K not
// a multiple of 64, misaligned rows (packed), every forced depth split of one shape.
TEST(LargeShapes, WgmmaDecodeSkinnyColumns) {
  GEMMLAB_REQUIRE_GPU();
  const char* kName = "wgmma/decode";
  // NN: B's k x 16 rows are read MN-major as 64 tokens, in 128-row strips of A.
  if (const unsigned grid = h100_grid(kName, Precision::BF16, 8192, 16, 8192)) EXPECT_EQ(grid, 64u);
  for (Precision prec : {Precision::BF16, Precision::FP16})
    for (Shape shape : {Shape{5000, 1, 3001}, Shape{4097, 2, 1031}, Shape{3000, 7, 2049},
                        Shape{2048, 16, 4096}, Shape{1000, 33, 257}, Shape{4100, 64, 1000},
                        Shape{300, 64, 1}})
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (int pad : {0, 3}) check_kernel({prec, shape, a, b, pad, pad == 0}, kName);
  EXPECT_GT(check_every_variant({Precision::BF16, Shape{3000, 16, 5000}, Op::N, Op::N, 0, false},
                                kName),
            2)
      << "depth splits to choose among";
}

// wgmma/03: every plan it offers gemm-tune (16-bit: 128 x 256 and 128 x 192, on single CTAs and
// in CTA pairs) computes the same product, through the staged epilogue (beta != 0) and the plain
// one: rows not 16-byte aligned (padded by 3: packed), B rows 16-byte but not 128-byte aligned
// (3000 and 1000 columns: read in place by the pairs), edges that cut both tiles and the pairs'
// 256 rows (a pair's second CTA past the end), m64n8 columns, grids of several tiles per CTA.
TEST(LargeShapes, Wgmma03EveryTile) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/03 needs sm_90a";
  check_variants_of_cases({{Precision::BF16, Shape{300, 500, 1000}, Op::N, Op::N, 3, false},
                           {Precision::FP16, Shape{129, 392, 77}, Op::T, Op::N, 0, true},
                           {Precision::BF16, Shape{257, 3848, 64}, Op::N, Op::T, 0, false},
                           {Precision::FP16, Shape{3000, 3000, 72}, Op::T, Op::T, 3, true},
                           {Precision::BF16, Shape{1100, 3000, 200}, Op::N, Op::N, 0, false},
                           {Precision::FP16, Shape{300, 1000, 1000}, Op::N, Op::T, 0, true},
                           {Precision::BF16, Shape{2000, 2000, 136}, Op::T, Op::N, 0, true}},
                          "wgmma/03_tma_wgmma_ws_persistent", 4, "tiles");
}

// wgmma/03, tf32 with op(A) = A^T: A transposed while packed up to K = 128 (both operands then
// K-major), through registers from K = 129: both sides of the rule, TN and TT, misaligned rows,
// edges, beta != 0.
TEST(LargeShapes, Wgmma03Tf32TransposedA) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/03 needs sm_90a";
  for (Op b : {Op::N, Op::T})
    for (Shape shape : {Shape{1000, 777, 64}, Shape{300, 2000, 128}, Shape{257, 1100, 129}})
      for (int pad : {0, 3})
        check_kernel({Precision::TF32, shape, Op::T, b, pad, pad == 0},
                     "wgmma/03_tma_wgmma_ws_persistent");
}

// wgmma/split_k: every slice count it offers gemm-tune (the planner's, then halves) computes the
// same product: one tile over K = 9000 (slices + a shorter last one), tf32 and bf16, transposed.
TEST(LargeShapes, WgmmaSplitKEverySliceCount) {
  GEMMLAB_REQUIRE_GPU();
  check_variants_of_cases({{Precision::BF16, Shape{136, 64, 9000}, Op::N, Op::N, 0, true},
                           {Precision::TF32, Shape{100, 132, 9000}, Op::T, Op::N, 0, true},
                           {Precision::FP16, Shape{257, 200, 8200}, Op::N, Op::T, 0, false},
                           // m n odd: the slice sum's scalar loop at every slice count
                           {Precision::BF16, Shape{135, 63, 9000}, Op::N, Op::T, 0, false}},
                          "wgmma/split_k", 3, "slice counts");
}

// wgmma/split_k's slice sum is launched as a programmatic dependent of the slices' kernel: its
// bits under graph capture and replay and on two streams at once equal the eager run's, for each
// sum kernel (16 slices, 4 elements a thread; m n odd, an element a thread; 32 slices, in
// groups), with C read (beta != 0), a bias, GELU and a 16-bit D.
TEST(LargeShapes, WgmmaSplitKGraphReplayAndTwoStreamsKeepTheBits) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/split_k needs sm_90a";
  ExSpec mid;
  mid.precision = Precision::BF16, mid.m = 256, mid.n = 256, mid.k = 8192;
  mid.beta = 0.5f, mid.c_type = DType::BF16, mid.d_type = DType::BF16, mid.bias = true;
  mid.act = Activation::GeluTanh, mid.seed = 310;
  ExSpec odd = mid;
  odd.precision = Precision::FP16, odd.m = 505, odd.n = 255, odd.k = 9000, odd.op_b = Op::T;
  odd.c_type = DType::F32;
  odd.d_type = DType::F32, odd.act = Activation::ReLU, odd.seed = 311;
  ExSpec many = mid;
  many.m = 128, many.n = 128, many.k = 32768, many.d_type = DType::F16, many.seed = 312;
  const DeviceDesc dev = current_device_desc();
  const auto slices = [&](const ExSpec& x) {
    return wgmma_plan::plan_slices(x.m, x.n, x.k, x.precision, dev).count();
  };
  EXPECT_GE(slices(mid), 8);
  EXPECT_LT(slices(mid), 32);
  EXPECT_GE(slices(odd), 2);
  EXPECT_LT(slices(odd), 32);
  EXPECT_GE(slices(many), 32);
  for (const ExSpec& spec : {mid, odd, many})
    expect_same_bits_in_graphs_and_streams(spec, "wgmma/split_k");
}

// wgmma/small's 192 x 96 tile (three warpgroups; a 16-bit problem with a plain fp32 D and the
// tokens as C's rows, which it writes straight from the registers): beta = 0 with C never read,
// and in place (D == C, beta != 0), with edges in both directions (300 tokens = 3 x 96 + 12, 500
// weight rows = 2 x 192 + 116): 12 CTAs of 416 threads; with a bias the plan keeps to two
// warpgroups.
TEST(LargeShapes, WgmmaSmall192x96WritesAPlainD) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/small needs sm_90a";
  const ForcePlan force(PlanChoice{14, 1});
  ExSpec zero;
  zero.precision = Precision::BF16, zero.m = 300, zero.n = 500, zero.k = 1000, zero.seed = 320;
  ExSpec in_place = zero;
  in_place.precision = Precision::FP16, in_place.in_place = true, in_place.beta = 0.75f;
  in_place.seed = 321;
  ExSpec biased = zero;
  biased.bias = true, biased.seed = 322;
  const KernelDesc* kd = find_kernel("wgmma/small");
  ASSERT_NE(kd, nullptr);
  for (const ExSpec& spec : {zero, in_place, biased}) {
    ExProblem d(spec);
    ASSERT_EQ(d.error(), "");
    const LaunchConfig c = kd->config(d.problem());  // 416 threads: three warpgroups + producer
    if (spec.bias) EXPECT_NE(c.block.x, 416u) << describe(spec);
    else EXPECT_TRUE(c.block.x == 416u && c.grid.x == 12u) << describe(spec);
    expect_correct(spec, "wgmma/small");
  }
}

// wgmma/small: every (tile, splits) plan variant it offers gemm-tune computes the same product,
// each checked against fp64 under its ForcePlan: tokens as C's rows (NN, aligned rows: a plain
// fp32 D straight from the registers; tf32 with the weight K-major and MN-major, through
// registers; misaligned rows packed)
// and as its columns (TN: MN-major tokens; TT), K not a multiple of 64.
TEST(LargeShapes, WgmmaSmallEveryPlanVariant) {
  GEMMLAB_REQUIRE_GPU();
  const char* kName = "wgmma/small";
  if (const unsigned grid = h100_grid(kName, Precision::BF16, 1024, 1024, 1024)) EXPECT_EQ(grid, 128u);
  check_variants_of_cases({{Precision::BF16, Shape{300, 500, 1000}, Op::N, Op::N, 3, false},
                           {Precision::FP16, Shape{300, 500, 1000}, Op::N, Op::N, 0, false},
                           {Precision::TF32, Shape{300, 500, 1000}, Op::N, Op::N, 0, false},
                           {Precision::TF32, Shape{300, 500, 1000}, Op::N, Op::T, 0, true},
                           {Precision::FP16, Shape{129, 77, 5000}, Op::T, Op::N, 0, true},
                           {Precision::BF16, Shape{700, 260, 3001}, Op::T, Op::T, 0, false}},
                          kName, 4, "plans");
}

// Every plan variant simt/sgemm offers gemm-tune (every tile it can take, forced depth splits:
// KernelDesc::variants) computes the same product: each checked against fp64 under its
// ForcePlan, on a decode shape, a small square and skinny ones (8 columns; 40 and 24, the thin
// tiles' with their partial column tile), with misaligned rows.
TEST(LargeShapes, SgemmEveryPlanVariant) {
  GEMMLAB_REQUIRE_GPU();
  const Shape shapes[] = {{24, 1000, 3001}, {300, 300, 300}, {2000, 8, 2000}, {3001, 40, 2001},
                          {1000, 24, 3001}};
  check_variants_of_cases({{Precision::FP32, shapes[0], Op::N, Op::T, 0, true},
                           {Precision::FP32, shapes[0], Op::N, Op::T, 3, false},
                           {Precision::FP32, shapes[1], Op::N, Op::T, 0, true},
                           {Precision::FP32, shapes[1], Op::N, Op::T, 3, false},
                           {Precision::FP32, shapes[2], Op::N, Op::T, 0, true},
                           {Precision::FP32, shapes[2], Op::N, Op::T, 3, false},
                           {Precision::FP32, shapes[3], Op::N, Op::N, 0, true},
                           {Precision::FP32, shapes[3], Op::N, Op::N, 3, false},
                           {Precision::FP32, shapes[4], Op::T, Op::N, 0, false},
                           {Precision::FP32, shapes[4], Op::T, Op::T, 0, true}},
                          kFp32ProductionKernel, 2, "plans");
}

// simt/sgemm's 256 x 32 tile reads an A with 16-byte rows through a row-major shared tile
// (warptile.cuh, kARows; ARowLoader's 16-byte copies, zero-filled past k and past m): aligned
// rows with K off the 4-float chunk (lda = k + 3, k + 2) and off the 16-deep k-tile, a partial
// last row tile, forced depth splits 1, 3 and 33 (two-level sums), the general epilogue (beta,
// bias, GELU, a bf16 D) over a batch of 2, and the plain one with B's rows misaligned too (4-byte
// copies). The 256 x 64 tile and the 64 x 256 decode tile (k-major A) on the same kind of
// problem.
TEST(LargeShapes, SgemmThinRowMajorA) {
  GEMMLAB_REQUIRE_GPU();
  for (int splits : {1, 3, 33}) {
    SCOPED_TRACE(splits);
    {
      const ForcePlan force(PlanChoice{6, splits});  // the 256 x 32 tile
      ExSpec s;
      s.m = 1000, s.n = 24, s.k = 3001, s.pad_a = 3, s.beta = 0.5f, s.bias = true;
      s.act = Activation::GeluTanh, s.d_type = DType::BF16, s.batch = 2, s.seed = 40 + splits;
      expect_correct(s, kFp32ProductionKernel);
      ExSpec t;
      t.m = 777, t.n = 31, t.k = 2050, t.pad_a = 2, t.seed = 50 + splits;
      expect_correct(t, kFp32ProductionKernel);
    }
    {
      const ForcePlan force(PlanChoice{5, splits});  // the 256 x 64 tile
      ExSpec u;
      u.m = 600, u.n = 52, u.k = 3001, u.pad_a = 3, u.beta = -1.f, u.bias = true;
      u.act = Activation::SiLU, u.seed = 60 + splits;
      expect_correct(u, kFp32ProductionKernel);
    }
    const ForcePlan force(PlanChoice{3, splits});  // the 64 x 256 decode tile
    ExSpec v;
    v.m = 50, v.n = 1000, v.k = 3001, v.pad_a = 3, v.beta = 0.5f, v.seed = 70 + splits;
    expect_correct(v, kFp32ProductionKernel);
  }
}

// simt/sgemm's depth splits summed in the kernel (edge strips share the grid, so no slices:
// sgemm_plan.h, sliced) from 17 on sum in two levels (split_k.cuh: split_reduce): groups of 8
// consecutive splits, then the group sums. Forced split counts with a whole and a partial last
// group and a group of one (17, 33, 64), one tile and two (each beside an 8-column strip), beta
// != 0 and beta = 0, transposes and misaligned rows, K off the 16-deep k-tile.
TEST(LargeShapes, SgemmGroupedSplitSums) {
  GEMMLAB_REQUIRE_GPU();
  for (int splits : {17, 33, 64}) {
    SCOPED_TRACE(splits);
    const ForcePlan force(PlanChoice{1, splits});  // the 128 x 128 tile
    check_kernel({Precision::FP32, Shape{128, 136, 8192}, Op::N, Op::N, 0, false},
                 kFp32ProductionKernel);
    check_kernel({Precision::FP32, Shape{200, 136, 9001}, Op::T, Op::T, 3, true},
                 kFp32ProductionKernel);
  }
}

// The Hopper kernels pad the rows of a 16-bit MN-major operand, and of a K-major B, to 128 bytes
// when its rows are only 16-byte aligned and the GEMM is large enough (wgmma/host.cu,
// worth_padding): 3000^3 takes that path for B in NN, NT and TT and for A in TN and TT (a K-major
// A in NN and NT keeps its rows). The small shapes above never do.
TEST(LargeShapes, Wgmma03PaddedRows) {
  GEMMLAB_REQUIRE_SM90();  // wgmma/03
  for (Precision prec : {Precision::BF16, Precision::FP16})
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        check_kernel({prec, {3000, 3000, 3000}, a, b, 0, a == b},
                     "wgmma/03_tma_wgmma_ws_persistent");
}

// wgmma/03 runs small deep grids stream-k (a tile's k-blocks spread over several CTAs, their
// partials summed in order): 1024 x 1024 x 4096 has 32 tiles for 132 SMs, 1000 x 1000 x 4000 the
// same with partial edge tiles. Checked against fp64 in 16-bit, both A layouts, tight and
// misaligned (packed) rows; on an H100 SXM the launch must use 128 CTAs instead of 32.
TEST(LargeShapes, Wgmma03StreamK) {
  GEMMLAB_REQUIRE_SM90();  // wgmma/03
  const char* kName = "wgmma/03_tma_wgmma_ws_persistent";
  if (const unsigned grid = h100_grid(kName, Precision::BF16, 1024, 1024, 4096))
    EXPECT_EQ(grid, 128u);
  for (Shape shape : {Shape{1024, 1024, 4096}, Shape{1000, 1000, 4000}})
    for (Precision prec : {Precision::BF16, Precision::FP16})
      for (Op a : {Op::N, Op::T})
        for (int pad : {0, 3}) check_kernel({prec, shape, a, Op::N, pad, pad == 0}, kName);
}

// One row of tiles (decode, m <= 128) runs stream-k over the SMs (planner: DecodeRowsStreamB),
// and only the threads whose accumulator rows lie inside C publish and sum partials: m = 1, 8, 9
// (a warp's rows cut in the middle), 70 (the second warpgroup's rows partly inside) and 128; an
// edge column tile (n = 4000), both B layouts, misaligned rows; on an H100 SXM 64 CTAs.
TEST(LargeShapes, Wgmma03DecodeStreamK) {
  GEMMLAB_REQUIRE_SM90();  // wgmma/03
  const char* kName = "wgmma/03_tma_wgmma_ws_persistent";
  if (const unsigned grid = h100_grid(kName, Precision::BF16, 8, 4096, 4096))
    EXPECT_EQ(grid, 64u);
  for (int64_t m : {1, 8, 9, 70, 128})
    for (Precision prec : {Precision::BF16, Precision::FP16})
      for (Op b : {Op::N, Op::T})
        for (int pad : {0, 3})
          check_kernel({prec, Shape{m, pad ? 4000 : 4096, 4096}, Op::N, b, pad, pad == 0}, kName);
}

// gemv/small_m (m <= 16, or n <= 16 swapped: C^T = op(B)^T op(A)^T): both layouts of B (n x k for
// op T, k x n for op N), depths that are not a multiple of its passes or slices, long depths split
// over blocks, 16-byte and misaligned rows, every dtype; the swapped shapes write C's columns (a
// 1-column C, 16 columns, 3 columns of 5000 rows); checked against fp64 like every kernel.
TEST(LargeShapes, GemvSmallM) {
  GEMMLAB_REQUIRE_GPU();
  const Shape shapes[] = {{1, 4096, 4096}, {3, 4097, 1000}, {8, 33, 20000}, {5, 1, 3},
                          {2, 300, 257},   {16, 1000, 4100}, {9, 130, 4099}, {4096, 1, 4096},
                          {1000, 16, 4100}, {5000, 3, 257},  {33, 9, 20000}};
  for (Precision prec : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
    for (const Shape& shape : shapes)
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (int pad : {0, 3}) check_kernel({prec, shape, a, b, pad, pad == 0}, "gemv/small_m");
}

// gemv/mma (16-bit, m <= 32): one, two and four tiles of 8 rows of C, both layouts of B, depths
// that are not a multiple of a warp's step (32 along k-contiguous B, 16 along n-contiguous B) nor
// of 8, columns past the last strip, depths split over blocks (n = 33, 1000), transposed op(A),
// 16-byte aligned and misaligned rows.
TEST(LargeShapes, GemvMma) {
  GEMMLAB_REQUIRE_GPU();
  const Shape shapes[] = {{1, 4096, 4096}, {3, 4097, 1000}, {8, 33, 20000}, {16, 1000, 4100},
                          {17, 300, 257},  {32, 64, 40},    {5, 1, 3},      {2, 300, 257},
                          {9, 130, 4099}};
  for (Precision prec : {Precision::BF16, Precision::FP16})
    for (const Shape& shape : shapes)
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (int pad : {0, 3}) check_kernel({prec, shape, a, b, pad, pad == 0}, "gemv/mma");
}

// wgmma/split_k (sm_90): depths cut into slices run as one batched launch (the strips kernel's or
// wgmma/03's; tf32 TN transposes A while packing), plus a shorter last slice (k not a multiple of
// the slice), both layouts of A and B, a single tile and several, a slice count lowered to a
// divisor of the k-blocks (96 x 96 x 12288: 32 slices, not 42), and a depth too short to split
// (run by wgmma/03 alone); every dtype it takes.
TEST(LargeShapes, WgmmaSplitK) {
  GEMMLAB_REQUIRE_SM90();
  // (Leading dimensions a multiple of 8, but 70 x 128 x 16384's A^T: tf32 TN / TT transpose A
  // while packing and take it; 16-bit TN / TT, 140-byte rows, are not asked.)
  const Shape shapes[] = {{128, 128, 20000}, {304, 200, 9000}, {8, 64, 16384}, {64, 64, 64},
                          {136, 264, 8256},  {96, 96, 12288},  {70, 128, 16384}};
  for (Precision prec : {Precision::BF16, Precision::FP16, Precision::TF32})
    for (const Shape& shape : shapes)
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (bool beta_zero : {true, false})
            if (shape.m % 8 == 0 || a == Op::N || prec == Precision::TF32)
              check_kernel({prec, shape, a, b, 0, beta_zero}, "wgmma/split_k");
}

// simt/sgemm's split tiles without strips write whole slices of C, summed with the epilogue by
// the slice-sum kernel (kernels/common/slice_sum.h): its three loops (2..7 slices or m n odd, one
// element a thread; 8..31 with m n a multiple of 4, four; 32 or more, up to 256 (forced plans'
// limit), eight warps' groups) on
// tiles of 128 x 128 (all full: 128 x 128; partial: 127 x 120) and 32 x 256 (fp32 decode), the
// general epilogue (beta, bias, GELU, a bf16 D) over a batch of 2, transposes and misaligned
// rows; and the bits of each loop under CUDA graph capture / replay and on two streams.
TEST(LargeShapes, SgemmSlicedSplits) {
  GEMMLAB_REQUIRE_GPU();
  for (int splits : {3, 8, 17, 40, 256}) {
    SCOPED_TRACE(splits);
    {
      const ForcePlan force(PlanChoice{1, splits});  // the 128 x 128 tile
      check_kernel({Precision::FP32, Shape{128, 128, 8192}, Op::N, Op::N, 0, false},
                   kFp32ProductionKernel);
      check_kernel({Precision::FP32, Shape{127, 120, 5001}, Op::T, Op::T, 3, true},
                   kFp32ProductionKernel);
      ExSpec s;
      s.m = 120, s.n = 100, s.k = 4100, s.op_b = Op::T, s.pad_a = 1, s.beta = 0.5f;
      s.bias = true, s.act = Activation::GeluTanh, s.d_type = DType::BF16, s.batch = 2;
      s.seed = 80 + splits;
      expect_correct(s, kFp32ProductionKernel);
      ExSpec g;
      g.m = 128, g.n = splits == 3 ? 127 : 128, g.k = 8192, g.seed = 90 + splits;
      expect_same_bits_in_graphs_and_streams(g, kFp32ProductionKernel);
    }
    const ForcePlan force(PlanChoice{4, splits});  // the 32 x 256 decode tile
    check_kernel({Precision::FP32, Shape{32, 1024, 8192}, Op::N, Op::T, 0, true},
                 kFp32ProductionKernel);
  }
}

// simt/sgemm with more than 16 depth splits (deep k on a few tiles; past kMaxSplits on one or
// two: 128 x 128 x 131072 sliced, 129 x 129 x 32768 with strips and in-kernel sums); a depth
// that is not a multiple of the splits or of a k-tile.
TEST(LargeShapes, SgemmDeepSplits) {
  GEMMLAB_REQUIRE_GPU();
  const Shape shapes[] = {
      {128, 128, 131072}, {100, 130, 50001}, {256, 256, 65536}, {129, 129, 32768}};
  for (const Shape& shape : shapes)
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (int pad : {0, 3})
          check_kernel({Precision::FP32, shape, a, b, pad, pad == 0}, "simt/sgemm");
}

}  // namespace
}  // namespace gemmlab::test
