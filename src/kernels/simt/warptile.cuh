// The warp-tiled FP32 micro-kernel shared by the simt steps past the seeds (14, 15, simt/sgemm): how a 128x128
// block tile splits into warp tiles and thread tiles, how fragments are read from shared memory,
// the FFMA loop over one shared k-tile, and the epilogue. The steps differ only in how tiles get
// from global into shared memory (registers in 14, cp.async multi-stage in 15 and sgemm).
//
// Shared layout (both operands, every transpose): "k-major", Xs[k][r] with r = row of op(A)
// (0..127) or column of op(B), row stride = tile width + 4 floats. The loaders put the tile there
// whatever the global layout; the +4 keeps every row 16-byte aligned (float4 reads) and skews the
// rows for the loaders that write one element per row (transposing stores).
//
// 256 threads = 8 warps as kWarpsM (m) x 8 / kWarpsM (n); kWarpsM = 4 unless said. kTN = number of
// 4-wide column sub-tiles per thread:
//   kTN = 2: thread 8 x 8,  warp 32 x 64,  block 128 x 128 (4 LDS.128 per 64 FFMA)
//   kTN = 4: thread 8 x 16, warp 32 x 128, block 128 x 256 (6 LDS.128 per 128 FFMA)
//   kTN = 2, kWarpsM = 2: block 64 x 256; kTN = 1, kWarpsM = 1: thread 8 x 4, block 32 x 256
//   (simt/sgemm's tiles for decode: M <= 64 and M <= 32 rows); kWarpsM = 8, kTN = 2 or 1: blocks
//   256 x 64 and 256 x 32 (its tiles for thin outputs, N <= 64 and N <= 32)
// Inside a warp, lanes form 4 (m) x 8 (n): lane_row = lane / 8, lane_col = lane % 8. A thread owns
// 2 x kTN sub-tiles of 4 x 4:
//   rows  wm + s*16 + lane_row*4 + i   (s = 0..1, i = 0..3)
//   cols  wn + t*32 + lane_col*4 + j   (t = 0..kTN-1, j = 0..3)
// Why this shape: a float4 read of A by a warp touches 4 distinct 16-byte words (the 8 lanes of a
// quarter-warp share lane_row and broadcast); a float4 read of B touches 8 consecutive 16-byte
// words (one 128-byte line): no bank conflicts. On H100 (128 FP32 lanes per SM but still 128 B/clk
// of shared bandwidth) the LDS per FFMA ratio matters, hence the wider kTN = 4 tile.
#pragma once

#include "kernels/common/gemm_common.cuh"
#include "kernels/common/split_k.cuh"

namespace gemmlab {
namespace simt_wt {

// kARows: A's shared tile is row-major instead (As[r][k], kARowK floats per row, the 16-byte
// chunks of row r at chunk ^ (r / 4 % 4): ARowLoader in async_loader.cuh), filled by 16-byte
// copies from an A stored with k contiguous. The k-major layout needs a 4-byte copy per element
// for such an A (it transposes on the way in), and on the thin-output tiles, where A is the
// operand streamed from HBM, those copies were the limit (measurements: docs/history.md,
// "simt/sgemm"). A thread reads 4 k-steps of each of its 8 rows with one float4 (2 LDS.128 per
// k-step, as before); the XOR makes the 4 rows a warp reads at once (4 apart) fall in distinct
// banks. Only for kTN = 1: the 8 x 8 thread tile with 8 rows of 4 k-steps spills.
template <int kTN, int kWarpsM = 4, bool kARows = false>
struct WarpTile {
  static constexpr int kThreads = 256;
  static constexpr int kWarpsAlongM = kWarpsM;
  static constexpr int kWarpsN = 8 / kWarpsM;  // warps along m x along n = the 8 warps
  static_assert(kWarpsM * kWarpsN == 8, "8 warps");
  static constexpr int kWarpM = 32, kWarpN = 32 * kTN;
  static constexpr int kBM = kWarpsM * kWarpM, kBN = kWarpsN * kWarpN;
  static constexpr int kCols = 4 * kTN;  // outputs per thread along n
  // Shared row strides (floats): 16-byte aligned rows, skewed by 4 banks for transposing stores.
  // With kARows, kLdA * 16 is still the A stage's size (kBM rows of 16).
  static constexpr int kLdA = kARows ? kBM : kBM + 4, kLdB = kBN + 4;
  static constexpr int kARowK = 16;  // floats per row of a row-major A tile (one k-tile)
  static_assert(!kARows || kTN == 1, "a row-major A only with the 8 x 4 thread tile");

  struct Pos {
    int a_off, b_off;  // this thread's first A / B element inside a shared k-row
    int wm, wn;        // its warp tile's origin inside the block tile
  };

  static __device__ __forceinline__ Pos pos() {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = (warp % kWarpsM) * kWarpM, wn = (warp / kWarpsM) * kWarpN;
    return {wm + (lane / 8) * 4, wn + (lane % 8) * 4, wm, wn};
  }

