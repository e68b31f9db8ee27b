// Ladder step 7 (simt): tiling + double-buffered shared memory.
//
// Bottleneck: in steps 3-6 the whole block waits at __syncthreads() while a tile arrives from
// global memory, then computes while no load is in flight.
// Changed from step 4: two shared buffers per operand. While the block computes on tile t in
// one buffer, it loads tile t+1 into the other, so the loads' latency overlaps the FMAs, and one
// barrier per k-tile suffices instead of two (the buffer being written was last read before the
// previous barrier).
// Seed: 002 kernel 3 (double_buffering.cu).
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 4096^3 6.9 TFLOP/s (13% of 51.6),
//   4097^3 6.8 (15% of 44.5); 32 registers, 2 blocks/SM. Tables: docs/results/h100-ladder.md.
#include "kernels/simt/tiles.cuh"

namespace gemmlab {
namespace {

constexpr int kTile = 32;
constexpr int kThreads = kTile * kTile;

__global__ void __launch_bounds__(kThreads) double_buffered_kernel(SimtArgs s) {
  __shared__ float as[2][kTile][kTile];
  __shared__ float bs[2][kTile][kTile];
  const TileCoord t = tile_rowmajor(kTile, kTile, s.n_tiles);
  const int ty = threadIdx.y, tx = threadIdx.x;
  const bool rows_inside = t.row0 + kTile <= s.ep.m;
  const bool cols_inside = t.col0 + kTile <= s.ep.n;
  auto load = [&](int buf, int k0) {
    const bool k_inside = k0 + kTile <= s.k;
    copy_tile_unchecked_inside<kTile, kTile, kTile, kThreads, false>(
        &as[buf][0][0], s.a, rows_inside && k_inside, t.row0, k0, s.ep.m, s.k);
    copy_tile_unchecked_inside<kTile, kTile, kTile, kThreads, false>(
        &bs[buf][0][0], s.b, cols_inside && k_inside, k0, t.col0, s.k, s.ep.n);
  };
  load(0, 0);
  __syncthreads();
  float acc = 0.f;
  int buf = 0;
  for (int k0 = 0; k0 < s.k; k0 += kTile) {
    if (k0 + kTile < s.k) load(buf ^ 1, k0 + kTile);  // next tile into the other buffer
#pragma unroll
    for (int i = 0; i < kTile; ++i) acc = fmaf(as[buf][ty][i], bs[buf][i][tx], acc);
    __syncthreads();  // next tile written, and this one fully read, before the roles swap
    buf ^= 1;
  }
  s.ep.store(t.row0 + ty, t.col0 + tx, acc);
}

LaunchConfig config(const GemmProblem& p) {
  return simt_config<double_buffered_kernel, kTile, kTile>(p, dim3(kTile, kTile));
}
cudaError_t launch(const GemmProblem& p) {
  return simt_launch<double_buffered_kernel, kTile, kTile>(p, dim3(kTile, kTile));
}

}  // namespace

extern const KernelDesc kSimtSmemDoubleBuffered = {
    .name = "simt/07_smem_double_buffered",
    .step = 7,
    .family = "simt",
    .seed = "seed 002 kernel 3",
    .summary = "32x32 tiles, two shared buffers: load tile t+1 while computing tile t",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 6,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
