// wgmma/03's planner and wgmma/split_k's slices, on the CPU: the persistent grid and its
// stream-k cut, decode rows, batches, `auto` priority and the depth slices, on a 132-SM (H100
// SXM) and a 108-SM (A100) device description. No GPU involved: these run in CI.
#include <algorithm>
#include <cstdint>

#include <gtest/gtest.h>

#include "kernels/wgmma/host.h"
#include "kernels/wgmma/plan.h"
#include "plan_fixtures.h"

namespace gemmlab {
namespace {


TEST(WgmmaPlan, PersistentGridAndStreamK) {
  for (const DeviceDesc& dev : {kH100, kA100})
    for (const Dims& d : shapes())
      for (Precision p : {Precision::TF32, Precision::BF16, Precision::FP16}) {
        SCOPED_TRACE(testing::Message() << d.m << "x" << d.n << "x" << d.k << " "
                                        << precision_name(p) << " sms=" << dev.sms);
        const wgmma_plan::PersistentPlan pl = wgmma_plan::plan_persistent(d.m, d.n, d.k, p, dev);
        EXPECT_TRUE(pl.bn == wgmma_plan::kBN || (pl.bn == wgmma_plan::kBNNarrow && p != Precision::TF32));
        EXPECT_EQ(pl.grid.n_tiles, (d.n + pl.bn - 1) / pl.bn);
        const int tiles = pl.grid.m_tiles * pl.grid.n_tiles;
        EXPECT_EQ(pl.tiles, tiles);
        EXPECT_LE(pl.ctas, dev.sms);
        EXPECT_GE(pl.ctas, 1);
        if (pl.sk.ctas == 0) {
          EXPECT_EQ(pl.ctas, std::min(tiles, dev.sms));
          continue;
        }
        EXPECT_NE(p, Precision::TF32) << "tf32 never runs stream-k";
        EXPECT_LT(tiles, dev.sms);
        EXPECT_GE(pl.sk.iters, 4);
        EXPECT_LE((pl.sk.kt + pl.sk.iters - 1) / pl.sk.iters + 1, wgmma_plan::kMaxContrib);
        EXPECT_EQ(pl.sk.kt, wgmma_plan::k_blocks_of(d.k, p));
        EXPECT_EQ(pl.ctas, pl.sk.ctas);
      }
}

// A partial last tile row or column is walked in the grouped order where it costs a whole tile
// (rows past 64, columns past 8), and left to the end (heavy-first) where it is cheap.
TEST(WgmmaPlan, CostlyPartialTilesStayInTheGroupedOrder) {
  using wgmma_plan::tile_order;
  EXPECT_EQ(tile_order(200, 28672).rows, 256) << "72 rows: both consumer warpgroups work";
  EXPECT_EQ(tile_order(200, 28672).cols, 28672);
  EXPECT_EQ(tile_order(192, 4096).rows, 256) << "a second row of tiles: B streamed once";
  EXPECT_EQ(tile_order(129, 4096).rows, 256);
  EXPECT_EQ(tile_order(320, 4096).rows, 320) << "64 rows past the full tiles: one warpgroup idles";
  EXPECT_EQ(tile_order(4097, 4097).rows, 4097);
  EXPECT_EQ(tile_order(4097, 4097).cols, 4097) << "one column: m64n8";
  EXPECT_EQ(tile_order(4096, 4104).cols, 4104) << "8 columns: m64n8";
  EXPECT_EQ(tile_order(4096, 4105).cols, 4352);
  EXPECT_EQ(tile_order(3000, 3000).rows, 3000);
  EXPECT_EQ(tile_order(3000, 3000).cols, 3072);
  EXPECT_EQ(tile_order(3000, 3000, wgmma_plan::kBNNarrow).cols, 3072) << "16 tiles of 192";
  EXPECT_EQ(tile_order(3000, 3848, wgmma_plan::kBNNarrow).cols, 3848) << "8 columns: m64n8";
  EXPECT_EQ(tile_order(2500, 2500).rows, 2560);
  EXPECT_EQ(tile_order(128, 256).rows, 128);
  EXPECT_EQ(tile_order(128, 256).cols, 256);
  EXPECT_EQ(tile_order(1, 8).rows, 1);
  // Whole tiles either way: the same tiles, only their order changes.
  for (int64_t r : {1, 64, 65, 127, 128, 200, 1023, 2500})
    for (int64_t c : {1, 8, 9, 255, 256, 3000}) {
      const wgmma_plan::TileOrder o = tile_order(r, c);
      EXPECT_EQ((o.rows + 127) / 128, (r + 127) / 128);
      EXPECT_EQ((o.cols + 255) / 256, (c + 255) / 256);
      EXPECT_GE(o.rows, r);
      EXPECT_GE(o.cols, c);
    }
}

// The 128 x 192 tile (16-bit) where the 128 x 256 tiles leave most of the last round of SMs idle:
// 3000^2 and 3072^2 are 288 tiles of 128 x 256 (2.18 rounds of 132 SMs: three) and 384 of
// 128 x 192 (2.91: three rounds of three-quarter tiles). Where the wide tiles fill their rounds
// as well, or run stream-k (fewer tiles than SMs), they stay; tf32 has only the wide tile.
TEST(WgmmaPlan, NarrowTileWhereItFillsTheLastRound) {
  using wgmma_plan::kBN;
  using wgmma_plan::kBNNarrow;
  using wgmma_plan::persistent_bn;
  for (int64_t s : {3000, 3072}) {
    EXPECT_EQ(persistent_bn(s, s, Precision::BF16, kH100), kBNNarrow) << s;
    EXPECT_EQ(persistent_bn(s, s, Precision::FP16, kH100), kBNNarrow) << s;
    EXPECT_EQ(persistent_bn(s, s, Precision::TF32, kH100), kBN) << s;
    const auto pl = wgmma_plan::plan_persistent(s, s, s, Precision::BF16, kH100);
    EXPECT_EQ(pl.bn, kBNNarrow);
    EXPECT_EQ(pl.tiles, 24 * 16);
    EXPECT_EQ(pl.ctas, kH100.sms);
    EXPECT_EQ(pl.sk.ctas, 0);
  }
  for (int64_t s : {1024, 2048, 2500, 4096, 5000, 8192})
    EXPECT_EQ(persistent_bn(s, s, Precision::BF16, kH100), kBN) << s;
  EXPECT_EQ(persistent_bn(512, 512, Precision::BF16, kH100, 64), kBN) << "64 x 512^2: 3.9 rounds";
  EXPECT_EQ(persistent_bn(4096, 14336, Precision::BF16, kH100), kBN);
  // On 108 SMs 3072^2's 288 wide tiles are 2.67 rounds, 384 narrow ones 3.56: wide.
  EXPECT_EQ(persistent_bn(3072, 3072, Precision::BF16, kA100), kBN);
  // A forced tile (a plan variant) holds, but tf32 has none but the wide one.
  EXPECT_EQ(persistent_bn(4096, 4096, Precision::BF16, kH100, 1, kBNNarrow), kBNNarrow);
  EXPECT_EQ(persistent_bn(3072, 3072, Precision::BF16, kH100, 1, kBN), kBN);
  EXPECT_EQ(persistent_bn(3072, 3072, Precision::TF32, kH100, 1, kBNNarrow), kBN);
  // The narrow tile never runs stream-k: forced on a small deep grid, its tiles run one by one.
  const auto forced = wgmma_plan::plan_persistent(1024, 1024, 4096, Precision::BF16, kH100, 1,
                                                  kBNNarrow);
  EXPECT_EQ(forced.bn, kBNNarrow);
  EXPECT_EQ(forced.tiles, 8 * 6);
  EXPECT_EQ(forced.sk.ctas, 0);
  EXPECT_EQ(forced.ctas, 48);
}

// CTA pairs (2 x 1 clusters) where B's rows are 16-byte but not 128-byte aligned, instead of
// packing B; 16-bit only, and only over at least one tile per SM. Their plan: tiles of 256 rows,
// no stream-k, two CTAs per pair tile up to one per SM.
TEST(WgmmaPlan, PairsWhereBRowsAreOffLines) {
  EXPECT_TRUE(wgmma_plan::pairs_pay(Precision::BF16, true, 288, kH100));
  EXPECT_TRUE(wgmma_plan::pairs_pay(Precision::FP16, true, 132, kH100));
  EXPECT_FALSE(wgmma_plan::pairs_pay(Precision::BF16, false, 288, kH100)) << "aligned B: single";
  EXPECT_TRUE(wgmma_plan::pairs_pay(Precision::BF16, true, 128, kH100)) << "2048 x 2048 tiles";
  EXPECT_FALSE(wgmma_plan::pairs_pay(Precision::BF16, true, 60, kH100)) << "few tiles";
  EXPECT_FALSE(wgmma_plan::pairs_pay(Precision::TF32, true, 288, kH100));
  const auto pl = wgmma_plan::plan_persistent(3000, 3000, 3000, Precision::BF16, kH100, 1, 0, true);
  EXPECT_TRUE(pl.pairs);
  EXPECT_EQ(pl.bn, wgmma_plan::kBNNarrow);
  EXPECT_EQ(pl.grid.m_tiles, 12);
  EXPECT_EQ(pl.tiles, 12 * 16);
  EXPECT_EQ(pl.ctas, kH100.sms);
  EXPECT_EQ(pl.sk.ctas, 0);
  const auto small = wgmma_plan::plan_persistent(300, 1000, 4096, Precision::BF16, kH100, 1, 0, true);
  EXPECT_EQ(small.tiles, 2 * 4);
  EXPECT_EQ(small.ctas, 16);
  EXPECT_EQ(small.sk.ctas, 0) << "pairs never run stream-k";
  EXPECT_FALSE(wgmma_plan::plan_persistent(3000, 3000, 3000, Precision::TF32, kH100, 1, 0, true).pairs);
}

// Which B the pairs read in place: rows 16-byte aligned for TMA but not whole 128-byte lines.
TEST(WgmmaPlan, BRowsOffLines) {
  GemmProblem p;
  p.precision = Precision::BF16, p.m = p.n = p.k = 3000, p.ldb = 3000;  // 6000-byte rows
  p.B = reinterpret_cast<const void*>(uintptr_t{1} << 20);
  EXPECT_TRUE(sm90::b_rows_off_lines(p));
  p.ldb = 3008;  // 6016 bytes: whole lines
  EXPECT_FALSE(sm90::b_rows_off_lines(p));
  p.B = reinterpret_cast<const void*>((uintptr_t{1} << 20) + 16);  // base 16 bytes off a line
  EXPECT_TRUE(sm90::b_rows_off_lines(p));
  p.ldb = 3003;  // rows not 16-byte aligned: packed for TMA anyway
  EXPECT_FALSE(sm90::b_rows_off_lines(p));
  p.ldb = 3000, p.batch = 2, p.stride_b = 3000 * 3000 + 4;  // entries 8 bytes off: packed
  EXPECT_FALSE(sm90::b_rows_off_lines(p));
  p.stride_b = 3000 * 3000 + 8;
  EXPECT_TRUE(sm90::b_rows_off_lines(p));
}

TEST(WgmmaPlan, SmallDeepGridsRunStreamK) {
  // bf16 1024 x 1024 x 4096: 32 tiles, 64 k-blocks each -> 128 CTAs on an H100 (the GPU test
  // pins the same launch down).
  const auto pl = wgmma_plan::plan_persistent(1024, 1024, 4096, Precision::BF16, kH100);
  EXPECT_EQ(pl.ctas, 128);
  // 1024^3 is too shallow; 4096^3 fills the GPU.
  EXPECT_EQ(wgmma_plan::plan_persistent(1024, 1024, 1024, Precision::BF16, kH100).sk.ctas, 0);
  EXPECT_EQ(wgmma_plan::plan_persistent(4096, 4096, 4096, Precision::BF16, kH100).sk.ctas, 0);
  EXPECT_FALSE(wgmma_plan::stream_k_pays(200, 4096, 132));
  EXPECT_TRUE(wgmma_plan::stream_k_pays(32, 4096, 132));
}

TEST(WgmmaPlan, DecodeRowsStreamB) {
  // bf16 M x 4096 x 4096 (one row of 16 tiles, 64 k-blocks each): the model alone says no
  // (16 CTAs), the one-row rule spreads B over the SMs; 5 contributors per tile at most, so the
  // runs are 16 k-blocks: 64 CTAs.
  EXPECT_FALSE(wgmma_plan::stream_k_pays(16, 4096, 132));
  for (int64_t m : {1, 8, 64, 128}) {
    SCOPED_TRACE(m);
    const auto pl = wgmma_plan::plan_persistent(m, 4096, 4096, Precision::BF16, kH100);
    EXPECT_EQ(pl.sk.iters, 16);
    EXPECT_EQ(pl.ctas, 64);
    EXPECT_LE((pl.sk.kt + pl.sk.iters - 1) / pl.sk.iters + 1, wgmma_plan::kMaxContribOneRow);
  }
  // Two rows of tiles keep the model (no at this depth); too shallow (k < 1024) or too many tiles
  // (more than the SMs) neither.
  EXPECT_EQ(wgmma_plan::plan_persistent(256, 4096, 1024, Precision::BF16, kH100).sk.ctas, 0);
  EXPECT_EQ(wgmma_plan::plan_persistent(8, 4096, 512, Precision::BF16, kH100).sk.ctas, 0);
  EXPECT_EQ(wgmma_plan::plan_persistent(8, 40000, 4096, Precision::BF16, kH100).sk.ctas, 0);
  EXPECT_EQ(wgmma_plan::plan_persistent(8, 4096, 4096, Precision::TF32, kH100).sk.ctas, 0);
}

// A strided batch is one sequence of tiles, entry after entry: its tiles count every entry, and a
// batch of small deep problems runs stream-k across the entries.
TEST(WgmmaPlan, BatchesAreOneSequenceOfTiles) {
  // 64 x 512^3: 8 tiles an entry, 512 in all: every SM busy, no stream-k.
  const auto big = wgmma_plan::plan_persistent(512, 512, 512, Precision::BF16, kH100, 64);
  EXPECT_EQ(big.tiles, 512);
  EXPECT_EQ(big.ctas, kH100.sms);
  EXPECT_EQ(big.sk.ctas, 0);
  // 32 x (128 x 128 x 4096): one tile an entry, 64 k-blocks deep -> stream-k over the 32 tiles.
  const auto deep = wgmma_plan::plan_persistent(128, 128, 4096, Precision::BF16, kH100, 32);
  EXPECT_EQ(deep.tiles, 32);
  EXPECT_GT(deep.sk.ctas, 32);
  EXPECT_LE(deep.sk.ctas, kH100.sms);
  EXPECT_EQ(deep.sk.tiles, 32);
  EXPECT_GE(deep.sk.iters, 4);
  // A batch of one is the plain plan.
  const auto one = wgmma_plan::plan_persistent(1024, 1024, 4096, Precision::BF16, kH100, 1);
  EXPECT_EQ(one.ctas, 128);
  // The auto priority sees the whole batch: 32 small deep entries keep wgmma/03 first.
  GemmProblem p = problem({128, 128, 4096});
  p.precision = Precision::BF16, p.batch = 32;
  EXPECT_EQ(wgmma_plan::auto_priority(p, kH100), 200);
}


TEST(WgmmaPlan, AutoPriorityStepsBackOnSmallShallow16BitGrids) {
  GemmProblem p = problem({1024, 1024, 1024});
  p.precision = Precision::BF16;
  EXPECT_EQ(wgmma_plan::auto_priority(p, kH100), 60);
  p.k = 4096;  // deep enough for stream-k
  EXPECT_EQ(wgmma_plan::auto_priority(p, kH100), 200);
  p.m = p.n = p.k = 4096;
  EXPECT_EQ(wgmma_plan::auto_priority(p, kH100), 200);
  p.m = p.n = p.k = 1024, p.precision = Precision::TF32;
  EXPECT_EQ(wgmma_plan::auto_priority(p, kH100), 200);
}


// wgmma/split_k: the slices cover the depth in whole k-blocks, each at least 4 deep unless there
// is one; their copies of the tiles fit one wave; split_k_pays only for deep, few-tile problems.
TEST(WgmmaPlan, SplitKSlicesCoverTheDepthInOneWave) {
  for (const DeviceDesc& dev : {kH100, kA100})
    for (Precision p : {Precision::BF16, Precision::TF32})
      for (const Dims& d : shapes()) {
        SCOPED_TRACE(testing::Message() << d.m << "x" << d.n << "x" << d.k << " sms=" << dev.sms);
        const wgmma_plan::Slices sl = wgmma_plan::plan_slices(d.m, d.n, d.k, p, dev);
        const int64_t kb = p == Precision::BF16 ? 64 : 32;
        EXPECT_GE(sl.full, 1);
        EXPECT_EQ(sl.full * sl.ks + sl.rest, d.k);
        EXPECT_LT(sl.rest, sl.ks);
        if (sl.count() > 1) {
          EXPECT_EQ(sl.ks % kb, 0);
          EXPECT_GE(sl.ks, 4 * kb);
          const int64_t tiles = ((d.m + 127) / 128) * ((d.n + 255) / 256);
          EXPECT_LE(sl.full * tiles, dev.sms) << "more than one wave";
        }
      }
  // One 128 x 128 tile over k = 131072 (H100): tf32 with op(A) = A^T (slices on wgmma/03) 128
  // slices of 1024, tf32 op(A) = A and bf16 (on the strips kernel) 4096 / 128 = 32 of 4096 and
  // 2048 elements; 32 tiles of 1024 x 1024: 4 slices of 32768 (the wave and 4096 / 1024 agree);
  // 512 x 512 in bf16: 8.
  using wgmma_plan::slices_on_strips;
  EXPECT_FALSE(slices_on_strips(128, 128, 131072, Precision::TF32, false)) << "TT, a deep A";
  EXPECT_FALSE(slices_on_strips(40, 40, 40000, Precision::TF32, false)) << "TT, 1.6 M of A";
  EXPECT_TRUE(slices_on_strips(128, 128, 8192, Precision::TF32, false)) << "TT, 1 M of A";
  EXPECT_TRUE(slices_on_strips(128, 128, 131072, Precision::TF32, false, false)) << "TN";
  EXPECT_FALSE(slices_on_strips(512, 512, 8192, Precision::TF32, false, false));
  EXPECT_TRUE(slices_on_strips(128, 128, 131072, Precision::TF32, true));
  EXPECT_FALSE(slices_on_strips(512, 512, 8192, Precision::TF32, true)) << "wgmma/03's";
  EXPECT_TRUE(slices_on_strips(1024, 1024, 131072, Precision::FP16, false));
  const wgmma_plan::Slices one =
      wgmma_plan::plan_slices(128, 128, 131072, Precision::TF32, kH100, 0, false);
  EXPECT_EQ(one.full, 128);
  EXPECT_EQ(one.ks, 1024);
  const wgmma_plan::Slices one32 = wgmma_plan::plan_slices(128, 128, 131072, Precision::TF32, kH100);
  EXPECT_EQ(one32.full, 32);
  EXPECT_EQ(one32.ks, 4096);
  const wgmma_plan::Slices one16 = wgmma_plan::plan_slices(128, 128, 131072, Precision::BF16, kH100);
  EXPECT_EQ(one16.full, 32);
  EXPECT_EQ(one16.ks, 4096);
  EXPECT_EQ(wgmma_plan::plan_slices(512, 512, 32768, Precision::BF16, kH100).count(), 8);
  EXPECT_EQ(wgmma_plan::plan_slices(1024, 1024, 131072, Precision::BF16, kH100).count(), 4);
  // The graph / two-stream test of split_k.cu's three slice sums (test_large_shapes_gpu.cpp)
  // relies on these counts: 8..31 slices (4 elements a thread), 2..31 with m n odd (one), 32 or
  // more (in groups).
  const int mid = wgmma_plan::plan_slices(256, 256, 8192, Precision::BF16, kH100).count();
  const int odd = wgmma_plan::plan_slices(505, 255, 9000, Precision::FP16, kH100).count();
  EXPECT_TRUE(mid >= 8 && mid < 32) << mid;
  EXPECT_TRUE(odd >= 2 && odd < 32) << odd;
  EXPECT_GE(wgmma_plan::plan_slices(128, 128, 32768, Precision::BF16, kH100).count(), 32);
  // Whole k-blocks cut into equal slices where a divisor lies within half the count: 64 x 512 x
  // 8192 (128 k-blocks) takes 16 slices, not 22 and a shorter 23rd launched apart; 16 x 512 x
  // 16384 32, not 43. A depth of partial k-blocks keeps its count (505 x 255 x 9000 above).
  for (const int64_t m : {64, 16}) {
    const int64_t k = m == 64 ? 8192 : 16384;
    const wgmma_plan::Slices sl = wgmma_plan::plan_slices(m, 512, k, Precision::BF16, kH100);
    EXPECT_EQ(sl.rest, 0) << m;
    EXPECT_EQ(sl.count(), m == 64 ? 16 : 32) << m;
  }
  // A slice count asked for (gemm-tune's variants) is honoured below the wave, capped at it.
  EXPECT_EQ(wgmma_plan::plan_slices(128, 128, 131072, Precision::BF16, kH100, 32).count(), 32);
  EXPECT_EQ(wgmma_plan::plan_slices(1024, 1024, 131072, Precision::BF16, kH100, 64).count(), 4);
  EXPECT_EQ(wgmma_plan::plan_slices(128, 128, 1024, Precision::BF16, kH100, 8).count(), 4)
      << "4 k-blocks per slice at least";
  EXPECT_TRUE(wgmma_plan::split_k_pays(128, 128, 131072, 1, kH100));
  EXPECT_FALSE(wgmma_plan::split_k_pays(128, 128, 4096, 1, kH100)) << "shallow";
  EXPECT_FALSE(wgmma_plan::split_k_pays(4096, 4096, 131072, 1, kH100)) << "512 tiles";
  EXPECT_FALSE(wgmma_plan::split_k_pays(128, 128, 131072, 2, kH100)) << "a batch";
}

// The slices lead over a C of at most 512 x 512 from k = 8192, in every op pair for 16-bit
// inputs, and for tf32 unless both operands are MN-major (TN) and C too large for the strips.
TEST(WgmmaPlan, SlicesLeadDeepKOverSmallC) {
  using wgmma_plan::slices_lead;
  for (Precision p : {Precision::BF16, Precision::FP16})
    for (bool ak : {false, true})
      for (bool bk : {false, true}) {
        EXPECT_TRUE(slices_lead(128, 128, 8192, p, ak, bk));
        EXPECT_TRUE(slices_lead(40, 40, 40000, p, ak, bk));
        EXPECT_TRUE(slices_lead(512, 192, 10240, p, ak, bk));
        EXPECT_FALSE(slices_lead(128, 128, 8191, p, ak, bk)) << "shallow";
        EXPECT_FALSE(slices_lead(768, 768, 8192, p, ak, bk)) << "wgmma/small's tiles win";
        EXPECT_FALSE(slices_lead(64, 4096, 14336, p, ak, bk)) << "a decode row";
      }
  EXPECT_TRUE(slices_lead(256, 256, 16384, Precision::TF32, true, false));   // NN
  EXPECT_TRUE(slices_lead(256, 256, 16384, Precision::TF32, false, true));   // TT
  EXPECT_TRUE(slices_lead(256, 256, 16384, Precision::TF32, false, false)) << "TN, on strips";
  EXPECT_FALSE(slices_lead(512, 512, 16384, Precision::TF32, false, false)) << "TN on wgmma/03";
}

// wgmma/pingpong over wgmma/03 where its epilogue, hidden under the other warpgroup's main loop,
// is a large share of a tile and both warpgroups of every SM have tiles (the measured cases of
// docs/history.md: wgmma/pingpong).
TEST(WgmmaPlan, PingpongPaysForShortKOverManyTiles) {
  using wgmma_plan::pingpong_pays;
  EXPECT_TRUE(pingpong_pays(512, 512, 512, 64, true, kH100));
  EXPECT_TRUE(pingpong_pays(512, 512, 512, 64, false, kH100));
  EXPECT_TRUE(pingpong_pays(4096, 4096, 512, 1, false, kH100));
  EXPECT_TRUE(pingpong_pays(256, 256, 256, 128, false, kH100));
  EXPECT_TRUE(pingpong_pays(1024, 1024, 1024, 16, false, kH100)) << "1024^2 entries, bf16 D";
  EXPECT_TRUE(pingpong_pays(1024, 1024, 2048, 16, false, kH100)) << "1024^2 entries, K = 2048";
  EXPECT_TRUE(pingpong_pays(8192, 8192, 1024, 1, true, kH100)) << "K = 1024, fp32 D or GELU";
  EXPECT_FALSE(pingpong_pays(8192, 8192, 1024, 1, false, kH100)) << "K = 1024, plain bf16 D, large";
  EXPECT_FALSE(pingpong_pays(4096, 4096, 2048, 1, true, kH100)) << "K = 2048, large entries";
  EXPECT_FALSE(pingpong_pays(1024, 1024, 4096, 16, true, kH100)) << "K = 4096";
  EXPECT_FALSE(pingpong_pays(4096, 4096, 4096, 1, false, kH100));
  EXPECT_FALSE(pingpong_pays(2048, 2048, 512, 1, true, kH100)) << "256 tiles: < 2 per SM";
  EXPECT_FALSE(pingpong_pays(768, 768, 768, 1, true, kH100)) << "36 tiles";
  EXPECT_FALSE(pingpong_pays(4096, 4096, 64, 1, true, kH100)) << "K below the measured range";
}

// Padding 16-byte-aligned rows to 128 bytes (wgmma/host.cu): 16-bit only, where the copy is a
// small share of the GEMM: 0.3 for an MN-major operand, 0.5 for a K-major B.
TEST(WgmmaPlan, RowPaddingPaysOnlyAgainstALargeGemm) {
  using wgmma_plan::padding_pays;
  const Precision bf = Precision::BF16;
  EXPECT_TRUE(padding_pays(bf, 3000, 3000, 3000, 3000 * 3000, false));
  EXPECT_TRUE(padding_pays(bf, 3000, 3000, 3000, 3000 * 3000, true));
  EXPECT_TRUE(padding_pays(Precision::FP16, 5000, 5000, 5000, 5000 * 5000, true));
  // 2048 x 2048 x 3000: a copy of B is ~0.31 of the GEMM: a K-major B only.
  EXPECT_FALSE(padding_pays(bf, 2048, 2048, 3000, 3000 * 2048, false));
  EXPECT_TRUE(padding_pays(bf, 2048, 2048, 3000, 3000 * 2048, true));
  EXPECT_TRUE(padding_pays(bf, 2048, 2048, 1000, 1000 * 2048, true));  // Sanitize.ScratchPaths'
  EXPECT_FALSE(padding_pays(bf, 2048, 1024, 1000, 1000 * 1024, true));
  // Decode rows never: the weight's copy would cost more than its GEMV.
  EXPECT_FALSE(padding_pays(bf, 16, 4104, 4104, 4104 * 4104, true));
  EXPECT_FALSE(padding_pays(bf, 512, 4104, 4104, 4104 * 4104, true));
  EXPECT_FALSE(padding_pays(Precision::TF32, 5000, 5000, 5000, 5000 * 5000, true));
  EXPECT_FALSE(padding_pays(Precision::FP32, 5000, 5000, 5000, 5000 * 5000, false));
}

// tf32 with op(A) = A^T: wgmma/03 transposes A while packing it up to K = 128, and loads it into
// registers beyond.
TEST(WgmmaPlan, Tf32TransposedAOnShortK) {
  EXPECT_TRUE(wgmma_plan::transpose_a_pays(8));
  EXPECT_TRUE(wgmma_plan::transpose_a_pays(128));
  EXPECT_FALSE(wgmma_plan::transpose_a_pays(129));
  EXPECT_FALSE(wgmma_plan::transpose_a_pays(200));
  EXPECT_FALSE(wgmma_plan::transpose_a_pays(4096));
}

}  // namespace
}  // namespace gemmlab
