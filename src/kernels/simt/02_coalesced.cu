// Ladder step 2 (simt): global-memory coalescing.
//
// Bottleneck: step 1 maps threadIdx.x to rows of C, so a warp's 32 loads of B (and its stores of
// C) land in 32 different rows: 32 memory transactions per warp-wide load.
// Changed from step 1: threadIdx.x now walks the columns of C. A warp reads 32 consecutive
// elements of a row of B (one or two transactions) and one broadcast element of A; its C stores
// are consecutive too. Same arithmetic, same reuse, only the thread -> element mapping differs.
// Seed: 002 kernel 1's coalescing discussion; 000 v1 notes the uncoalesced B access.
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 4096^3 6.1 TFLOP/s (12% of 51.6),
//   4097^3 6.0 (14% of 44.5); 32 registers, 8 blocks/SM. Tables: docs/results/h100-ladder.md.
#include "kernels/simt/tiles.cuh"

namespace gemmlab {
namespace {

constexpr int kRows = 8;   // threadIdx.y -> row
constexpr int kCols = 32;  // threadIdx.x -> column: a warp spans one row of 32 columns

__global__ void coalesced_kernel(SimtArgs s) {
  const TileCoord t = tile_rowmajor(kRows, kCols, s.n_tiles);
  const int row = t.row0 + threadIdx.y;
  const int col = t.col0 + threadIdx.x;
  if (row >= s.ep.m || col >= s.ep.n) return;
  float acc = 0.f;
  for (int i = 0; i < s.k; ++i) acc = fmaf(s.a.at(row, i), s.b.at(i, col), acc);
  s.ep.store(row, col, acc);
}

LaunchConfig config(const GemmProblem& p) {
  return simt_config<coalesced_kernel, kRows, kCols>(p, dim3(kCols, kRows));
}
cudaError_t launch(const GemmProblem& p) {
  return simt_launch<coalesced_kernel, kRows, kCols>(p, dim3(kCols, kRows));
}

}  // namespace

extern const KernelDesc kSimtCoalesced = {
    .name = "simt/02_coalesced",
    .step = 2,
    .family = "simt",
    .seed = "seed 002 kernel 1 (coalescing fix); seed 000 v1",
    .summary = "one thread per output, threadIdx.x walks columns so warps read consecutive addresses",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 2,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
