// Ladder step 11 (simt): float4 vectorized loads, 64 x 64 tile, 4 x 4 per thread.
//
// Bottleneck: step 10 issues one 4-byte instruction per element moved, globally and in shared
// memory; instruction issue and address arithmetic, not bandwidth, dominate the loads.
// Changed from step 10: global loads are 16-byte float4 (copy_tile_vec4: when rows are 16-byte
// aligned and the tile is inside the matrix; scalar otherwise), the A tile is stored transposed
// in shared memory (as[k][m]) so that a thread's 4 A values for one k are contiguous, and the
// inner loop reads A and B from shared memory as one float4 each: 2 LDS.128 per 16 FMAs.
// C is written with float4 stores (Epilogue::store4).
// Seed: 000 v4 (memory vectorization, TILESIZE 64, REGTILE 4).
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 4096^3 10.8 TFLOP/s (21% of 51.6),
//   4097^3 9.2 (21% of 44.5); 159 registers, 1 blocks/SM. Tables: docs/results/h100-ladder.md.
#include "kernels/simt/tiles.cuh"

namespace gemmlab {
namespace {

constexpr int kThreadTile = 4;
constexpr int kThreadsXY = 16;
constexpr int kThreads = kThreadsXY * kThreadsXY;
constexpr int kTile = 64;
constexpr int kTileK = 16;

__global__ void __launch_bounds__(kThreads) vectorized_kernel(SimtArgs s) {
  __shared__ __align__(16) float as[kTileK][kTile];  // transposed: as[k][m]
  __shared__ __align__(16) float bs[kTileK][kTile];
  const TileCoord t = tile_rowmajor(kTile, kTile, s.n_tiles);
  const int ty = threadIdx.y, tx = threadIdx.x;
  float acc[kThreadTile][kThreadTile] = {};
  for (int k0 = 0; k0 < s.k; k0 += kTileK) {
    copy_tile_vec4<kTile, kTileK, kTile, kThreads, true>(&as[0][0], s.a, s.vec_a, t.row0, k0, s.ep.m, s.k);
    copy_tile_vec4<kTileK, kTile, kTile, kThreads, false>(&bs[0][0], s.b, s.vec_b, k0, t.col0, s.k, s.ep.n);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      const float4 av = *reinterpret_cast<const float4*>(&as[kk][ty * kThreadTile]);
      const float4 bv = *reinterpret_cast<const float4*>(&bs[kk][tx * kThreadTile]);
      const float a[4] = {av.x, av.y, av.z, av.w}, b[4] = {bv.x, bv.y, bv.z, bv.w};
      outer_product(acc, a, b);
    }
    __syncthreads();
  }
  store_thread_tile(s.ep, acc, t.row0 + ty * kThreadTile, t.col0 + tx * kThreadTile);
}

LaunchConfig config(const GemmProblem& p) {
  return simt_config<vectorized_kernel, kTile, kTile>(p, dim3(kThreadsXY, kThreadsXY));
}
cudaError_t launch(const GemmProblem& p) {
  return simt_launch<vectorized_kernel, kTile, kTile>(p, dim3(kThreadsXY, kThreadsXY));
}

}  // namespace

extern const KernelDesc kSimtVectorizedFloat4 = {
    .name = "simt/11_vectorized_float4",
    .step = 11,
    .family = "simt",
    .seed = "seed 000 v4",
    .summary = "float4 global and shared loads, A transposed in shared memory, 64x64 tile, 4x4 per thread",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 9,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
