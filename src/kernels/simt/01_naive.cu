// Ladder step 1 (simt): naive, one thread per element of C.
//
// Bottleneck: global memory. Each thread reads a whole row of op(A) and column of op(B) from
// DRAM/L2, 2*K loads per 2*K flops, with no reuse between threads beyond what L1/L2 catch.
// Changed from before: nothing, this is the baseline. threadIdx.x walks rows of C, so a warp's
// B loads (and C stores) are 32 different rows apart: uncoalesced, as in the seeds.
// Seed: 000 v1, 002 kernel 1.
// Measured (H100 SXM, gemm-bench, cuBLAS SGEMM in the same run): 4096^3 0.5 TFLOP/s (1% of 51.6),
//   4097^3 1.7 (4% of 44.5); 32 registers, 8 blocks/SM. Tables: docs/results/h100-ladder.md.
#include "kernels/common/gemm_common.cuh"
#include "kernels/common/launch.cuh"

namespace gemmlab {
namespace {

constexpr int kBlockRows = 32;  // threadIdx.x -> row (the seeds' uncoalesced mapping)
constexpr int kBlockCols = 8;

__global__ void naive_kernel(Operand<float> a, Operand<float> b, Epilogue ep, int k, int n_tiles) {
  const TileCoord t = tile_rowmajor(kBlockRows, kBlockCols, n_tiles);
  const int row = t.row0 + threadIdx.x;
  const int col = t.col0 + threadIdx.y;
  if (row >= ep.m || col >= ep.n) return;
  float acc = 0.f;
  for (int i = 0; i < k; ++i) acc = fmaf(a.at(row, i), b.at(i, col), acc);
  ep.store(row, col, acc);
}

LaunchConfig config(const GemmProblem& p) {
  return {reinterpret_cast<const void*>(naive_kernel),
          grid_1d(make_tile_grid(p, kBlockRows, kBlockCols)), dim3(kBlockRows, kBlockCols), 0};
}

cudaError_t launch(const GemmProblem& p) {
  const LaunchConfig c = config(p);
  return launch_kernel(naive_kernel, c.grid, c.block, 0, p.stream, operand_a<float>(p),
                       operand_b<float>(p), make_epilogue(p), static_cast<int>(p.k),
                       make_tile_grid(p, kBlockRows, kBlockCols).n_tiles);
}

}  // namespace

extern const KernelDesc kSimtNaive = {
    .name = "simt/01_naive",
    .step = 1,
    .family = "simt",
    .seed = "seed 000 v1; seed 002 kernel 1",
    .summary = "one thread per output element, uncoalesced (thread x walks rows)",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 1,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
