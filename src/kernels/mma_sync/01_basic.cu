// Ladder step 1 (mma.sync, sm_80+): tensor cores fed from shared memory with ldmatrix.
//
// Bottleneck attacked: the simt ladder tops out at the FP32 FFMA rate; warp-wide mma.sync runs
// tf32/bf16/fp16 products at several times that. Each block computes a 64x64 tile of C with 4 warps
// (2 x 2 of 32x32 warp tiles, 2 x 4 m16n8 accumulators each). Per k-tile of 32, the block loads
// op(A) and op(B) synchronously element by element (bounds-checked, any alignment, any transpose)
// into k-contiguous shared tiles, converting orientation on the way, so a single fragment path
// serves all four transposes: ldmatrix.x4 for A (one m16 tile) and for B (two n8 tiles), tf32
// included (an 8x8 b16 matrix read as words is the tf32 fragment pattern). Rows are padded by 16
// bytes so the 8 rows an ldmatrix phase reads fall into 8 different bank groups.
// What is still slow: loads go through registers and stall every warp at the barriers; there is
// no overlap of copying and mma (step 2 fixes that with cp.async stages).
// Seed: beyond the seeds (seed 000 names tensor cores as "what's next").
// Measured (H100 SXM, gemm-bench 4096^3 NN, cuBLAS in the same run): tf32 32.4 TFLOP/s
// (8% of cuBLAS), bf16 26.0 (3%), fp16 26.1 (4%).
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/common/gemm_common.cuh"
#include "kernels/mma_sync/tile.cuh"
#include "kernels/common/launch.cuh"

namespace gemmlab {
namespace {

constexpr int kBM = 64, kBN = 64, kBK = 32;  // block tile (BK in elements)
constexpr int kWM = 32, kWN = 32;            // warp tile
constexpr int kWarpsN = kBN / kWN;
constexpr int kThreads = 32 * (kBM / kWM) * kWarpsN;

// Shared tiles: rows are m (A) or n (B), kBK elements of k each, padded by one 16-byte chunk.
template <typename T>
struct Tiles {
  static constexpr int kE = 16 / static_cast<int>(sizeof(T));
  using LA = SmemLayout<kBM, kBK / kE, SmemSwizzle::kPadded>;
  using LB = SmemLayout<kBN, kBK / kE, SmemSwizzle::kPadded>;
};

// One operand tile (kRows rows of mn, kBK of k) into a k-contiguous smem tile. `k_contig` says how
// the operand is stored: element (mn, k) at g[mn * ld + k] if true, else g[k * ld + mn]. Threads
// walk the stored-contiguous dimension so the global reads coalesce either way.
template <typename Bits, class Layout, int kRows>
__device__ __forceinline__ void load_tile_sync(unsigned char* tile, const Bits* g, int ld,
                                               bool k_contig, int mn_total, int K, int mn0, int k0,
                                               int tid) {
  constexpr int kE = 16 / static_cast<int>(sizeof(Bits));
  for (int idx = tid; idx < kRows * kBK; idx += kThreads) {
    const int r = k_contig ? idx / kBK : idx % kRows;
    const int kk = k_contig ? idx % kBK : idx / kRows;
    const int gm = mn0 + r, gk = k0 + kk;
    Bits v = 0;  // out-of-range elements contribute zero
    if (gm < mn_total && gk < K) v = k_contig ? g[gm * ld + gk] : g[gk * ld + gm];
    *reinterpret_cast<Bits*>(tile + Layout::offset(r, kk / kE) + (kk % kE) * sizeof(Bits)) = v;
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    mma_basic_kernel(const T* __restrict__ A, int lda, bool trans_a, const T* __restrict__ B,
                     int ldb, bool trans_b, Epilogue ep, int K, int n_tiles) {
  using Bits = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
  using LA = typename Tiles<T>::LA;
  using LB = typename Tiles<T>::LB;
  constexpr int kK = MmaTraits<T>::kK;
  constexpr int kMT = kWM / 16, kNT = kWN / 8;

  __shared__ __align__(128) unsigned char sa[LA::kBytes];
  __shared__ __align__(128) unsigned char sb[LB::kBytes];

  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const TileCoord tc = tile_rowmajor(kBM, kBN, n_tiles);
  const int wm0 = (warp / kWarpsN) * kWM, wn0 = (warp % kWarpsN) * kWN;

  float acc[kMT][kNT][4] = {};
  uint32_t fa[kMT][4], fb[kNT][2];
  for (int k0 = 0; k0 < K; k0 += kBK) {
    // A is k-contiguous when stored m x k (op N); B when stored n x k (op T).
    load_tile_sync<Bits, LA, kBM>(sa, reinterpret_cast<const Bits*>(A), lda, !trans_a, ep.m, K,
                                  tc.row0, k0, tid);
    load_tile_sync<Bits, LB, kBN>(sb, reinterpret_cast<const Bits*>(B), ldb, trans_b, ep.n, K,
                                  tc.col0, k0, tid);
    __syncthreads();  // tiles complete before any warp reads them
#pragma unroll
    for (int ks = 0; ks < kBK / kK; ++ks) {
      load_frags_a<T, true, LA, kMT>(fa, smem_addr(sa), wm0, ks * kK, lane);
      load_frags_b<T, true, LB, kNT>(fb, smem_addr(sb), wn0, ks * kK, lane);
      warp_mma<T>(acc, fa, fb);
    }
    __syncthreads();  // every warp done reading before the next tile overwrites
  }
  store_warp_acc(ep, acc, tc.row0 + wm0, tc.col0 + wn0, lane);
}

template <typename T>
const void* kernel_for() {
  return reinterpret_cast<const void*>(mma_basic_kernel<T>);
}

const void* kernel_of(const GemmProblem& p) {
  switch (p.precision) {
    case Precision::TF32: return kernel_for<float>();
    case Precision::BF16: return kernel_for<__nv_bfloat16>();
    case Precision::FP16: return kernel_for<__half>();
    default: return nullptr;
  }
}

LaunchConfig config(const GemmProblem& p) {
  return {kernel_of(p), grid_1d(make_tile_grid(p, kBM, kBN)), dim3(kThreads), 0};
}

template <typename T>
cudaError_t launch_typed(const GemmProblem& p) {
  const TileGrid tg = make_tile_grid(p, kBM, kBN);
  return launch_kernel(mma_basic_kernel<T>, grid_1d(tg), kThreads, 0, p.stream,
                       static_cast<const T*>(p.A), static_cast<int>(p.lda), p.op_a == Op::T,
                       static_cast<const T*>(p.B), static_cast<int>(p.ldb), p.op_b == Op::T,
                       make_epilogue(p), static_cast<int>(p.k), tg.n_tiles);
}

cudaError_t launch(const GemmProblem& p) {
  switch (p.precision) {
    case Precision::TF32: return launch_typed<float>(p);
    case Precision::BF16: return launch_typed<__nv_bfloat16>(p);
    case Precision::FP16: return launch_typed<__half>(p);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

extern const KernelDesc kMmaSyncBasic = {
    .name = "mma_sync/01_basic",
    .step = 1,
    .family = "mma_sync",
    .seed = "beyond the seeds",
    .summary = "mma.sync from padded smem via ldmatrix, synchronous element loads, 64x64 block, 32x32 warps",
    .dtypes = kTF32 | kBF16 | kFP16,
    .min_cc = 80,
    .auto_priority = 10,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
