// The launch planners, on the CPU: the tile schedule (tile order, stream-k cut), simt/sgemm's
// tile plan (depth splits, stream-k tail, strips, scratch; its operand plan: test_sgemm_plans.cpp)
// and gemv's (wgmma/03's: test_wgmma_plans.cpp; copy_matrix's: test_copy_plan.cpp), for shapes
// from 1x1x1 to 16384^3 on a 132-SM (H100 SXM) and a 108-SM (A100) device description. No GPU
// involved: these run in CI.
#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/common/tile_schedule.h"
#include "kernels/gemv/plan.h"
#include "kernels/simt/sgemm_plan.h"
#include "kernels/wgmma/plan.h"
#include "plan_fixtures.h"

namespace gemmlab {
namespace {

// Every tile of an m x n region exactly once, full tiles first, each inside the region.
void expect_heavy_first_covers(int m, int n, int bm, int bn) {
  const TileGrid g = tile_grid(m, n, bm, bn);
  const int tiles = g.m_tiles * g.n_tiles, full = (m / bm) * (n / bn);
  std::set<std::pair<int, int>> seen;
  for (int i = 0; i < tiles; ++i) {
    const TileCoord t = tile_heavy_first(i, bm, bn, m, n, 16);
    ASSERT_EQ(t.row0 % bm, 0);
    ASSERT_EQ(t.col0 % bn, 0);
    ASSERT_LT(t.row0, m) << m << "x" << n << " tile " << i;
    ASSERT_LT(t.col0, n) << m << "x" << n << " tile " << i;
    const bool is_full = t.row0 + bm <= m && t.col0 + bn <= n;
    EXPECT_EQ(is_full, i < full) << m << "x" << n << " tile " << i;
    EXPECT_TRUE(seen.insert({t.row0, t.col0}).second) << "tile visited twice";
  }
  EXPECT_EQ(static_cast<int>(seen.size()), tiles);
}

TEST(TileSchedule, HeavyFirstVisitsEveryTileOnce) {
  for (const Dims& d : shapes())
    for (auto [bm, bn] : {std::pair{128, 128}, {128, 256}})
      if (static_cast<int64_t>(d.m / bm + 1) * (d.n / bn + 1) <= 20000)
        expect_heavy_first_covers(d.m, d.n, bm, bn);
}

TEST(TileSchedule, GroupedOrderIsAPermutation) {
  for (auto [mt, nt] : {std::pair{1, 1}, {16, 8}, {17, 9}, {33, 2}, {2, 40}}) {
    std::set<std::pair<int, int>> seen;
    for (int i = 0; i < mt * nt; ++i) {
      const TileCoord t = tile_grouped(i, 1, 1, mt, nt, 16);
      ASSERT_LT(t.row0, mt);
      ASSERT_LT(t.col0, nt);
      seen.insert({t.row0, t.col0});
    }
    EXPECT_EQ(static_cast<int>(seen.size()), mt * nt);
  }
}

// The runs of a stream-k cut cover every (tile, k-step) once, and stream_k_runs names exactly the
// runs that touch a tile.
void expect_stream_k_covers(int tiles, int kt, int ctas) {
  const StreamK sk = stream_k_cut(0, tiles, kt, ctas);
  ASSERT_GE(sk.iters, 1);
  ASSERT_LE(sk.ctas, ctas);
  std::vector<int> hits(static_cast<size_t>(tiles) * kt, 0);
  std::vector<std::set<int>> runs_of(tiles);
  for (int c = 0; c < sk.ctas; ++c) {
    const int end = std::min((c + 1) * sk.iters, tiles * kt);
    ASSERT_LT(c * sk.iters, end) << "an empty run";
    for (int it = c * sk.iters; it < end;) {
      const StreamKSegment s = stream_k_segment(it, end, kt);
      ASSERT_LT(s.k_begin, s.k_end);
      for (int q = s.k_begin; q < s.k_end; ++q) ++hits[static_cast<size_t>(s.tile) * kt + q];
      runs_of[s.tile].insert(c);
      it += s.k_end - s.k_begin;
    }
  }
  for (int h : hits) ASSERT_EQ(h, 1);
  for (int t = 0; t < tiles; ++t) {
    int first, last;
    stream_k_runs(t, kt, sk.iters, &first, &last);
    EXPECT_EQ(*runs_of[t].begin(), first) << "tile " << t;
    EXPECT_EQ(*runs_of[t].rbegin(), last) << "tile " << t;
    EXPECT_EQ(static_cast<int>(runs_of[t].size()), last - first + 1);
  }
}

TEST(TileSchedule, StreamKCutCoversEveryStepOnce) {
  for (int tiles : {1, 2, 32, 68, 200})
    for (int kt : {1, 4, 63, 64, 188})
      for (int ctas : {1, 108, 132}) expect_stream_k_covers(tiles, kt, ctas);
}


// simt/sgemm: the plan's grid is its parts; splits only where the tiles cannot fill the GPU;
// every split has >= 1 k-tile and they cover the depth; a stream-k tail only unsplit, deep, on
// the 128 x 256 tile; scratch only where splits, a tail or split strips need it.
void expect_sgemm_plan_consistent(const Dims& d, sgemm::Tile tile, const DeviceDesc& dev) {
  SCOPED_TRACE(testing::Message() << d.m << "x" << d.n << "x" << d.k << " tile=" << static_cast<int>(tile)
                                  << " sms=" << dev.sms);
  const sgemm::TileShape t = sgemm::tile_shape(tile);
  const sgemm::TilePlan L = sgemm::plan_tiles(d.m, d.n, d.k, t, dev);
  const sgemm::TileWork& w = L.work;
  const int64_t tiles = static_cast<int64_t>(L.grid.m_tiles) * L.grid.n_tiles;
  ASSERT_GE(w.splits, 1);
  // Past kMaxSplits only where kMaxSplits of each tile would leave SMs idle.
  ASSERT_LE(w.splits, tiles * sgemm::kMaxSplits < dev.sms ? sgemm::kMaxForcedSplits
                                                          : sgemm::kMaxSplits);
  const int kt_full = std::max(1, d.k / sgemm::kBK);
  EXPECT_EQ(w.splits, (kt_full + w.per_split - 1) / w.per_split);
  EXPECT_GE(kt_full - (w.splits - 1) * w.per_split, 1) << "the last split has no k-tile";
  if (w.splits > 1) EXPECT_LT(tiles, static_cast<int64_t>(dev.sms) * t.blocks_per_sm);
  EXPECT_EQ(L.loop == sgemm::Loop::kSplit, w.splits > 1);
  if (w.sk.ctas > 0) {
    EXPECT_EQ(tile, sgemm::Tile::k128x256);
    EXPECT_EQ(w.splits, 1);
    EXPECT_TRUE(L.deep);
    EXPECT_LE(w.sk.ctas, dev.sms * t.blocks_per_sm);
    EXPECT_EQ(w.sk.first_tile + w.sk.tiles, tiles);
    EXPECT_GE(w.sk.iters, w.sk.kt) << "a tile is shared by at most two runs";
  }
  EXPECT_EQ(L.blocks, (tiles - w.sk.tiles) * w.splits + w.sk.ctas + w.sp.blocks());
  EXPECT_GT(L.blocks, 0);
  const sgemm::ScratchLayout s = sgemm::scratch_layout(L, t);
  EXPECT_EQ(s.bytes() > 0, w.splits > 1 || w.sk.ctas > 0 || w.sp.splits > 1);
  // Split tiles write whole slices of C (summed by the slice-sum kernel) exactly when nothing
  // else in the grid writes C: no strips, no stream-k tail. One slice of m x n per split then,
  // and no counters.
  EXPECT_EQ(w.sliced, w.splits > 1 && w.sp.blocks() == 0 && w.sk.ctas == 0 &&
                         sgemm::slices_pay(d.m, d.n, w.splits, t));
  if (w.sliced) {
    EXPECT_EQ(w.sp.m_main, d.m);
    EXPECT_EQ(w.sp.n_main, d.n);
    EXPECT_GE(s.tile_partials, static_cast<size_t>(w.splits) * d.m * d.n);
    EXPECT_EQ(s.tile_counters, 0u);
  } else {
    // One counter per tile, plus one per group of 8 splits where they are summed in two levels.
    EXPECT_EQ(s.tile_counters,
              w.splits > 1 ? static_cast<size_t>(tiles) * (w.splits >= 17 ? 1 + (w.splits + 7) / 8 : 1)
                           : 0u);
  }
  // Without scratch: one block per tile and strip block, nothing to sum.
  const sgemm::TilePlan n = sgemm::plan_tiles(d.m, d.n, d.k, t, dev, /*scratch=*/false);
  EXPECT_EQ(sgemm::scratch_layout(n, t).bytes(), 0u);
  EXPECT_EQ(n.blocks, tiles + n.work.sp.blocks());
}

// Deep k over a few tiles: the split tiles' partials go to slices (every SM sums them) unless
// strips share the grid (their blocks write C themselves): 128 x 136 leaves an 8-column strip.
TEST(SgemmPlan, SplitTilesSumAsSlicesWithoutStrips) {
  const sgemm::TileShape t = sgemm::tile_shape(sgemm::Tile::k128x128);
  const sgemm::TilePlan a = sgemm::plan_tiles(128, 128, 8192, t, kH100);
  EXPECT_GT(a.work.splits, 1);
  EXPECT_TRUE(a.work.sliced);
  const sgemm::TilePlan b = sgemm::plan_tiles(128, 136, 8192, t, kH100);
  EXPECT_GT(b.work.splits, 1);
  EXPECT_GT(b.work.sp.blocks(), 0);
  EXPECT_FALSE(b.work.sliced);
  EXPECT_FALSE(sgemm::plan_tiles(4096, 4096, 4096, t, kH100).work.sliced) << "unsplit";
  const sgemm::TilePlan c = sgemm::plan_tiles(128, 128, 8192, t, kH100, /*scratch=*/true, 40);
  EXPECT_EQ(c.work.splits, 40);
  EXPECT_EQ(sgemm::scratch_layout(c, t).tile_partials, 40u * 128 * 128);
  // Forced plans split deeper than the model (one tile over k = 131072: 256 splits, two blocks
  // per SM); each split keeps at least one k-tile.
  EXPECT_EQ(sgemm::plan_tiles(128, 128, 131072, t, kH100, true, 256).work.splits, 256);
  EXPECT_EQ(sgemm::plan_tiles(128, 128, 131072, t, kH100, true, 1000).work.splits, 256);
  EXPECT_EQ(sgemm::plan_tiles(128, 128, 2048, t, kH100, true, 256).work.splits, 128);
  EXPECT_LE(sgemm::plan_tiles(1024, 1024, 131072, t, kH100).work.splits, sgemm::kMaxSplits);
  // Many tiles split in two: each tile's last block reads one partial, cheaper than two slices
  // of all of C (1536^3: 144 tiles of 128 x 128); three splits of 36 tiles (768^3) slice.
  const sgemm::TilePlan d = sgemm::plan_tiles(1536, 1536, 1536, t, kH100, true, 2);
  EXPECT_EQ(d.work.splits, 2);
  EXPECT_FALSE(d.work.sliced);
  EXPECT_TRUE(sgemm::plan_tiles(768, 768, 768, t, kH100, true, 3).work.sliced);
}

// A strided batch in one launch: each entry planned on its share of the SMs. 64 entries of
// 512^3 fill the GPU unsplit; 2 entries of 128 x 128 x 8192 still split (66 SMs each), but sum
// in the tiles' last blocks (no slices: their sum kernel covers one problem); one entry is
// plan_tiles itself.
TEST(SgemmPlan, BatchEntriesShareTheSms) {
  const sgemm::TileShape t = sgemm::tile_shape(sgemm::Tile::k128x128);
  const sgemm::TilePlan many = sgemm::plan_batch_tiles(512, 512, 512, t, kH100, 64);
  EXPECT_EQ(many.work.splits, 1);
  EXPECT_EQ(many.work.sk.ctas, 0);
  EXPECT_GT(sgemm::plan_tiles(512, 512, 512, t, kH100).work.splits, 1) << "alone, it splits";
  const sgemm::TilePlan two = sgemm::plan_batch_tiles(128, 128, 8192, t, kH100, 2);
  EXPECT_GT(two.work.splits, 1);
  EXPECT_FALSE(two.work.sliced);
  EXPECT_LE(two.work.splits, sgemm::plan_tiles(128, 128, 8192, t, kH100).work.splits);
  EXPECT_EQ(sgemm::scratch_layout(two, t).tile_partials,
            static_cast<size_t>(two.work.splits) * 128 * 128);
  const sgemm::TilePlan one = sgemm::plan_batch_tiles(128, 128, 8192, t, kH100, 1);
  const sgemm::TilePlan alone = sgemm::plan_tiles(128, 128, 8192, t, kH100);
  EXPECT_EQ(one.work.splits, alone.work.splits);
  EXPECT_EQ(one.work.sliced, alone.work.sliced);
  EXPECT_EQ(one.blocks, alone.blocks);
}

TEST(SgemmPlan, ConsistentOnEveryShape) {
  for (const DeviceDesc& dev : {kH100, kA100})
    for (const Dims& d : shapes())
      for (sgemm::Tile tile : {sgemm::Tile::k128x128, sgemm::Tile::k128x256, sgemm::Tile::k64x256,
                               sgemm::Tile::k32x256, sgemm::Tile::k256x64, sgemm::Tile::k256x32})
        expect_sgemm_plan_consistent(d, tile, dev);
}

TEST(SgemmPlan, SplitsWhereTheTilesCannotFillTheGpu) {
  const sgemm::TileShape wide = sgemm::tile_shape(sgemm::Tile::k128x256);
  // 1024^3 on 128 x 256 tiles: 32 tiles for 132 SMs -> split; 8192^3: 2048 tiles -> not.
  EXPECT_GT(sgemm::choose_splits(1024, 1024, 1024, wide, kH100), 1);
  EXPECT_GT(sgemm::choose_splits(256, 256, 65536, wide, kH100), 1);
  EXPECT_EQ(sgemm::choose_splits(8192, 8192, 8192, wide, kH100), 1);
  EXPECT_EQ(sgemm::choose_splits(16384, 16384, 16384, wide, kA100), 1);
  // Too shallow to split: each split needs >= 4 k-tiles.
  EXPECT_EQ(sgemm::choose_splits(1024, 1024, 64, wide, kH100), 1);
  EXPECT_EQ(sgemm::choose_splits(1, 1, 1, sgemm::tile_shape(sgemm::Tile::k128x128), kH100), 1);
  // Deep k on one tile: past 16 splits (past kMaxSplits too: CSmallerThanOneTileSplitsDeeper),
  // bounded by the charged sum.
  const int deep = sgemm::choose_splits(128, 128, 131072, sgemm::tile_shape(sgemm::Tile::k128x128), kH100);
  EXPECT_GT(deep, 16);
  EXPECT_LE(deep, sgemm::kMaxForcedSplits);
}

TEST(SgemmPlan, StreamKTailOnlyForABadlyFilledLastWave) {
  const sgemm::TileShape wide = sgemm::tile_shape(sgemm::Tile::k128x256);
  // 2500 x 2500 x 1024: 200 tiles; on 132 SMs the last wave is half idle -> a tail of 132 runs
  // (the whole grid, as the H100 test pins down); on 108 SMs 92 of 108 are busy -> no tail.
  const sgemm::TilePlan h = sgemm::plan_tiles(2500, 2500, 1024, wide, kH100);
  EXPECT_EQ(h.work.sk.ctas, 132);
  EXPECT_EQ(h.blocks, 132);
  const sgemm::TilePlan a = sgemm::plan_tiles(2500, 2500, 1024, wide, kA100);
  EXPECT_EQ(a.work.sk.ctas, 0);
  EXPECT_EQ(a.blocks, 200);
  // 4096^3: 512 tiles = 3.9 waves of 132: not worth the lost L2 locality.
  EXPECT_EQ(sgemm::plan_tiles(4096, 4096, 4096, wide, kH100).work.sk.ctas, 0);
}

TEST(SgemmPlan, ThinRemaindersBecomeStrips) {
  const sgemm::TilePlan L = sgemm::plan_tiles(4097, 4097, 4097, sgemm::tile_shape(sgemm::Tile::k128x256), kH100);
  EXPECT_EQ(L.work.sp.m_main, 4096);
  EXPECT_EQ(L.work.sp.n_main, 4096);
  EXPECT_GT(L.work.sp.blocks(), 0);
  const sgemm::TilePlan T = sgemm::plan_tiles(4000, 4000, 4000, sgemm::tile_shape(sgemm::Tile::k128x256), kH100);
  EXPECT_EQ(T.work.sp.blocks(), 0) << "a remainder of 32 rows is a tile row, not a strip";
}

// gemv/small_m's swapped view of a skinny C (n <= 16 < m): the operands trade places with
// flipped ops and their own leading dimensions; C, D and the epilogue stay C's; a problem with
// few rows, or neither few rows nor few columns, is left as it is.
TEST(GemvPlan, SkinnyCRunsSwapped) {
  GemmProblem p = problem({4096, 3, 1000}, Op::N, Op::T);
  int a = 0, b = 0, d = 0;
  p.A = &a, p.B = &b, p.D = &d, p.lda = 1000, p.ldb = 1001, p.ldd = 5, p.bias = &d;
  ASSERT_TRUE(gemv_plan::runs_swapped(p));
  const GemmProblem q = gemv_plan::kernel_view(p);
  EXPECT_EQ(q.m, 3);
  EXPECT_EQ(q.n, 4096);
  EXPECT_EQ(q.k, 1000);
  EXPECT_EQ(q.A, p.B);
  EXPECT_EQ(q.lda, 1001);
  EXPECT_EQ(q.op_a, Op::N) << "op(B) = B^T: op(B)^T is B, stored n x k";
  EXPECT_EQ(q.B, p.A);
  EXPECT_EQ(q.ldb, 1000);
  EXPECT_EQ(q.op_b, Op::T) << "op(A) = A, stored m x k: the kernel's k-contiguous B";
  EXPECT_EQ(q.D, p.D);
  EXPECT_EQ(q.ldd, 5);
  EXPECT_EQ(q.bias, p.bias);
  p.op_a = Op::T, p.op_b = Op::N;
  EXPECT_EQ(gemv_plan::kernel_view(p).op_a, Op::T);
  EXPECT_EQ(gemv_plan::kernel_view(p).op_b, Op::N);
  for (const Dims& keep : {Dims{16, 3, 100}, Dims{8, 4096, 100}, Dims{17, 17, 100}}) {
    const GemmProblem r = problem(keep);
    EXPECT_FALSE(gemv_plan::runs_swapped(r));
    EXPECT_EQ(gemv_plan::kernel_view(r).m, keep.m);
  }
}
// GemmProblem::entry moves each operand by its own stride in its own element size, and a stride
// of 0 (broadcast) leaves it in place.
TEST(GemmProblemEntry, MovesEachOperandByItsStride) {
  GemmProblem p;
  p.precision = Precision::BF16, p.batch = 4;
  p.A = reinterpret_cast<const void*>(uintptr_t{1} << 20);
  p.B = reinterpret_cast<const void*>(uintptr_t{2} << 20);
  p.C = reinterpret_cast<const void*>(uintptr_t{3} << 20);
  p.D = reinterpret_cast<void*>(uintptr_t{4} << 20);
  p.c_type = DType::F32, p.d_type = DType::F16;
  p.stride_a = 100, p.stride_b = 0, p.stride_c = 7, p.stride_d = 9;
  const GemmProblem q = p.entry(3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q.A), (uintptr_t{1} << 20) + 3 * 100 * 2);
  EXPECT_EQ(q.B, p.B);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q.C), (uintptr_t{3} << 20) + 3 * 7 * 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q.D), (uintptr_t{4} << 20) + 3 * 9 * 2);
  EXPECT_EQ(q.batch, 1);
  p.precision = Precision::FP32;  // 4-byte inputs
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p.entry(2).A), (uintptr_t{1} << 20) + 2 * 100 * 4);
  p.C = nullptr;  // no C stays no C
  EXPECT_EQ(p.entry(2).C, nullptr);
}
// gemv/small_m: the slices cover the depth, fit the block's shared copy of op(A), and their
// partial sums stay a small share of B's bytes; without scratch one block per column tile.
TEST(GemvPlan, SlicesCoverTheDepthAndFitSharedMemory) {
  for (const DeviceDesc& dev : {kH100, kA100})
    for (int m : {1, 2, 3, 8, 13, 16})
      for (int n : {1, 33, 4096, 14336})
        for (int k : {1, 7, 4096, 14336, 131072})
          for (bool k_contig : {false, true})
            for (int eb : {2, 4}) {
              SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " kc=" << k_contig
                                              << " eb=" << eb << " sms=" << dev.sms);
              const gemv_plan::Plan p = gemv_plan::plan(m, n, k, k_contig, true, eb, dev);
              EXPECT_GE(p.rows, m);
              EXPECT_LE(p.rows * p.k_slice, gemv_plan::kSmemFloats);
              EXPECT_LE(p.rows * p.k_slice * 4 + gemv_plan::static_smem_bytes(p),
                        gemv_plan::kBlockSmemBytes)
                  << "past the 48 KB a block gets without opting in";
              EXPECT_EQ(p.k_slice % p.k_step, 0);
              EXPECT_GE(p.splits, 1);
              EXPECT_GE(static_cast<int64_t>(p.splits) * p.k_slice, k);
              EXPECT_LT(static_cast<int64_t>(p.splits - 1) * p.k_slice, k) << "an empty slice";
              EXPECT_GE(p.col_tiles * p.cols, n);
              if (p.splits > 1 && p.k_slice * p.rows < gemv_plan::kSmemFloats / 2)
                EXPECT_LE(8.0 * p.splits * p.rows, 0.07 * k * eb) << "partials past ~6% of B";
              // A strip's splits capped where its shared copy of op(A) allows the deeper slices
              if (static_cast<int64_t>(k) * p.rows <= gemv_plan::kSmemFloats * 8)
                EXPECT_LE(p.splits, gemv_plan::kMaxStripSplits);
              const gemv_plan::Plan q =
                  gemv_plan::plan(m, n, k, k_contig, true, eb, dev, /*scratch=*/false);
              EXPECT_EQ(q.splits, 1);
              EXPECT_EQ(gemv_plan::scratch_bytes(q), 0u);
            }
}

