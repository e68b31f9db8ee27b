// Ladder step 14 (simt): warp tiling, conflict-free k-major shared tiles, register double buffering.
//
// Bottleneck attacked: shared-memory traffic and latency of the register-blocked kernels. A block
// tile of 128 x 128 is split into warp tiles of 32 x 64 and thread tiles of 8 x 8 (2 x 2 sub-tiles
// of 4 x 4), so a warp's fragment reads touch few distinct shared words (broadcast) and every
// thread does 64 FFMA per 4 LDS.128 (src/kernels/simt/warptile.cuh explains the mapping).
// Changed from before: both operands are stored k-major in shared memory (A transposed on the way
// in, for every op(A)/op(B)), rows padded to 132 floats so the transposing stores are
// conflict-free; fragments for step kk+1 are loaded while step kk computes; the next global k-tile
// is loaded into registers before the current shared tile is multiplied (two shared stages, one
// barrier per k-tile).
// Global loads are scalar but coalesced (lanes walk the operand's contiguous direction): per k-tile
// they are 8 of ~600 instructions per thread, and scalar loads need no alignment, so odd ld and
// odd sizes run the same code as aligned ones.
// Seed: beyond the seeds (000's "what's next": double buffering; warp tiling as in CUTLASS).
// Measured (H100 SXM, gemm-bench, same run as cuBLAS SGEMM; h100-ladder and
// h100-large), fp32 NN TFLOP/s (% cuBLAS): 1024^3 16.7 (49%), 1025^3 16.3 (54%), 2048^3 39.3
//   (80%), 4096^3 40.9 (79%), 4097^3 37.8 (86%), 8192^3 41.0 (79%). 128 registers, no spills,
//   16.5 KB shared, 2 blocks/SM. What limits it: the loads of the next tile are waited for once
//   per k-tile (no deeper pipeline), and BK = 8 leaves a barrier per 512 FFMA; 1024^3 has only 64
//   tiles for 132 SMs.
#include "kernels/simt/warptile.cuh"
#include "kernels/common/launch.cuh"

namespace gemmlab {
namespace {

using WT = simt_wt::WarpTile<2>;  // 128 x 128 block, 8 x 8 per thread
constexpr int kThreads = WT::kThreads, kBM = WT::kBM, kBN = WT::kBN;
constexpr int kLdS = WT::kLdA;  // == WT::kLdB: both tiles are 128 wide
static_assert(WT::kLdA == WT::kLdB, "one stage size for A and B");
constexpr int kBK = 8;
constexpr int kStageFloats = kBK * kLdS;  // one operand, one stage

// Loads one operand's 128 x kBK tile (rows of op(X) = r, k) into 4 registers per thread, then
// stores it k-major into shared memory. kContigK: X is stored so that k is its contiguous
// direction (A with op N, B with op T); otherwise r is contiguous (A with op T, B with op N).
template <bool kContigK>
struct RegLoader {
  const float* ptr;
  int ld, rows, k;  // rows of op(X) (m or n) and the depth
  int r, kk;        // this thread's first element within the tile
  float v[4];

  __device__ __forceinline__ RegLoader(const float* p, int ld_, int rows_, int k_)
      : ptr(p), ld(ld_), rows(rows_), k(k_) {
    const int tid = threadIdx.x;
    // kContigK: 8 lanes walk k (32 contiguous bytes), 4 rows per warp; element i is 32 rows on.
    // else:     lanes walk r (128 contiguous bytes); element i is 2 k-rows on.
    r = kContigK ? tid / kBK : tid % kBM;
    kk = kContigK ? tid % kBK : tid / kBM;
  }

  __device__ __forceinline__ void load(int r0, int k0) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int gr = r0 + r + (kContigK ? 32 * i : 0);
      const int gk = k0 + kk + (kContigK ? 0 : 2 * i);
      v[i] = (gr < rows && gk < k) ? (kContigK ? ptr[gr * ld + gk] : ptr[gk * ld + gr]) : 0.f;
    }
  }