  // One k step of fragments: a[s] = 4 rows of sub-tile s, b[t] = 4 columns of sub-tile t.
  struct Frag {
    float4 a[2], b[kTN];
  };

  static __device__ __forceinline__ void load_frag(Frag& f, const float* As_k, const float* Bs_k,
                                                   const Pos& p) {
    f.a[0] = *reinterpret_cast<const float4*>(As_k + p.a_off);
    f.a[1] = *reinterpret_cast<const float4*>(As_k + p.a_off + 16);
#pragma unroll
    for (int t = 0; t < kTN; ++t) f.b[t] = *reinterpret_cast<const float4*>(Bs_k + p.b_off + 32 * t);
  }

  // kColOrder: the FFMAs column by column (each B value reused by 8 consecutive FFMAs) instead of
  // row by row (each A value by kCols). Same sums, same bits (each accumulator gets the same FFMAs
  // in the same k order); only the instruction order, and with it ptxas's register assignment,
  // differs.
  template <bool kColOrder = false>
  static __device__ __forceinline__ void fma_frag(float (&acc)[8][kCols], const Frag& f) {
    const float av[8] = {f.a[0].x, f.a[0].y, f.a[0].z, f.a[0].w,
                         f.a[1].x, f.a[1].y, f.a[1].z, f.a[1].w};
    float bv[kCols];
#pragma unroll
    for (int t = 0; t < kTN; ++t) {
      bv[4 * t + 0] = f.b[t].x, bv[4 * t + 1] = f.b[t].y;
      bv[4 * t + 2] = f.b[t].z, bv[4 * t + 3] = f.b[t].w;
    }
    if constexpr (kColOrder) {
#pragma unroll
      for (int j = 0; j < kCols; ++j)
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < kCols; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
  }

  // Row-major A (kARows): this thread's 8 rows, 4 k-steps each, at k-step group g of As.
  static __device__ __forceinline__ void load_a_rows(float4 (&a)[8], const float* As, int g,
                                                     const Pos& p) {
    const int chunk = (g ^ (threadIdx.x % 32 / 8)) * 4;  // r / 4 % 4 == lane_row for all 8
#pragma unroll
    for (int s = 0; s < 2; ++s)
#pragma unroll
      for (int i = 0; i < 4; ++i)
        a[s * 4 + i] =
            *reinterpret_cast<const float4*>(As + (p.a_off + s * 16 + i) * kARowK + chunk);
  }
  static __device__ __forceinline__ float part(const float4& v, int c) {
    return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
  }
  // acc += the k-steps [4 g, 4 g + n) of a row-major A tile (n <= 4).
  static __device__ __forceinline__ void mma_group(float (&acc)[8][kCols], const float* As,
                                                   const float* Bs, int g, int n, const Pos& p) {
    float4 a[8];
    load_a_rows(a, As, g, p);
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      if (c >= n) break;
      Frag f;
#pragma unroll
      for (int t = 0; t < kTN; ++t)
        f.b[t] = *reinterpret_cast<const float4*>(Bs + (4 * g + c) * kLdB + p.b_off + 32 * t);
      f.a[0] = make_float4(part(a[0], c), part(a[1], c), part(a[2], c), part(a[3], c));
      f.a[1] = make_float4(part(a[4], c), part(a[5], c), part(a[6], c), part(a[7], c));
      fma_frag(acc, f);
    }
  }

  // acc += As[0..BK) x Bs[0..BK) for one shared k-tile. Fragments are double-buffered in
  // registers: the LDS for step kk+1 are issued before the FFMAs of step kk, so their latency
  // hides behind arithmetic instead of stalling the warp.
  template <int BK, bool kColOrder = false>
  static __device__ __forceinline__ void mma_ktile(float (&acc)[8][kCols], const float* As,
                                                   const float* Bs, const Pos& p) {
    if constexpr (kARows) {
      static_assert(BK == kARowK, "one row-major A tile per k-tile");
#pragma unroll
      for (int g = 0; g < BK / 4; ++g) mma_group(acc, As, Bs, g, 4, p);
    } else {
      Frag f[2];
      load_frag(f[0], As, Bs, p);
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        if (kk + 1 < BK) load_frag(f[(kk + 1) & 1], As + (kk + 1) * kLdA, Bs + (kk + 1) * kLdB, p);
        fma_frag<kColOrder>(acc, f[kk & 1]);
      }
    }
  }

  // The problem's last k-tile when k % BK != 0: only its first `steps` k rows hold data (the
  // rest were zero-filled), so only those are multiplied. 1025 = 64 x 16 + 1 would otherwise
  // spend 16 FFMA steps on one row of data.
  template <bool kColOrder = false>
  static __device__ __forceinline__ void mma_ksteps(float (&acc)[8][kCols], const float* As,
                                                    const float* Bs, const Pos& p, int steps) {
    if constexpr (kARows) {
#pragma unroll 1
      for (int g = 0; 4 * g < steps; ++g) mma_group(acc, As, Bs, g, steps - 4 * g, p);
    } else {
#pragma unroll 1
      for (int kk = 0; kk < steps; ++kk) {
        Frag f;
        load_frag(f, As + kk * kLdA, Bs + kk * kLdB, p);
        fma_frag<kColOrder>(acc, f);
      }
    }
  }

