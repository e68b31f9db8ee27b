// Ladder step 10 (simt): register blocking + coalesced cooperative loads.
//
// Bottleneck: step 9's loads follow each thread's own footprint, so warps fetch strided
// addresses and waste most of each memory transaction.
// Changed from step 9: the 256 threads load each tile as one flat array (thread i takes
// elements i, i + 256, ...), so consecutive threads read consecutive addresses of the stored
// matrix (copy_tile also flips the mapping for transposed operands). The A tile's rows are
// padded by one float (seed 003's bank-conflict padding) so the cooperative stores that walk
// down a column of the tile, as transposed operands do, fall in different banks.
// The compute loop is step 9's.
// Seed: 002 kernel 5 (co-registered.cu); 003 (padding against bank conflicts).
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 4096^3 24.2 TFLOP/s (47% of 51.6),
//   4097^3 23.7 (53% of 44.5); 64 registers, 4 blocks/SM. Tables: docs/results/h100-ladder.md.
#include "kernels/simt/tiles.cuh"

namespace gemmlab {
namespace {

constexpr int kThreadTile = 4;
constexpr int kThreadsXY = 16;
constexpr int kThreads = kThreadsXY * kThreadsXY;
constexpr int kTile = kThreadsXY * kThreadTile;  // 64
constexpr int kTileK = 16;
constexpr int kPad = 1;

__global__ void __launch_bounds__(kThreads) regblock_coalesced_kernel(SimtArgs s) {
  __shared__ float as[kTile][kTileK + kPad];
  __shared__ float bs[kTileK][kTile];
  const TileCoord t = tile_rowmajor(kTile, kTile, s.n_tiles);
  const int ty = threadIdx.y, tx = threadIdx.x;
  float acc[kThreadTile][kThreadTile] = {};
  for (int k0 = 0; k0 < s.k; k0 += kTileK) {
    copy_tile<kTile, kTileK, kTileK + kPad, kThreads, false>(&as[0][0], s.a, t.row0, k0, s.ep.m, s.k);
    copy_tile<kTileK, kTile, kTile, kThreads, false>(&bs[0][0], s.b, k0, t.col0, s.k, s.ep.n);
    __syncthreads();
    accumulate_tile<kThreadTile, kThreadTile, kTileK, kTileK + kPad, kTile>(
        acc, &as[ty * kThreadTile][0], &bs[0][tx * kThreadTile]);
    __syncthreads();
  }
  store_thread_tile(s.ep, acc, t.row0 + ty * kThreadTile, t.col0 + tx * kThreadTile);
}

LaunchConfig config(const GemmProblem& p) {
  return simt_config<regblock_coalesced_kernel, kTile, kTile>(p, dim3(kThreadsXY, kThreadsXY));
}
cudaError_t launch(const GemmProblem& p) {
  return simt_launch<regblock_coalesced_kernel, kTile, kTile>(p, dim3(kThreadsXY, kThreadsXY));
}

}  // namespace

extern const KernelDesc kSimtRegblockCoalesced = {
    .name = "simt/10_regblock_4x4_coalesced",
    .step = 10,
    .family = "simt",
    .seed = "seed 002 kernel 5; seed 003 padding",
    .summary = "4x4 register blocking with coalesced cooperative tile loads, padded A tile",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 8,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
