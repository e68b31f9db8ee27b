// The planners of the strips kernel, on the CPU: wgmma/decode's (tokens, strips, depth splits,
// the skinny mode) and wgmma/small's (tiles, splits, its cost model's picks, batches, `auto`), on
// a 132-SM (H100 SXM) and a 108-SM (A100) device description. No GPU involved: these run in CI.
#include <algorithm>
#include <utility>

#include <gtest/gtest.h>

#include "kernels/wgmma/plan.h"
#include "plan_fixtures.h"

namespace gemmlab {
namespace {

// wgmma/decode (plan.h): tokens cover m on wgmma's N side, the strips cover n, the splits cover
// the depth without an empty one, each at least kMinKBlocks deep; the ring fits two CTAs per SM
// up to 32 tokens; a forced split count is taken as far as the depth allows; no scratch, no split.
TEST(WgmmaDecodePlan, TokensStripsAndSplitsCoverTheProblem) {
  namespace dp = wgmma_decode_plan;
  for (const DeviceDesc& dev : {kH100, kA100})
    for (int m : {1, 8, 9, 16, 33, 64, 65, 128, 200, 256})
      for (int n : {1, 100, 4096, 14336})
        for (int k : {1, 63, 257, 4096, 14336, 131072}) {
          SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " sms=" << dev.sms);
          const dp::Plan p = dp::plan(m, n, k, dev);
          EXPECT_GE(p.tok, m);
          EXPECT_LT(p.tok, 2 * std::max(m, 8));
          EXPECT_EQ(p.strip, 64 * p.groups);
          EXPECT_GE(static_cast<int64_t>(p.strips) * p.strip, n);
          EXPECT_LT(static_cast<int64_t>(p.strips - 1) * p.strip, n);
          EXPECT_EQ(p.num_kb, (k + 63) / 64);
          EXPECT_GE(p.splits * p.kb_per_split, p.num_kb);
          EXPECT_LT((p.splits - 1) * p.kb_per_split, p.num_kb) << "an empty split";
          EXPECT_LE(p.splits, dp::kMaxSplits);
          if (p.splits > 1) EXPECT_GE(p.kb_per_split, dp::kMinKBlocks);
          EXPECT_EQ(dp::scratch_bytes(p) > 0, p.splits > 1);
          EXPECT_LE(dp::smem_bytes(p.tok), 227 * 1024);
          if (dev.sms == kH100.sms) EXPECT_EQ(p.ctas_per_sm, p.tok <= 32 ? 2 : 1);
          EXPECT_EQ(dp::plan(m, n, k, dev, /*scratch=*/false).splits, 1);
          const dp::Plan f = dp::plan(m, n, k, dev, true, 4);
          EXPECT_EQ(f.splits, std::min(4, std::max(1, std::min(dp::kMaxSplits, f.num_kb / 4))));
        }
  // Decode on an H100 (the splits measured best, plan.cpp): 64 strips of 64 columns stay whole at
  // k = 4096 and split in two at 14336; 224 strips need no split; 128-column strips (two
  // warpgroups, 64+ tokens) split until they fill half the SMs.
  EXPECT_EQ(dp::plan(1, 4096, 4096, kH100).blocks(), 64);
  EXPECT_EQ(dp::plan(1, 4096, 14336, kH100).splits, 2);
  EXPECT_EQ(dp::plan(16, 14336, 4096, kH100).splits, 1);
  EXPECT_EQ(dp::plan(128, 4096, 4096, kH100).groups, 2);
  EXPECT_EQ(dp::plan(128, 4096, 4096, kH100).splits, 2);
  EXPECT_EQ(dp::plan(64, 8192, 8192, kH100).splits, 1);
  // A small weight, whose strips fill at most 40% of the SMs, splits down to 16 k-blocks:
  // 4 x 2048 x 6144 (32 strips, 96 k-blocks) in 4, 16 x 1024 x 4096 (16 strips) in 4,
  // 4 x 3072 x 3072 (48 strips) in 2, but not 4 x 1536 x 1536 (24 k-blocks); 64 strips keep the
  // 64-block rule. Two warpgroups fill up to two thirds of the SMs: tf32 48 x 5120 x 4096 (depth
  // planned as 2k) in 2 splits of its 40 strips.
  EXPECT_EQ(dp::plan(4, 2048, 6144, kH100).splits, 4);
  EXPECT_EQ(dp::plan(16, 1024, 4096, kH100).splits, 4);
  EXPECT_EQ(dp::plan(4, 3072, 3072, kH100).splits, 2);
  EXPECT_EQ(dp::plan(4, 3072, 8192, kH100).splits, 2);
  EXPECT_EQ(dp::plan(4, 1536, 1536, kH100).splits, 1);
  EXPECT_EQ(dp::plan(48, 5120, 2 * 4096, kH100).splits, 2);
  // auto: m <= 32 (tf32 64: from 33 16-bit rows wgmma/small's tiles); one entry.
  EXPECT_TRUE(dp::auto_takes(1, 100, 7, 1));
  EXPECT_TRUE(dp::auto_takes(32, 14336, 4096, 1));
  EXPECT_FALSE(dp::auto_takes(33, 4096, 4096, 1));
  EXPECT_FALSE(dp::auto_takes(64, 5120, 5120, 1));
  EXPECT_TRUE(dp::auto_takes(64, 14336, 4096, 1, true, /*tf32=*/true));
  EXPECT_FALSE(dp::auto_takes(65, 14336, 4096, 1, true, /*tf32=*/true));
  // Why: from 33 rows this planner's strips are 128 weights wide (two warpgroups), wgmma/small's
  // 64: half the strips where neither fills the SMs, the same plan where both do.
  EXPECT_EQ(dp::plan(64, 5120, 5120, kH100).strips, 40);
  EXPECT_EQ(wgmma_small_plan::plan(64, 5120, 5120, kH100, true, true).strips, 80);
  EXPECT_EQ(dp::plan(64, 14336, 4096, kH100).blocks(), 112);
  EXPECT_EQ(wgmma_small_plan::plan(64, 14336, 4096, kH100, true, true).blocks(), 112);
  EXPECT_FALSE(dp::auto_takes(128, 14336, 4096, 1));  // wgmma/small's
  EXPECT_FALSE(dp::auto_takes(128, 128, 128, 1));
  EXPECT_FALSE(dp::auto_takes(256, 4096, 4096, 1));
  EXPECT_FALSE(dp::auto_takes(16, 4096, 4096, 8));
}

// wgmma/decode's skinny mode (plan.h): few columns of C (n <= 64) are the tokens and op(A) the
// weight; decode keeps its problems (m <= 256 with op(A) = A), and the rest is neither. MN-major
// tokens take one 64-wide chunk. auto takes skinny problems against a weight of m, k >= 1024.
TEST(WgmmaDecodePlan, SkinnyModeTakesFewColumnsAsTokens) {
  namespace dp = wgmma_decode_plan;
  EXPECT_EQ(dp::mode_of(16, 4096, true), dp::Mode::Decode);
  EXPECT_EQ(dp::mode_of(16, 4096, false), dp::Mode::None);
  EXPECT_EQ(dp::mode_of(16, 64, false), dp::Mode::Skinny);
  EXPECT_EQ(dp::mode_of(8192, 1, true), dp::Mode::Skinny);
  EXPECT_EQ(dp::mode_of(8192, 64, false), dp::Mode::Skinny);
  EXPECT_EQ(dp::mode_of(8192, 65, true), dp::Mode::None);
  EXPECT_EQ(dp::mode_of(257, 4096, true), dp::Mode::None);
  const dp::Roles r = dp::roles_of(dp::Mode::Skinny, 8192, 16);
  EXPECT_TRUE(r.skinny);
  EXPECT_EQ(r.tokens, 16);
  EXPECT_EQ(r.weights, 8192);
  EXPECT_FALSE(dp::roles_of(dp::Mode::Decode, 16, 8192).skinny);
  EXPECT_EQ(dp::roles_of(dp::Mode::Decode, 16, 8192).tokens, 16);
  for (int n : {1, 2, 8, 16, 33, 64}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(dp::plan(n, 8192, 8192, kH100, true, 0, false).tok, 64);  // MN-major tokens
    EXPECT_EQ(dp::plan(n, 8192, 8192, kH100, true, 0, false).groups, 2);
    EXPECT_EQ(dp::plan(n, 8192, 8192, kH100, true, 0, false).ttiles, 1);
    EXPECT_EQ(dp::plan(n, 8192, 8192, kH100).tok, dp::tokens(n));
    EXPECT_GE(dp::plan(n, 8192, 8192, kH100).tok, n);
  }
  // 8192 weight rows in 64-row strips (<= 32 tokens): 128 CTAs, the whole depth each.
  EXPECT_EQ(dp::plan(16, 8192, 8192, kH100).blocks(), 128);
  EXPECT_TRUE(dp::auto_takes(8192, 16, 8192, 1, true));
  EXPECT_TRUE(dp::auto_takes(8192, 64, 8192, 1, false));
  EXPECT_FALSE(dp::auto_takes(8192, 65, 8192, 1, true));
  EXPECT_FALSE(dp::auto_takes(512, 16, 8192, 1, true));
  EXPECT_FALSE(dp::auto_takes(8192, 16, 512, 1, true));
  EXPECT_FALSE(dp::auto_takes(8192, 16, 8192, 2, true));
  EXPECT_FALSE(dp::auto_takes(64, 64, 4096, 1, false));
}

// The strips kernel's smaller last box (plan.h, tail_box_pays): only where at least 24 rows of the
// last token tile are past the end; never where the tokens fill their tiles.
TEST(WgmmaDecodePlan, TailBoxOnlyWhereManyRowsArePastTheEnd) {
  namespace dp = wgmma_decode_plan;
  EXPECT_TRUE(dp::tail_box_pays(144, 128));   // 16 of 128 tokens: 112 rows past the end
  EXPECT_TRUE(dp::tail_box_pays(200, 128));   // 72 of 128: 56
  EXPECT_TRUE(dp::tail_box_pays(4097, 64));   // a last tile of 1 token
  EXPECT_TRUE(dp::tail_box_pays(16, 64));
  EXPECT_TRUE(dp::tail_box_pays(160, 64));    // 32 of 64: 32
  EXPECT_TRUE(dp::tail_box_pays(96, 128));    // 32
  EXPECT_TRUE(dp::tail_box_pays(100, 64));    // 36 of 64: 28
  EXPECT_FALSE(dp::tail_box_pays(48, 64));    // 16
  EXPECT_FALSE(dp::tail_box_pays(240, 128));  // 112 of 128: 16
  EXPECT_FALSE(dp::tail_box_pays(1, 8));      // 7 (decode's one token)
  EXPECT_FALSE(dp::tail_box_pays(300, 320));  // 20
  EXPECT_FALSE(dp::tail_box_pays(256, 128));  // whole tiles
  EXPECT_FALSE(dp::tail_box_pays(4096, 64));
  EXPECT_TRUE(dp::tail_box_pays(int64_t{3} << 31 | 1, 64));  // past int: 63 rows past the end
}

// wgmma/small (plan.h): the tokens are C's rows when op(A) = A (K-major), else its columns; the
// tiles cover tokens and weight rows, the splits the depth without an empty one; MN-major tokens
// never get tiles under 64; a forced tile / split count is honoured (splits as far as the depth
// allows); no scratch, no split; the model's choice is the cheapest of every pair it weighs.
TEST(WgmmaSmallPlan, TilesAndSplitsCoverTheProblem) {
  namespace sp = wgmma_small_plan;
  namespace dp = wgmma_decode_plan;
  EXPECT_FALSE(sp::roles_of(100, 200, true, false).skinny);
  EXPECT_EQ(sp::roles_of(100, 200, true, false).tokens, 100);
  EXPECT_TRUE(sp::roles_of(100, 200, false, false).skinny);
  EXPECT_EQ(sp::roles_of(100, 200, false, false).tokens, 200);
  EXPECT_FALSE(sp::roles_of(100, 200, false, false).xk);
  EXPECT_TRUE(sp::roles_of(100, 200, false, true).xk);
  // tf32: the tokens always K-major; C's columns only where op(A) = A^T and 4 n <= m.
  for (bool bk : {false, true}) {
    const sp::Roles cols = sp::roles_of(2048, 32, false, bk, true);
    EXPECT_TRUE(cols.skinny && cols.xk);
    EXPECT_EQ(cols.tokens, 32);
    EXPECT_EQ(cols.weights, 2048);
    EXPECT_EQ(sp::tokens_transposed(cols, false, bk, true), !bk);  // B copied only where MN-major
    const sp::Roles rows = sp::roles_of(32, 2048, false, bk, true);  // n >= m: A transposed
    EXPECT_TRUE(!rows.skinny && rows.xk);
    EXPECT_EQ(rows.tokens, 32);
    EXPECT_TRUE(sp::tokens_transposed(rows, false, bk, true));
    EXPECT_FALSE(sp::roles_of(1000, 1000, false, bk, true).skinny);
    EXPECT_FALSE(sp::roles_of(777, 333, false, bk, true).skinny);
    EXPECT_TRUE(sp::roles_of(2500, 300, false, bk, true).skinny);
    const sp::Roles nn = sp::roles_of(2048, 32, true, bk, true);  // op(A) = A: rows, no copy
    EXPECT_TRUE(!nn.skinny && nn.xk);
    EXPECT_FALSE(sp::tokens_transposed(nn, true, bk, true));
    EXPECT_FALSE(sp::tokens_transposed(sp::roles_of(100, 200, false, bk), false, bk, false));
  }
  for (const DeviceDesc& dev : {kH100, kA100})
    for (int64_t tokens : {1, 7, 128, 300, 1024, 1536})
      for (int64_t weights : {1, 100, 1024, 4096})
        for (int64_t k : {1, 64, 1000, 8192, 131072})
          for (bool xk : {true, false}) {
            SCOPED_TRACE(testing::Message() << tokens << "x" << weights << "x" << k << " xk=" << xk
                                            << " sms=" << dev.sms);
            const dp::Plan p = sp::plan(tokens, weights, k, dev, true, xk, 0, 0, 1, sp::kMaxTileTok);
            EXPECT_LE(sp::plan(tokens, weights, k, dev, true, xk).tok, dp::kMaxM);
            EXPECT_GE(static_cast<int64_t>(p.ttiles) * p.tok, tokens);
            EXPECT_LT(static_cast<int64_t>(p.ttiles - 1) * p.tok, tokens);
            EXPECT_GE(static_cast<int64_t>(p.strips) * p.strip, weights);
            EXPECT_EQ(p.strip, 64 * p.groups);
            if (!xk) EXPECT_EQ(p.tok % 64, 0);  // MN-major tokens: 64-wide chunks, at most 256
            if (!xk) EXPECT_LE(p.tok, dp::kMaxM);
            EXPECT_GE(p.splits * p.kb_per_split, p.num_kb);
            EXPECT_LT((p.splits - 1) * p.kb_per_split, p.num_kb) << "an empty split";
            EXPECT_LE(p.splits, dp::kMaxSplits);
            EXPECT_EQ(sp::plan(tokens, weights, k, dev, false, xk).splits, 1);
            for (int t = 1; t <= sp::kTiles; ++t)
              for (int s : {1, 4}) {
                const dp::Plan f = sp::plan(tokens, weights, k, dev, true, xk, t, s, 1,
                                            sp::kMaxTileTok);
                const int tt = sp::kTileTok[t - 1];
                if (xk || (tt % 64 == 0 && tt <= dp::kMaxM)) EXPECT_EQ(f.tok, tt);
                EXPECT_EQ(f.splits, std::min(s, std::max(1, std::min(dp::kMaxSplits, f.num_kb / 2))));
                EXPECT_LE(sp::cost(p, dev), sp::cost(f, dev) + 1e-9) << "not the cheapest";
              }
            // tf32 with the weight in registers: no tile past 192 tokens, forced or not.
            const int cap = dp::max_tokens(Precision::TF32, false);
            EXPECT_EQ(cap, 192);
            EXPECT_EQ(dp::max_tokens(Precision::TF32, true), 256);
            EXPECT_EQ(dp::max_tokens(Precision::BF16, false), 256);
            EXPECT_LE(sp::plan(tokens, weights, k, dev, true, xk, 0, 0, 1, cap).tok, cap);
            EXPECT_LE(sp::plan(tokens, weights, k, dev, true, xk, 6, 0, 1, cap).tok, cap)
                << "a forced 128 x 256 tile falls back to the model's";
          }
  // auto: one 16-bit entry whose 128 x 256 tiles do not fill the SMs.
  EXPECT_TRUE(sp::auto_takes(1024, 1024, 1024, 1, kH100));
  EXPECT_TRUE(sp::auto_takes(128, 128, 131072, 1, kH100));
  EXPECT_TRUE(sp::auto_takes(256, 4096, 14336, 1, kH100));
  EXPECT_FALSE(sp::auto_takes(256, 256, 32768, 1, kH100));
  EXPECT_FALSE(sp::auto_takes(2048, 4096, 512, 1, kH100));
  EXPECT_TRUE(sp::auto_takes(1280, 1280, 1280, 1, kH100));   // 50 tiles
  EXPECT_TRUE(sp::auto_takes(1536, 1536, 1536, 1, kH100));   // 96 tiles of 128 x 192
  EXPECT_TRUE(sp::auto_takes(2048, 1536, 1536, 1, kH100));   // 128 of them
  EXPECT_FALSE(sp::auto_takes(2048, 2048, 2048, 1, kH100));  // 176: wgmma/03's
  EXPECT_FALSE(sp::auto_takes(4096, 4096, 4096, 1, kH100));
  // 16-bit rows short of two full tile rows that wgmma/03 would stream-k: wgmma/small's; two
  // full rows, more tiles than SMs, or tf32 stay wgmma/03's.
  EXPECT_TRUE(sp::auto_takes(200, 13824, 5120, 1, kH100));   // 108 tiles of 128 x 256
  EXPECT_TRUE(sp::auto_takes(128, 28672, 8192, 1, kH100));   // 112
  EXPECT_FALSE(sp::auto_takes(200, 13824, 5120, 1, kH100, /*tf32=*/true));
  EXPECT_FALSE(sp::auto_takes(256, 14336, 4096, 1, kH100));  // 112, both rows full
  EXPECT_FALSE(sp::auto_takes(200, 28672, 8192, 1, kH100));  // 224
  EXPECT_FALSE(sp::auto_takes(1024, 1024, 1024, 8, kH100));  // 256 tiles of 128 x 256 in all
  EXPECT_TRUE(sp::auto_takes(128, 128, 4096, 32, kH100));     // a batch of 32 small entries
  // 257..320 rows as K-major tokens (16-bit, one entry): one row of 128 x 320 tiles.
  EXPECT_FALSE(sp::auto_takes(320, 14336, 4096, 1, kH100));
  EXPECT_TRUE(sp::auto_takes(320, 14336, 4096, 1, kH100, false, /*rows_k_major=*/true));
  EXPECT_TRUE(sp::auto_takes(257, 13824, 5120, 1, kH100, false, true));
  EXPECT_FALSE(sp::auto_takes(321, 14336, 4096, 1, kH100, false, true));
  EXPECT_FALSE(sp::auto_takes(320, 14336, 4096, 1, kH100, /*tf32=*/true, true));
  EXPECT_FALSE(sp::auto_takes(320, 14336, 4096, 4, kH100, false, true));
  // More 128 x 256 tiles than SMs (wgmma/03's two rounds) whose 128 x 320 tiles fit one wave:
  // wgmma/small's where the tokens are K-major rows (16-bit, one entry).
  EXPECT_TRUE(sp::auto_takes(1536, 3072, 1536, 1, kH100, false, true));   // 144 / 120
  EXPECT_TRUE(sp::auto_takes(1280, 4096, 2048, 1, kH100, false, true));   // 160 / 128
  EXPECT_TRUE(sp::auto_takes(1792, 2560, 2048, 1, kH100, false, true));   // 140 / 120
  EXPECT_FALSE(sp::auto_takes(1536, 3072, 1536, 1, kH100));               // MN-major tokens
  EXPECT_FALSE(sp::auto_takes(1536, 3072, 1536, 1, kH100, true, true));   // tf32
  EXPECT_FALSE(sp::auto_takes(1536, 3072, 1536, 2, kH100, false, true));  // a batch
  EXPECT_FALSE(sp::auto_takes(2304, 2304, 2304, 1, kH100, false, true));  // 144 of 128 x 320
  EXPECT_FALSE(sp::auto_takes(2048, 2048, 2048, 1, kH100, false, true));  // 128: one round
  EXPECT_FALSE(sp::auto_takes(4096, 4096, 4096, 1, kH100, false, true));
  EXPECT_FALSE(sp::auto_takes(1536, 3072, 32768, 1, kH100, false, true));  // wgmma/split_k's
  // The 128 x 320 tile (index 15): two warpgroups, 4 stages of 56 KB, a producer warpgroup
  // (setmaxnreg) so the consumers may hold 160 accumulators; only within max_tile_tokens: 16-bit,
  // K-major tokens as C's rows.
  EXPECT_TRUE(sp::kTileTok[14] == 320 && sp::kTileGroups[14] == 2 && !sp::kTileDeep[14]);
  EXPECT_EQ(dp::stages(320), 4);
  EXPECT_EQ(dp::threads(320), 384);
  EXPECT_EQ(dp::threads(256), 288);
  EXPECT_LE(dp::smem_bytes(320), 227 * 1024);
  EXPECT_EQ(sp::max_tile_tokens(Precision::BF16, false, true, true), 320);
  EXPECT_EQ(sp::max_tile_tokens(Precision::FP16, false, true, false), 320);
  EXPECT_EQ(sp::max_tile_tokens(Precision::BF16, true, true, true), 256);  // skinny, W K-major
  EXPECT_EQ(sp::max_tile_tokens(Precision::BF16, false, false, true), 256);  // MN-major tokens
  EXPECT_EQ(sp::max_tile_tokens(Precision::TF32, false, true, true), 256);
  // The 128 x 208 tile (index 16): 193..208 tokens, like 128 x 320 only where max_tok is
  // kMaxTileTok (16-bit, tokens K-major as C's rows); forced elsewhere, the model's own tile.
  EXPECT_TRUE(sp::kTileTok[15] == 208 && sp::kTileGroups[15] == 2 && sp::kTileRowsOnly[15]);
  EXPECT_TRUE(!sp::kTileRowsOnly[14] && !sp::kTilePlainOnly[14] && !sp::kTilePlainOnly[15]);
  EXPECT_TRUE(sp::kTilePlainOnly[13]);  // 192 x 96
  // The rule plan() and the plan variants share: 320 / 208 tokens only at kMaxTileTok, 192 x 96
  // only with three warpgroups, MN-major tokens only in whole 64-token chunks.
  EXPECT_TRUE(sp::tile_offered(14, true, sp::kMaxTileTok, 2));
  EXPECT_FALSE(sp::tile_offered(14, true, 256, 3));
  EXPECT_FALSE(sp::tile_offered(15, false, sp::kMaxTileTok, 3));
  EXPECT_TRUE(sp::tile_offered(13, true, 256, 3));
  EXPECT_FALSE(sp::tile_offered(13, true, 256, 2));
  EXPECT_FALSE(sp::tile_offered(0, false, 256, 3));  // 64 x 8 on MN-major tokens
  EXPECT_TRUE(sp::tile_offered(3, false, 256, 2));   // 64 x 64
  EXPECT_EQ(dp::stages(208), 5);
  EXPECT_EQ(sp::plan(200, 13824, 5120, kH100, true, true, 16, 1, 1, sp::kMaxTileTok, 2).tok, 208);
  EXPECT_NE(sp::plan(200, 13824, 5120, kH100, true, true, 16, 1, 1, 256, 3).tok, 208);
  EXPECT_NE(sp::plan(320, 13824, 5120, kH100, true, true, 15, 1, 1, 256, 3).tok, 320);
  EXPECT_EQ(sp::max_groups(Precision::BF16, false, true), 3);
  EXPECT_EQ(sp::max_groups(Precision::BF16, false, false), 2);
  EXPECT_EQ(sp::max_groups(Precision::BF16, true, true), 2);
  const dp::Plan t320 = sp::plan(320, 14336, 4096, kH100, true, true, 0, 0, 1, sp::kMaxTileTok);
  EXPECT_TRUE(t320.tok == 320 && t320.ttiles == 1 && t320.strips == 112) << t320.tok;
  EXPECT_EQ(sp::plan(320, 14336, 4096, kH100, true, false, 15, 1, 1, sp::kMaxTileTok).tok % 64, 0);
  EXPECT_LE(sp::plan(320, 14336, 4096, kH100, true, false, 15, 1, 1, sp::kMaxTileTok).tok, 256);
  // The deep 64 x 64 tile (index 9): one warpgroup, 12 stages in one CTA per SM, within the SM's
  // shared memory; the model prefers it where its CTAs fit one wave (128 x 4096 x 4096: 128
  // CTAs), not where they take two (256 x 4096 x 4096: 256).
  EXPECT_TRUE(sp::kTileDeep[8] && sp::kTileTok[8] == 64 && sp::kTileGroups[8] == 1);
  EXPECT_EQ(dp::stages(64, 1, true), 12);
  for (int t = 9; t < 12; ++t) {  // 64x8d, 64x16d, 64x32d: 16 stages, one CTA per SM
    EXPECT_TRUE(sp::kTileDeep[t] && sp::kTileGroups[t] == 1 && sp::kTileTok[t] <= 32);
    EXPECT_EQ(dp::stages(sp::kTileTok[t], 0, true), 16);
    EXPECT_LE(dp::smem_bytes(sp::kTileTok[t], 0, true), 227 * 1024);
    EXPECT_EQ(sp::plan(16, 4096, 4096, kH100, true, true, t + 1, 1).ctas_per_sm, 1);
  }
  // 64x128d (index 13): one warpgroup of m64n128 (a stage read by one wgmma per k-step, not
  // two of n64: less shared-memory traffic than 128 x 64), 8 stages, one CTA per SM.
  EXPECT_TRUE(sp::kTileDeep[12] && sp::kTileGroups[12] == 1 && sp::kTileTok[12] == 128);
  EXPECT_EQ(dp::stages(128, 1, true), 8);
  EXPECT_LE(dp::smem_bytes(128, 1, true), 227 * 1024);
  EXPECT_EQ(sp::plan(1024, 1024, 8192, kH100, true, true, 13, 1).blocks(), 128);
  EXPECT_EQ(dp::stages(64, 1), 6);
  EXPECT_LE(dp::smem_bytes(64, 1, true), 227 * 1024);
  const dp::Plan deep = sp::plan(128, 4096, 4096, kH100, true, true, 9, 1);
  EXPECT_TRUE(deep.deep);
  EXPECT_EQ(deep.ctas_per_sm, 1);
  EXPECT_EQ(deep.tok, 64);
  EXPECT_TRUE(sp::plan(128, 4096, 4096, kH100, true, true).deep);
  // 256 tokens: not 64 x 64 in 256 CTAs (two per SM) but 64 x 128 in 128 (H100, bf16
  // 256 x 4096 x 4096 NN: 480 TFLOP/s against 398, docs/history.md: wgmma/small).
  const dp::Plan d256 = sp::plan(256, 4096, 4096, kH100, true, true);
  EXPECT_TRUE(d256.deep && d256.tok == 128 && d256.groups == 1 && d256.blocks() == 128);
  EXPECT_LE(sp::plan(128, 4096, 4096, kH100, true, true).blocks(), 132);
  // A batch's entries share the launch: the model counts their CTAs, the scratch holds them all.
  const dp::Plan one = sp::plan(128, 128, 4096, kH100, true, true, 3, 4);
  const dp::Plan many = sp::plan(128, 128, 4096, kH100, true, true, 3, 4, 32);
  EXPECT_EQ(many.entries, 32);
  EXPECT_EQ(dp::scratch_bytes(many), 32 * dp::scratch_bytes(one));
  EXPECT_GT(sp::cost(many, kH100), sp::cost(one, kH100));
  // The model's picks on the H100 where they were measured best (docs/history.md: wgmma/small).
  const auto pick = [](int64_t t, int64_t w, int64_t k) {
    const dp::Plan p = sp::plan(t, w, k, kH100, true, true);
    return std::make_pair(p.tok, p.splits);
  };
  EXPECT_EQ(pick(1024, 1024, 1024), std::make_pair(128, 1));  // 64 x 128: 251 TFLOP/s vs 225
  EXPECT_EQ(pick(256, 256, 256), std::make_pair(8, 1));
  EXPECT_EQ(pick(128, 128, 8192), std::make_pair(16, 8));
  EXPECT_EQ(pick(256, 4096, 14336), std::make_pair(128, 2));
  // 1536^3: 128 CTAs of 192 x 96 (three warpgroups), where 128 x 192 makes 96.
  EXPECT_EQ(pick(1536, 1536, 1536), std::make_pair(96, 1));
  // ... only for 16-bit inputs, tokens as C's rows and a plain fp32 D; else 128 x 192.
  EXPECT_EQ(sp::max_groups(Precision::BF16, false, true), 3);
  EXPECT_EQ(sp::max_groups(Precision::TF32, false, true), 2);
  EXPECT_EQ(sp::max_groups(Precision::FP16, true, true), 2);
  EXPECT_EQ(sp::max_groups(Precision::BF16, false, false), 2);
  EXPECT_EQ(sp::plan(1536, 1536, 1536, kH100, true, true, 0, 0, 1, dp::kMaxM, 2).tok, 192);
}

// tf32 with op(A) = A^T: wgmma/small transposes A while packing it, where that copy stays small
// next to the product (k <= 32 n): 1000^3 and 50 x 2000 x 2000 yes, 4096 x 64 x 4096 (a 64 MB A
// for a 64-column C) no.
// Skinny 16-bit problems from 16 columns on (33 with K-major tokens) go to wgmma/small where it
// takes them; 8 columns, and a C whose wgmma/small tiles would overfill the GPU, stay on
// wgmma/decode.
// The count of splits that fills one wave of CTAs (not a power of two), and where the model
// takes it: only priced kWaveFillMargin below its best plan in 1, 2, 4, ... splits (measured:
// docs/history.md, "Wave-filling splits").
TEST(WgmmaSmallPlan, WaveFillingSplits) {
  namespace sp = wgmma_small_plan;
  namespace dp = wgmma_decode_plan;
  EXPECT_EQ(sp::wave_splits(40, 132, 1, 64), 3);   // 2 leaves 52 SMs idle, 4 a second wave
  EXPECT_EQ(sp::wave_splits(40, 132, 2, 64), 6);
  EXPECT_EQ(sp::wave_splits(66, 132, 1, 64), 0);   // 2: a power of two, priced anyway
  EXPECT_EQ(sp::wave_splits(33, 264, 1, 64), 0);   // 8 as well
  EXPECT_EQ(sp::wave_splits(40, 264, 1, 64), 6);   // two CTAs per SM
  EXPECT_EQ(sp::wave_splits(200, 132, 1, 64), 0);  // more tiles than SMs
  EXPECT_EQ(sp::wave_splits(40, 132, 1, 2), 0);    // capped by the depth at 2
  EXPECT_EQ(sp::wave_splits(0, 132, 1, 64), 0);
  // bf16 96 x 2560 x 10240 (H200, every variant timed: 64 x 32 in 1 split 32.3 us, 64 x 128d in 3
  // 22.7, cuBLAS 20.4): 40 strips of the deep 64 x 128 tile, 3 splits.
  const dp::Plan deep3 = sp::plan(96, 2560, 10240, kH100, true, true, 0, 0, 1, sp::kMaxTileTok);
  EXPECT_TRUE(deep3.deep && deep3.tok == 128 && deep3.groups == 1);
  EXPECT_EQ(deep3.splits, 3);
  // 128 x 5120 x 5120: 128 x 128 in 3 splits is priced within the margin of the deep 64 x 128
  // tile unsplit, which measured faster (19.8 against 23.9 us): that one stays.
  const dp::Plan flat = sp::plan(128, 5120, 5120, kH100, true, true, 0, 0, 1, sp::kMaxTileTok);
  EXPECT_TRUE(flat.deep && flat.tok == 128 && flat.splits == 1);
  // Wherever the model's split count is not a power of two, it is its tile's wave count, and its
  // cost beats every power-of-two plan of every tile by the margin.
  for (int64_t tokens : {8, 48, 96, 160, 200, 256})
    for (int64_t weights : {1536, 2560, 5120, 11008})
      for (int64_t k : {1024, 4096, 10240}) {
        const dp::Plan p = sp::plan(tokens, weights, k, kH100, true, true, 0, 0, 1, sp::kMaxTileTok);
        if ((p.splits & (p.splits - 1)) == 0) continue;
        SCOPED_TRACE(testing::Message() << tokens << "x" << weights << "x" << k);
        const int w = sp::wave_splits(p.tiles(), kH100.sms * p.ctas_per_sm, 1,
                                      std::min(dp::kMaxSplits, p.num_kb / 2));
        ASSERT_GT(w, 0);
        const int kb = (p.num_kb + w - 1) / w;  // as make() spreads them: no empty split
        EXPECT_EQ(p.splits, (p.num_kb + kb - 1) / kb);
        for (int t = 1; t <= sp::kTiles; ++t)
          for (int s = 1; s <= dp::kMaxSplits; s *= 2) {
            const dp::Plan f = sp::plan(tokens, weights, k, kH100, true, true, t, s, 1, sp::kMaxTileTok);
            EXPECT_LT(sp::cost(p, kH100), (1.0 - sp::kWaveFillMargin) * sp::cost(f, kH100) + 1e-9);
          }
      }
}

TEST(WgmmaSmallPlan, TakesSkinnyFromSixteenColumns) {
  namespace sp = wgmma_small_plan;
  EXPECT_TRUE(sp::takes_skinny(2048, 32, 2048, 1, kH100, false));
  EXPECT_TRUE(sp::takes_skinny(2000, 64, 2000, 1, kH100, false));
  EXPECT_TRUE(sp::takes_skinny(2000, 64, 2000, 1, kH100, true));
  EXPECT_TRUE(sp::takes_skinny(8192, 16, 8192, 1, kH100, false));
  EXPECT_FALSE(sp::takes_skinny(2048, 32, 2048, 1, kH100, true));  // K-major tokens: decode's
  EXPECT_FALSE(sp::takes_skinny(2048, 8, 2048, 1, kH100, false));
  EXPECT_FALSE(sp::takes_skinny(65536, 32, 4096, 1, kH100, false));
}

TEST(WgmmaSmallPlan, TransposedTokensWhereTheCopyIsSmall) {
  EXPECT_TRUE(wgmma_small_plan::transposed_tokens_pay(1000, 1000));
  EXPECT_TRUE(wgmma_small_plan::transposed_tokens_pay(2000, 2000));
  EXPECT_TRUE(wgmma_small_plan::transposed_tokens_pay(128, 4096));
  EXPECT_FALSE(wgmma_small_plan::transposed_tokens_pay(64, 4096));
  EXPECT_FALSE(wgmma_small_plan::transposed_tokens_pay(100, 10000));
}

}  // namespace
}  // namespace gemmlab