TEST(GemvPlan, VectorLoadsOnlyWhereTheRowsAllowThem) {
  EXPECT_TRUE(gemv_plan::plan(1, 4096, 4096, true, true, 2, kH100).vec);
  EXPECT_FALSE(gemv_plan::plan(1, 4096, 4097, true, true, 2, kH100).vec) << "k % 8 != 0";
  EXPECT_FALSE(gemv_plan::plan(1, 4096, 4096, true, false, 2, kH100).vec) << "misaligned rows";
  EXPECT_TRUE(gemv_plan::plan(1, 4097, 4096, false, true, 2, kH100).vec);
  // Decode at M = 1, 4096 x 4096 bf16: enough blocks for every SM.
  EXPECT_GE(gemv_plan::plan(1, 4096, 4096, true, true, 2, kH100).blocks(), 2 * 132);
  // n-contiguous B runs one wave of 2 blocks per SM: fp32 1 x 4096 x 4096 NN, 32 column tiles in
  // 8 slices (256 blocks for 264 places) instead of 17 (544: a third, nearly empty wave).
  const gemv_plan::Plan nn = gemv_plan::plan(1, 4096, 4096, false, true, 4, kH100);
  EXPECT_EQ(nn.col_tiles, 32);
  EXPECT_EQ(nn.splits, 8);
  for (int n : {4096, 8192, 14336})
    EXPECT_LE(gemv_plan::plan(1, n, 4096, false, true, 4, kH100).blocks(),
              gemv_plan::kBlocksPerSm * 132)
        << n;
}

