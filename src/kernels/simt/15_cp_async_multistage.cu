// Ladder step 13 (simt): cp.async multi-stage pipeline + warp tiling + grouped tile order + split-k
// and stream-k.
//
// Bottleneck attacked: global-load latency and the register cost of staging. In step 12 every
// thread waits for its global loads once per k-tile and spends registers and STS instructions
// passing them into shared memory. Here cp.async copies global -> shared directly (no registers),
// 4 k-tiles of 16 are in flight (8 for the big tile on long k loops), and a block only waits for
// the oldest one. The FFMA loop is the shared warp-tiled one (src/kernels/simt/warptile.cuh:
// k-major padded shared tiles, LDS.128 fragments, double-buffered in registers), in two sizes:
// 128 x 256 blocks with 8 x 16 per thread (6 LDS.128 per 128 FFMA, one block per SM) for NN with
// aligned B rows, and for NT and aligned TN when they fill the GPU unsplit; 128 x 128 blocks with
// 8 x 8 per thread (<= 128 registers, two blocks per SM) elsewhere. With op(B) = B^T, B is first
// copied transposed when that is cheap next to the GEMM (2048^3 and up), so NT runs as NN and TT
// as TN (8192^3: NT 43.1 -> 49.7 TFLOP/s, TT 46.9 -> 50.1). On long k loops the register
// double buffer also runs across k-tile boundaries (mma_ktile_carry), so no LDS latency is
// exposed after each barrier (4096^3 NN: 47.4 vs 46.2 TFLOP/s).
// Full tiles are issued first, in bands of 16 tile rows (tile_grouped) for L2 reuse; partial edge
// tiles come last and their idle warps skip the FFMAs. When the full tiles cannot fill the GPU
// (1024^3: 32 or 64 tiles for 132 SMs) the depth is split: each split publishes its partial tile
// and the tile's last block adds them in split order and runs the epilogue (split_k.cuh). No beta
// pass over C, no atomics, bit-identical results from run to run. (The atomics this replaced
// needed 16-byte aligned C rows for vector atomics; with ldc = 1025 one atomic per element cost
// 1025^3 ~15%.) The splits share the full k-tiles evenly and the last one also takes the partial
// k-tile, multiplying only its valid rows (1025 = 4 x 256 + 1: not 4 x 17 k-tiles). When the
// tiles fill more than a wave but leave much of the last one idle (3000^3: 288 tiles of 128 x 256
// for 132 SMs), the last wave and the remainder become a stream-k tail: equal runs of k-tiles per
// block across tile boundaries, shared tiles summed the same ordered way (StreamK below; 3000^3
// 34.5 -> 39.7 TFLOP/s).
//
// Odd sizes (e.g. 4097^3): a remainder of <= 8 rows or columns is not given to tiles at all. The
// tiles cover the main region (4096 x 4096) and extra blocks at the end of the same grid compute
// the 1-row / 1-column strips as GEMV-like products (src/kernels/simt/thin_strips.cuh) on the
// SMs the tiles' last wave leaves idle; thicker remainders stay partial tiles. And an operand on a
// 16-byte path with misaligned rows (B or A^T with ld % 4 != 0) is first copied to aligned rows
// (aligned_rows.h) when the copy is cheap next to the GEMM (4097^3: yes; 1025^3: no).
//
// Transposes and alignment: the shared layout is k-major for both operands whatever the transpose,
// so the inner loop is one and the same. Each operand is copied by one of three loaders:
//  - contiguous direction = rows of the tile (A^T, B), 16-byte rows: 16-byte cp.async, the last
//    partial vector of a row zero-filled by src-size (no scalar tail);
//  - same, rows not 16-byte aligned (ld % 4 != 0) and not realigned: 4-byte cp.async per element;
//  - contiguous direction = k (A, B^T): 4-byte cp.async that transpose on the way in (each element
//    to its k-row), any alignment; 8 lanes read 32 contiguous bytes of a row (full sectors) and
//    their shared writes fall in distinct banks thanks to the 4-float row skew.
// Out-of-range elements are zero-filled by cp.async (src-size 0); the epilogue is guarded.
// Seed: beyond the seeds.
// Measured (H100 SXM, gemm-bench 2026-11-22 21:43 UTC, same run as cuBLAS SGEMM), fp32 TFLOP/s
// (% cuBLAS): NN 1024^3 33.8 (99%), 1025^3 30.7 (102%), 2048^3 47.1 (95%), 4096^3 50.0 (97%),
//   4097^3 48.0 (109%), 8192^3 50.2 (97%); 8192^3 NT 49.6 (97%), TN 50.6 (95%), TT 50.0 (99%);
//   1537^3 34.5 (100%), 2500^3 40.7 (93%), 3000^3 40.9 (94%), 5000^3 49.0 (106%).
//   Tables: docs/results/h100-ladder.md, h100-large.md, h100-odd.md.
// What limits it: FFMA is ~87% of the main-loop instructions (1024 FFMA, 64 LDS.128, ~90 other
// per k-tile at 8 x 8), no spills, few bank conflicts (ncu at 4096^3: FMA pipe 77% of peak while
// active, SM throughput 82%; docs/results/h100-profile.txt), so the gap to cuBLAS is
// issue/latency: 8 warps per SM at 8 x 16 (one block) or 16 at 8 x 8; H100's 128 FP32 lanes per SM
// against 128 B/clk of shared bandwidth leave little slack for the LDS traffic.
// At 1025^3 every leading dimension is odd. Measured one at a time by faking aligned ones (wrong
// results, timing only; H100, 2026-11-22, from 29.3 TFLOP/s): aligned B +4% (16-byte copies), A
// +3% (its k-contiguous 4-byte copies straddle sectors), C +3% (element-wise stores), no strips
// +1%. What gemmlab does about them: the shared-memory carveout leaves the rest of the SM to L1,
// which the 4-byte copies go through (29.8 -> 31.0: see prepared_f); Epilogue::store4 writes a
// misaligned row segment as 4 + 8 + 4 bytes instead of four 4-byte stores (+1.4%); a partial
// tile that keeps every warp busy counts as full in the split-k cost model (1023^3: 25.0 -> 32.1,
// it had picked 5 splits, 320 blocks for 264 slots).
// Tried and measured slower, so not kept: realigning B by a copy first at 1025^3 (the copy takes
// 5.6 us: 27.6 vs 29.4), 16-byte copies of misaligned B rows from the aligned chunks around them,
// shifted into place in shared memory one k-tile ahead (29.6 vs 31.0: the extra pass and the one
// stage less cost more than the 4-byte copies), the 128 x 256 tile with 4-byte B copies (1025^3
// +1%, but 1023^3, 1537^3 and 1024 x 1025 x 1024 1-4% slower), per-row 16/8/4-byte copies by each
// row's own alignment (same speed), split-k blocks that each reduce a share of the tile after
// waiting for the others (1024^3: 31.1 vs 33.9), 5-6 stages for the 128 x 128 tile.
#include <algorithm>

