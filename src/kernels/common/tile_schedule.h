// The tile schedule every family shares, host and device: how a problem's C is cut into tiles,
// the order in which a 1-D grid (or a persistent CTA) walks them, and the stream-k cut of a
// sequence of (tile, k-step) work into equal runs. Tile sizes are arguments, so one schedule
// serves every tile shape. Plain arithmetic, no CUDA types: the planners (.cpp, compiled by the
// host compiler and unit-tested on the CPU) and the kernels include the same code.
#pragma once

#include <climits>
#include <cstdint>

#if defined(__CUDACC__)
#define GEMMLAB_HD __host__ __device__ __forceinline__
#else
#define GEMMLAB_HD inline
#endif

namespace gemmlab {

GEMMLAB_HD constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
GEMMLAB_HD int min_int(int a, int b) { return a < b ? a : b; }

// Split-k with many splits sums its partials in two levels (split_k.cuh: split_reduce): groups
// of kSplitSumGroup consecutive splits, each summed by its last arriver, then the group sums by
// the slot's last group, instead of one block reading every partial alone. The counters of one
// slot: one, plus one per group from kGroupedSplitsFrom splits on.
constexpr int kSplitSumGroup = 8;
constexpr int kGroupedSplitsFrom = 17;
GEMMLAB_HD constexpr int split_counters(int splits) {
  return splits >= kGroupedSplitsFrom ? 1 + (splits + kSplitSumGroup - 1) / kSplitSumGroup : 1;
}

// Tiles of C: m_tiles x n_tiles tiles of bm x bn (the last row / column of tiles may be partial).
struct TileGrid {
  int m_tiles, n_tiles;
};
inline TileGrid tile_grid(int64_t m, int64_t n, int bm, int bn) {
  return {ceil_div(static_cast<int>(m), bm), ceil_div(static_cast<int>(n), bn)};
}
// Blocks of a 1-D grid over a tile grid, or 0 when there are more than INT_MAX (gridDim.x allows
// 2^31 - 1 blocks, where gridDim.y would stop at 65535 row tiles).
inline unsigned grid_blocks(TileGrid t) {
  const int64_t blocks = static_cast<int64_t>(t.m_tiles) * t.n_tiles;
  return blocks > INT_MAX ? 0u : static_cast<unsigned>(blocks);
}

struct TileCoord {
  int row0, col0;  // first row and column of C the tile covers
};

// Grouped ("swizzled") order for L2 reuse: tiles are issued column-major within bands of `group`
// tile rows, so tiles resident together share a few rows of A and columns of B instead of
// sweeping a whole row of tiles of B.
GEMMLAB_HD TileCoord tile_grouped(int linear, int bm, int bn, int m_tiles, int n_tiles, int group) {
  const int tiles_per_band = group * n_tiles;
  const int band = linear / tiles_per_band;
  const int first_row = band * group;
  const int rows_in_band = min_int(group, m_tiles - first_row);
  const int in_band = linear % tiles_per_band;
  return {(first_row + in_band % rows_in_band) * bm, (in_band / rows_in_band) * bn};
}

// Heavy tiles first: the full tiles of an m x n region in grouped order, then the partial tiles of
// the last tile column (full rows), then those of the last tile row (the corner last). Partial
// tiles are cheap (their idle warps skip the math); issued last they fill the SMs that finish
// early instead of forming a wave of their own. linear runs over [0, m_tiles * n_tiles).
GEMMLAB_HD TileCoord tile_heavy_first(int linear, int bm, int bn, int m, int n, int group) {
  const int m_full = m / bm, n_full = n / bn;
  const int n_tiles = ceil_div(n, bn);
  const int heavy = m_full * n_full;
  if (linear < heavy) return tile_grouped(linear, bm, bn, m_full, n_full, group);
  linear -= heavy;
  const int col_slivers = m_full * (n_tiles - n_full);  // last tile column, full rows
  if (linear < col_slivers) return {linear * bm, n_full * bn};
  linear -= col_slivers;
  return {m_full * bm, linear * bn};  // last tile row, corner included
}

// Stream-k: a sequence of `tiles` tiles of kt k-steps each is cut into runs of `iters` steps, one
// run per CTA, across tile boundaries; the CTAs that share a tile sum their partials in a fixed
// order (split_k.cuh), so results are deterministic.
struct StreamK {
  int first_tile;  // the sequence's first tile, as a linear index of the kernel's tile order
  int tiles;       // tiles in the sequence
  int ctas;        // CTAs (runs) sharing it; 0: no stream-k
  int iters;       // k-steps per run (the last run may get fewer)
  int kt;          // k-steps per tile
};
// The equal cut of `tiles` tiles of kt k-steps over `ctas` CTAs.
inline StreamK stream_k_cut(int first_tile, int tiles, int kt, int ctas) {
  const int64_t total = static_cast<int64_t>(tiles) * kt;
  const int iters = static_cast<int>((total + ctas - 1) / ctas);
  return {first_tile, tiles, static_cast<int>((total + iters - 1) / iters), iters, kt};
}

// The part of run [it, end) that lies in one tile.
struct StreamKSegment {
  int tile;            // tile index within the sequence
  int k_begin, k_end;  // its k-steps [k_begin, k_end)
};
GEMMLAB_HD StreamKSegment stream_k_segment(int it, int end, int kt) {
  const int tile = it / kt, k_begin = it % kt;
  const int k_end = k_begin + (end - it) < kt ? k_begin + (end - it) : kt;
  return {tile, k_begin, k_end};
}
// The runs (CTAs) that share tile `tile`: first..last; last > first means partials to sum.
GEMMLAB_HD void stream_k_runs(int tile, int kt, int iters, int* first, int* last) {
  *first = tile * kt / iters;
  *last = ((tile + 1) * kt - 1) / iters;
}

}  // namespace gemmlab