  // With kContigK the 8 lanes of a row write 8 different k-rows: banks (4*kk + r) % 32 are all
  // distinct thanks to the 132-float stride, so the transposing store is conflict-free.
  __device__ __forceinline__ void store(float* Xs) const {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int sr = r + (kContigK ? 32 * i : 0);
      const int sk = kk + (kContigK ? 0 : 2 * i);
      Xs[sk * kLdS + sr] = v[i];
    }
  }
};

template <bool kAT, bool kBT>
__global__ void __launch_bounds__(kThreads, 2)
    warptiled_kernel(const float* A, int lda, const float* B, int ldb, Epilogue ep, int k,
                     int m_tiles, int n_tiles) {
  __shared__ __align__(16) float As[2][kStageFloats];
  __shared__ __align__(16) float Bs[2][kStageFloats];

  const TileCoord t = tile_grouped(static_cast<int>(blockIdx.x), kBM, kBN, m_tiles, n_tiles, 8);
  const WT::Pos pos = WT::pos();
  const bool active = WT::warp_active(pos, t.row0, t.col0, ep);
  RegLoader<!kAT> la(A, lda, ep.m, k);  // A with op N is stored m x k: k contiguous
  RegLoader<kBT> lb(B, ldb, ep.n, k);   // B with op T is stored n x k: k contiguous

  float acc[8][8];
  WT::zero(acc);

  const int k_tiles = ceil_div(k, kBK);
  la.load(t.row0, 0);
  lb.load(t.col0, 0);
  la.store(As[0]);
  lb.store(Bs[0]);
  __syncthreads();

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int cur = kt & 1;
    const bool more = kt + 1 < k_tiles;
    // Issue the next tile's global loads now; they complete while this tile is multiplied.
    if (more) {
      la.load(t.row0, (kt + 1) * kBK);
      lb.load(t.col0, (kt + 1) * kBK);
    }
    if (active) WT::mma_ktile<kBK>(acc, As[cur], Bs[cur], pos);
    // Writing stage cur^1 is safe without a barrier before it: it was last read in iteration
    // kt-1, and every thread passed the barrier that ended that iteration.
    if (more) {
      la.store(As[cur ^ 1]);
      lb.store(Bs[cur ^ 1]);
    }
    __syncthreads();  // stage cur^1 complete for all; stage cur free for the next store
  }
  WT::store_tile(ep, t.row0, t.col0, pos, acc);
}

using KernelFn = void (*)(const float*, int, const float*, int, Epilogue, int, int, int);

KernelFn pick(const GemmProblem& p) {
  const bool at = p.op_a == Op::T, bt = p.op_b == Op::T;
  if (!at && !bt) return warptiled_kernel<false, false>;
  if (!at && bt) return warptiled_kernel<false, true>;
  if (at && !bt) return warptiled_kernel<true, false>;
  return warptiled_kernel<true, true>;
}

LaunchConfig config(const GemmProblem& p) {
  return {reinterpret_cast<const void*>(pick(p)), grid_1d(make_tile_grid(p, kBM, kBN)),
          dim3(kThreads), 0};
}

cudaError_t launch(const GemmProblem& p) {
  const TileGrid g = make_tile_grid(p, kBM, kBN);
  return launch_kernel(pick(p), grid_1d(g), kThreads, 0, p.stream,
                       static_cast<const float*>(p.A), static_cast<int>(p.lda),
                       static_cast<const float*>(p.B), static_cast<int>(p.ldb), make_epilogue(p),
                       static_cast<int>(p.k), g.m_tiles, g.n_tiles);
}

}  // namespace

extern const KernelDesc kSimtWarptiled = {
    .name = "simt/14_warptiled",
    .step = 14,
    .family = "simt",
    .seed = "beyond the seeds",
    .summary = "128x128x8 block, 32x64 warp tiles, 8x8 per thread (2x2 of 4x4), k-major padded smem, "
               "register double-buffered fragments",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 90,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
};

}  // namespace gemmlab
