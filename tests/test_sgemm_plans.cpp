// simt/sgemm's planner on the CPU, the rules added after test_planners.cpp: the wide 128 x 256
// tile only where it pads C's columns about as little as the 128 x 128 one, and deeper splits for
// a C smaller than one tile. No GPU involved: these run in CI.
#include <gtest/gtest.h>

#include "kernels/simt/sgemm_plan.h"
#include "plan_fixtures.h"

namespace gemmlab {
namespace {

TEST(SgemmPlan, WideTileOnlyWhereItPadsNoMoreColumns) {
  EXPECT_TRUE(sgemm::wide_pads_columns(128));   // 256 columns for 128
  EXPECT_TRUE(sgemm::wide_pads_columns(300));   // 512 for 300, where 128 x 128 computes 384
  EXPECT_TRUE(sgemm::wide_pads_columns(640));
  EXPECT_FALSE(sgemm::wide_pads_columns(200));  // 256 either way
  EXPECT_FALSE(sgemm::wide_pads_columns(256));
  EXPECT_FALSE(sgemm::wide_pads_columns(1000));
  EXPECT_FALSE(sgemm::wide_pads_columns(2500));
  EXPECT_FALSE(sgemm::wide_pads_columns(4096));
  EXPECT_FALSE(sgemm::wide_pads_columns(4097));  // 128 more of 4097: 3%
  EXPECT_TRUE(sgemm::wide_pads_columns(65));     // (test_planners.cpp: 8192 x 65 x 8192)
  // NN, 16-byte rows: the narrow tile where the wide one pads, the wide one elsewhere.
  for (const Dims& d : {Dims{4096, 128, 4096}, Dims{2500, 300, 2500}, Dims{1000, 640, 1000}})
    EXPECT_EQ(sgemm::plan_operands(problem(d), true, true, kH100).tile, sgemm::Tile::k128x128)
        << d.m << "x" << d.n << "x" << d.k;
  for (const Dims& d : {Dims{4096, 4096, 4096}, Dims{1024, 1024, 1024}, Dims{2500, 2500, 2500}})
    EXPECT_EQ(sgemm::plan_operands(problem(d), true, true, kH100).tile, sgemm::Tile::k128x256)
        << d.m << "x" << d.n << "x" << d.k;
}

// A thin output with op(B) = B^T: B (k x n, small) is copied transposed where that costs under
// half the GEMM, so the thin tiles can run it; not where it costs more (k = 16), and a square
// problem keeps the 5% rule.
TEST(SgemmPlan, ThinOutputsCopyBToTakeTheThinTiles) {
  for (Op a : {Op::N, Op::T}) {
    const sgemm::OperandPlan pl = sgemm::plan_operands(problem({8192, 16, 768}, a, Op::T), true,
                                                       true, kH100);
    EXPECT_TRUE(pl.transpose_b);
    EXPECT_EQ(pl.tile, sgemm::Tile::k256x32);
  }
  EXPECT_FALSE(sgemm::plan_operands(problem({8192, 16, 16}, Op::N, Op::T), true, true, kH100)
                   .transpose_b);
  EXPECT_FALSE(sgemm::plan_operands(problem({768, 768, 768}, Op::N, Op::T), true, true, kH100)
                   .transpose_b);
}

TEST(SgemmPlan, CSmallerThanOneTileSplitsDeeper) {
  // 64 x 64 x 65536 on the 64 x 256 tile (the decode tile: m <= 64): one light block a split,
  // so past kMaxSplits, each split still >= 4 k-tiles; 128 x 128 x 131072 on 128 x 128 (one
  // full tile) keeps kMaxSplits.
  const sgemm::TileShape dec = sgemm::tile_shape(sgemm::Tile::k64x256);
  const int s = sgemm::choose_splits(64, 64, 65536, dec, kH100);
  EXPECT_GT(s, sgemm::kMaxSplits);
  EXPECT_LE(s, sgemm::kMaxForcedSplits);
  EXPECT_GE(65536 / sgemm::kBK / s, 4);
  const sgemm::TilePlan L = sgemm::plan_tiles(64, 64, 65536, dec, kH100);
  EXPECT_EQ(L.work.splits, s);
  EXPECT_GT(L.blocks, sgemm::kMaxSplits);
  EXPECT_LE(sgemm::choose_splits(128, 128, 131072, sgemm::tile_shape(sgemm::Tile::k128x128), kH100),
            sgemm::kMaxSplits);
  EXPECT_EQ(sgemm::choose_splits(40, 40, 64, dec, kH100), 1);  // too shallow
}

}  // namespace
}  // namespace gemmlab
