// Ladder step 9 (simt): 4 x 4 register blocking (with the seed's uncoalesced loads).
//
// Bottleneck: steps 3-7 do one FMA per two shared-memory loads; shared-memory bandwidth, not
// the FMA units, sets the pace.
// Changed from step 4: each of 16 x 16 threads computes a 4 x 4 block of C (a 64 x 64 tile per
// block) held in registers. Per k it loads 4 values of A and 4 of B into registers and does 16
// FMAs: 2 FMAs per shared load instead of 0.5. The tiles are loaded the way seed 002's kernel 4
// does: each thread fetches the elements of its own 4 x 4 footprint, so a warp's B loads stride
// by 4 floats (partly uncoalesced) — the flaw step 10 fixes.
// Seed: 003 (4x4 register blocking, 16x16 threads); 002 kernel 4 (registered.cu).
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 4096^3 25.9 TFLOP/s (50% of 51.6),
//   4097^3 25.5 (57% of 44.5); 64 registers, 4 blocks/SM. Tables: docs/results/h100-ladder.md.
#include "kernels/simt/tiles.cuh"

namespace gemmlab {
namespace {

constexpr int kThreadTile = 4;
constexpr int kThreadsXY = 16;
constexpr int kTile = kThreadsXY * kThreadTile;  // 64 x 64 tile of C
constexpr int kTileK = kThreadsXY;               // 16

__global__ void __launch_bounds__(kThreadsXY * kThreadsXY) regblock_uncoalesced_kernel(SimtArgs s) {
  __shared__ float as[kTile][kTileK];
  __shared__ float bs[kTileK][kTile];
  const TileCoord t = tile_rowmajor(kTile, kTile, s.n_tiles);
  const int ty = threadIdx.y, tx = threadIdx.x;
  float acc[kThreadTile][kThreadTile] = {};
  for (int k0 = 0; k0 < s.k; k0 += kTileK) {
    // Thread-owned footprint: rows ty*4..ty*4+3 of the A tile at column tx, and row ty of the
    // B tile at columns tx*4..tx*4+3 (stride 4 across the warp: uncoalesced).
#pragma unroll
    for (int i = 0; i < kThreadTile; ++i) {
      as[ty * kThreadTile + i][tx] = at_or_zero(s.a, t.row0 + ty * kThreadTile + i, k0 + tx, s.ep.m, s.k);
      bs[ty][tx * kThreadTile + i] = at_or_zero(s.b, k0 + ty, t.col0 + tx * kThreadTile + i, s.k, s.ep.n);
    }
    __syncthreads();
    accumulate_tile<kThreadTile, kThreadTile, kTileK, kTileK, kTile>(
        acc, &as[ty * kThreadTile][0], &bs[0][tx * kThreadTile]);
    __syncthreads();
  }
  store_thread_tile(s.ep, acc, t.row0 + ty * kThreadTile, t.col0 + tx * kThreadTile);
}

LaunchConfig config(const GemmProblem& p) {
  return simt_config<regblock_uncoalesced_kernel, kTile, kTile>(p, dim3(kThreadsXY, kThreadsXY));
}
cudaError_t launch(const GemmProblem& p) {
  return simt_launch<regblock_uncoalesced_kernel, kTile, kTile>(p, dim3(kThreadsXY, kThreadsXY));
}

}  // namespace

extern const KernelDesc kSimtRegblockUncoalesced = {
    .name = "simt/09_regblock_4x4_uncoalesced",
    .step = 9,
    .family = "simt",
    .seed = "seed 003; seed 002 kernel 4",
    .summary = "4x4 outputs per thread in registers (64x64 tile), thread-owned uncoalesced tile loads",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 7,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