#include "runtime/aligned_rows.h"
#include "kernels/common/cp_async.cuh"
#include "runtime/device_props.h"
#include "kernels/common/launch.cuh"
#include "kernels/common/split_k.cuh"
#include "runtime/workspace.h"
#include "kernels/simt/warptile.cuh"
#include "kernels/simt/thin_strips.cuh"

namespace gemmlab {
namespace {

constexpr int kBK = 16;
constexpr int kGroup = 16;  // tile rows per band of the grouped tile order

// Copies one operand's kBK x kRows tiles into shared memory Xs[k][r] (r = row of op(A) or column
// of op(B), row stride kLd), one k-tile per load() call, in order. kContigK: X's contiguous
// direction is k. kVec: 16-byte copies (only when r is contiguous and rows are 16-byte aligned).
template <int kRows, int kLd, bool kContigK, bool kVec>
struct AsyncLoader {
  static_assert(!(kContigK && kVec), "the k-contiguous loader transposes element by element");
  static constexpr int kThreads = 256;
  // Element (or 16-byte chunk) e = tid + kThreads * i of the tile sits at:
  //  kContigK: k = e % 8 + 8 * (i % 2): 8 lanes read 32 contiguous bytes of a row, 32 rows a pass
  //  kVec:     r = 4 * (e % (kRows / 4)), k = e / (kRows / 4): lanes walk a row segment
  //  else:     r = e % kRows,             k = e / kRows
  static constexpr int kPerThread = kVec ? kRows * kBK / 4 / kThreads : kRows * kBK / kThreads;
  static constexpr int kKStep = kVec ? kThreads / (kRows / 4) : kThreads / kRows;  // k per i
  const float* gp;  // this thread's first element of the next k-tile
  int ld;
  int rows_left;    // rows of op(X) from this thread's first row on (<= 0: none valid)
  int k_left;       // depth from this thread's first k of the next tile on
  int soff;         // shared offset of this thread's first element

  __device__ __forceinline__ AsyncLoader(const float* ptr, int ld_, int rows, int k, int r0,
                                         int k0)
      : ld(ld_) {
    const int tid = threadIdx.x;
    int r, kk;
    if (kContigK) {
      r = tid / 8, kk = tid % 8;
    } else if (kVec) {
      r = (tid % (kRows / 4)) * 4, kk = tid / (kRows / 4);
    } else {
      r = tid % kRows, kk = tid / kRows;
    }
    rows_left = rows - r0 - r;
    k_left = k - k0 - kk;
    soff = kk * kLd + r;
    // Rows past the end are never read (zero-fill), but keep the pointer in range anyway.
    const int gr = min(r0 + r, rows - 1);
    gp = kContigK ? ptr + static_cast<size_t>(gr) * ld + (k0 + kk)
                  : ptr + static_cast<size_t>(k0 + kk) * ld + gr;
  }

