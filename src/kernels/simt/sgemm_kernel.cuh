// simt/sgemm's device side: the warp-tiled FFMA micro-kernel (warptile.cuh) fed by cp.async
// loaders (async_loader.cuh) through a 4- or 8-stage pipeline, and one kernel whose grid holds
// three kinds of blocks, in this order: split tiles of the main region (each a depth split of a
// C tile; splits > 1 either write slice `split` of C for the slice-sum kernel that follows
// (TileWork::sliced) or publish partials that the tile's last block sums in split order:
// split_k.cuh), the stream-k tail (equal runs of k-tiles across tile boundaries), and the thin
// edge strips (thin_strips.cuh). The planner (sgemm_plan.h) decides which of them a launch has.
#pragma once

#include <algorithm>
#include <type_traits>

#include "kernels/common/split_k.cuh"
#include "kernels/simt/async_loader.cuh"
#include "kernels/simt/sgemm_plan.h"
#include "kernels/simt/thin_strips.cuh"
#include "kernels/simt/warptile.cuh"

namespace gemmlab {
namespace sgemm {

// The block tiles (sgemm_plan.h): 128 x 128, 64 x 256, 32 x 256, 256 x 64 and 256 x 32 at <= 128
// registers so two blocks share an SM; 128 x 256 with 8 x 16 per thread (fewer LDS per FFMA), one
// block per SM.
// kStages k-tiles in flight: 4, or 8 for the 128 x 256 tile on long k loops, where its one block
// per SM has the shared memory to spare.
template <Tile kTile>
constexpr int kBlocksPerSm = tile_shape(kTile).blocks_per_sm;

// kARows: A (op N, 16-byte rows) in a row-major shared tile (warptile.cuh): the 256 x 32 tile.
template <Tile kTile, int kStages_ = 4, bool kARows = false>
struct Cfg {
  static constexpr TileShape kShape = tile_shape(kTile);
  using WT = simt_wt::WarpTile<kShape.tn, kShape.warps_m(), kARows>;
  static_assert(WT::kBM == kShape.bm && WT::kBN == kShape.bn, "the planner's tile");
  static constexpr int kStages = kStages_;
  static constexpr int kStageA = kBK * WT::kLdA, kStageB = kBK * WT::kLdB;  // floats
  static constexpr int kTileSmemBytes =
      kStages * (kStageA + kStageB) * static_cast<int>(sizeof(float));
  // The same launch also runs the strip blocks, which need a little more at 128 x 128 (70 KB vs
  // 66 KB; two blocks still share an SM).
  static constexpr int kSmemBytes = std::max(kTileSmemBytes, strips::kSmemBytes);
};

// One kernel instance: the tile, the transposes, 16-byte loaders for A^T / B (and for A itself
// on the 256 x 32 tile: kARows), the k loop, the pipeline depth, and whether the grid has a
// stream-k tail.
template <Tile kTile_, bool kAT_, bool kBT_, bool kAVec_, bool kBVec_, Loop kLoop_, int kStages_,
          bool kStreamK_>
struct Variant {
  static constexpr Tile kTile = kTile_;
  static constexpr int kStages = kStages_;
  static constexpr bool kAT = kAT_, kBT = kBT_, kAVec = kAVec_, kBVec = kBVec_, kStreamK = kStreamK_;
  static constexpr bool kARows = !kAT && kAVec;
  static_assert(!kARows || a_rows_tile(kTile), "a row-major A only on the 256 x 32 tile");
  static constexpr Loop kLoop = kLoop_;
  using C = Cfg<kTile, kStages, kARows>;
  using WT = typename C::WT;
};

// The split-k scratch of one launch (sgemm_plan.h's ScratchLayout, cut into its parts).
struct Scratch {
  float* tile_parts;  // partial tile `split` of tile t at (t * splits + split) * tile floats
  float* sk_parts;    // two per stream-k tail tile
  float* strip_parts;
  unsigned long long* tile_counters;
  unsigned long long* sk_counters;
  unsigned long long* strip_counters;
  unsigned long long tag;
  // Every pointer moved by `bytes` (a batch entry's own copy of the layout).
  __device__ __forceinline__ Scratch shifted(int64_t bytes) const {
    auto mv = [bytes](auto* q) { return reinterpret_cast<decltype(q)>(reinterpret_cast<char*>(q) + bytes); };
    return {mv(tile_parts), mv(sk_parts), mv(strip_parts), mv(tile_counters), mv(sk_counters),
            mv(strip_counters), tag};
  }
};

// A strided batch: the launch's grid.y runs entries entry0 + blockIdx.y; element strides of A,
// B, C and D, and the bytes of one entry's copy of the scratch layout.
struct Entries {
  int64_t a, b, c, d, scratch_bytes;
  int64_t entry0;
};

// Loaders for the k-tiles of C tile t from k-tile kt0 on (A with op N and B with op T are stored
// with k contiguous).
template <class V>
struct TileLoaders {
  using WT = typename V::WT;
  // A k-major A tile of a thin tile: 4-byte copies of the streamed operand, with L2 prefetch.
  static constexpr bool kAPrefetch = !V::kAT && thin_tile(V::kTile);
  std::conditional_t<V::kARows, ARowLoader<WT::kBM>,
                     AsyncLoader<WT::kBM, WT::kLdA, !V::kAT, V::kAVec, kAPrefetch>>
      a;
  AsyncLoader<WT::kBN, WT::kLdB, V::kBT, V::kBVec> b;
  __device__ __forceinline__ TileLoaders(const float* A, int lda, const float* B, int ldb,
                                         const Epilogue& ep, int k, TileCoord t, int kt0)
      : a(A, lda, ep.m, k, t.row0, kt0 * kBK), b(B, ldb, ep.n, k, t.col0, kt0 * kBK) {}
};

// k_tiles k-tiles through the cp.async pipeline from where the loaders stand, accumulated into
// acc (not zeroed here); tail_steps != 0 (kSplit only): the last k-tile holds only that many rows.
// Ends with cp_async_wait<0>: no copy still targets shared memory.
template <Tile kTile, Loop kLoop, int kStages, bool kARows, typename Loaders,
          typename C = Cfg<kTile, kStages, kARows>>
__device__ __forceinline__ void multiply_k_tiles(Loaders& ld, int k_tiles, int tail_steps,
                                                 float* As, float* Bs,
                                                 const typename C::WT::Pos& pos, bool active,
                                                 float (&acc)[8][C::WT::kCols]) {
  using WT = typename C::WT;
  auto& la = ld.a;
  auto& lb = ld.b;
  // The plain and split loops of the 128-row tiles run their FFMAs column by column
  // (warptile.cuh: fma_frag), measured faster there; the carried loop and the other tiles keep
  // rows, where columns measured slower (docs/history.md, simt/sgemm).
  constexpr bool kColOrder = WT::kWarpsAlongM == 4 && !kARows;

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

  if constexpr (!carry_loop(kLoop)) {
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
          WT::template mma_ksteps<kColOrder>(acc, As + cur * C::kStageA, Bs + cur * C::kStageB,
                                             pos, tail_steps);
        else
          WT::template mma_ktile<kBK, kColOrder>(acc, As + cur * C::kStageA,
                                                 Bs + cur * C::kStageB, pos);
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

// C tile number `linear` of the main region in the kernel's order (tile_schedule.h).
template <class V>
__device__ __forceinline__ TileCoord main_tile(int linear, const TileWork& w) {
  return tile_heavy_first(linear, V::WT::kBM, V::WT::kBN, w.sp.m_main, w.sp.n_main, kGroup);
}

// Stream-k tail block b: its run of k-tiles over the tail's (tile, k-tile) sequence, segment by
// segment. The run's position lives in shared memory, not in registers: the 128 x 256 kernel is
// at its 255-register cap, and any value live across the k loop spills. So the segment is
// re-derived from sk_pos after the FFMAs; everything else comes from kernel parameters.
template <class V>
__device__ __forceinline__ void stream_k_block(const float* A, int lda, const float* B, int ldb,
                                               const Epilogue& ep, int k, const TileWork& w,
                                               const Scratch& s, int b, float* As, float* Bs) {
  using WT = typename V::WT;
  const StreamK& sk = w.sk;
  const typename WT::Pos pos = WT::pos();
  float acc[8][WT::kCols];
  __shared__ int sk_pos;  // first k-tile of the current segment within the tail's sequence
  if (threadIdx.x == 0) sk_pos = b * sk.iters;
  const int end = min((b + 1) * sk.iters, sk.tiles * sk.kt);
  for (;;) {
    __syncthreads();  // sk_pos written; the previous segment is done with shared memory
    {
      const int it = *static_cast<volatile int*>(&sk_pos);
      if (it >= end) break;
      const StreamKSegment seg = stream_k_segment(it, end, sk.kt);
      const TileCoord t = main_tile<V>(sk.first_tile + seg.tile, w);
      TileLoaders<V> ld(A, lda, B, ldb, ep, k, t, seg.k_begin);
      WT::zero(acc);
      multiply_k_tiles<V::kTile, V::kLoop, V::kStages, V::kARows>(
          ld, seg.k_end - seg.k_begin, 0, As, Bs, pos, WT::warp_active(pos, t.row0, t.col0, ep),
          acc);
    }
    const int it = *static_cast<volatile int*>(&sk_pos);
    const StreamKSegment seg = stream_k_segment(it, end, sk.kt);
    __syncthreads();  // everyone has read sk_pos
    if (threadIdx.x == 0) sk_pos = it + (seg.k_end - seg.k_begin);
    int first, last;
    stream_k_runs(seg.tile, sk.kt, sk.iters, &first, &last);
    if (last > first &&  // shared with the neighbouring block: the last one sums
        !WT::reduce_partials(s.sk_parts + 2 * static_cast<int64_t>(seg.tile) * WT::kPartialFloats,
                             b - first, last - first + 1, s.sk_counters + seg.tile, s.tag, acc))
      continue;
    const TileCoord t = main_tile<V>(sk.first_tile + seg.tile, w);
    WT::store_tile(ep, t.row0, t.col0, pos, acc);
  }
}

// The grid: w.main_blocks split-tile blocks, then w.sk.ctas stream-k tail blocks, then the strip
// blocks. ep holds the full m, n: main tiles never reach past the main region, so its guards still
// hold.
template <class V>
__global__ void __launch_bounds__(256, kBlocksPerSm<V::kTile>)
    sgemm_kernel(const float* A, int lda, const float* B, int ldb, Epilogue ep, int k, TileWork w,
                 Scratch s, Entries en) {
  using C = typename V::C;
  using WT = typename V::WT;
  extern __shared__ float4 smem_f4[];  // float4: 16-byte alignment for the cp.async targets
  float* As = reinterpret_cast<float*>(smem_f4);
  float* Bs = As + V::kStages * C::kStageA;
  const int block = static_cast<int>(blockIdx.x);
  // Batch entry `entry` (0 for one problem): its operands, C, D and copy of the scratch, each
  // moved where it is used. (Moved up front, the arguments stayed in registers through the main
  // loop, and the 128-register instances spilled: fp32 128 x 4096 x 4096 NT 12% slower.)
  const int64_t entry = en.entry0 + blockIdx.y;
  const int64_t scratch_shift = blockIdx.y * en.scratch_bytes;

  if (block >= w.main_blocks + w.sk.ctas) {  // uniform per block
    const Scratch se = s.shifted(scratch_shift);
    const SplitWorkspace strip_ws{se.strip_parts, se.strip_counters, se.tag};
    strips::strip_block<V::kAT, V::kBT>(As, A + entry * en.a, lda, B + entry * en.b, ldb,
                                        ep.entry(entry, en.c, en.d), k, w.sp,
                                        block - w.main_blocks - w.sk.ctas, strip_ws);
    return;
  }
  if constexpr (V::kStreamK) {
    if (block >= w.main_blocks) {
      stream_k_block<V>(A + entry * en.a, lda, B + entry * en.b, ldb, ep.entry(entry, en.c, en.d),
                        k, w, s.shifted(scratch_shift), block - w.main_blocks, As, Bs);
      return;
    }
  }
  const typename WT::Pos pos = WT::pos();
  float acc[8][WT::kCols];
  const int split = block % w.splits;
  const TileCoord t = main_tile<V>(block / w.splits, w);
  // Splits cut the full k-tiles evenly; the last one also takes the partial k-tile (k % kBK rows,
  // multiplied step by step: mma_ksteps), so 1025 = 4 x 16 full k-tiles + 1 row, not 4 x 17.
  const int kt0 = split * w.per_split;
  const int k_tiles = split == w.splits - 1 ? ceil_div(k, kBK) - kt0 : w.per_split;
  const int tail_steps = V::kLoop == Loop::kSplit && split == w.splits - 1 ? k % kBK : 0;
  const bool active = WT::warp_active(pos, t.row0, t.col0, ep);
  TileLoaders<V> ld(A + entry * en.a, lda, B + entry * en.b, ldb, ep, k, t, kt0);
  WT::zero(acc);
  multiply_k_tiles<V::kTile, V::kLoop, V::kStages, V::kARows>(ld, k_tiles, tail_steps, As, Bs, pos,
                                                              active, acc);
  if (split_loop(V::kLoop) && w.sliced) {  // slice `split` of C, summed by slice_sum.h
    Epilogue es = ep;
    es.D = s.shifted(scratch_shift).tile_parts + split * (static_cast<int64_t>(ep.m) * ep.n);
    es.ldd = ep.n, es.d_type = DType::F32, es.alpha = 1.f, es.beta = 0.f;
    es.bias = nullptr, es.act = Activation::None, es.plain = true;
    WT::store_tile(es, t.row0, t.col0, pos, acc);
    return;
  }
  if (split_loop(V::kLoop) && w.splits > 1) {  // split_k.cuh: publish; the last block sums
    const int tile = block / w.splits;
    const Scratch se = s.shifted(scratch_shift);
    if (!WT::reduce_partials(se.tile_parts + static_cast<int64_t>(tile) * w.splits * WT::kPartialFloats,
                             split, w.splits, se.tile_counters + tile * split_counters(w.splits),
                             se.tag, acc))
      return;
  }
  WT::store_tile(ep.entry(entry, en.c, en.d), t.row0, t.col0, pos, acc);
}

}  // namespace sgemm
}  // namespace gemmlab
