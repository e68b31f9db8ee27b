// The planners of wgmma/03, wgmma/split_k and wgmma/decode (plan.h; wgmma/small's:
// small_plan.cpp). The figures behind each threshold are in docs/history.md.
#include "kernels/wgmma/plan.h"

#include <algorithm>
#include <cmath>

namespace gemmlab {
namespace wgmma_plan {

int k_blocks_of(int64_t k, Precision p) {
  const int elems = (p == Precision::BF16 || p == Precision::FP16) ? 64 : 32;
  return ceil_div(static_cast<int>(k), elems);
}

// The gain grows with k (1 - tiles / ctas), the cost with the contributors per tile,
// ~ctas / tiles + 1 (bf16 1024 x 1024 x 4096: 192 -> 275 TFLOP/s; 1024^3: 120 -> 92, not taken).
// One row of tiles (rows <= kBM: decode, M <= 128) is bound by streaming B, not by the tensor
// cores: with one CTA per tile, 16 of 132 SMs read it (bf16 8 x 4096 x 4096: 16 CTAs, 1.2 TB/s).
// There every CTA that brings its share of B's bytes pays, as long as runs stay >= 4 k-blocks.
bool stream_k_pays(int64_t tiles, int64_t k, int ctas, int64_t rows) {
  if (tiles >= ctas || tiles <= 0) return false;
  if (rows <= kBM && 2 * tiles <= ctas && k >= 1024) return true;
  const double fill = static_cast<double>(tiles) / ctas;
  return static_cast<double>(k) * (1.0 - fill) > 400.0 * (1.0 / fill + 1.0);
}

namespace {

// Every run spans >= 4 k-blocks (the pipeline's depth) and no tile has more than kMaxContrib
// (one row of tiles: kMaxContribOneRow) contributors: where the equal cut over every SM would
// give a tile more, runs get longer (and fewer CTAs run); else no stream-k.
StreamK plan_stream_k(bool half, int tiles, int64_t k, int num_kb, int max_ctas, int64_t rows) {
  const StreamK none{0, 0, 0, 0, 0};
  if (!half || !stream_k_pays(tiles, k, max_ctas, rows)) return none;
  // One row of tiles: fewer, longer runs. The last contributor sums the others' partials, a chain
  // of L2 round trips that outweighs the SMs gained (5 measured best of 8 / 5 / 3: history.md).
  const int cap = rows <= kBM ? kMaxContribOneRow : kMaxContrib;
  StreamK sk = stream_k_cut(0, tiles, num_kb, max_ctas);
  if (ceil_div(num_kb, sk.iters) + 1 > cap) {
    const int iters = ceil_div(num_kb, cap - 1);
    const int64_t total = static_cast<int64_t>(tiles) * num_kb;
    sk = stream_k_cut(0, tiles, num_kb, static_cast<int>((total + iters - 1) / iters));
  }
  if (sk.iters < 4 || ceil_div(num_kb, sk.iters) + 1 > cap) return none;
  return sk;
}

bool half_precision(Precision p) { return p == Precision::BF16 || p == Precision::FP16; }

}  // namespace

TileOrder tile_order(int64_t rows, int64_t cols, int bn) {
  const bool whole_rows = rows % kBM > 64 || (rows > kBM && rows <= 2 * kBM);
  const int64_t r = whole_rows && rows % kBM != 0 ? rows + (kBM - rows % kBM) : rows;
  const int64_t c = cols % bn > 8 ? cols + (bn - cols % bn) : cols;
  return {static_cast<int>(r), static_cast<int>(c)};
}

int64_t tiles_of(int64_t m, int64_t n, int bn) { return ((m + kBM - 1) / kBM) * ((n + bn - 1) / bn); }

int persistent_bn(int64_t rows, int64_t cols, Precision p, const DeviceDesc& dev, int64_t batch,
                  int want) {
  if (!half_precision(p)) return kBN;
  const int64_t wide = tiles_of(rows, cols, kBN) * batch;
  const int64_t narrow = tiles_of(rows, cols, kBNNarrow) * batch;
  if (narrow > INT32_MAX / 2) return kBN;  // the kernel's tile limit (too_many_tiles)
  if (want == kBN || want == kBNNarrow) return want;
  if (wide < dev.sms) return kBN;  // one round at most: stream-k's ground
  const auto rounds = [&](int64_t tiles) { return static_cast<double>((tiles + dev.sms - 1) / dev.sms); };
  const double cost_wide = rounds(wide) * kBN;
  const double cost_narrow = rounds(narrow) * kBNNarrow / kNarrowSpeed;
  return cost_narrow < 0.96 * cost_wide ? kBNNarrow : kBN;
}

bool transpose_a_pays(int64_t k) { return k <= 128; }

bool pairs_pay(Precision p, bool b_off_lines, int64_t tiles, const DeviceDesc& dev) {
  return half_precision(p) && b_off_lines && 2 * tiles >= dev.sms && dev.sms >= 2;
}

PersistentPlan plan_persistent(int64_t rows, int64_t cols, int64_t k, Precision p,
                               const DeviceDesc& dev, int64_t batch, int want_bn, bool pairs) {
  PersistentPlan pl{};
  pl.bn = persistent_bn(rows, cols, p, dev, batch, want_bn);
  pl.pairs = pairs && half_precision(p);
  if (pl.pairs) {
    pl.grid = tile_grid(rows, cols, 2 * kBM, pl.bn);
    pl.tiles = static_cast<int>(static_cast<int64_t>(pl.grid.m_tiles) * pl.grid.n_tiles * batch);
    pl.sk = StreamK{0, 0, 0, 0, 0};
    pl.ctas = 2 * std::min(pl.tiles, dev.sms / 2);
    return pl;
  }
  pl.grid = tile_grid(rows, cols, kBM, pl.bn);
  const int tiles = static_cast<int>(static_cast<int64_t>(pl.grid.m_tiles) * pl.grid.n_tiles * batch);
  pl.tiles = tiles;
  // Stream-k's partials are 128 x 256 tiles: only the wide tile runs it.
  pl.sk = plan_stream_k(half_precision(p) && pl.bn == kBN, tiles, k, k_blocks_of(k, p), dev.sms,
                        rows);
  pl.ctas = pl.sk.ctas > 0 ? pl.sk.ctas : std::min(tiles, dev.sms);
  return pl;
}

// Where the persistent kernel's fixed costs are not paid back (bf16, wgmma/02 vs 03: 1024^3 143
// vs 119 TFLOP/s, 1408^3 277 vs 255; but 1536^3 281 vs 311). tf32 keeps wgmma/03 everywhere.
int auto_priority(const GemmProblem& p, const DeviceDesc& dev) {
  if (half_precision(p.precision)) {
    const int64_t tiles = ((p.m + kBM - 1) / kBM) * ((p.n + kBN - 1) / kBN) * p.batch;
    if (2 * tiles <= dev.sms &&
        plan_stream_k(true, static_cast<int>(tiles), p.k, k_blocks_of(p.k, p.precision), dev.sms,
                      p.m)
                .ctas == 0)
      return 60;  // still above mma_sync/02 (50)
  }
  return 200;
}

bool pingpong_pays(int64_t m, int64_t n, int64_t k, int64_t batch, bool heavy_epilogue,
                   const DeviceDesc& dev) {
  const int64_t tiles = ((m + 127) / 128) * ((n + 127) / 128) * batch;
  if (tiles < 2 * static_cast<int64_t>(dev.sms) || k < 256) return false;  // (K < 256: not measured)
  const bool small_entries = m * n <= 1024 * 1024;
  if (k <= 512) return true;
  if (k <= 1024) return heavy_epilogue || small_entries;
  return k <= 2048 && small_entries;
}

bool slices_on_strips(int64_t m, int64_t n, int64_t k, Precision p, bool a_k_major,
                      bool b_k_major) {
  return half_precision(p) ||
         (p == Precision::TF32 && m * n < 512 * 512 &&
          (a_k_major || !b_k_major || m * k <= kMaxTransposedTf32A));
}

Slices plan_slices(int64_t m, int64_t n, int64_t k, Precision p, const DeviceDesc& dev,
                   int want, bool a_k_major, bool b_k_major) {
  const int kb = k_blocks_of(k, p);
  const int64_t kb_elems = half_precision(p) ? 64 : 32;  // a k-block: 128 bytes
  const int64_t tiles = std::max<int64_t>(tiles_of(m, n), 1);
  const int wave = static_cast<int>(std::max<int64_t>(1, dev.sms / tiles));
  // Slices on the strips kernel, whose smaller tiles fill the SMs with fewer slices: 4096 /
  // sqrt(m n) of them, within the wave (the measured best per C size, 16-bit: docs/history.md,
  // wgmma/split_k; a tf32 k-block is as many bytes and wgmma clocks as a 16-bit one).
  const int fit = slices_on_strips(m, n, k, p, a_k_major, b_k_major)
                      ? static_cast<int>(std::max(2.0, 4096.0 / std::sqrt(static_cast<double>(m) *
                                                                         static_cast<double>(n))))
                      : wave;
  const int cap = want > 0 ? std::min(want, wave) : std::min(fit, wave);
  int slices = std::max(1, std::min(cap, kb / 4));  // each slice >= 4 k-blocks
  if (slices == 1) return {1, 0, k};
  // A depth of whole k-blocks cut into equal slices: a count that leaves a shorter last slice
  // costs that slice a launch of its own after the others (bf16 64 x 512 x 8192, 22 slices: 0.015
  // ms against 16 slices' 0.010, H100: docs/history.md, wgmma/split_k), so the planner's own
  // count drops to the largest divisor of the k-blocks down to half of it.
  if (want == 0 && k % kb_elems == 0 && kb % slices != 0)
    for (int s = slices - 1; 2 * s >= slices; --s)
      if (kb % s == 0) {
        slices = s;
        break;
      }
  const int64_t ks = ((kb + slices - 1) / slices) * kb_elems;
  return {static_cast<int>(k / ks), static_cast<int>(k % ks), ks};
}

bool split_k_pays(int64_t m, int64_t n, int64_t k, int64_t batch, const DeviceDesc& dev) {
  return batch == 1 && k >= 8192 && 2 * tiles_of(m, n) <= dev.sms;
}

bool slices_lead(int64_t m, int64_t n, int64_t k, Precision p, bool a_k_major, bool b_k_major) {
  return k >= 8192 && m <= 512 && n <= 512 &&
         (half_precision(p) || a_k_major || b_k_major ||
          slices_on_strips(m, n, k, p, false, false));
}

// An MN-major operand whose 128-byte TMA box rows straddle two cache lines slows wgmma/03 far
// more than the extra sectors suggest (bf16 NN 3000^3 334 TFLOP/s against 500 for 3008^3, H100),
// and a K-major B more still (its boxes are the 256-row side: 2048 x 2048 x 3000 NT 387 against
// 650 for NN, where the K-major A has the same rows); a K-major A keeps its rows.
bool padding_pays(Precision p, int64_t m, int64_t n, int64_t k, int64_t elems, bool k_major_b) {
  if (!half_precision(p)) return false;
  const double copy_s = 2.0 * 2.0 * static_cast<double>(elems) / 2.5e12 + 3e-6;
  const double gemm_s = 2.0 * static_cast<double>(m) * n * k / 600e12;
  return copy_s < (k_major_b ? 0.5 : 0.3) * gemm_s;
}

}  // namespace wgmma_plan
namespace wgmma_decode_plan {

Mode mode_of(int64_t m, int64_t n, bool a_k_major) {
  if (m <= kMaxM && a_k_major) return Mode::Decode;
  if (n <= kMaxSkinnyN) return Mode::Skinny;
  return Mode::None;
}

Roles roles_of(Mode mode, int64_t m, int64_t n) {
  return mode == Mode::Skinny ? Roles{n, m, true} : Roles{m, n, false};
}

int tokens(int64_t m, bool xk) {
  int t = xk ? 8 : 64;
  while (t < m && t < kMaxM) t *= 2;
  return t;
}

Plan plan(int64_t m, int64_t n, int64_t k, const DeviceDesc& dev, bool scratch, int forced_splits,
          bool xk) {
  Plan p{};
  p.tok = tokens(m, xk);
  p.groups = groups(p.tok);
  p.strip = 64 * p.groups;
  p.strips = static_cast<int>((n + p.strip - 1) / p.strip);
  p.ttiles = static_cast<int>((m + p.tok - 1) / p.tok);
  p.num_kb = static_cast<int>((k + kBK - 1) / kBK);
  const int per_sm = dev.smem_per_sm > 0 ? dev.smem_per_sm / (smem_bytes(p.tok) + 1024) : 1;
  p.ctas_per_sm = std::max(1, std::min(2, per_sm));
  const int max_splits =
      scratch ? std::max(1, std::min(kMaxSplits, p.num_kb / kMinKBlocks)) : 1;
  int best = 1;
  if (forced_splits > 0) {
    best = std::min(forced_splits, max_splits);
  } else {
    // Measured (H100, bf16 decode suite, every split timed: docs/history.md): the strips' CTAs
    // stream best each as deep as it can be, and splits pay only to bring idle SMs in. One
    // consumer warpgroup (<= 32 tokens, two CTAs per SM): up to one CTA per SM, each split still
    // >= 64 stages deep (1 x 4096 x 4096: 64 strips unsplit 16.0 us, in 2 / 4 splits 17.8 / 19.2;
    // 1 x 4096 x 14336 NT: 2 splits 45.4, unsplit 48.1). Two (>= 64 tokens, the SM's whole ring
    // to one CTA): up to two thirds of the SMs, >= 16 stages deep (128 x 8192 x 8192: 64 strips
    // unsplit 52.3 us, 2 splits 56.6; 128 x 4096 x 4096: 2 splits 23.7, 4 splits 25.5; H200, tf32
    // 48 x 5120 x 4096 NN: 40 strips unsplit 47.7, 2 splits 30.1, cuBLAS 31.2).
    // Few strips (at most 40% of the SMs: a small weight) split down to 16 k-blocks (H200, every
    // split timed, 2026-11-28 18:19 UTC, docs/history.md "Few strips"): bf16 NN 4 x 2048 x 6144,
    // 32 strips, 20.1 us unsplit, 14.0 in 4 splits (cuBLAS 11.6); 16 x 1024 x 4096 15.1 -> 11.3
    // (8.9); 4 x 3072 x 3072 12.4 -> 11.6 in 2 (11.1); but 4 x 1536 x 1536 (24 k-blocks) stays
    // whole (8.2, in 2 splits 9.0; cuBLAS 7.3).
    const bool few = 5 * static_cast<int64_t>(p.tiles()) <= 2 * static_cast<int64_t>(dev.sms);
    const int min_kb = p.groups == 1 && !few ? 64 : 16;
    const int64_t ctas = p.groups == 1 ? std::max(1, dev.sms) : std::max(1, 2 * dev.sms / 3);
    while (best < max_splits && static_cast<int64_t>(p.tiles()) * (best + 1) <= ctas &&
           p.num_kb / (best + 1) >= min_kb)
      ++best;
  }
  p.kb_per_split = (p.num_kb + best - 1) / best;
  p.splits = (p.num_kb + p.kb_per_split - 1) / p.kb_per_split;  // no empty split
  return p;
}

size_t scratch_bytes(const Plan& p) {
  if (p.splits <= 1) return 0;
  return static_cast<size_t>(p.blocks()) * p.entries * p.strip * p.tok * sizeof(float) +
         static_cast<size_t>(p.tiles()) * p.entries * split_counters(p.splits) *
             sizeof(unsigned long long);
}

bool auto_takes(int64_t m, int64_t n, int64_t k, int64_t batch, bool a_k_major, bool tf32) {
  if (batch != 1) return false;
  if (mode_of(m, n, a_k_major) == Mode::Skinny) return m >= 1024 && k >= 1024;
  return m <= (tf32 ? 64 : 32) && a_k_major;
}

}  // namespace wgmma_decode_plan

}  // namespace gemmlab