  __device__ __forceinline__ void load(float* Xs) {
    if (kContigK) {
      const float* p = gp;
#pragma unroll
      for (int j = 0; j < kRows / 32; ++j) {  // rows r + 32 j
#pragma unroll
        for (int h = 0; h < 2; ++h)  // k = kk + 8 h
          cp_async_4(Xs + soff + h * 8 * kLd + 32 * j, p + 8 * h,
                     32 * j < rows_left && 8 * h < k_left);
        p += static_cast<size_t>(32) * ld;
      }
      gp += kBK;
    } else if (kVec) {
      // Bytes of this thread's 16-byte row chunk inside op(X): 16, a partial 4..12, or 0.
      const int bytes = max(0, min(rows_left, 4)) * 4;
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
        cp_async_16_partial(Xs + soff + i * kKStep * kLd,
                            gp + static_cast<size_t>(i * kKStep) * ld,
                            i * kKStep < k_left ? bytes : 0);
      gp += static_cast<size_t>(kBK) * ld;
    } else {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
        cp_async_4(Xs + soff + i * kKStep * kLd, gp + static_cast<size_t>(i * kKStep) * ld,
                   rows_left > 0 && i * kKStep < k_left);
      gp += static_cast<size_t>(kBK) * ld;
    }
    k_left -= kBK;
  }
};

// The k loop: kPlain (one split, or the last of several without the partial-k-tile shortcut),
// kCarry (fragments carried across k-tiles, long loops), kSplit (split-k: partial k-tile done
// step by step, partials summed through split_k.cuh). Separate instantiations, so the code each
// variant does not need cannot cost the others registers (NT 4096^3: 39.1 vs 42.5 TFLOP/s with
// the split-k paths compiled into the plain loop).
enum class Loop { kPlain, kCarry, kSplit };

// kTN = 2: 128 x 128 block, 8 x 8 per thread, <= 128 registers so two blocks share an SM.
// kTN = 4: 128 x 256 block, 8 x 16 per thread (fewer LDS per FFMA), one block per SM.
// kStages k-tiles in flight: 4, or 8 for the 128 x 256 tile on long k loops, where its one block
// per SM has the shared memory to spare (H100, 2026-11-22: 4096^3 NN 49.7 vs 47.7 TFLOP/s, 4097^3
// 47.1 vs 45.7, 2048^3 47.2 vs 46.2; at 1024^3, 16 k-tiles per split, 4 stages win: 33.5 vs
// 32.3). More stages did not help the 128 x 128 tile (6: TN/TT 4096^3 45.2/43.5 vs 48.0/46.1).
template <int kTN>
constexpr int kBlocksPerSm = kTN == 2 ? 2 : 1;  // resident blocks per SM the tile is built for

template <int kTN, int kStages_ = 4>
struct Cfg {
  using WT = simt_wt::WarpTile<kTN>;
  static constexpr int kStages = kStages_;
  static constexpr int kStageA = kBK * WT::kLdA, kStageB = kBK * WT::kLdB;  // floats
  static constexpr int kTileSmemBytes =
      kStages * (kStageA + kStageB) * static_cast<int>(sizeof(float));
  // The same launch also runs the strip blocks (thin_strips.cuh), which need a little more at
  // 128 x 128 (70 KB vs 66 KB; two blocks still share an SM).
  static constexpr int kSmemBytes = std::max(kTileSmemBytes, strips::kSmemBytes);
};

// Tile order: first the full tiles, in grouped order over the grid of full tiles (L2 reuse), then
// the partial tiles of the last tile column and the last tile row (remainders too thick for the
// strips of thin_strips.cuh; m, n here are the main region's). The block scheduler hands out
// blocks roughly in index order, so the cheap partial tiles (most of their warps idle, see
// warp_active) fill the SMs that finish early instead of forming a last wave of their own.
__device__ __forceinline__ TileCoord heavy_first_tile(int linear, int bm, int bn, int m, int n,
                                                      int m_tiles, int n_tiles) {
  const int m_full = m / bm, n_full = n / bn;
  const int heavy = m_full * n_full;
  if (linear < heavy) return tile_grouped(linear, bm, bn, m_full, n_full, kGroup);
  linear -= heavy;
  const int col_slivers = m_full * (n_tiles - n_full);  // last tile column, full rows
  if (linear < col_slivers) return {linear * bm, n_full * bn};
  linear -= col_slivers;
  return {m_full * bm, linear * bn};  // last tile row (m_tiles - m_full == 1 here)
}

// Loaders for the k-tiles of C tile t from k-tile kt0 on (A with op N and B with op T are stored
// with k contiguous).
template <int kTN, bool kAT, bool kBT, bool kAVec, bool kBVec>
struct TileLoaders {
  using WT = simt_wt::WarpTile<kTN>;
  AsyncLoader<WT::kBM, WT::kLdA, !kAT, kAVec> a;
  AsyncLoader<WT::kBN, WT::kLdB, kBT, kBVec> b;
  __device__ __forceinline__ TileLoaders(const float* A, int lda, const float* B, int ldb,
                                         const Epilogue& ep, int k, TileCoord t, int kt0)
      : a(A, lda, ep.m, k, t.row0, kt0 * kBK), b(B, ldb, ep.n, k, t.col0, kt0 * kBK) {}
};

// k_tiles k-tiles through the cp.async pipeline from where the loaders stand, accumulated into
// acc (not zeroed here); tail_steps != 0 (kSplit only): the last k-tile holds only that many rows.
// Ends with cp_async_wait<0>: no copy still targets shared memory.
template <int kTN, Loop kLoop, int kStages, typename Loaders>
__device__ __forceinline__ void multiply_k_tiles(Loaders& ld, int k_tiles, int tail_steps,
                                                 float* As, float* Bs,
                                                 const typename Cfg<kTN, kStages>::WT::Pos& pos,
                                                 bool active,
                                                 float (&acc)[8][Cfg<kTN, kStages>::WT::kCols]) {
  using C = Cfg<kTN, kStages>;
  using WT = typename C::WT;
  auto& la = ld.a;
  auto& lb = ld.b;

  // Prologue: the first kStages-1 tiles in flight, one commit group each (empty groups past the
  // end keep the group count uniform, so wait<kStages-2> below always means "tile kt landed").
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) {
      la.load(As + s * C::kStageA);
      lb.load(Bs + s * C::kStageB);
    }
    cp_async_commit();
  }

  if constexpr (kLoop != Loop::kCarry) {
    for (int kt = 0; kt < k_tiles; ++kt) {
      cp_async_wait<kStages - 2>();  // this thread's copies of tile kt are done...
      __syncthreads();               // ...and everyone's; also: all finished computing tile kt-1
      // Refill the stage tile kt-1 used (free now, by the barrier above) with tile kt+kStages-1.
      const int pf = kt + kStages - 1;
      if (pf < k_tiles) {
        la.load(As + (pf % kStages) * C::kStageA);
        lb.load(Bs + (pf % kStages) * C::kStageB);
      }
      cp_async_commit();
      const int cur = kt % kStages;
      if (active) {
        if (kLoop == Loop::kSplit && tail_steps != 0 && kt == k_tiles - 1)
          WT::mma_ksteps(acc, As + cur * C::kStageA, Bs + cur * C::kStageB, pos, tail_steps);
        else
          WT::template mma_ktile<kBK>(acc, As + cur * C::kStageA, Bs + cur * C::kStageB, pos);
      }
    }
  } else {
    // Same pipeline, but the fragment double buffer runs across k-tile boundaries: during tile kt
    // the last FFMA step already reads step 0 of tile kt+1, so no LDS latency is exposed after
    // each barrier. For that, tile kt+1 must be visible when tile kt starts: wait until only
    // kStages-3 groups are pending (one fewer tile in flight), and tile 0's step 0 comes first.
    typename WT::Frag f0;
    cp_async_wait<kStages - 2>();
    __syncthreads();
    if (active && k_tiles > 0) WT::load_frag(f0, As, Bs, pos);
    for (int kt = 0; kt < k_tiles; ++kt) {
      cp_async_wait<kStages - 3>();  // this thread's copies of tile kt+1 are done...
      __syncthreads();  // ...and everyone's; all finished tile kt-1 (its stage is refilled next)
      const int pf = kt + kStages - 1;
      if (pf < k_tiles) {
        la.load(As + (pf % kStages) * C::kStageA);
        lb.load(Bs + (pf % kStages) * C::kStageB);
      }
      cp_async_commit();
      const int cur = kt % kStages, nxt = (kt + 1) % kStages;
      if (active)
        WT::template mma_ktile_carry<kBK>(acc, f0, As + cur * C::kStageA, Bs + cur * C::kStageB,
                                          As + nxt * C::kStageA, Bs + nxt * C::kStageB,
                                          kt + 1 < k_tiles, pos);
    }
  }
  cp_async_wait<0>();
}

