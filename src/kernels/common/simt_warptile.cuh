// The warp-tiled FP32 micro-kernel shared by the simt steps past the seeds (12, 13): how a 128x128
// block tile splits into warp tiles and thread tiles, how fragments are read from shared memory,
// the FFMA loop over one shared k-tile, and the epilogue. The steps differ only in how tiles get
// from global into shared memory (registers in 12, cp.async multi-stage in 13).
//
// Shared layout (both operands, every transpose): "k-major", Xs[k][r] with r = row of op(A)
// (0..127) or column of op(B), row stride kLdS = 128 + 4 floats. The loaders put the tile there
// whatever the global layout; the +4 keeps every row 16-byte aligned (float4 reads) and skews the
// rows for the loaders that write one element per row (transposing stores).
//
// Block 128 x 128, 256 threads = 8 warps as 4 (m) x 2 (n); warp tile 32 x 64; inside a warp,
// lanes form 4 (m) x 8 (n): lane_row = lane / 8, lane_col = lane % 8. Each thread owns 8 x 8
// outputs as 2 x 2 sub-tiles of 4 x 4:
//   rows  wm + s*16 + lane_row*4 + i   (s = 0..1, i = 0..3)
//   cols  wn + t*32 + lane_col*4 + j   (t = 0..1, j = 0..3)
// Why this shape: per k step a warp needs 32 A values and 64 B values, i.e. 128 B + 256 B of unique
// shared data for 2048 FFMAs. A float4 read of A by a warp touches 4 distinct 16-byte words (the 8
// lanes of a quarter-warp share lane_row, so they broadcast); a float4 read of B touches 8
// consecutive 16-byte words (one 128-byte line). Both are one wavefront: no bank conflicts, and
// 4 LDS.128 feed 64 FFMA per thread.
#pragma once

#include "kernels/common/gemm_common.cuh"

namespace gemmlab {
namespace simt_wt {

constexpr int kThreads = 256;
constexpr int kBM = 128, kBN = 128;  // block tile (rows of C, columns of C)
constexpr int kWarpsM = 4;           // warps along m; 8 / kWarpsM = 2 along n
constexpr int kWarpM = 32, kWarpN = 64;
constexpr int kLdS = 128 + 4;  // shared row stride in floats, for both Xs[k][r]

// Offsets of this thread's first A and B element inside a shared k-row.
struct ThreadPos {
  int a_off, b_off;
};

__device__ __forceinline__ ThreadPos thread_pos() {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = (warp % kWarpsM) * kWarpM, wn = (warp / kWarpsM) * kWarpN;
  return {wm + (lane / 8) * 4, wn + (lane % 8) * 4};
}

// One k step of fragments: a[s] = 4 rows of sub-tile s, b[t] = 4 columns of sub-tile t.
struct Frag {
  float4 a[2], b[2];
};

__device__ __forceinline__ void load_frag(Frag& f, const float* As_k, const float* Bs_k,
                                          ThreadPos pos) {
  f.a[0] = *reinterpret_cast<const float4*>(As_k + pos.a_off);
  f.a[1] = *reinterpret_cast<const float4*>(As_k + pos.a_off + 16);
  f.b[0] = *reinterpret_cast<const float4*>(Bs_k + pos.b_off);
  f.b[1] = *reinterpret_cast<const float4*>(Bs_k + pos.b_off + 32);
}

__device__ __forceinline__ void fma_frag(float (&acc)[8][8], const Frag& f) {
  const float av[8] = {f.a[0].x, f.a[0].y, f.a[0].z, f.a[0].w,
                       f.a[1].x, f.a[1].y, f.a[1].z, f.a[1].w};
  const float bv[8] = {f.b[0].x, f.b[0].y, f.b[0].z, f.b[0].w,
                       f.b[1].x, f.b[1].y, f.b[1].z, f.b[1].w};
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
}

// acc += As[0..BK) x Bs[0..BK) for one shared k-tile. Fragments are double-buffered in registers:
// the LDS for step kk+1 are issued before the 64 FFMAs of step kk, so their latency hides behind
// arithmetic instead of stalling the warp.
template <int BK>
__device__ __forceinline__ void mma_ktile(float (&acc)[8][8], const float* As, const float* Bs,
                                          ThreadPos pos) {
  Frag f[2];
  load_frag(f[0], As, Bs, pos);
#pragma unroll
  for (int kk = 0; kk < BK; ++kk) {
    if (kk + 1 < BK) load_frag(f[(kk + 1) & 1], As + (kk + 1) * kLdS, Bs + (kk + 1) * kLdS, pos);
    fma_frag(acc, f[kk & 1]);
  }
}

// C tile (row0, col0) = alpha * acc + beta * C, 16 float4 stores per thread (guarded, and scalar
// where a row segment is misaligned or crosses n).
__device__ __forceinline__ void store_tile(const Epilogue& ep, int row0, int col0, ThreadPos pos,
                                           const float (&acc)[8][8]) {
#pragma unroll
  for (int s = 0; s < 2; ++s)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = row0 + pos.a_off + s * 16 + i;
#pragma unroll
      for (int t = 0; t < 2; ++t) {
        const float* v = &acc[s * 4 + i][t * 4];
        ep.store4(r, col0 + pos.b_off + t * 32, make_float4(v[0], v[1], v[2], v[3]));
      }
    }
}

}  // namespace simt_wt
}  // namespace gemmlab
