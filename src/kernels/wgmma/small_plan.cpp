// The planner of wgmma/small (plan.h: wgmma_small_plan): its tiles, the cost model that picks a
// tile and depth splits, and `auto`'s rules for which problems it takes. The figures behind each
// threshold are in docs/history.md (wgmma/small).
#include "kernels/wgmma/plan.h"

#include <algorithm>
#include <cmath>

namespace gemmlab {

namespace wgmma_small_plan {

const char* const kTileNames[kTiles + 1] = {"64x8",    "64x16",   "64x32", "128x64", "128x128",
                                            "128x256", "64x64",   "128x192", "64x64d", "64x8d",
                                            "64x16d",  "64x32d",  "64x128d", "192x96",  "128x320",
                                            "128x208", nullptr};

Roles roles_of(int64_t m, int64_t n, bool a_k_major, bool b_k_major, bool tf32) {
  if (tf32) return !a_k_major && 4 * n <= m ? Roles{true, true, n, m} : Roles{false, true, m, n};
  if (a_k_major) return {false, true, m, n};
  return {true, b_k_major, n, m};
}

bool tokens_transposed(const Roles& r, bool a_k_major, bool b_k_major, bool tf32) {
  return tf32 && (r.skinny ? !b_k_major : !a_k_major);
}

namespace {
// The model's machine: wgmma's 16-bit rate per SM (the H100's), the L2 -> SM bytes one SM and the
// whole chip take per clock, the clocks of a tile's start and epilogue and of a split's
// hand-over, and the bytes per clock at which a tile's last split sums the partials. Not
// measured one by one: fitted so that the model's pick is the fastest of the (tile, splits)
// variants measured on the H100 (bf16 small and deep-k suites, decode rows of 128 and 256, 29
// shapes, 2026-11-24 17:22 UTC): its pick's time within 2% of the best on geometric mean, 12% at
// worst; on the same shapes re-measured after the staged epilogue (18:04 UTC,
// docs/results/h100-small-variants.txt) within 1.4%, 12% at worst. gemm-tune's table corrects
// the choices where they miss.
constexpr double kFmaPerClk = 2048, kSmBytesPerClk = 48, kL2BytesPerClk = 6000;
constexpr double kFixedClk = 1000, kSyncClk = 1500, kPartialBytesPerClk = 16;
constexpr double kDeepRing = 0.9;  // the deep ring's streaming time against the two-CTA ring's

dp::Plan make(int64_t tokens, int64_t weights, int64_t k, const DeviceDesc& dev, int tok,
              int groups, bool deep, int splits, int entries) {
  dp::Plan p{};
  p.entries = entries;
  p.deep = deep;
  p.tok = tok;
  p.groups = groups;
  p.strip = 64 * p.groups;
  p.strips = static_cast<int>((weights + p.strip - 1) / p.strip);
  p.ttiles = static_cast<int>((tokens + tok - 1) / tok);
  p.num_kb = static_cast<int>((k + dp::kBK - 1) / dp::kBK);
  const int per_sm =
      dev.smem_per_sm > 0 ? dev.smem_per_sm / (dp::smem_bytes(tok, groups, deep) + 1024) : 1;
  p.ctas_per_sm = std::max(1, std::min(2, per_sm));
  p.kb_per_split = (p.num_kb + splits - 1) / splits;
  p.splits = (p.num_kb + p.kb_per_split - 1) / p.kb_per_split;  // no empty split
  return p;
}
}  // namespace

double cost(const dp::Plan& p, const DeviceDesc& dev) {
  const double sms = std::max(1, dev.sms);
  const double ctas = static_cast<double>(p.blocks()) * p.entries;
  const double slots = sms * p.ctas_per_sm;
  const double waves = std::ceil(ctas / slots);
  const double sharing = std::min<double>(p.ctas_per_sm, std::ceil(ctas / sms));  // CTAs per SM
  const double mma = 64.0 * p.groups * p.tok * dp::kBK / kFmaPerClk;
  const double load = dp::stage_bytes(p.tok, p.groups) / kSmBytesPerClk;
  const double sm = waves * p.kb_per_split * sharing * std::max(mma, load);
  const double l2 = ctas * p.kb_per_split * dp::stage_bytes(p.tok, p.groups) / kL2BytesPerClk;
  const double partial = 4.0 * p.strip * p.tok / kPartialBytesPerClk;  // one split's floats
  // The tile's last split reads every partial; from kGroupedSplitsFrom splits on the sum runs in
  // two levels (split_k.cuh: split_reduce): a group's 8, then one per group, two hand-overs.
  const double reads = p.splits < kGroupedSplitsFrom
                           ? p.splits + 1.0
                           : kSplitSumGroup + std::ceil(p.splits / double{kSplitSumGroup}) + 1.0;
  const double syncs = p.splits < kGroupedSplitsFrom ? kSyncClk : 2 * kSyncClk;
  const double reduce = p.splits > 1 ? syncs + reads * partial : 0.0;
  // The deep 64 x 64 ring keeps twice the bytes in flight: where its CTAs fit one wave (one per
  // SM) it streams faster; with more CTAs than SMs it loses, which the waves above already
  // charge. The 64 x 128 tile (deep too) reads its stage with one m64n128 wgmma per k-step where
  // 128 x 64 takes two of n64 (each reading its own A and the same B: a quarter more
  // shared-memory reads per flop), and measured faster wherever its CTAs fit one wave. The deep
  // rings of 8-32 tokens are left to gemm-tune: with the same term the model's picks lost
  // (measured: docs/history.md, wgmma/small).
  const double depth =
      p.deep && (p.tok == 64 || p.tok == 128) && ctas <= sms ? kDeepRing : 1.0;
  return std::max(sm, l2) * depth + waves * kFixedClk + reduce;
}

int wave_splits(int64_t tiles, int slots, int waves, int max_splits) {
  if (tiles <= 0) return 0;
  const int64_t s = std::min<int64_t>(max_splits, waves * int64_t{slots} / tiles);
  return s >= 3 && (s & (s - 1)) != 0 ? static_cast<int>(s) : 0;
}

dp::Plan plan(int64_t tokens, int64_t weights, int64_t k, const DeviceDesc& dev, bool scratch,
              bool xk, int tile, int splits, int entries, int max_tok, int max_groups, bool rows) {
  const int num_kb = static_cast<int>((k + dp::kBK - 1) / dp::kBK);
  const int max_splits = scratch ? std::max(1, std::min(dp::kMaxSplits, num_kb / 2)) : 1;
  dp::Plan best{}, fill{};
  double best_cost = 0, fill_cost = 0;
  for (int i = 0; i < kTiles; ++i) {
    if ((tile > 0 && i != tile - 1) || !tile_offered(i, xk, max_tok, max_groups, rows)) continue;
    const auto tile_plan = [&](int s) {
      return make(tokens, weights, k, dev, kTileTok[i], kTileGroups[i], kTileDeep[i], s, entries);
    };
    // Forced: that many splits, as far as the depth allows; else 1, 2, 4, ... of them.
    for (int s = splits > 0 ? std::min(splits, max_splits) : 1; s <= max_splits; s *= 2) {
      if (splits > 0 && s > std::min(splits, max_splits)) break;
      const dp::Plan p = tile_plan(s);
      const double c = cost(p, dev);
      if (best.tok == 0 || c < best_cost) best = p, best_cost = c;
    }
    // And the count that fills one wave of CTAs, where that is not a power of two.
    if (splits <= 0) {
      const dp::Plan one = tile_plan(1);
      const int w = wave_splits(int64_t{one.tiles()} * entries, dev.sms * one.ctas_per_sm, 1,
                                max_splits);
      if (w > 0) {
        const dp::Plan p = tile_plan(w);
        const double c = cost(p, dev);
        if (fill.tok == 0 || c < fill_cost) fill = p, fill_cost = c;
      }
    }
  }
  if (best.tok == 0)  // a forced tile the tokens' majorness rules out: the model's own
    return plan(tokens, weights, k, dev, scratch, xk, 0, splits, entries, max_tok, max_groups,
                rows);
  return fill.tok != 0 && fill_cost < (1.0 - kWaveFillMargin) * best_cost ? fill : best;
}

int max_groups(Precision p, bool skinny, bool plain_fp32_d) {
  return p != Precision::TF32 && !skinny && plain_fp32_d ? 3 : 2;
}

bool auto_takes(int64_t m, int64_t n, int64_t k, int64_t batch, const DeviceDesc& dev,
                bool tf32, bool rows_k_major, bool cols_wide) {
  // From half the SMs' worth of 128 x 256 tiles wgmma/03's persistent tiles win, unless one
  // wave of wgmma/small's 128 x 192 tiles holds the problem (measured: docs/history.md,
  // wgmma/small), or, 16-bit, wgmma/03 would run stream-k over rows of C short of two full tile
  // rows: the runs of a partial second row read its B tiles at other depths than the first row's,
  // B twice from HBM, and one row (128 x 28672 x 8192) streams no faster (bf16 NT, us, wgmma/03
  // against wgmma/small: 200 x 13824 x 5120 121.8 / 72.3, 255 x 13824 x 5120 127.0 / 65.9,
  // 128 x 28672 x 8192 191.4 / 168.1; with two full rows, 256 x 14336 x 4096, wgmma/03 still
  // wins: 53.5 / 55.4, and tf32 keeps it: 200 x 13824 x 5120 NN 115.5 / 183.4).
  const int64_t t256 = ((m + 127) / 128) * ((n + 255) / 256);
  const int64_t t192 = std::min(((m + 191) / 192) * ((n + 127) / 128),
                                ((n + 191) / 192) * ((m + 127) / 128));
  const bool rows_streamed = !tf32 && m < 256 && t256 * batch < dev.sms;
  // 257..320 rows: wgmma/03 runs 2.5 tile rows, wgmma/small's 128 x 320 tiles one, each weight
  // strip read once (docs/results/h100-wgmma-small-320.txt).
  const bool one_row = !tf32 && rows_k_major && batch == 1 && m > 256 && m <= kMaxTileTok;
  // More 128 x 256 tiles than SMs (wgmma/03's second round) where 128 x 320 tiles fit one wave
  // (docs/history.md, wgmma/small: the medium shapes).
  // The same with C's columns as the tokens (cols_wide: op(A) = A^T, TN and TT).
  const int64_t wide_tiles = rows_k_major ? ((m + kMaxTileTok - 1) / kMaxTileTok) * ((n + 127) / 128)
                             : cols_wide  ? ((n + kMaxTileTok - 1) / kMaxTileTok) * ((m + 127) / 128)
                                          : 0;
  const bool one_wave = !tf32 && (rows_k_major || cols_wide) && batch == 1 && t256 > dev.sms &&
                        wide_tiles <= dev.sms;
  if (2 * t256 * batch > dev.sms && t192 * batch > dev.sms && !rows_streamed && !one_row &&
      !one_wave)
    return false;
  // Deep K over a C of 256 x 256 or more: wgmma/split_k's slices (docs/history.md, wgmma/small).
  return k < 32768 || m * n < 256 * 256;
}

bool two_rounds(int64_t m, int64_t n, int64_t batch, const DeviceDesc& dev) {
  const int64_t t256 = wgmma_plan::tiles_of(m, n) * batch;
  return t256 > dev.sms && t256 <= 2 * int64_t{dev.sms};
}

bool rounds_pay(const dp::Plan& small, int64_t m, int64_t n, int64_t batch, const DeviceDesc& dev,
                bool wide_offered) {
  // (tiles smaller than wgmma/03's narrow one round better but run less efficiently)
  if (batch != 1 || !wide_offered || dev.sms < 1 || !two_rounds(m, n, batch, dev) ||
      int64_t{small.strip} * small.tok < int64_t{wgmma_plan::kBM} * wgmma_plan::kBNNarrow)
    return false;
  const auto rounds = [](int64_t ctas, int64_t slots) { return (ctas + slots - 1) / slots; };
  const int bn = wgmma_plan::persistent_bn(m, n, Precision::BF16, dev, 1, 0);
  const int64_t cost_03 = rounds(wgmma_plan::tiles_of(m, n, bn), dev.sms) * wgmma_plan::kBM * bn;
  const int64_t cost_small = rounds(small.blocks(), int64_t{dev.sms} * small.ctas_per_sm) *
                             int64_t{small.strip} * small.tok;
  return cost_small < cost_03;
}

bool takes_skinny(int64_t m, int64_t n, int64_t k, int64_t batch, const DeviceDesc& dev,
                  bool b_k_major) {
  return n >= (b_k_major ? 33 : 16) && auto_takes(m, n, k, batch, dev);
}

bool transposed_tokens_pay(int64_t weights, int64_t k) { return k <= 32 * weights; }

}  // namespace wgmma_small_plan

}  // namespace gemmlab
