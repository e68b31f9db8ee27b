// Ladder step 2 (wgmma, sm_90a): TMA + mbarrier multi-stage pipeline + wgmma.
//
// Bottleneck attacked: step 1's threads copy every element through registers and then wait for
// the copy before the tensor cores may start, so loads and MMAs never overlap. Here the copy
// engine (cp.async.bulk.tensor, 128-byte swizzle written by TMA itself, out-of-range rows and K
// zero-filled) fills a ring of 3 stages; each stage has a "full" mbarrier (TMA bytes landed) and
// an "empty" one (both warpgroups' wgmmas that read it have retired). Thread 0 both computes and
// refills. 128x128x64 tiles, two warpgroups of m64n128; 96 KB of shared memory lets two CTAs share
// an SM, so one CTA's epilogue overlaps the other's main loop.
// Changed from step 1: TMA instead of thread copies, multi-stage pipeline, wgmma kept in flight
// (wait_group 1) while the next stage is awaited; transposed 16-bit operands read MN-major.
// Seed: beyond the seeds.
// Measured (H100 SXM, gemm-bench NN, cuBLAS in the same run): 4096^3 bf16
// 546.8 TFLOP/s (73% of cuBLAS 753.8), tf32 251.3 (64%); 4097^3 bf16 354.0 (2.6x cuBLAS).
#include "kernels/wgmma/sm90.cuh"
#include "kernels/wgmma/host.h"
#include "kernels/common/launch.cuh"
#include "runtime/device_props.h"

namespace gemmlab {
namespace {

using namespace sm90;

constexpr int kBM = 128, kBN = 128, kStages = 3;
constexpr int kThreads = 256;  // two warpgroups, each 64 rows of the tile
[[maybe_unused]] constexpr int kGroupRows = 8;  // used by the sm_90a body only

template <typename T, bool kAK, bool kBK>
using Tile = StageTile<T, kBM, kBN, kAK, kBK>;

template <typename T, bool kAK, bool kBK>
constexpr int smem_bytes() {
  return kStages * Tile<T, kAK, kBK>::kBytes + 1024 + 2 * kStages * 8;
}

template <typename T, bool kAK, bool kBK>
__global__ void __launch_bounds__(kThreads, 2)
    tma_pipelined_kernel(const __grid_constant__ CUtensorMap map_a,
                         const __grid_constant__ CUtensorMap map_b, Epilogue ep, int k,
                         int m_tiles, int n_tiles) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using TileT = Tile<T, kAK, kBK>;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * TileT::kBytes);
  uint64_t* empty = full + kStages;
  const uint32_t smem_base = smem_addr(smem);

  const TileCoord tc = tile_grouped(static_cast<int>(blockIdx.x), kBM, kBN, m_tiles, n_tiles,
                                    kGroupRows);
  const int wg = threadIdx.x / 128;
  const int num_kb = ceil_div(k, TileT::kBK);
  const bool producer = threadIdx.x == 0;

  auto issue = [&](int kb) {  // k-block kb into stage kb % kStages
    const int s = kb % kStages;
    uint8_t* stage = smem + s * TileT::kBytes;
    mbar_arrive_expect_tx(&full[s], TileT::kBytes);
    TileT::load_a(&map_a, stage, &full[s], tc.row0, kb * TileT::kBK, 0);
    TileT::load_b(&map_b, stage, &full[s], tc.col0, kb * TileT::kBK, 0);
  };

  if (producer) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 2);
    }
    fence_barrier_init();
    for (int kb = 0; kb < kStages && kb < num_kb; ++kb) issue(kb);  // fill the ring
  }
  __syncthreads();

  float d[kBN / 2];
  for (int kb = 0; kb < num_kb; ++kb) {
    const int s = kb % kStages;
    mbar_wait(&full[s], (kb / kStages) & 1);
    wgmma_fence();
    TileT::mma(d, smem_base + s * TileT::kBytes, wg, kb > 0);
    wgmma_commit();
    wgmma_wait<1>();  // block kb - 1 has retired; block kb stays in flight
    if (kb > 0) {
      const int ps = (kb - 1) % kStages;
      if (threadIdx.x % 128 == 0) mbar_arrive(&empty[ps]);
      // Refill the freed slot with block kb - 1 + kStages once the other warpgroup is done too.
      if (producer && kb - 1 + kStages < num_kb) {
        mbar_wait(&empty[ps], ((kb - 1) / kStages) & 1);
        issue(kb - 1 + kStages);
      }
    }
  }
  wgmma_wait<0>();
  fence_operand(d);
  const int row = tc.row0 + 64 * wg;
  store_fragment<kBN>(ep, d, row + fragment_row(0), row + fragment_row(1), tc.col0);
#endif
}

template <typename T, bool kAK, bool kBK>
cudaError_t launch_typed(const GemmProblem& p, const PreparedOperands& ops) {
  CUtensorMap map_a, map_b;
  cudaError_t e = make_tensor_map(&map_a, ops.a, p.precision, kBM);
  if (e == cudaSuccess) e = make_tensor_map(&map_b, ops.b, p.precision, kBN);
  if (e != cudaSuccess) return e;
  auto* kern = tma_pipelined_kernel<T, kAK, kBK>;
  constexpr int smem = smem_bytes<T, kAK, kBK>();
  e = prepare_function(reinterpret_cast<const void*>(kern), smem);
  if (e != cudaSuccess) return e;
  const TileGrid tg = make_tile_grid(p, kBM, kBN);
  return launch_kernel(kern, grid_1d(tg), kThreads, smem, p.stream, map_a, map_b,
                       make_epilogue(p), static_cast<int>(p.k), tg.m_tiles, tg.n_tiles);
}

LaunchConfig config(const GemmProblem& p) {
  LaunchConfig c;
  const KernelLayout kl = kernel_layout(p, Tf32Mn::None);
  dispatch(p.precision, kl.a_k_major, kl.b_k_major, [&](auto tag, auto ak, auto bk) {
    using T = typename decltype(tag)::type;
    constexpr bool AK = decltype(ak)::value, BK = decltype(bk)::value;
    c.kernel = reinterpret_cast<const void*>(tma_pipelined_kernel<T, AK, BK>);
    c.smem_bytes = smem_bytes<T, AK, BK>();
    return cudaSuccess;
  });
  c.grid = grid_1d(make_tile_grid(p, kBM, kBN));
  c.block = dim3(kThreads);
  return c;
}

cudaError_t launch(const GemmProblem& p) {
  return with_prepared_operands(p, Tf32Mn::None, [&](const PreparedOperands& ops) {
    return dispatch(p.precision, ops.a.k_major, ops.b.k_major, [&](auto tag, auto ak, auto bk) {
      using T = typename decltype(tag)::type;
      return launch_typed<T, decltype(ak)::value, decltype(bk)::value>(p, ops);
    });
  });
}

}  // namespace

extern const KernelDesc kWgmmaTmaPipelined = {
    .name = "wgmma/02_tma_wgmma_pipelined",
    .step = 2,
    .family = "wgmma",
    .seed = "beyond the seeds",
    .summary = "TMA (128B swizzle, OOB zero fill) into a 3-stage mbarrier ring, 2 warpgroups of wgmma "
               "m64n128k16, 128x128x64 tiles",
    .dtypes = kBF16 | kFP16 | kTF32,
    .min_cc = 90,
    .auto_priority = 100,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
