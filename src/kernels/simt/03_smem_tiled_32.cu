// Ladder step 3 (simt): shared-memory tiling, 32 x 32.
//
// Bottleneck: steps 1-2 fetch every operand element from L2/DRAM once per output that uses it
// (2K loads per 2K flops).
// Changed from step 2: a 32 x 32 block cooperatively stages a 32 x 32 tile of op(A) and of op(B)
// in shared memory, then each thread reads its row / column of the tiles from there: global
// traffic drops by the tile width, 32x. Each load is bounds-checked with an if/else per element
// (zero outside the matrix), as in the seeds; those branches are what step 4 removes.
// Seed: 000 v2, 002 kernel 2, 001 baseline (TILE_SIZE 32).
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 4096^3 6.7 TFLOP/s (13% of 51.6),
//   4097^3 6.5 (15% of 44.5); 32 registers, 2 blocks/SM. Tables: docs/results/h100-ladder.md.
#include "kernels/simt/tiles.cuh"

namespace gemmlab {
namespace {

constexpr int kTile = 32;

__global__ void __launch_bounds__(kTile * kTile) smem_tiled_kernel(SimtArgs s) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile];
  const TileCoord t = tile_rowmajor(kTile, kTile, s.n_tiles);
  const int ty = threadIdx.y, tx = threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < s.k; k0 += kTile) {
    copy_tile<kTile, kTile, kTile, kTile * kTile, false>(&as[0][0], s.a, t.row0, k0, s.ep.m, s.k);
    copy_tile<kTile, kTile, kTile, kTile * kTile, false>(&bs[0][0], s.b, k0, t.col0, s.k, s.ep.n);
    __syncthreads();  // tiles complete before anyone reads them
#pragma unroll
    for (int i = 0; i < kTile; ++i) acc = fmaf(as[ty][i], bs[i][tx], acc);
    __syncthreads();  // everyone done reading before the next tile overwrites
  }
  s.ep.store(t.row0 + ty, t.col0 + tx, acc);
}

LaunchConfig config(const GemmProblem& p) {
  return simt_config<smem_tiled_kernel, kTile, kTile>(p, dim3(kTile, kTile));
}
cudaError_t launch(const GemmProblem& p) {
  return simt_launch<smem_tiled_kernel, kTile, kTile>(p, dim3(kTile, kTile));
}

}  // namespace

extern const KernelDesc kSimtSmemTiled32 = {
    .name = "simt/03_smem_tiled_32",
    .step = 3,
    .family = "simt",
    .seed = "seed 000 v2; seed 002 kernel 2; seed 001 baseline",
    .summary = "32x32 shared-memory tiles, bounds-checked (divergent) loads",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 3,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
