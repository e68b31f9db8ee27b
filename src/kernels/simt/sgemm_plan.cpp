// simt/sgemm's planner (sgemm_plan.h). Every threshold here was fitted to H100 measurements; the
// figures behind them are in docs/history.md ("simt/sgemm").
#include "kernels/simt/sgemm_plan.h"

#include <algorithm>
#include <climits>

#include "runtime/aligned_rows.h"

namespace gemmlab {
namespace sgemm {

// A copy (realigning or transposing) reads and writes the operand (~8 bytes per element at
// ~2.5 TB/s) plus a launch; it pays when that is under ~5% of the GEMM's own time at ~40 TFLOP/s
// (4097^3: yes; 1025^3: no, there the copy costs more than the 4-byte loads it saves).
bool worth_copying(const GemmProblem& p, int64_t rows, int64_t cols, double share) {
  const double copy_s = 8.0 * static_cast<double>(rows) * cols / 2.5e12 + 2e-6;
  const double gemm_s = 2.0 * static_cast<double>(p.m) * p.n * p.k / 40e12;
  return copy_s < share * gemm_s && rows * aligned_ld_16(cols, sizeof(float)) <= INT_MAX;
}

bool tiny_c(int64_t m, int64_t n, int64_t k) { return m <= 128 && n <= 256 && k <= kTinyK; }

bool wide_pads_columns(int64_t n) {
  const int64_t pad_wide = (n + 255) / 256 * 256 - n, pad_narrow = (n + 127) / 128 * 128 - n;
  return pad_wide - pad_narrow > n / 10;
}

// With op(B) = B^T, B's tiles take the transposing 4-byte loader; stored k x n (a transposed
// copy) they take 16-byte copies, so NT runs as NN and TT as TN. The 128 x 256 tile wins where
// its copies are cheap to issue: NN with aligned B rows, and NT / aligned TN when it fills the
// GPU unsplit over a long k loop (TT loses with it). Elsewhere the 128 x 128 tile with two blocks
// per SM hides the 4-byte copies better.
OperandPlan plan_operands(const GemmProblem& p, bool a_aligned, bool b_aligned,
                          const DeviceDesc& dev, bool copies, const Tile* forced) {
  const bool at = p.op_a == Op::T, bt = p.op_b == Op::T;
  OperandPlan pl{};
  // A thin output (n <= 64 < m) takes the thin tiles only with op(B) = B as the kernel runs it,
  // and they run it several times faster than a 128-column tile does (fp32 8192 x 16 x 768 NT:
  // 4.7 TFLOP/s unthin, 8.1 as NN; docs/history.md, cliffs): B's transposed copy (k x n, a few
  // microseconds) pays there up to half the GEMM.
  const bool thin_shape = p.m > 64 && p.n <= 64;
  pl.transpose_b = copies && bt && worth_copying(p, p.k, p.n, thin_shape ? 0.5 : 0.05);  // k x n
  pl.realign_a = copies && at && !a_aligned && worth_copying(p, p.k, p.m);   // A^T: k x m
  pl.realign_b = copies && !bt && !b_aligned && worth_copying(p, p.k, p.n);  // B: k x n
  pl.av = at && (a_aligned || pl.realign_a);
  pl.bv = pl.transpose_b || (!bt && (b_aligned || pl.realign_b));
  const bool bt_run = bt && !pl.transpose_b;  // op(B) as the tile kernel sees it
  const bool long_unsplit = p.k >= 64 * kBK && (p.m / 128) * (p.n / 256) >= dev.sms;
  const bool wide = ((!at && !bt_run && pl.bv) ||
                     (long_unsplit && ((!at && bt_run) || (at && !bt_run && pl.av && pl.bv)))) &&
                    !wide_pads_columns(p.n);
  pl.tile = wide ? Tile::k128x256 : Tile::k128x128;
  // Decode: few rows, so the 32- and 64-row tiles. A thin output: few columns, the 32- and
  // 64-column ones.
  const bool thin_ok = thin_layout(at, bt_run, pl.av);
  if (p.m <= 64)
    pl.tile = p.m <= 32 ? Tile::k32x256 : Tile::k64x256;
  else if (thin_shape && thin_ok)
    pl.tile = p.n <= 32 ? Tile::k256x32 : Tile::k256x64;
  else if (tiny_c(p.m, p.n, p.k))
    pl.tile = Tile::k32x256;
  if (forced != nullptr && (*forced != Tile::k128x256 || (!at && !bt_run && pl.bv)) &&
      (!thin_tile(*forced) || thin_ok))
    pl.tile = *forced;
  // The decode tiles' A^T takes the 4-byte loader (the 16-byte one needs 64 rows, and A is the
  // small operand there). The 256 x 32 tile copies an A with 16-byte rows 16 bytes at a time
  // into a row-major tile (A is the operand streamed there).
  if (decode_tile(pl.tile)) pl.realign_a = false, pl.av = false;
  if (a_rows_tile(pl.tile) && !at) pl.av = a_aligned;
  return pl;
}

// Cost model in k-tiles of one block: a full tile's unit costs ceil(KT/s) + 3 (pipeline fill,
// epilogue); a partial tile costs its fraction of active warps (one that keeps every warp busy,
// 127 of 128 rows, counts as full); full-tile units are issued first and the light partial ones
// fill in. An SM holding only one of the two 128 x 128 blocks it could run goes at ~60%.
// Publishing and summing partials costs ~3 units; a split must win >= 15%.
int choose_splits(int m, int n, int k, const TileShape& t, const DeviceDesc& dev) {
  const int per_sm = t.blocks_per_sm, sms = dev.sms;
  const int m_full = m / t.bm, n_full = n / t.bn;
  const double col_w = (n % t.bn) ? ceil_div(n % t.bn, t.warp_n) / double(t.warps_n()) : 0.0;
  const double row_w = (m % t.bm) ? ceil_div(m % t.bm, t.warp_m) / double(t.warps_m()) : 0.0;
  int heavy = m_full * n_full;
  double light = 0.0, light_max = 0.0;
  const auto add_partial = [&](int count, double w) {
    if (count == 0 || w == 0.0) return;
    if (w >= 1.0) {
      heavy += count;
    } else {
      light += count * w;
      light_max = std::max(light_max, w);
    }
  };
  add_partial(m_full, col_w);                                      // last tile column
  add_partial(n_full, row_w);                                      // last tile row
  add_partial(col_w > 0.0 && row_w > 0.0 ? 1 : 0, col_w * row_w);  // the corner
  if (heavy >= sms * per_sm) return 1;  // a full wave already
  const int kt = ceil_div(k, kBK);
  const auto makespan = [&](int s) {
    const double c = ceil_div(kt, s) + 3.0;
    const int units = heavy * s, per = ceil_div(units, sms);
    double time = per == 0 ? 0.0 : per * c;
    if (per_sm == 2 && units <= sms) time /= 0.6;
    const double fill = (units * c + light * s * c) / sms + light_max * c;
    return std::max(time, fill) + (s > 1 ? 3.0 : 0.0);
  };
  int best = 1;
  const double base = makespan(1);
  double best_cost = base;
  // A C smaller than one tile (no full tile) may split up to kMaxForcedSplits: its blocks are
  // light, and 64 of them left most SMs idle (fp32 64 x 64 x 65536 on the 64 x 256 tile: 64
  // splits 66 us, 128 splits 38 us; cuBLAS 33; docs/history.md, cliffs). So may a C of so few
  // tiles that kMaxSplits of each leave SMs idle (one 128 x 128 tile over k = 32768: 64 splits
  // 62 us, 128 splits 36; cuBLAS 40-44; docs/history.md, "Deep K in every op pair").
  const int cap = heavy == 0 || heavy * kMaxSplits < sms ? kMaxForcedSplits : kMaxSplits;
  for (int s = 2; s <= cap && ceil_div(kt, s) >= 4; ++s) {
    // Past 16 splits (deep k on a handful of tiles) the partial sums are charged: ~half a
    // k-tile's time per partial one block reads (a 64 KB partial of a 128 x 128 tile against
    // one k-tile's 0.5 MFLOP on one SM), 8 for its group and one per group sum (split_k.cuh:
    // split_reduce).
    const double sum = kSumPerPartial * (kSplitSumGroup + ceil_div(s, kSplitSumGroup));
    const double c = makespan(s) + (s > 16 ? sum : 0.0);
    if (c < best_cost) best = s, best_cost = c;
  }
  return best_cost < 0.85 * base ? best : 1;
}

namespace {

// A stream-k tail when the last wave of tiles would leave > 20% of the run idle (2500^3: 200
// tiles of 128 x 256 for 132 SMs; 3000^3: 288 tiles): the last full wave and the remainder are cut
// into one equal run of k-tiles per block. Only for the 128 x 256 tile on long k loops, unsplit
// (elsewhere the tail blocks' lost L2 locality costs more than the balance gains).
StreamK plan_tail(int64_t tiles, int k, const TileShape& t, const DeviceDesc& dev) {
  const int64_t slots = static_cast<int64_t>(dev.sms) * t.blocks_per_sm;
  if (t.bm != 128 || t.bn != 256 || tiles <= slots || tiles % slots == 0) return {0, 0, 0, 0, 0};
  const int64_t waves = tiles / slots, rem = tiles % slots;
  const double idle = static_cast<double>(slots - rem) / slots / (waves + 1);
  const int kt = ceil_div(k, kBK);
  const int64_t tail = slots + rem;  // the last full wave and the remainder
  if (idle <= 0.2 || tail * kt > INT_MAX) return {0, 0, 0, 0, 0};
  return stream_k_cut(static_cast<int>(tiles - tail), static_cast<int>(tail), kt,
                      static_cast<int>(slots));
}

}  // namespace

// Each tile's last block reads the other splits' partials alone: (splits - 1) tiles through one
// SM, at the end of the kernel. Slices cost every split a whole m x n write and the sum a read of
// all of them, but on every SM. So: slices when the tail's bytes times the ratio of the GPU's to
// one SM's bandwidth (~64) outweigh the slices' bytes. Fitted to H100 A/Bs on both sides (slices
// won on few tiles split 3-32 deep, lost on 144 tiles split in two: docs/history.md, simt/sgemm).
bool slices_pay(int m, int n, int splits, const TileShape& t) {
  constexpr int64_t kGpuToSm = 64;
  return (splits - 1) * int64_t{t.bm} * t.bn * kGpuToSm >= int64_t{splits} * m * n;
}

TilePlan plan_tiles(int m, int n, int k, const TileShape& t, const DeviceDesc& dev,
                    bool scratch, int forced_splits) {
  TilePlan L{};
  TileWork& w = L.work;
  w.sp = strips::make_plan(m, n, k, t.bm, t.bn, 1);
  L.grid = tile_grid(w.sp.m_main, w.sp.n_main, t.bm, t.bn);
  const int64_t tiles = static_cast<int64_t>(L.grid.m_tiles) * L.grid.n_tiles;
  // Splits share the full k-tiles (the last split also takes a partial one).
  const int kt_full = std::max(1, k / kBK);
  const int splits = tiles == 0 || !scratch ? 1
                     : forced_splits > 0  ? std::min(forced_splits, kMaxForcedSplits)
                                          : choose_splits(w.sp.m_main, w.sp.n_main, k, t, dev);
  w.per_split = ceil_div(kt_full, splits);
  w.splits = ceil_div(kt_full, w.per_split);  // every split gets >= 1 k-tile
  // Carrying fragments across k-tiles waits for one more tile up front: long loops only.
  L.deep = w.per_split >= 64;
  w.sk = scratch && w.splits == 1 && L.deep ? plan_tail(tiles, k, t, dev) : StreamK{0, 0, 0, 0, 0};
  L.loop = w.splits > 1 ? Loop::kSplit : L.deep ? Loop::kCarry : Loop::kPlain;
  // Split tiles mean a small problem that fills the SMs already: split the strips too, into
  // pieces of >= 4 strip k-tiles (128 deep), at most 8.
  if (w.splits > 1)
    w.sp = strips::make_plan(m, n, k, t.bm, t.bn,
                             std::min(8, std::max(1, ceil_div(k, strips::kKT) / 4)));
  w.sliced = w.splits > 1 && w.sp.blocks() == 0 && w.sk.ctas == 0 &&
             slices_pay(m, n, w.splits, t);
  const int64_t main_blocks = (tiles - w.sk.tiles) * w.splits;
  const int64_t blocks = main_blocks + w.sk.ctas + w.sp.blocks();
  w.main_blocks = static_cast<int>(std::min<int64_t>(main_blocks, INT_MAX));
  L.blocks = blocks > INT_MAX ? 0 : static_cast<int>(blocks);
  return L;
}

TilePlan plan_batch_tiles(int m, int n, int k, const TileShape& t, const DeviceDesc& dev,
                          int64_t entries, bool scratch, int forced_splits) {
  if (entries <= 1) return plan_tiles(m, n, k, t, dev, scratch, forced_splits);
  DeviceDesc share = dev;
  share.sms = static_cast<int>(std::max<int64_t>(1, (dev.sms + entries - 1) / entries));
  TilePlan L = plan_tiles(m, n, k, t, share, scratch, forced_splits);
  L.work.sliced = false;  // each split tile's last block sums it instead
  return L;
}

ScratchLayout scratch_layout(const TilePlan& plan, const TileShape& t) {
  const TileWork& w = plan.work;
  const size_t tile_floats = static_cast<size_t>(t.bm) * t.bn;  // one partial tile
  ScratchLayout s{};
  if (w.sliced) {  // one m x n slice per split; the region is all of C (no strips)
    const size_t mn = static_cast<size_t>(w.sp.m_main) * w.sp.n_main;
    s.tile_partials = static_cast<size_t>(w.splits) * ((mn + 3) / 4 * 4);
  } else if (w.splits > 1) {
    s.tile_partials = static_cast<size_t>(w.main_blocks) * tile_floats;
    s.tile_counters = static_cast<size_t>(w.main_blocks / w.splits) * split_counters(w.splits);
  }
  s.sk_partials = 2 * static_cast<size_t>(w.sk.tiles) * tile_floats;  // <= 2 runs per tile
  s.sk_counters = static_cast<size_t>(w.sk.tiles);
  if (w.sp.splits > 1) {
    s.strip_partials = static_cast<size_t>(w.sp.blocks()) * strips::kPartialFloats;
    s.strip_counters = static_cast<size_t>(w.sp.blocks() / w.sp.splits);
  }
  return s;
}

size_t ScratchLayout::bytes() const {
  const size_t floats = tile_partials + sk_partials + strip_partials;  // multiples of 4
  const size_t counters = tile_counters + sk_counters + strip_counters;
  return floats * sizeof(float) + counters * sizeof(unsigned long long);
}

}  // namespace sgemm
}  // namespace gemmlab
