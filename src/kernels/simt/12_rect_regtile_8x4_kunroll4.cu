// Ladder step 12 (simt): rectangular 8 x 4 register tile with k-unroll 4.
//
// Bottleneck: with 4 x 4 outputs a thread does 16 FMAs per 8 values loaded from shared memory.
// Changed from step 11: each thread owns 8 rows x 4 columns (128 threads per 64 x 64 tile):
// 32 FMAs per 12 values loaded, the same B values reused against twice as many A values. The
// k-loop is unrolled by 4 explicitly, as in the seed, so the loads of four k-steps are issued
// together ahead of their 128 FMAs (instruction-level parallelism).
// Seed: 000 v5 (rectangular tiling, REGTILE_M 8, REGTILE_N 4, k += 4).
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 4096^3 21.9 TFLOP/s (42% of 51.6),
//   4097^3 18.6 (42% of 44.5); 127 registers, 4 blocks/SM. Tables: docs/results/h100-ladder.md.
#include "kernels/simt/tiles.cuh"

namespace gemmlab {
namespace {

constexpr int kRowsPerThread = 8;
constexpr int kColsPerThread = 4;
constexpr int kThreadsX = 16;  // 16 x 4 = 64 columns
constexpr int kThreadsY = 8;   // 8 x 8 = 64 rows
constexpr int kThreads = kThreadsX * kThreadsY;
constexpr int kTile = 64;
constexpr int kTileK = 16;
constexpr int kUnroll = 4;

__global__ void __launch_bounds__(kThreads) rect_regtile_kernel(SimtArgs s) {
  __shared__ __align__(16) float as[kTileK][kTile];  // transposed: as[k][m]
  __shared__ __align__(16) float bs[kTileK][kTile];
  const TileCoord t = tile_rowmajor(kTile, kTile, s.n_tiles);
  const int ty = threadIdx.y, tx = threadIdx.x;
  float acc[kRowsPerThread][kColsPerThread] = {};
  for (int k0 = 0; k0 < s.k; k0 += kTileK) {
    copy_tile_vec4<kTile, kTileK, kTile, kThreads, true>(&as[0][0], s.a, s.vec_a, t.row0, k0, s.ep.m, s.k);
    copy_tile_vec4<kTileK, kTile, kTile, kThreads, false>(&bs[0][0], s.b, s.vec_b, k0, t.col0, s.k, s.ep.n);
    __syncthreads();
    for (int kk = 0; kk < kTileK; kk += kUnroll) {
      float a[kUnroll][kRowsPerThread], b[kUnroll][kColsPerThread];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {  // all loads of four k-steps first ...
        const float4 a0 = *reinterpret_cast<const float4*>(&as[kk + u][ty * kRowsPerThread]);
        const float4 a1 = *reinterpret_cast<const float4*>(&as[kk + u][ty * kRowsPerThread + 4]);
        const float4 bv = *reinterpret_cast<const float4*>(&bs[kk + u][tx * kColsPerThread]);
        a[u][0] = a0.x, a[u][1] = a0.y, a[u][2] = a0.z, a[u][3] = a0.w;
        a[u][4] = a1.x, a[u][5] = a1.y, a[u][6] = a1.z, a[u][7] = a1.w;
        b[u][0] = bv.x, b[u][1] = bv.y, b[u][2] = bv.z, b[u][3] = bv.w;
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) outer_product(acc, a[u], b[u]);  // ... then 128 FMAs
    }
    __syncthreads();
  }
  store_thread_tile(s.ep, acc, t.row0 + ty * kRowsPerThread, t.col0 + tx * kColsPerThread);
}

LaunchConfig config(const GemmProblem& p) {
  return simt_config<rect_regtile_kernel, kTile, kTile>(p, dim3(kThreadsX, kThreadsY));
}
cudaError_t launch(const GemmProblem& p) {
  return simt_launch<rect_regtile_kernel, kTile, kTile>(p, dim3(kThreadsX, kThreadsY));
}

}  // namespace

extern const KernelDesc kSimtRectRegtile8x4 = {
    .name = "simt/12_rect_regtile_8x4_kunroll4",
    .step = 12,
    .family = "simt",
    .seed = "seed 000 v5",
    .summary = "8x4 outputs per thread (64x64 tile, 128 threads), k-loop unrolled by 4",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 10,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
