// simt/sgemm's operand plan on the CPU (its tile plan: test_planners.cpp): the copies made first,
// the tile (decode rows, thin outputs, the wide 128 x 256 tile only where it pads C's columns
// about as little as the 128 x 128 one), B's transposed copy for thin outputs, and deeper splits
// for a C smaller than one tile. No GPU involved: these run in CI.
#include <gtest/gtest.h>

#include "kernels/simt/sgemm_plan.h"
#include "plan_fixtures.h"

namespace gemmlab {
namespace {

TEST(SgemmPlan, CopiesOnlyWhereCheap) {
  // 4097^3 NN: B's rows are misaligned and the copy is cheap -> realign, 128 x 256 tile.
  const sgemm::OperandPlan big = sgemm::plan_operands(problem({4097, 4097, 4097}), true, false, kH100);
  EXPECT_TRUE(big.realign_b);
  EXPECT_TRUE(big.bv);
  EXPECT_EQ(big.tile, sgemm::Tile::k128x256);
  // 1025^3 NN: the copy would cost more than the 4-byte loads -> 128 x 128 with 4-byte B.
  const sgemm::OperandPlan small = sgemm::plan_operands(problem({1025, 1025, 1025}), true, false, kH100);
  EXPECT_FALSE(small.realign_b);
  EXPECT_FALSE(small.bv);
  EXPECT_EQ(small.tile, sgemm::Tile::k128x128);
  // NT at 8192^3: B^T copied transposed, runs as NN on the wide tile; not at 64^3.
  EXPECT_TRUE(sgemm::plan_operands(problem({8192, 8192, 8192}, Op::N, Op::T), true, true, kH100)
                  .transpose_b);
  EXPECT_FALSE(sgemm::plan_operands(problem({64, 64, 64}, Op::N, Op::T), true, true, kH100)
                   .transpose_b);
  // No scratch: no copies at all.
  const sgemm::OperandPlan none =
      sgemm::plan_operands(problem({4097, 4097, 4097}), true, false, kH100, /*copies=*/false);
  EXPECT_FALSE(none.realign_b || none.realign_a || none.transpose_b || none.bv);
}

// Decode (M = 17..64 rows): the 32- and 64-row tiles, split in depth until the tiles fill the
// GPU, each split still >= 4 k-tiles deep; 65 rows and up keep the 128-row tiles.
TEST(SgemmPlan, DecodeRowsTakeTheNarrowTilesAndFillTheGpu) {
  struct Case {
    Dims d;
    Op b;
    sgemm::Tile tile;
  };
  for (const Case& c : {Case{{32, 4096, 14336}, Op::N, sgemm::Tile::k32x256},
                        Case{{17, 4096, 4096}, Op::T, sgemm::Tile::k32x256},
                        Case{{33, 8192, 8192}, Op::N, sgemm::Tile::k64x256},
                        Case{{64, 14336, 4096}, Op::T, sgemm::Tile::k64x256}}) {
    SCOPED_TRACE(testing::Message() << c.d.m << "x" << c.d.n << "x" << c.d.k);
    const sgemm::OperandPlan pl =
        sgemm::plan_operands(problem(c.d, Op::T, c.b), true, true, kH100);
    EXPECT_EQ(pl.tile, c.tile);
    EXPECT_FALSE(pl.av) << "A^T takes the 4-byte loader on the decode tiles";
    EXPECT_FALSE(pl.transpose_b) << "a copy of B never pays next to a decode GEMM";
    const sgemm::TilePlan L = sgemm::plan_tiles(c.d.m, c.d.n, c.d.k, sgemm::tile_shape(c.tile), kH100);
    EXPECT_GT(L.work.splits, 1);
    EXPECT_GE(L.blocks, kH100.sms);
    EXPECT_GE(L.work.per_split, 4);
  }
  EXPECT_EQ(sgemm::plan_operands(problem({65, 4096, 4096}), true, true, kH100).tile,
            sgemm::Tile::k128x256);
}

// A thin output (N <= 64 columns, M > 64 rows): the 32- and 64-column tiles where their
// instances exist (op(B) = B as the kernel runs it, A^T with 16-byte rows), split in depth until
// they fill the GPU; a forced thin tile is ignored where no instance exists.
TEST(SgemmPlan, ThinOutputsTakeTheThinTiles) {
  struct Case {
    Dims d;
    Op a, b;
    bool a_aligned;
    sgemm::Tile tile;
  };
  for (const Case& c : {Case{{8192, 32, 8192}, Op::N, Op::N, true, sgemm::Tile::k256x32},
                        Case{{8192, 30, 8191}, Op::N, Op::N, false, sgemm::Tile::k256x32},
                        Case{{8192, 17, 8192}, Op::T, Op::N, true, sgemm::Tile::k256x32},
                        Case{{8192, 33, 8192}, Op::N, Op::N, true, sgemm::Tile::k256x64},
                        Case{{8192, 64, 8192}, Op::N, Op::T, true, sgemm::Tile::k256x64},
                        Case{{8192, 64, 8192}, Op::T, Op::N, false, sgemm::Tile::k128x128},
                        Case{{8192, 65, 8192}, Op::N, Op::N, true, sgemm::Tile::k128x128},
                        Case{{64, 32, 8192}, Op::N, Op::N, true, sgemm::Tile::k64x256}}) {
    SCOPED_TRACE(testing::Message() << c.d.m << "x" << c.d.n << "x" << c.d.k);
    const sgemm::OperandPlan pl =
        sgemm::plan_operands(problem(c.d, c.a, c.b), c.a_aligned, true, kH100);
    EXPECT_EQ(pl.tile, c.tile);
    if (!sgemm::thin_tile(c.tile)) continue;
    EXPECT_EQ(pl.av, c.a_aligned && (c.a == Op::T || sgemm::a_rows_tile(c.tile)))
        << "the 256 x 32 tile copies A's aligned rows 16 bytes at a time";
    EXPECT_EQ(pl.transpose_b, c.b == Op::T) << "B, the small operand, copied to n-contiguous rows";
    const sgemm::TilePlan L = sgemm::plan_tiles(c.d.m, c.d.n, c.d.k, sgemm::tile_shape(c.tile), kH100);
    EXPECT_GT(L.work.splits, 1);
    EXPECT_GE(L.blocks, kH100.sms);
    EXPECT_EQ(L.work.sp.blocks(), 0);
  }
  // Forced (gemm-tune, the tuning table): taken where an instance exists, else the planner's.
  const sgemm::Tile thin = sgemm::Tile::k256x32;
  EXPECT_EQ(sgemm::plan_operands(problem({300, 300, 300}), true, true, kH100, true, &thin).tile,
            thin);
  EXPECT_EQ(sgemm::plan_operands(problem({300, 300, 300}, Op::T, Op::N), false, true, kH100, true,
                                 &thin)
                .tile,
            sgemm::Tile::k128x128);
}

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
  // so past kMaxSplits, each split still >= 4 k-tiles; so one full 128 x 128 tile over k =
  // 32768 or 131072 (kMaxSplits blocks would leave half the SMs idle), but not 4 tiles of it.
  const sgemm::TileShape dec = sgemm::tile_shape(sgemm::Tile::k64x256);
  const int s = sgemm::choose_splits(64, 64, 65536, dec, kH100);
  EXPECT_GT(s, sgemm::kMaxSplits);
  EXPECT_LE(s, sgemm::kMaxForcedSplits);
  EXPECT_GE(65536 / sgemm::kBK / s, 4);
  const sgemm::TilePlan L = sgemm::plan_tiles(64, 64, 65536, dec, kH100);
  EXPECT_EQ(L.work.splits, s);
  EXPECT_GT(L.blocks, sgemm::kMaxSplits);
  const sgemm::TileShape sq = sgemm::tile_shape(sgemm::Tile::k128x128);
  for (int k : {32768, 131072}) {
    EXPECT_GE(sgemm::choose_splits(128, 128, k, sq, kH100), 128) << k;
    EXPECT_LE(sgemm::choose_splits(128, 128, k, sq, kH100), sgemm::kMaxForcedSplits) << k;
  }
  EXPECT_LE(sgemm::choose_splits(256, 256, 32768, sq, kH100), sgemm::kMaxSplits);
  EXPECT_EQ(sgemm::choose_splits(40, 40, 64, dec, kH100), 1);  // too shallow
}

// A tiny C (at most 128 x 256, K <= kTinyK) from 65 rows up: the 32-row tile, one block per 32
// rows instead of one 128-row block, in every op pair; not a thin output (its thin tile), a
// deeper K (100 x 200 x 1000; the deep-k suite's 128 x 128 x 8192 keeps the 128-row tile and its
// splits) or a wider C.
TEST(SgemmPlan, TinyCTakesThe32RowTile) {
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      for (const Dims& d : {Dims{96, 96, 96}, Dims{77, 77, 77}, Dims{128, 128, 512},
                            Dims{128, 256, 256}, Dims{65, 200, 33}}) {
        SCOPED_TRACE(testing::Message() << d.m << "x" << d.n << "x" << d.k << " " << int(a)
                                        << int(b));
        EXPECT_TRUE(sgemm::tiny_c(d.m, d.n, d.k));
        EXPECT_EQ(sgemm::plan_operands(problem(d, a, b), true, true, kH100).tile,
                  sgemm::Tile::k32x256);
      }
  EXPECT_FALSE(sgemm::tiny_c(128, 128, 513));
  EXPECT_FALSE(sgemm::tiny_c(129, 128, 128));
  EXPECT_FALSE(sgemm::tiny_c(128, 257, 128));
  EXPECT_EQ(sgemm::plan_operands(problem({128, 128, 8192}), true, true, kH100).tile,
            sgemm::Tile::k128x128);
  EXPECT_NE(sgemm::plan_operands(problem({100, 200, 1000}, Op::T, Op::N), true, true, kH100).tile,
            sgemm::Tile::k32x256);
  EXPECT_NE(sgemm::plan_operands(problem({256, 256, 256}), true, true, kH100).tile,
            sgemm::Tile::k32x256);
  EXPECT_EQ(sgemm::plan_operands(problem({120, 16, 120}), true, true, kH100).tile,
            sgemm::Tile::k256x32);
}

}  // namespace
}  // namespace gemmlab