// Stream-k tail (kStreamK): when the tiles fill more than one wave but leave much of the last one
// idle (3000^3 with 128 x 256 tiles: 288 tiles = 2.18 waves of 132), all but the last full wave
// run one tile per block, and the remaining tiles (one wave plus the remainder) are cut into
// `blocks` equal runs of k-tiles over their (tile, k-tile) sequence: every block of the tail gets
// the same work, however the runs fall across tiles. iters >= k-tiles per tile, so a tile is
// shared by at most two blocks; they meet through split_k.cuh (publish, the last one sums in
// order: deterministic). The price: tail blocks no longer walk k in step, so they share less of
// A and B in L2, and each run restarts the pipeline once or twice. Measured (H100, 2026-11-22,
// fp32 NN): 3000^3 34.5 -> 39.7 TFLOP/s, 2500^3 35.5 -> 39.0; but 5000^3 (13% idle) 49.0 -> 47.7
// and 4096^3 (3% idle) 49.7 -> 48.1, hence the 20% threshold in plan_tiles.
struct StreamK {
  int first_tile;  // linear index (heavy_first_tile order) of the tail's first tile
  int tiles;       // tiles in the tail
  int blocks;      // tail blocks (0: no stream-k tail)
  int iters;       // k-tiles per tail block (the last may get fewer)
  int kt;          // k-tiles per tile
};

// Workspace layout: the split tiles' partials (main_blocks of them, only when splits > 1) and
// counters (one per tile) come first; these give their sizes in partials and counters.
__host__ __device__ inline int64_t split_slots_floats(int main_blocks, int splits) {
  return splits > 1 ? main_blocks : 0;
}
__host__ __device__ inline int64_t split_slots(int main_blocks, int splits) {
  return splits > 1 ? main_blocks / splits : 0;
}

// Blocks [0, main_blocks): one block computes one C tile of the main region [0, plan.m_main) x
// [0, plan.n_main) over the k-tiles [kt0, kt0 + k_tiles_per_split) of its split. splits == 1: the
// whole depth, normal epilogue. splits > 1: each split publishes its partial product and the
// tile's last block sums them in order and runs the epilogue (split_k.cuh). Then sk.blocks
// stream-k tail blocks (kStreamK, see StreamK). Then the thin edge strips (thin_strips.cuh), last
// in the grid so they fill the tile kernel's last wave. ep holds the full m, n: main tiles never
// reach past the main region, so its guards still hold. Workspace: tile partials, stream-k
// partials (2 per tail tile), strip partials; counters in the same order.
template <int kTN, bool kAT, bool kBT, bool kAVec, bool kBVec, Loop kLoop, int kStages_,
          bool kStreamK = false>
