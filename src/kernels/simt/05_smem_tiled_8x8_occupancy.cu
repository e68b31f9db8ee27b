// Ladder step 5 (simt): small 8 x 8 tiles, chosen for occupancy.
//
// Bottleneck: seed 001 profiled step 4 on an RTX 4090 at 66.7% occupancy: a 32 x 32 block is
// 1024 threads and the SM holds 1536, so one block per SM and a third of the warp slots empty,
// too few warps to hide the latency of the tile loads.
// Changed from step 4: the tile (and the block) is 8 x 8 instead of 32 x 32. A block is now 64
// threads and 512 bytes of shared memory, so many blocks fit on an SM (the seed's profile: 93%
// occupancy). __launch_bounds__ asks for 32 of them per SM: left alone, nvcc gives this kernel
// 48 registers, which caps an H100 SM at 20 blocks (62%) and measured 24-27% slower still.
// The price: every element of A and B is fetched 4x as often (N / 8 times instead of N / 32),
// and each k-tile pays its copies and two barriers for only 8 FMAs per thread (ncu at 1024^3:
// 4x the global load sectors and 2.5x the instructions of step 4).
// Step 6 keeps the small block but makes the tile rows 32 floats wide again.
// Seed: 001 "Small block/tile size for better occupancy" (TILE_SIZE 8).
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 1024^3 3.9 TFLOP/s
//   (11% of 34.4; step 4: 6.6), 1025^3 3.8 (12% of 30.5), 4096^3 4.3 (8% of 52.0); 32 registers,
//   32 blocks/SM (100%, as step 4 already has on this GPU). Tables and ncu: docs/seeds.md.
#include "kernels/simt/tiles.cuh"

namespace gemmlab {
namespace {

constexpr int kTile = 8;
constexpr int kThreads = kTile * kTile;
constexpr int kBlocksPerSm = 2048 / kThreads;  // 32 blocks fill an sm_80 / sm_90 SM: <= 32 registers

__global__ void __launch_bounds__(kThreads, kBlocksPerSm) smem_tiled_8x8_kernel(SimtArgs s) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile];
  const TileCoord t = tile_rowmajor(kTile, kTile, s.n_tiles);
  const int ty = threadIdx.y, tx = threadIdx.x;
  const bool rows_inside = t.row0 + kTile <= s.ep.m;
  const bool cols_inside = t.col0 + kTile <= s.ep.n;
  float acc = 0.f;
  for (int k0 = 0; k0 < s.k; k0 += kTile) {
    const bool k_inside = k0 + kTile <= s.k;
    copy_tile_unchecked_inside<kTile, kTile, kTile, kThreads, false>(&as[0][0], s.a, rows_inside && k_inside, t.row0, k0, s.ep.m, s.k);
    copy_tile_unchecked_inside<kTile, kTile, kTile, kThreads, false>(&bs[0][0], s.b, cols_inside && k_inside, k0, t.col0, s.k, s.ep.n);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kTile; ++i) acc = fmaf(as[ty][i], bs[i][tx], acc);
    __syncthreads();
  }
  s.ep.store(t.row0 + ty, t.col0 + tx, acc);
}

LaunchConfig config(const GemmProblem& p) {
  return simt_config<smem_tiled_8x8_kernel, kTile, kTile>(p, dim3(kTile, kTile));
}
cudaError_t launch(const GemmProblem& p) {
  return simt_launch<smem_tiled_8x8_kernel, kTile, kTile>(p, dim3(kTile, kTile));
}

}  // namespace

extern const KernelDesc kSimtSmemTiled8x8Occupancy = {
    .name = "simt/05_smem_tiled_8x8_occupancy",
    .step = 5,
    .family = "simt",
    .seed = "seed 001 occupancy (8x8 tiles)",
    .summary = "8x8 tiles and blocks for occupancy; each element loaded 4x as often as with 32x32",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 0,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
