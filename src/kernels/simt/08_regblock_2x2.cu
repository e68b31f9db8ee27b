// Ladder step 8 (simt): 2 x 2 register blocking on 32 x 32 shared tiles.
//
// Bottleneck: steps 3-7 do one FMA per two shared-memory loads (as[ty][i], bs[i][tx]), so the
// load/store pipe, not the FMA units, sets the pace.
// Changed from step 4 (one shared buffer again; step 7's second buffer is not part of this
// lesson): the block is 16 x 16 threads for the same 32 x 32 tile of C, and each thread keeps a
// 2 x 2 block of C in registers. Per k it loads 2 values of A and 2 of B and does 4 FMAs: one
// FMA per shared load instead of a half, and half as many threads to do the tile copies.
// The copies are step 4's (coalesced, unchecked for interior tiles).
// Step 9 goes to 4 x 4 per thread and 64 x 64 tiles.
// Seed: 000 v3 "Register Blocking" (TILESIZE 32, REGTILE 2).
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 2048^3 16.8 TFLOP/s
//   (34% of 49.6; step 3: 7.0), 4096^3 17.4 (34% of 52.0), 4097^3 17.1 (39% of 44.2); 32 registers,
//   8 blocks/SM (100%); ncu: L1/shared pipe 94% busy, FMA pipe 31%. Tables: docs/seeds.md.
#include "kernels/simt/tiles.cuh"

namespace gemmlab {
namespace {

constexpr int kTile = 32;                       // 32 x 32 tile of C, k-depth 32
constexpr int kRegTile = 2;                     // 2 x 2 outputs per thread
constexpr int kThreadsXY = kTile / kRegTile;    // 16 x 16 threads
constexpr int kThreads = kThreadsXY * kThreadsXY;

__global__ void __launch_bounds__(kThreads) regblock_2x2_kernel(SimtArgs s) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile];
  const TileCoord t = tile_rowmajor(kTile, kTile, s.n_tiles);
  const int ty = threadIdx.y, tx = threadIdx.x;
  const bool rows_inside = t.row0 + kTile <= s.ep.m;
  const bool cols_inside = t.col0 + kTile <= s.ep.n;
  float acc[kRegTile][kRegTile] = {};
  for (int k0 = 0; k0 < s.k; k0 += kTile) {
    const bool k_inside = k0 + kTile <= s.k;
    copy_tile_unchecked_inside<kTile, kTile, kTile, kThreads, false>(&as[0][0], s.a, rows_inside && k_inside, t.row0, k0, s.ep.m, s.k);
    copy_tile_unchecked_inside<kTile, kTile, kTile, kThreads, false>(&bs[0][0], s.b, cols_inside && k_inside, k0, t.col0, s.k, s.ep.n);
    __syncthreads();
    // Per k: a[i] = as[ty*2 + i][k], b[j] = bs[k][tx*2 + j], acc += a (outer) b.
    accumulate_tile<kRegTile, kRegTile, kTile, kTile, kTile>(acc, &as[ty * kRegTile][0], &bs[0][tx * kRegTile]);
    __syncthreads();
  }
  store_thread_tile(s.ep, acc, t.row0 + ty * kRegTile, t.col0 + tx * kRegTile);
}

LaunchConfig config(const GemmProblem& p) {
  return simt_config<regblock_2x2_kernel, kTile, kTile>(p, dim3(kThreadsXY, kThreadsXY));
}
cudaError_t launch(const GemmProblem& p) {
  return simt_launch<regblock_2x2_kernel, kTile, kTile>(p, dim3(kThreadsXY, kThreadsXY));
}

}  // namespace

extern const KernelDesc kSimtRegblock2x2 = {
    .name = "simt/08_regblock_2x2",
    .step = 8,
    .family = "simt",
    .seed = "seed 000 v3",
    .summary = "2x2 outputs per thread in registers on 32x32 shared tiles (16x16 threads)",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 0,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