__global__ void __launch_bounds__(256, kBlocksPerSm<kTN>)
    cp_async_kernel(const float* A, int lda, const float* B, int ldb, Epilogue ep, int k,
                    int m_tiles, int n_tiles, int splits, int k_tiles_per_split, int main_blocks,
                    StreamK sk, strips::Plan plan, SplitWorkspace ws) {
  using C = Cfg<kTN, kStages_>;
  using WT = typename C::WT;
  constexpr int kStages = C::kStages;
  extern __shared__ float4 smem_f4[];  // float4: 16-byte alignment for the cp.async targets
  float* As = reinterpret_cast<float*>(smem_f4);
  float* Bs = As + kStages * C::kStageA;
  const int block = static_cast<int>(blockIdx.x);

  if (block >= main_blocks + sk.blocks) {  // uniform per block
    // The strips' split-k scratch follows the tiles' and the stream-k tail's.
    const SplitWorkspace strip_ws{
        ws.partials + (split_slots_floats(main_blocks, splits) + 2 * sk.tiles) * WT::kPartialFloats,
        ws.counters + split_slots(main_blocks, splits) + sk.tiles, ws.tag};
    strips::strip_block<kAT, kBT>(As, A, lda, B, ldb, ep, k, plan,
                                  block - main_blocks - sk.blocks, strip_ws);
    return;
  }
  const typename WT::Pos pos = WT::pos();
  float acc[8][WT::kCols];

  if constexpr (kStreamK) {
    if (block >= main_blocks) {
      // The run's position lives in shared memory, not in registers: the 128 x 256 kernel is at
      // its 255-register cap, and any value live across the k loop spills (measured: 40-280 bytes
      // of spills and 4096^3 at 45 instead of 50 TFLOP/s). So the segment is re-derived from
      // sk_pos after the FFMAs; everything else comes from kernel parameters.
      __shared__ int sk_pos;  // first k-tile of the current segment within the tail's sequence
      if (threadIdx.x == 0) sk_pos = (block - main_blocks) * sk.iters;
      const int b = block - main_blocks;
      const int end = min((b + 1) * sk.iters, sk.tiles * sk.kt);
      for (;;) {
        __syncthreads();  // sk_pos written; the previous segment is done with shared memory
        {
          const int it = *static_cast<volatile int*>(&sk_pos);
          if (it >= end) break;
          const StreamKSegment seg = stream_k_segment(it, end, sk.kt);
          const TileCoord t = heavy_first_tile(sk.first_tile + seg.tile, WT::kBM, WT::kBN,
                                               plan.m_main, plan.n_main, m_tiles, n_tiles);
          TileLoaders<kTN, kAT, kBT, kAVec, kBVec> ld(A, lda, B, ldb, ep, k, t, seg.k_begin);
          WT::zero(acc);
          multiply_k_tiles<kTN, kLoop, kStages>(ld, seg.k_end - seg.k_begin, 0, As, Bs, pos,
                                                WT::warp_active(pos, t.row0, t.col0, ep), acc);
        }
        const int it = *static_cast<volatile int*>(&sk_pos);
        const StreamKSegment seg = stream_k_segment(it, end, sk.kt);
        __syncthreads();  // everyone has read sk_pos
        if (threadIdx.x == 0) sk_pos = it + (seg.k_end - seg.k_begin);
        int first, last;
        stream_k_runs(seg.tile, sk.kt, sk.iters, &first, &last);
        if (last > first &&  // shared with the neighbouring block: the last one sums
            !WT::reduce_partials(ws.partials + (split_slots_floats(main_blocks, splits) +
                                                2 * static_cast<int64_t>(seg.tile)) *
                                                   WT::kPartialFloats,
                                 b - first, last - first + 1,
                                 ws.counters + split_slots(main_blocks, splits) + seg.tile,
                                 ws.tag, acc))
          continue;
        const TileCoord t = heavy_first_tile(sk.first_tile + seg.tile, WT::kBM, WT::kBN,
                                             plan.m_main, plan.n_main, m_tiles, n_tiles);
        WT::store_tile(ep, t.row0, t.col0, pos, acc);
      }
      return;
    }
  }

  const int split = block % splits;
  const TileCoord t = heavy_first_tile(block / splits, WT::kBM, WT::kBN, plan.m_main, plan.n_main,
                                       m_tiles, n_tiles);
  // Splits cut the full k-tiles evenly; the last one also takes the partial k-tile (k % kBK rows,
  // multiplied step by step: mma_ksteps), so 1025 = 4 x 16 full k-tiles + 1 row, not 4 x 17.
  const int kt0 = split * k_tiles_per_split;
  const int k_tiles = split == splits - 1 ? ceil_div(k, kBK) - kt0 : k_tiles_per_split;
  const int tail_steps = kLoop == Loop::kSplit && split == splits - 1 ? k % kBK : 0;
  const bool active = WT::warp_active(pos, t.row0, t.col0, ep);
  TileLoaders<kTN, kAT, kBT, kAVec, kBVec> ld(A, lda, B, ldb, ep, k, t, kt0);
  WT::zero(acc);
  multiply_k_tiles<kTN, kLoop, kStages>(ld, k_tiles, tail_steps, As, Bs, pos, active, acc);
  if (kLoop == Loop::kSplit && splits > 1) {  // split_k.cuh: publish; the last block sums
    const int tile = block / splits;
    if (!WT::reduce_partials(ws.partials + static_cast<int64_t>(tile) * splits * WT::kPartialFloats,
                             split, splits, ws.counters + tile, ws.tag, acc))
      return;
  }
  WT::store_tile(ep, t.row0, t.col0, pos, acc);
}

using KernelFn = void (*)(const float*, int, const float*, int, Epilogue, int, int, int, int, int,
                         int, StreamK, strips::Plan, SplitWorkspace);

struct Picked {
  KernelFn f;
  cudaError_t err;  // from opting in to the shared-memory size
  int smem;         // dynamic shared memory per block
};

template <int kTN, bool kAT, bool kBT, bool kAVec, bool kBVec, Loop kLoop, int kStages = 4,
          bool kStreamK = false>
Picked prepared_f() {
  KernelFn f = cp_async_kernel<kTN, kAT, kBT, kAVec, kBVec, kLoop, kStages, kStreamK>;
  constexpr int kSmem = Cfg<kTN, kStages>::kSmemBytes;
  // Above 48 KB of dynamic shared memory a kernel must opt in. The carveout asks for just the
  // shared memory kBlocksPerSm blocks need and leaves the rest of the SM's 256 KB to L1: the
  // 4-byte copies (cp.async.ca) of k-contiguous or misaligned rows go through L1, and a row
  // segment that straddles sectors is then fetched from L2 once, not twice. All-shared (L1 down
  // to ~28 KB) cost 1025^3 ~4% (H100, 2026-11-22: 29.8 vs 31.0 TFLOP/s; 1025^3 TN 31.0 vs 31.5,
  // NT 28.2 vs 29.5, TT 29.9 vs 31.1). Once per instantiation (thread-safe static init).
  const cudaError_t e = prepare_function(reinterpret_cast<const void*>(f), kSmem,
                                         carveout_for(kBlocksPerSm<kTN>, kSmem));
  return {f, e, kSmem};
}

// The carried-fragment loop (see the kernel) only where it was measured to win: the 128 x 256
// tile, and the 128 x 128 tile with op(A) = A^T (H100, 2026-11-22, 4096^3: NN 47.3 vs 46.2
// TFLOP/s, TN 48.3 vs 47.6, TT 45.6 vs 44.4). With A and B^T (NT) the 128 x 128 kernel spills at
// its 128-register cap and loses (40.7 vs 42.4), so that one is not even instantiated.
template <int kTN, bool kAT, bool kBT, bool kAVec, bool kBVec>
Picked prepared(Loop loop) {
  if (loop == Loop::kSplit) return prepared_f<kTN, kAT, kBT, kAVec, kBVec, Loop::kSplit>();
  if constexpr (kTN == 4 || kAT) {
    if (loop == Loop::kCarry) return prepared_f<kTN, kAT, kBT, kAVec, kBVec, Loop::kCarry>();
  }
  return prepared_f<kTN, kAT, kBT, kAVec, kBVec, Loop::kPlain>();
}

