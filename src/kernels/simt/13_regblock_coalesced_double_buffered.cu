// Ladder step 13 (simt): register blocking + coalescing + double buffering.
//
// Bottleneck: step 10 still stalls the block at every tile boundary while the next tiles load.
// Changed from step 10: two shared buffers per operand, as step 7 added to step 4: tile t+1 is
// loaded into one while the 4 x 4 register-blocked compute runs on the other; one barrier per
// k-tile. Seed 002 found this slower than kernel 5 on its GPU (register blocking already hides
// the latency, and the extra buffer bookkeeping costs instructions); gemm-bench measures it here.
// Seed: 002 kernel 6 (not_chosen.cu).
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 4096^3 20.5 TFLOP/s (40% of 51.6),
//   4097^3 22.2 (50% of 44.5); 66 registers, 3 blocks/SM. Tables: docs/results/h100-ladder.md.
#include "kernels/simt/tiles.cuh"

namespace gemmlab {
namespace {

constexpr int kThreadTile = 4;
constexpr int kThreadsXY = 16;
constexpr int kThreads = kThreadsXY * kThreadsXY;
constexpr int kTile = 64;
constexpr int kTileK = 16;
constexpr int kPad = 1;

__global__ void __launch_bounds__(kThreads) regblock_double_buffered_kernel(SimtArgs s) {
  __shared__ float as[2][kTile][kTileK + kPad];
  __shared__ float bs[2][kTileK][kTile];
  const TileCoord t = tile_rowmajor(kTile, kTile, s.n_tiles);
  const int ty = threadIdx.y, tx = threadIdx.x;
  auto load = [&](int buf, int k0) {
    copy_tile<kTile, kTileK, kTileK + kPad, kThreads, false>(&as[buf][0][0], s.a, t.row0, k0, s.ep.m, s.k);
    copy_tile<kTileK, kTile, kTile, kThreads, false>(&bs[buf][0][0], s.b, k0, t.col0, s.k, s.ep.n);
  };
  float acc[kThreadTile][kThreadTile] = {};
  load(0, 0);
  __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < s.k; k0 += kTileK) {
    if (k0 + kTileK < s.k) load(buf ^ 1, k0 + kTileK);
    accumulate_tile<kThreadTile, kThreadTile, kTileK, kTileK + kPad, kTile>(
        acc, &as[buf][ty * kThreadTile][0], &bs[buf][0][tx * kThreadTile]);
    __syncthreads();
    buf ^= 1;
  }
  store_thread_tile(s.ep, acc, t.row0 + ty * kThreadTile, t.col0 + tx * kThreadTile);
}

LaunchConfig config(const GemmProblem& p) {
  return simt_config<regblock_double_buffered_kernel, kTile, kTile>(p, dim3(kThreadsXY, kThreadsXY));
}
cudaError_t launch(const GemmProblem& p) {
  return simt_launch<regblock_double_buffered_kernel, kTile, kTile>(p, dim3(kThreadsXY, kThreadsXY));
}

}  // namespace

extern const KernelDesc kSimtRegblockDoubleBuffered = {
    .name = "simt/13_regblock_coalesced_double_buffered",
    .step = 13,
    .family = "simt",
    .seed = "seed 002 kernel 6",
    .summary = "step 10 plus double-buffered shared memory",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 11,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
