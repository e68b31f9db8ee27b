// Ladder step 15 (simt): a cp.async multi-stage pipeline on step 14's warp-tiled micro-kernel.
//
// Bottleneck attacked: global-load latency and the register cost of staging. In step 14 every
// thread waits for its global loads once per k-tile and spends registers and STS instructions
// passing them into shared memory. Here cp.async copies global -> shared directly (no registers,
// async_loader.cuh), kStages = 4 k-tiles of 16 are in flight, and a block only waits for the
// oldest one: one barrier per k-tile, and the copies of tile kt+3 overlap the FFMAs of tile kt.
// Changed from step 14: RegLoader -> AsyncLoader (16-byte copies where the operand's rows are
// 16-byte aligned and run along the tile, 4-byte ones elsewhere), BK 8 -> 16, two shared stages
// -> four (dynamic shared memory, 66 KB: an opt-in per device), the prologue/wait/refill loop.
// The FFMA loop, tile shape and epilogue are step 14's. What production adds on top (split-k,
// stream-k, edge strips, 128 x 256 tiles, copies of misaligned operands) is simt/sgemm.
// Seed: beyond the seeds.
// Measured (H100 SXM, docs/results/h100-ladder.md, cuBLAS SGEMM in the same run): 4096^3 46.2
// TFLOP/s (90%; step 14: 40.9), 1025^3 18.9 (62%), 4097^3 41.9 (94%).
#include "kernels/common/launch.cuh"
#include "kernels/simt/async_loader.cuh"
#include "kernels/simt/warptile.cuh"
#include "runtime/device_props.h"

namespace gemmlab {
namespace {

using WT = simt_wt::WarpTile<2>;  // 128 x 128 block, 8 x 8 per thread, as in step 14
constexpr int kThreads = WT::kThreads, kBM = WT::kBM, kBN = WT::kBN;
constexpr int kBK = 16, kStages = 4;
constexpr int kStageA = kBK * WT::kLdA, kStageB = kBK * WT::kLdB;  // floats per stage
constexpr int kSmemBytes = kStages * (kStageA + kStageB) * static_cast<int>(sizeof(float));

// kAVec / kBVec: 16-byte copies for A^T / B (their rows run along the tile and are aligned).
template <bool kAT, bool kBT, bool kAVec, bool kBVec>
__global__ void __launch_bounds__(kThreads, 2)
    cp_async_kernel(const float* A, int lda, const float* B, int ldb, Epilogue ep, int k,
                    int m_tiles, int n_tiles) {
  extern __shared__ float4 smem_f4[];  // float4: 16-byte alignment for the cp.async targets
  float* As = reinterpret_cast<float*>(smem_f4);
  float* Bs = As + kStages * kStageA;

  const TileCoord t = tile_grouped(static_cast<int>(blockIdx.x), kBM, kBN, m_tiles, n_tiles, 8);
  const WT::Pos pos = WT::pos();
  const bool active = WT::warp_active(pos, t.row0, t.col0, ep);
  AsyncLoader<kBM, WT::kLdA, !kAT, kAVec> la(A, lda, ep.m, k, t.row0, 0);  // A (N): k contiguous
  AsyncLoader<kBN, WT::kLdB, kBT, kBVec> lb(B, ldb, ep.n, k, t.col0, 0);   // B (T): k contiguous

  float acc[8][8];
  WT::zero(acc);
  const int k_tiles = ceil_div(k, kBK);
  // Prologue: the first kStages-1 tiles in flight, one commit group each (empty groups past the
  // end keep the count uniform, so wait<kStages-2> below always means "tile kt has landed").
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) {
      la.load(As + s * kStageA);
      lb.load(Bs + s * kStageB);
    }
    cp_async_commit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();  // this thread's copies of tile kt are done...
    __syncthreads();               // ...and everyone's; also: all finished computing tile kt-1
    // Refill the stage tile kt-1 used (free now, by the barrier above) with tile kt+kStages-1.
    const int pf = kt + kStages - 1;
    if (pf < k_tiles) {
      la.load(As + (pf % kStages) * kStageA);
      lb.load(Bs + (pf % kStages) * kStageB);
    }
    cp_async_commit();
    const int cur = kt % kStages;
    if (active) WT::mma_ktile<kBK>(acc, As + cur * kStageA, Bs + cur * kStageB, pos);
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits
  WT::store_tile(ep, t.row0, t.col0, pos, acc);
}

using KernelFn = void (*)(const float*, int, const float*, int, Epilogue, int, int, int);

// 16-byte copies need the operand's rows to run along the tile (A^T, B) and be 16-byte aligned.
KernelFn pick(const GemmProblem& p) {
  const bool at = p.op_a == Op::T, bt = p.op_b == Op::T;
  const bool av = at && rows_aligned(p.A, p.lda, sizeof(float), 16);
  const bool bv = !bt && rows_aligned(p.B, p.ldb, sizeof(float), 16);
  if (!at && !bt) return bv ? cp_async_kernel<false, false, false, true>
                            : cp_async_kernel<false, false, false, false>;
  if (!at && bt) return cp_async_kernel<false, true, false, false>;
  if (at && !bt) {
    if (av) return bv ? cp_async_kernel<true, false, true, true> : cp_async_kernel<true, false, true, false>;
    return bv ? cp_async_kernel<true, false, false, true> : cp_async_kernel<true, false, false, false>;
  }
  return av ? cp_async_kernel<true, true, true, false> : cp_async_kernel<true, true, false, false>;
}

LaunchConfig config(const GemmProblem& p) {
  return {reinterpret_cast<const void*>(pick(p)), grid_1d(make_tile_grid(p, kBM, kBN)),
          dim3(kThreads), kSmemBytes};
}

cudaError_t launch(const GemmProblem& p) {
  const KernelFn f = pick(p);
  // Above 48 KB of dynamic shared memory a kernel must opt in, on each device.
  if (cudaError_t e = prepare_function(reinterpret_cast<const void*>(f), kSmemBytes,
                                       carveout_for(2, kSmemBytes));
      e != cudaSuccess)
    return e;
  const TileGrid g = make_tile_grid(p, kBM, kBN);
  return launch_kernel(f, grid_1d(g), kThreads, kSmemBytes, p.stream,
                       static_cast<const float*>(p.A), static_cast<int>(p.lda),
                       static_cast<const float*>(p.B), static_cast<int>(p.ldb), make_epilogue(p),
                       static_cast<int>(p.k), g.m_tiles, g.n_tiles);
}

}  // namespace

extern const KernelDesc kSimtCpAsyncMultistage = {
    .name = "simt/15_cp_async_multistage",
    .step = 15,
    .family = "simt",
    .seed = "beyond the seeds",
    .summary = "step 14's 128x128 warp tiles fed by cp.async (16 B or 4 B copies by layout and "
               "alignment) through a 4-stage shared-memory pipeline, BK 16",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 95,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