// The 16-byte loaders exist only where the operand's contiguous direction is the tile's rows
// (A^T, B); av / bv: those rows are 16-byte aligned (as given, or after realignment).
// sk: with a stream-k tail (planned only for the 128 x 256 tile over long k loops, unsplit).
template <int kTN>
Picked pick(bool at, bool bt, bool av, bool bv, Loop loop, bool deep, bool sk) {
  if constexpr (kTN == 4) {  // layouts and sizes as make_plan picks them; 8 stages on long k loops
    if (sk) {
      if (loop != Loop::kCarry) return {nullptr, cudaErrorNotSupported, 0};
      if (!at && !bt) return prepared_f<4, false, false, false, true, Loop::kCarry, 8, true>();
      if (!at) return prepared_f<4, false, true, false, false, Loop::kCarry, 8, true>();
      return prepared_f<4, true, false, true, true, Loop::kCarry, 8, true>();
    }
    if (at || bt) {  // NT, or TN with aligned rows: planned only for unsplit long k loops
      if (loop != Loop::kCarry) return {nullptr, cudaErrorNotSupported, 0};
      if (!at) return prepared_f<4, false, true, false, false, Loop::kCarry, 8>();
      return prepared_f<4, true, false, true, true, Loop::kCarry, 8>();
    }
    if (!deep) return prepared<4, false, false, false, true>(loop);
    if (loop == Loop::kSplit) return prepared_f<4, false, false, false, true, Loop::kSplit, 8>();
    return prepared_f<4, false, false, false, true, Loop::kCarry, 8>();
  } else {  // (an else, so that none of these is instantiated for the 128 x 256 tile)
    if (!at && !bt)
      return bv ? prepared<kTN, false, false, false, true>(loop)
                : prepared<kTN, false, false, false, false>(loop);
    if (!at && bt) return prepared<kTN, false, true, false, false>(loop);
    if (at && !bt) {
      if (av)
        return bv ? prepared<kTN, true, false, true, true>(loop)
                  : prepared<kTN, true, false, true, false>(loop);
      return bv ? prepared<kTN, true, false, false, true>(loop)
                : prepared<kTN, true, false, false, false>(loop);
    }
    return av ? prepared<kTN, true, true, true, false>(loop)
              : prepared<kTN, true, true, false, false>(loop);
  }
}

// Split-k when the C tiles alone cannot fill the GPU (1024^3 with 128 x 256 tiles: 32 tiles for
// 132 SMs). Cost model in k-tiles of one block: a full tile's unit costs ceil(KT/s) + 3 (pipeline
// fill, epilogue); a partial tile costs its fraction of active warps; full-tile units are issued
// first and the light partial ones fill in. An SM holding only one of the two 128 x 128 blocks it
// could run goes at ~60%. Publishing and summing partials costs ~3 units; a split must win >= 15%.
template <int kTN>
int choose_splits(const GemmProblem& p) {
  using WT = typename Cfg<kTN>::WT;
  constexpr int kPerSm = kBlocksPerSm<kTN>;
  const int sms = device_sm_count();
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n);
  const int m_full = m / WT::kBM, n_full = n / WT::kBN;
  // Partial tiles weigh the fraction of the block's warps that have rows and columns of C. One
  // that keeps every warp busy (127 of 128 rows, 1023^3) costs like a full tile and is counted
  // with them; the others are light and fill in around the full ones.
  const double col_w = (n % WT::kBN) ? ceil_div(n % WT::kBN, WT::kWarpN) / 2.0 : 0.0;
  const double row_w = (m % WT::kBM) ? ceil_div(m % WT::kBM, WT::kWarpM) / 4.0 : 0.0;
  int heavy = m_full * n_full;
  double light = 0.0, light_max = 0.0;
  auto add_partial = [&](int count, double w) {
    if (count == 0 || w == 0.0) return;
    if (w >= 1.0) {
      heavy += count;
    } else {
      light += count * w;
      light_max = std::max(light_max, w);
    }
  };
  add_partial(m_full, col_w);                                  // last tile column
  add_partial(n_full, row_w);                                  // last tile row
  add_partial(col_w > 0.0 && row_w > 0.0 ? 1 : 0, col_w * row_w);  // the corner
  if (heavy >= sms * kPerSm) return 1;  // a full wave already
  const int kt = ceil_div(static_cast<int>(p.k), kBK);
  auto makespan = [&](int s) {
    const double c = ceil_div(kt, s) + 3.0;
    const int units = heavy * s, per_sm = ceil_div(units, sms);
    double t = (per_sm == 0) ? 0.0 : per_sm * c;
    if (kPerSm == 2 && units <= sms) t /= 0.6;
    const double fill = (units * c + light * s * c) / sms + light_max * c;
    return std::max(t, fill) + (s > 1 ? 3.0 : 0.0);
  };
  int best = 1;
  const double base = makespan(1);
  double best_cost = base;
  for (int s = 2; s <= 16 && ceil_div(kt, s) >= 4; ++s) {
    const double c = makespan(s);
    if (c < best_cost) best = s, best_cost = c;
  }
  return best_cost < 0.85 * base ? best : 1;
}

// One launch of a tile width: the tile kernel over the main region plus the strip blocks.
template <int kTN>
struct TileLaunch {
  Picked k;
  strips::Plan sp;
  TileGrid g;              // tiles of the main region
  int splits, per_split;   // depth splits actually used, k-tiles per split
  int main_blocks, blocks; // tile blocks (all splits), total grid (0: too large)
  StreamK sk;              // the stream-k tail (sk.blocks == 0: none)
};

