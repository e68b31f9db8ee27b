// wgmma/small's 128 x 320 tile over C's columns (op(A) = A^T: TN, TT) and the two-round rule, on
// the CPU: where max_tile_tokens and tile_offered offer the tile, auto_takes' one-wave rule over
// columns, and rounds_pay / two_rounds (docs/history.md, wgmma/small: TN and TT). No GPU: CI.
#include <cstdint>

#include <gtest/gtest.h>

#include "kernels/wgmma/plan.h"
#include "plan_fixtures.h"

namespace gemmlab {
namespace {

TEST(WgmmaSmallPlan, WideTileOverColumnsAndTwoRounds) {
  namespace sp = wgmma_small_plan;
  namespace dp = wgmma_decode_plan;
  // C's columns as the tokens against an MN-major weight (op(A) = A^T: TT, TN): 320 too.
  EXPECT_EQ(sp::max_tile_tokens(Precision::BF16, true, true, false), 320);
  EXPECT_EQ(sp::max_tile_tokens(Precision::FP16, true, false, false), 320);
  EXPECT_EQ(sp::max_tile_tokens(Precision::TF32, true, true, false), dp::kMaxTokWeightInRegisters);
  // 320 tokens as C's columns, K-major (TT) or in five MN-major chunks (TN); 208 as rows only.
  EXPECT_TRUE(sp::tile_offered(14, true, sp::kMaxTileTok, 2, false));
  EXPECT_TRUE(sp::tile_offered(14, false, sp::kMaxTileTok, 2, false));
  EXPECT_FALSE(sp::tile_offered(14, false, sp::kMaxTileTok, 2, true));  // no such rows instance
  EXPECT_FALSE(sp::tile_offered(15, true, sp::kMaxTileTok, 2, false));
  EXPECT_TRUE(sp::tile_offered(15, true, sp::kMaxTileTok, 2, true));
  EXPECT_TRUE(sp::tile_offered(5, false, 256, 2, false));  // 128 x 256, MN-major tokens
  // The same over C's columns (op(A) = A^T): 1536 x 3072: 120 tiles of 128 x 320 (10 x 12);
  // 1280 x 4096: 130 (13 x 10); 4096^3: 416.
  EXPECT_TRUE(sp::auto_takes(1536, 3072, 1536, 1, kH100, false, false, true));
  EXPECT_TRUE(sp::auto_takes(1280, 4096, 2048, 1, kH100, false, false, true));
  EXPECT_FALSE(sp::auto_takes(4096, 4096, 2048, 1, kH100, false, false, true));
  EXPECT_FALSE(sp::auto_takes(1280, 4096, 2048, 1, kH100, true, false, true));  // tf32
  EXPECT_FALSE(sp::auto_takes(1280, 4096, 2048, 2, kH100, false, false, true));  // a batch
  // Two rounds of wgmma/03 that wgmma/small's plan rounds better (rounds_pay): 2560 x 2560 x 4096
  // and 3328 x 2048 x 1024 (128 x 208 in 260 / 256 CTAs: two waves of 26624 against two rounds of
  // 32768); not where both round the same (2304^3, 3072 x 2048 x 2048: 128 x 192 both; 2048 x
  // 4096 x 2048, 500 x 14336 x 4096: 128 x 256 both), not one round (2048^3: 128 tiles), not
  // three (4096^3), not a batch, not where 128 x 320 is not offered.
  const auto small_plan = [&](int64_t m, int64_t n, int64_t k) {
    return sp::plan(m, n, k, kH100, true, true, 0, 0, 1, sp::kMaxTileTok, 3);
  };
  EXPECT_TRUE(sp::rounds_pay(small_plan(2560, 2560, 4096), 2560, 2560, 1, kH100, true));
  EXPECT_TRUE(sp::rounds_pay(small_plan(3328, 2048, 1024), 3328, 2048, 1, kH100, true));
  EXPECT_FALSE(sp::rounds_pay(small_plan(2560, 2560, 4096), 2560, 2560, 1, kH100, false));
  EXPECT_FALSE(sp::rounds_pay(small_plan(2560, 2560, 4096), 2560, 2560, 2, kH100, true));
  EXPECT_FALSE(sp::rounds_pay(small_plan(2304, 2304, 2304), 2304, 2304, 1, kH100, true));
  EXPECT_FALSE(sp::rounds_pay(small_plan(3072, 2048, 2048), 3072, 2048, 1, kH100, true));
  EXPECT_FALSE(sp::rounds_pay(small_plan(2048, 4096, 2048), 2048, 4096, 1, kH100, true));
  EXPECT_FALSE(sp::rounds_pay(small_plan(500, 14336, 4096), 500, 14336, 1, kH100, true));
  EXPECT_FALSE(sp::rounds_pay(small_plan(2048, 2048, 2048), 2048, 2048, 1, kH100, true));
  EXPECT_FALSE(sp::rounds_pay(small_plan(4096, 4096, 4096), 4096, 4096, 1, kH100, true));
  EXPECT_TRUE(sp::two_rounds(2560, 2560, 1, kH100));    // 200 tiles of 128 x 256
  EXPECT_FALSE(sp::two_rounds(2048, 2048, 1, kH100));   // 128
  EXPECT_FALSE(sp::two_rounds(2048, 2048, 3, kH100));   // 384 over the batch
  EXPECT_TRUE(sp::two_rounds(2048, 2048, 2, kH100));    // 256
  // Forced tiles: 128 x 256 (200 CTAs, as wgmma/03: level) no; 128 x 128 (400 CTAs, four waves
  // of half the area: level) no, and smaller than wgmma/03's narrow tile.
  EXPECT_FALSE(sp::rounds_pay(sp::plan(2560, 2560, 4096, kH100, true, true, 6, 1, 1,
                                       sp::kMaxTileTok, 3),
                              2560, 2560, 1, kH100, true));
  EXPECT_FALSE(sp::rounds_pay(sp::plan(2560, 2560, 4096, kH100, true, true, 5, 1, 1,
                                       sp::kMaxTileTok, 3),
                              2560, 2560, 1, kH100, true));
}

}  // namespace
}  // namespace gemmlab
