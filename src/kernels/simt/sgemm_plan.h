// The planner of simt/sgemm, the production FP32 kernel: which copies to make first, which block
// tile, how many depth splits, whether the last wave becomes a stream-k tail, and the thin edge
// strips. Plain functions of the problem and a device description (no GPU needed), shared by the
// kernel's config() and launch(), and unit-tested on the CPU (tests/test_planners.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/tile_schedule.h"
#include "kernels/simt/strips_plan.h"
#include "registry/registry.h"

namespace gemmlab {
namespace sgemm {

constexpr int kBK = 16;     // depth of one k-tile (one cp.async stage)
constexpr int kGroup = 16;  // tile rows per band of the grouped tile order

// The k loop variant a launch runs (separate template instances: what one does not need cannot
// cost the others registers): one pass over the whole depth, the same with register fragments
// carried across k-tiles (long unsplit loops), or one depth split of several. Depth splits do not
// carry: on the 128-row tiles the plain and split loops run their FFMAs column by column, and
// that beat the carried loop on deep splits too (measured: docs/history.md, simt/sgemm).
enum class Loop { kPlain, kCarry, kSplit };
constexpr bool split_loop(Loop l) { return l == Loop::kSplit; }
constexpr bool carry_loop(Loop l) { return l == Loop::kCarry; }

// The block tiles of the warp-tiled micro-kernel (simt/warptile.cuh), 256 threads each:
//   128 x 128: warps 4 x 2, 8 x 8 per thread, two blocks per SM;
//   128 x 256: warps 4 x 2, 8 x 16 per thread, one block per SM;
//   64 x 256:  warps 2 x 4, 8 x 8 per thread, two blocks per SM (m <= 64);
//   32 x 256:  warps 1 x 8, 8 x 4 per thread, two blocks per SM (m <= 32);
//   256 x 64:  warps 8 x 1, 8 x 8 per thread, two blocks per SM (n <= 64);
//   256 x 32:  warps 8 x 1, 8 x 4 per thread, two blocks per SM (n <= 32).
// A decode problem (M = 17..64 rows against a big weight matrix) on a 128-row tile computes 2-8
// times the rows it keeps, on too few tiles to fill the GPU (32 x 4096 x 14336: 16 tiles). A thin
// output (N <= 64 columns, big M and K: the decode tiles' transpose) likewise computes 2-8 times
// the columns it keeps on a 128-column tile, while A, read once, bounds the time.
enum class Tile { k128x128, k128x256, k64x256, k32x256, k256x64, k256x32 };
struct TileShape {
  int tn, bm, bn, warp_m, warp_n, blocks_per_sm;  // tn: 4-wide column sub-tiles per thread
  constexpr int warps_m() const { return bm / warp_m; }
  constexpr int warps_n() const { return bn / warp_n; }
};
constexpr TileShape tile_shape(Tile t) {
  switch (t) {
    case Tile::k128x256: return {4, 128, 256, 32, 128, 1};
    case Tile::k64x256: return {2, 64, 256, 32, 64, 2};
    case Tile::k32x256: return {1, 32, 256, 32, 32, 2};
    case Tile::k256x64: return {2, 256, 64, 32, 64, 2};
    case Tile::k256x32: return {1, 256, 32, 32, 32, 2};
    default: return {2, 128, 128, 32, 64, 2};
  }
}

// Copies made before the tile kernel, and the tile chosen.
struct OperandPlan {
  bool realign_a, realign_b;  // op(A) = A^T / op(B) = B stored with misaligned rows: copy first
  bool transpose_b;           // op(B) = B^T: copy it transposed and run as op(B) = B
  bool av, bv;                // 16-byte loaders for A^T / B (rows aligned, as given or copied);
                              // av on a thin tile with op(A) = A: A's rows 16-byte aligned
  Tile tile;                  // the block tile
};
// a_aligned / b_aligned: A / B rows are 16-byte aligned (pointer and ld). copies: whether scratch
// for copies may be used at all (without it, misaligned rows take the 4-byte loaders).
// forced: a tile chosen from outside (gemm-tune, the tuning table: runtime/plan_choice.h), taken
// where its kernel instance exists (the 128 x 256 tile: NN with 16-byte B rows only); null: none.
OperandPlan plan_operands(const GemmProblem& p, bool a_aligned, bool b_aligned,
                          const DeviceDesc& dev, bool copies = true, const Tile* forced = nullptr);
// Whether the 128 x 256 tile would pad C's columns by more than a tenth of n beyond what the
// 128 x 128 tile pads (n = 128: 128 more, 300: 128 more): then the 128 x 128 tile runs, as the
// wide one's extra columns are computed and thrown away (H100, fp32 NN: 4096 x 128 x 4096 23.2
// TFLOP/s wide, 39.8 narrow; 2500 x 300 x 2500 20.7 / 28.0; docs/history.md, cliffs).
// A C of at most 128 x 256 over a short K (96^3, a batch of 77^3): the run is latency, not
// throughput, and the 128-row tiles give it one block of 256 threads where the 32-row decode tile
// gives it one per 32 rows. plan_operands takes the 32 x 256 tile there from 65 rows up (at most
// 64 rows take the decode tiles anyway). Up to K = 512: at 100 x 200 x 1000 it lost in three op
// pairs of four (docs/history.md, simt/sgemm: tiny problems).
constexpr int64_t kTinyK = 512;
bool tiny_c(int64_t m, int64_t n, int64_t k);
bool wide_pads_columns(int64_t n);
constexpr bool decode_tile(Tile t) { return t == Tile::k64x256 || t == Tile::k32x256; }
constexpr bool thin_tile(Tile t) { return t == Tile::k256x64 || t == Tile::k256x32; }
// The tile whose A (op N, 16-byte rows) goes to a row-major shared tile by 16-byte copies
// (warptile.cuh, kARows). Not 256 x 64: its 8 x 8 accumulators and 8 rows of 4 k-steps spill at
// the 128-register cap of two blocks per SM.
constexpr bool a_rows_tile(Tile t) { return t == Tile::k256x32; }
// The thin tiles' instances: op(B) = B as the tile kernel runs it (B^T transposed by its copy,
// cheap: B is the small operand), and A^T only with 16-byte rows.
constexpr bool thin_layout(bool at, bool bt_run, bool av) { return !bt_run && (!at || av); }
// A copy of a rows x cols fp32 operand pays when it is cheap next to the GEMM: under `share` of
// its time (0.05 by default).
bool worth_copying(const GemmProblem& p, int64_t rows, int64_t cols, double share = 0.05);

// Depth splits for a problem whose tiles alone cannot fill the GPU (1 = no split): up to 16 by
// the makespan model, and up to kMaxSplits for deep k on a few tiles (kMaxForcedSplits where C
// is smaller than one tile), where the last block's
// sum of the partials (kSumPerPartial k-tiles each, two levels from 17 splits: split_k.cuh) is
// charged too.
constexpr int kMaxSplits = 64;
constexpr double kSumPerPartial = 0.5;
// A forced plan (gemm-tune, the tuning table) may split deeper: one 128 x 128 tile over k =
// 131072 fills two blocks per SM only with 256 splits (what cuBLAS runs there), and the slice
// sum reads them on every SM. The split counters of the in-kernel sums count to 255 arrivals per
// counter; with groups of 8 none gets near.
constexpr int kMaxForcedSplits = 256;
int choose_splits(int m, int n, int k, const TileShape& t, const DeviceDesc& dev);

// What one launch of the tile kernel does: the work its kernel arguments describe.
struct TileWork {
  int splits;       // depth splits of each main-region tile
  int per_split;    // k-tiles per split (the last split also takes the partial k-tile)
  int main_blocks;  // blocks of split tiles (tiles outside the stream-k tail, times splits)
  StreamK sk;       // the stream-k tail over the last tiles (sk.ctas == 0: none)
  strips::Plan sp;  // the thin edge strips, after the tiles and the tail in the grid
  // Split tiles write their partials as whole m x n slices (one per split, in scratch), summed
  // in split order with the epilogue by a second kernel on every SM (kernels/common/slice_sum.h),
  // instead of by each tile's last block. Set when the tiles are split, there are no strips or
  // stream-k tail (the slices then cover all of C), and slices_pay.
  bool sliced;
};
// Whether summing `splits` slices of m x n on every SM beats each t tile's last block summing
// the other splits' partials alone (sgemm_plan.cpp: the measurements behind it).
bool slices_pay(int m, int n, int splits, const TileShape& t);
struct TilePlan {
  TileWork work;
  TileGrid grid;  // tiles of the main region [0, sp.m_main) x [0, sp.n_main)
  Loop loop;
  bool deep;      // >= 64 k-tiles per split: long loops (unsplit: 8 stages, carried fragments)
  int blocks;     // the launch's grid (0: too large)
};
// scratch: whether split-k / stream-k scratch may be used (without it: one block per tile).
// forced_splits > 0: that many depth splits (at most one per full k-tile) instead of the model's.
TilePlan plan_tiles(int m, int n, int k, const TileShape& t, const DeviceDesc& dev,
                    bool scratch = true, int forced_splits = 0);

// A strided batch runs in one launch (grid.y: the entries), each entry planned as if it had its
// share of the SMs alone (ceil(sms / entries)): depth splits and a stream-k tail only where one
// entry's tiles cannot fill its share, and no slices (their sum kernel covers one problem).
// entries == 1: plan_tiles.
TilePlan plan_batch_tiles(int m, int n, int k, const TileShape& t, const DeviceDesc& dev,
                          int64_t entries, bool scratch = true, int forced_splits = 0);

// The split-k scratch of a plan: partials (floats) first, then counters, in the order tiles,
// stream-k tail tiles, strip blocks. All zero when the plan needs none.
struct ScratchLayout {
  size_t tile_partials, sk_partials, strip_partials;  // floats, each at the offset of the last
  size_t tile_counters, sk_counters, strip_counters;  // counters, likewise
  size_t bytes() const;
};
ScratchLayout scratch_layout(const TilePlan& plan, const TileShape& t);

}  // namespace sgemm
}  // namespace gemmlab