template <int kTN>
TileLaunch<kTN> plan_tiles(const GemmProblem& p, bool av, bool bv) {
  using WT = typename Cfg<kTN>::WT;
  TileLaunch<kTN> L;
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  L.sp = strips::make_plan(m, n, k, WT::kBM, WT::kBN, 1);
  GemmProblem main = p;
  main.m = L.sp.m_main, main.n = L.sp.n_main;
  L.g = make_tile_grid(main, WT::kBM, WT::kBN);
  const int64_t tiles = static_cast<int64_t>(L.g.m_tiles) * L.g.n_tiles;
  // Splits share the full k-tiles (the last split also takes a partial one: see the kernel).
  const int kt_full = std::max(1, k / kBK);
  L.per_split = ceil_div(kt_full, tiles > 0 ? choose_splits<kTN>(main) : 1);
  L.splits = ceil_div(kt_full, L.per_split);  // every split gets >= 1 k-tile
  // Carrying fragments across k-tiles waits for one more tile up front: it pays off on long k
  // loops only (1024^3 in 4 splits of 16 k-tiles: 30.9 vs 33.8 TFLOP/s).
  const bool deep = L.per_split >= 64;
  // A stream-k tail (see StreamK) when the last wave of tiles would leave > 20% of the run idle
  // (2500^3: 200 tiles of 128 x 256 for 132 SMs, 24%; 3000^3: 288 tiles, 27%). Only for the
  // 128 x 256 tile on long k loops, unsplit.
  L.sk = StreamK{0, 0, 0, 0, 0};
  const int64_t slots = static_cast<int64_t>(device_sm_count()) * kBlocksPerSm<kTN>;
  if (kTN == 4 && L.splits == 1 && deep && tiles > slots && tiles % slots != 0) {
    const int64_t waves = tiles / slots, rem = tiles % slots;
    const double idle = static_cast<double>(slots - rem) / slots / (waves + 1);
    const int kt = ceil_div(k, kBK);
    const int64_t tail = slots + rem;  // the last full wave and the remainder
    if (idle > 0.2 && tail * kt <= INT_MAX) {
      L.sk.first_tile = static_cast<int>(tiles - tail);
      L.sk.tiles = static_cast<int>(tail);
      L.sk.blocks = static_cast<int>(slots);
      L.sk.kt = kt;
      L.sk.iters = ceil_div(static_cast<int>(tail * kt), static_cast<int>(slots));  // >= kt
    }
  }
  L.k = pick<kTN>(p.op_a == Op::T, p.op_b == Op::T, av, bv,
                  L.splits > 1 ? Loop::kSplit : deep ? Loop::kCarry : Loop::kPlain, deep,
                  L.sk.blocks > 0);
  // Split tiles mean a small problem that fills the SMs already: split the strips too, into
  // pieces of >= 4 strip k-tiles (128 deep), at most 8 (thin_strips.cuh).
  if (L.splits > 1)
    L.sp = strips::make_plan(m, n, k, WT::kBM, WT::kBN,
                             std::min(8, std::max(1, ceil_div(k, strips::kKT) / 4)));
  const int64_t main_blocks = (tiles - L.sk.tiles) * L.splits;
  const int64_t blocks = main_blocks + L.sk.blocks + L.sp.blocks();
  L.main_blocks = static_cast<int>(std::min<int64_t>(main_blocks, INT_MAX));
  L.blocks = blocks > INT_MAX ? 0 : static_cast<int>(blocks);
  return L;
}

template <int kTN>
cudaError_t launch_t(const GemmProblem& p, bool av, bool bv) {
  using WT = typename Cfg<kTN>::WT;
  const TileLaunch<kTN> L = plan_tiles<kTN>(p, av, bv);
  if (L.k.err != cudaSuccess) return L.k.err;
  if (L.blocks == 0) return cudaErrorInvalidValue;
  // Split-k scratch (split_k.cuh): split tile partials, stream-k partials, strip partials; then
  // the counters in the same order.
  SplitWorkspace ws{nullptr, nullptr, 0};
  void* buf = nullptr;
  if (L.splits > 1 || L.sp.splits > 1 || L.sk.blocks > 0) {
    const int64_t strip_slots = L.sp.splits > 1 ? L.sp.blocks() / L.sp.splits : 0;
    const size_t floats =
        static_cast<size_t>(split_slots_floats(L.main_blocks, L.splits) + 2 * L.sk.tiles) *
            WT::kPartialFloats +
        static_cast<size_t>(L.sp.splits > 1 ? L.sp.blocks() : 0) * strips::kPartialFloats;
    const size_t counters =
        static_cast<size_t>(split_slots(L.main_blocks, L.splits) + L.sk.tiles + strip_slots);
    if (cudaError_t e = workspace_alloc(
            &buf, floats * sizeof(float) + counters * sizeof(unsigned long long), p.stream);
        e != cudaSuccess)
      return e;
    ws.partials = static_cast<float*>(buf);  // floats: a multiple of 4, so counters are aligned
    ws.counters = reinterpret_cast<unsigned long long*>(ws.partials + floats);
    ws.tag = next_split_tag();
  }
  const cudaError_t e = launch_kernel(
      L.k.f, dim3(L.blocks), WT::kThreads, L.k.smem, p.stream, static_cast<const float*>(p.A),
      static_cast<int>(p.lda), static_cast<const float*>(p.B), static_cast<int>(p.ldb),
      make_epilogue(p), static_cast<int>(p.k), L.g.m_tiles, L.g.n_tiles, L.splits, L.per_split,
      L.main_blocks, L.sk, L.sp, ws);
  const cudaError_t ef = workspace_free(buf, p.stream);  // stream-ordered: after the kernel
  return e != cudaSuccess ? e : ef;
}

// A misaligned operand on a 16-byte path (A^T or B) would take 4-byte copies: 11% slower with
// 128 x 128 tiles, 27% with 128 x 256 (4097^3, H100). Copying it to 16-byte-aligned rows costs a
// read and a write of the operand (~8 bytes per element at ~2.5 TB/s) plus a launch; worth it when
// that is under ~5% of the GEMM's own time at ~40 TFLOP/s. Measured (H100, 2026-11-22): 4097^3 NN
// 45.2 TFLOP/s with the copy vs 42.7 without; 1025^3 NN 27.3 with vs 29.5 without (the copy and
// its launch are ~8% there), so 1025^3 stays on the 4-byte path.
bool worth_realigning(const GemmProblem& p, int64_t rows, int64_t cols) {
  const double copy_s = 8.0 * static_cast<double>(rows) * cols / 2.5e12 + 2e-6;
  const double gemm_s = 2.0 * static_cast<double>(p.m) * p.n * p.k / 40e12;
  return copy_s < 0.05 * gemm_s && rows * aligned_ld_16(cols, sizeof(float)) <= INT_MAX;
}