// gemv/mma: the warps' ranges tile the depth (whole steps, no empty split), the strips cover n,
// the depth is split only where the strips leave SMs without a block, and never without scratch.
TEST(GemvMmaPlan, RangesCoverTheDepthAndSplitOnlyForIdleSMs) {
  namespace mp = gemv_mma_plan;
  for (const DeviceDesc& dev : {kH100, kA100})
    for (int m : {1, 8, 9, 16, 17, 32})
      for (int n : {1, 33, 1024, 4096, 14336})
        for (int k : {1, 7, 40, 4096, 14336, 131072})
          for (bool k_contig : {false, true}) {
            SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " kc=" << k_contig
                                            << " sms=" << dev.sms);
            const mp::Plan p = mp::plan(m, n, k, k_contig, dev);
            EXPECT_GE(p.rows(), m);
            EXPECT_LE(p.rows(), m + 7 + (m > 16 ? 8 : 0));
            EXPECT_EQ(p.warp_k % p.k_chunk, 0);
            EXPECT_EQ(p.block_k, mp::kWarps * p.warp_k);
            EXPECT_GE(p.splits, 1);
            EXPECT_LE(p.splits, mp::kMaxSplits);
            EXPECT_GE(static_cast<int64_t>(p.splits) * p.block_k, k);
            EXPECT_LT(static_cast<int64_t>(p.splits - 1) * p.block_k, k) << "an empty split";
            EXPECT_GE(p.col_tiles * p.cols, n);
            if (p.col_tiles >= dev.sms) EXPECT_EQ(p.splits, 1) << "the strips fill the SMs";
            if (p.splits > 1) EXPECT_GE(p.warp_k, mp::kMinChunks * p.k_chunk);
            EXPECT_EQ(mp::scratch_bytes(p) > 0, p.splits > 1);
            const mp::Plan q = mp::plan(m, n, k, k_contig, dev, /*scratch=*/false);
            EXPECT_EQ(q.splits, 1);
            EXPECT_GE(q.block_k, k);
          }
  // Decode, 4096 x 4096: 256 strips of 16 columns need no split; 64 strips of 64 columns
  // (n-contiguous B) are split until every SM has blocks.
  EXPECT_EQ(mp::plan(1, 4096, 4096, true, kH100).blocks(), 256);
  EXPECT_GE(mp::plan(1, 4096, 4096, false, kH100).blocks(), 2 * 132);
}

}  // namespace
}  // namespace gemmlab
