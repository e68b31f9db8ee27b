// Ladder step 1 (wgmma, sm_90a): the Hopper warpgroup MMA, fed by plain thread copies.
//
// Bottleneck attacked: mma.sync issues one 16x8x16 MMA per warp and needs every fragment in
// registers; wgmma m64n128k16 lets a warpgroup (4 warps) multiply 64x16 by 16x128 straight out of
// shared memory, asynchronously. This step shows only that: each CTA (two warpgroups, 128x128
// tile) copies a 128x64 slice of op(A) and of op(B) element by element (bounds-checked, any
// transpose, any alignment, so no packing is ever needed) into the 128-byte-swizzled K-major
// layout wgmma reads, fences the generic-proxy stores for the async proxy, and issues four wgmmas;
// one stage, so copies and MMAs do not overlap (step 2's job).
// Changed from the mma.sync ladder: wgmma from shared-memory descriptors, accumulators in the
// wgmma fragment layout. Seed: beyond the seeds.
// Measured (H100 SXM, gemm-bench NN, cuBLAS in the same run): 4096^3 bf16
// 35.4 TFLOP/s (5% of cuBLAS 753.8): the copies, not the tensor cores, set the pace.
#include "kernels/wgmma/sm90.cuh"
#include "kernels/wgmma/host.h"
#include "kernels/common/launch.cuh"
#include "runtime/device_props.h"

namespace gemmlab {
namespace {

using namespace sm90;

constexpr int kBM = 128, kBN = 128;
constexpr int kThreads = 256;
[[maybe_unused]] constexpr int kGroupRows = 8;  // used by the sm_90a body only

template <typename T>
using Tile = StageTile<T, kBM, kBN, true, true>;

template <typename T>
constexpr int smem_bytes() {
  return Tile<T>::kBytes + 1024;
}

// Copy rows [row0, row0 + 128) x K [k0, k0 + kBK) of op(X) into a K-major swizzled tile: element
// (r, kk) goes to byte 128 r + 16 ((kk * size / 16) ^ (r % 8)) + (kk * size) % 16. Threads walk the
// operand's contiguous dimension so global reads coalesce.
template <typename T>
__device__ __forceinline__ void copy_tile(uint8_t* dst, const Operand<T>& x, int row0, int k0,
                                          int rows, int k) {
  constexpr int kBK = Tile<T>::kBK;
  constexpr int kE = static_cast<int>(sizeof(T));
  for (int i = threadIdx.x; i < 128 * kBK; i += kThreads) {
    // K-major source (not transposed): consecutive threads take consecutive kk.
    const int r = x.trans ? i % 128 : i / kBK;
    const int kk = x.trans ? i / 128 : i % kBK;
    const int gr = row0 + r, gk = k0 + kk;
    T v = (gr < rows && gk < k) ? x.at(gr, gk) : T{};
    const int byte = r * 128 + ((((kk * kE) >> 4) ^ (r & 7)) << 4) + ((kk * kE) & 15);
    *reinterpret_cast<T*>(dst + byte) = v;
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_basic_kernel(Operand<T> a, Operand<T> bt, Epilogue ep, int k, int m_tiles, int n_tiles) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using TileT = Tile<T>;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  const TileCoord tc = tile_grouped(static_cast<int>(blockIdx.x), kBM, kBN, m_tiles, n_tiles,
                                    kGroupRows);
  const int wg = threadIdx.x / 128;
  float d[kBN / 2];
  for (int k0 = 0, kb = 0; k0 < k; k0 += TileT::kBK, ++kb) {
    copy_tile(smem, a, tc.row0, k0, ep.m, k);                  // A: rows of op(A)
    copy_tile(smem + TileT::kABytes, bt, tc.col0, k0, ep.n, k);  // B: rows of op(B)^T
    fence_proxy_async();  // make the generic stores visible to wgmma (the async proxy)
    __syncthreads();
    wgmma_fence();
    TileT::mma(d, smem_addr(smem), wg, kb > 0);
    wgmma_commit();
    wgmma_wait<0>();
    fence_operand(d);
    __syncthreads();  // the tile is overwritten next iteration
  }
  const int row = tc.row0 + 64 * wg;
  store_fragment<kBN>(ep, d, row + fragment_row(0), row + fragment_row(1), tc.col0);
#endif
}

// op(B)^T as an Operand (rows = n, cols = k): its transpose flag is the opposite of op_b's.
template <typename T>
Operand<T> operand_bt(const GemmProblem& p) {
  return {static_cast<const T*>(p.B), static_cast<int>(p.ldb), p.op_b == Op::N};
}

template <typename T>
const void* kernel_of() {
  return reinterpret_cast<const void*>(wgmma_basic_kernel<T>);
}

LaunchConfig config(const GemmProblem& p) {
  LaunchConfig c;
  dispatch(p.precision, true, true, [&](auto tag, auto, auto) {
    using T = typename decltype(tag)::type;
    c.kernel = kernel_of<T>();
    c.smem_bytes = smem_bytes<T>();
    return cudaSuccess;
  });
  c.grid = grid_1d(make_tile_grid(p, kBM, kBN));
  c.block = dim3(kThreads);
  return c;
}

cudaError_t launch(const GemmProblem& p) {
  return dispatch(p.precision, true, true, [&](auto tag, auto, auto) {
    using T = typename decltype(tag)::type;
    auto* kern = wgmma_basic_kernel<T>;
    constexpr int smem = smem_bytes<T>();
    cudaError_t e = prepare_function(reinterpret_cast<const void*>(kern), smem);
    if (e != cudaSuccess) return e;
    const TileGrid tg = make_tile_grid(p, kBM, kBN);
    return launch_kernel(kern, grid_1d(tg), kThreads, smem, p.stream, operand_a<T>(p),
                         operand_bt<T>(p), make_epilogue(p), static_cast<int>(p.k), tg.m_tiles,
                         tg.n_tiles);
  });
}

}  // namespace

extern const KernelDesc kWgmmaBasic = {
    .name = "wgmma/01_wgmma_basic",
    .step = 1,
    .family = "wgmma",
    .seed = "beyond the seeds",
    .summary = "wgmma m64n128 from a 128B-swizzled K-major smem tile filled by plain bounds-checked thread "
               "copies (any transpose/alignment), one stage, 2 warpgroups, 128x128x64 tiles",
    .dtypes = kBF16 | kFP16 | kTF32,
    .min_cc = 90,
    .auto_priority = 10,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