struct Plan {
  bool realign_a, realign_b;  // op(A) = A^T / op(B) = B stored with misaligned rows: copy first
  bool transpose_b;           // op(B) = B^T: copy it transposed, run as op(B) = B (see below)
  bool av, bv;                // 16-byte loaders for A^T / B
  bool wide;                  // 128 x 256 tiles
};

// Copies first: with op(B) = B^T, B's tiles take the transposing 4-byte loader; stored the other
// way round (k x n, aligned rows) they take 16-byte copies, and NT runs as NN, TT as TN. The
// transpose costs a read and a write of B, like realigning: worth it on the same condition.
// Which tile: the 128 x 256 one (8 x 16 per thread) wins where its copies are cheap to issue: NN
// with B rows 16-byte aligned (H100, 2026-11-22: 46.0 vs 44.5 TFLOP/s at 4096^3, 46.3 vs 44.9 at
// 8192^3), and NT / aligned TN when it fills the GPU unsplit (below). Elsewhere the 128 x 128 tile
// with two blocks per SM hides the 4-byte copies better.
Plan make_plan(const GemmProblem& p) {
  const bool at = p.op_a == Op::T, bt = p.op_b == Op::T;
  const bool a_ok = rows_aligned(p.A, p.lda, sizeof(float), 16);
  const bool b_ok = rows_aligned(p.B, p.ldb, sizeof(float), 16);
  Plan pl{};
  pl.transpose_b = bt && worth_realigning(p, p.k, p.n);  // the copy: k x n, aligned rows
  pl.realign_a = at && !a_ok && worth_realigning(p, p.k, p.m);  // A^T: stored k x m
  pl.realign_b = !bt && !b_ok && worth_realigning(p, p.k, p.n);  // B: stored k x n
  pl.av = at && (a_ok || pl.realign_a);
  pl.bv = pl.transpose_b || (!bt && (b_ok || pl.realign_b));
  const bool bt_run = bt && !pl.transpose_b;  // op(B) as the kernel sees it
  // NT and TN (aligned rows) also take the 128 x 256 tile when it fills the GPU unsplit over a
  // long k loop (H100, 2026-11-22, 8192^3: NT 43.1 vs 39.6 TFLOP/s, TN 50.5 vs 48.5; 4096^3 NT
  // 42.8 vs 39.5, TN 49.9 vs 47.9). TT loses with it (43.8 vs 46.9) and keeps 128 x 128.
  const bool long_unsplit =
      p.k >= 64 * kBK && (p.m / 128) * (p.n / 256) >= device_sm_count();
  pl.wide = (!at && !bt_run && pl.bv) ||
            (long_unsplit && ((!at && bt_run) || (at && !bt_run && pl.av && pl.bv)));
  return pl;
}

template <int kTN>
LaunchConfig config_t(const GemmProblem& p, const Plan& pl) {
  const TileLaunch<kTN> L = plan_tiles<kTN>(p, pl.av, pl.bv);
  return {reinterpret_cast<const void*>(L.k.f), dim3(L.blocks), dim3(Cfg<kTN>::WT::kThreads),
          static_cast<size_t>(L.k.smem)};
}

LaunchConfig config(const GemmProblem& p) {
  const Plan pl = make_plan(p);
  GemmProblem q = p;
  if (pl.transpose_b) q.op_b = Op::N;  // what the tile kernel then runs
  return pl.wide ? config_t<4>(q, pl) : config_t<2>(q, pl);
}

cudaError_t launch(const GemmProblem& p) {
  const Plan pl = make_plan(p);
  GemmProblem q = p;  // p with the realigned copies in place of misaligned operands
  AlignedRows ra, rb;
  cudaError_t e = cudaSuccess;
  if (pl.transpose_b) {  // B^T stored n x k -> B stored k x n
    e = transpose_aligned_rows(static_cast<const float*>(p.B), p.n, p.k, p.ldb, p.stream, &rb);
    q.B = rb.ptr, q.ldb = rb.ld, q.op_b = Op::N;
  }
  if (e == cudaSuccess && pl.realign_a) {
    e = align_rows_16(p.A, p.k, p.m, p.lda, sizeof(float), p.stream, &ra);
    q.A = ra.ptr, q.lda = ra.ld;
  }
  if (e == cudaSuccess && pl.realign_b) {
    e = align_rows_16(p.B, p.k, p.n, p.ldb, sizeof(float), p.stream, &rb);
    q.B = rb.ptr, q.ldb = rb.ld;
  }
  if (e == cudaSuccess) e = pl.wide ? launch_t<4>(q, pl.av, pl.bv) : launch_t<2>(q, pl.av, pl.bv);
  // Stream-ordered: the copies are freed after the kernel that reads them has run.
  const cudaError_t ea = release_aligned_rows(&ra, p.stream);
  const cudaError_t eb = release_aligned_rows(&rb, p.stream);
  return e != cudaSuccess ? e : ea != cudaSuccess ? ea : eb;
}

}  // namespace

extern const KernelDesc kSimtCpAsyncMultistage = {
    "simt/15_cp_async_multistage", 15, "simt", "beyond the seeds",
    "cp.async 4-8 stage pipeline (16 B or 4 B copies by layout/alignment), 128x256 (8x16/thread) "
    "or 128x128 (8x8/thread) blocks, grouped tile order, ordered split-k for small grids, "
    "stream-k tail for a badly filled last wave, thin "
    "edge strips as GEMV blocks, misaligned or transposed B copied once when cheap",
    kFP32, 80, 100, nullptr, launch, config};

}  // namespace gemmlab
