// Ladder step 6 (simt): rectangular 8 x 32 block tiles.
//
// Bottleneck: seed 001 found 32 x 32 blocks (1024 threads) limit occupancy, while square 8 x 8
// blocks waste most of each 128-byte transaction (8 floats = 32 bytes per row).
// Changed from step 4: a block of 32 x 8 threads owns an 8-row x 32-column tile of C. Rows of
// every tile stay 32 floats wide (a full 128-byte line per warp), blocks are 4x smaller (more of
// them resident per SM), and each thread loads one element of the 8 x 32 A tile and four of the
// 32 x 32 B tile. Interior tiles still load without checks (step 4).
// Seed: 001 "Rectangular Tiles" (TILE_ROWS 8, TILE_COLS 32).
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 4096^3 6.7 TFLOP/s (13% of 51.6),
//   4097^3 6.6 (15% of 44.5); 40 registers, 6 blocks/SM. Tables: docs/results/h100-ladder.md.
#include "kernels/simt/tiles.cuh"

namespace gemmlab {
namespace {

constexpr int kTileRows = 8;   // rows of C per block
constexpr int kTileCols = 32;  // columns of C per block, and the k-depth of a tile
constexpr int kThreads = kTileRows * kTileCols;

__global__ void __launch_bounds__(kThreads) rect_tiles_kernel(SimtArgs s) {
  __shared__ float as[kTileRows][kTileCols];  // 8 rows of op(A) x 32 k
  __shared__ float bs[kTileCols][kTileCols];  // 32 k x 32 columns of op(B)
  const TileCoord t = tile_rowmajor(kTileRows, kTileCols, s.n_tiles);
  const int ty = threadIdx.y, tx = threadIdx.x;
  const bool rows_inside = t.row0 + kTileRows <= s.ep.m;
  const bool cols_inside = t.col0 + kTileCols <= s.ep.n;
  float acc = 0.f;
  for (int k0 = 0; k0 < s.k; k0 += kTileCols) {
    const bool k_inside = k0 + kTileCols <= s.k;
    copy_tile_unchecked_inside<kTileRows, kTileCols, kTileCols, kThreads, false>(&as[0][0], s.a, rows_inside && k_inside, t.row0, k0, s.ep.m, s.k);
    copy_tile_unchecked_inside<kTileCols, kTileCols, kTileCols, kThreads, false>(&bs[0][0], s.b, cols_inside && k_inside, k0, t.col0, s.k, s.ep.n);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kTileCols; ++i) acc = fmaf(as[ty][i], bs[i][tx], acc);
    __syncthreads();
  }
  s.ep.store(t.row0 + ty, t.col0 + tx, acc);
}

LaunchConfig config(const GemmProblem& p) {
  return simt_config<rect_tiles_kernel, kTileRows, kTileCols>(p, dim3(kTileCols, kTileRows));
}
cudaError_t launch(const GemmProblem& p) {
  return simt_launch<rect_tiles_kernel, kTileRows, kTileCols>(p, dim3(kTileCols, kTileRows));
}

}  // namespace

extern const KernelDesc kSimtRectTiles8x32 = {
    .name = "simt/06_rect_tiles_8x32",
    .step = 6,
    .family = "simt",
    .seed = "seed 001 rectangular tiles (8x32)",
    .summary = "8x32 block tiles: full 128-byte rows with small blocks",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 5,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