  // mma_ktile for a pipelined k loop that keeps the register double buffer running across k-tile
  // boundaries: f0 holds step 0 of this k-tile (loaded during the previous one), and the last step
  // loads step 0 of the next k-tile (As_next / Bs_next, when has_next) into f0. So no LDS latency
  // is exposed after the barrier between k-tiles; the caller must make the next k-tile visible
  // (wait + barrier) before calling.
  template <int BK>
  static __device__ __forceinline__ void mma_ktile_carry(float (&acc)[8][kCols], Frag& f0,
                                                         const float* As, const float* Bs,
                                                         const float* As_next,
                                                         const float* Bs_next, bool has_next,
                                                         const Pos& p) {
    static_assert(BK % 2 == 0, "step 0 of the next k-tile lands in f[0]");
    static_assert(!kARows, "the carried loop reads a k-major A");
    Frag f[2];
    f[0] = f0;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      if (kk + 1 < BK)
        load_frag(f[(kk + 1) & 1], As + (kk + 1) * kLdA, Bs + (kk + 1) * kLdB, p);
      else if (has_next)
        load_frag(f[0], As_next, Bs_next, p);
      fma_frag(acc, f[kk & 1]);
    }
    f0 = f[0];
  }

  // A warp whose whole warp tile lies outside C (edge tiles, e.g. the 1-row last tile of 4097)
  // skips the FFMAs: the SM's issue slots go to the warps with real work.
  static __device__ __forceinline__ bool warp_active(const Pos& p, int row0, int col0,
                                                     const Epilogue& ep) {
    return row0 + p.wm < ep.m && col0 + p.wn < ep.n;
  }

  static __device__ __forceinline__ void zero(float (&acc)[8][kCols]) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < kCols; ++j) acc[i][j] = 0.f;
  }

  // C tile (row0, col0) = alpha * acc + beta * C: float4 stores, guarded (scalar where a row
  // segment is misaligned or crosses n).
  static __device__ __forceinline__ void store_tile(const Epilogue& ep, int row0, int col0,
                                                    const Pos& p, const float (&acc)[8][kCols]) {
    if (!ep.plain) {
      // The call takes its accumulators from memory: a copy made here, in the branch. Passed
      // acc itself, the compiler stored all of acc to local memory on every path, the plain one
      // too (never read there, and 2x the DRAM writes of C at small K: docs/history.md).
      float spill[8][kCols];
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < kCols; ++j) spill[i][j] = acc[i][j];
      return store_tile_general(ep, row0, col0, p, spill);
    }
#pragma unroll
    for (int s = 0; s < 2; ++s)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = row0 + p.a_off + s * 16 + i;
#pragma unroll
        for (int t = 0; t < kTN; ++t) {
          const float* v = &acc[s * 4 + i][t * 4];
          ep.store4_plain(r, col0 + p.b_off + t * 32, make_float4(v[0], v[1], v[2], v[3]));
        }
      }
  }
  // The general epilogue (bias, activation, 16-bit D) in one call for the whole tile: the
  // accumulators go to local memory once instead of being saved around a call per store.
  static __device__ __noinline__ void store_tile_general(const Epilogue ep, int row0, int col0,
                                                         const Pos p, const float (&acc)[8][kCols]) {
#pragma unroll 1
    for (int s = 0; s < 2; ++s)
#pragma unroll 1
      for (int i = 0; i < 4; ++i) {
        const int r = row0 + p.a_off + s * 16 + i;
#pragma unroll 1
        for (int t = 0; t < kTN; ++t) {
          const float* v = &acc[s * 4 + i][t * 4];
          ep.store4<true>(r, col0 + p.b_off + t * 32, make_float4(v[0], v[1], v[2], v[3]));
        }
      }
  }

  // Split-k (split_k.cuh): the accumulators as one flat array of 8 * kCols floats per thread.
  static constexpr int kPartialFloats = kBM * kBN;
  using Flat = float[8 * kCols];
  // acc is partial `index` of the n at parts (kPartialFloats apart): publish it and count the
  // arrival (counter: split_counters(n) of them); true in the block that completes the slot, with
  // acc = the n partials summed in a fixed order (split_k.cuh: split_reduce).
  static __device__ __forceinline__ bool reduce_partials(float* parts, int index, int n,
                                                         unsigned long long* counter,
                                                         unsigned long long tag,
                                                         float (&acc)[8][kCols]) {
    __shared__ int last;
    return split_reduce<kThreads>(parts, kPartialFloats, index, n, counter, tag, &last,
                                  threadIdx.x == 0, [] { __syncthreads(); },
                                  reinterpret_cast<Flat&>(acc), static_cast<int>(threadIdx.x));
  }
};

}  // namespace simt_wt
}  // namespace gemmlab
