// Ladder step 13 (simt): cp.async multi-stage pipeline + warp tiling + grouped tile order.
//
// Bottleneck attacked: global-load latency and the register cost of staging. In step 12 every
// thread waits for its global loads once per k-tile and spends registers and STS instructions
// passing them into shared memory. Here cp.async copies global -> shared directly (no registers),
// kStages k-tiles are in flight at once, and a block only waits for the oldest one; the FFMA loop
// (src/kernels/common/simt_warptile.cuh: 128x128 block, 32x64 warps, 8x8 per thread, k-major
// padded shared tiles, double-buffered fragments) is unchanged. Blocks walk tiles in bands of 16
// tile rows (tile_grouped) so the ~264 resident blocks share rows of A and columns of B in L2.
//
// Transposes and alignment: the shared layout is k-major for both operands whatever the transpose,
// so the inner loop is one and the same. Each operand is copied by one of three loaders:
//  - contiguous direction = rows of the tile (A^T, B), 16-byte rows: 16-byte cp.async, the last
//    partial vector of a row zero-filled by src-size (no scalar tail);
//  - same, rows not 16-byte aligned (ld % 4 != 0, e.g. 4097): 4-byte cp.async per element. 4x more
//    copy instructions, but they are ~2% of the issue slots and the pipeline hides their latency;
//  - contiguous direction = k (A, B^T): 4-byte cp.async that transpose on the way in (each element
//    to its k-row), any alignment; 8 lanes read 32 contiguous bytes of a row (full sectors) and
//    their shared writes fall in distinct banks thanks to the 132-float row stride.
// Out-of-range elements are zero-filled by cp.async (src-size 0), so no tile needs a special path;
// the epilogue is guarded (Epilogue::store4).
// Seed: beyond the seeds.
// Measured (H100, gemm-bench, 4096^3 fp32 NN): see the end of the file / docs/results.
#include "kernels/common/cp_async.cuh"
#include "kernels/common/simt_warptile.cuh"

namespace gemmlab {
namespace {

using namespace simt_wt;

constexpr int kBK = 16;
constexpr int kStages = 4;
constexpr int kStageFloats = kBK * kLdS;  // one operand, one stage: 8448 bytes
constexpr int kSmemBytes = 2 * kStages * kStageFloats * static_cast<int>(sizeof(float));  // 67584
constexpr int kGroup = 16;  // tile rows per band of the grouped tile order

// Copies one operand's kBK x 128 tiles into shared memory Xs[k][r] (r = row of op(A) or column of
// op(B)), one k-tile per load() call, in order. kContigK: X's contiguous direction is k. kVec:
// 16-byte copies (only when r is contiguous and rows are 16-byte aligned).
template <bool kContigK, bool kVec>
struct AsyncLoader {
  static_assert(!(kContigK && kVec), "the k-contiguous loader transposes element by element");
  const float* gp;  // this thread's first element of the next k-tile
  int ld;
  int rows_left;    // rows of op(X) from this thread's first row on (<= 0: none valid)
  int k_left;       // depth from this thread's first k of the next tile on
  int soff;         // shared offset of this thread's first element

  __device__ __forceinline__ AsyncLoader(const float* ptr, int ld_, int rows, int k, int r0)
      : ld(ld_) {
    const int tid = threadIdx.x;
    int r, kk;
    if (kContigK) {  // 8 lanes x 8 k (32 bytes of a row), 32 rows per pass; 8 elements per thread
      r = tid / 8, kk = tid % 8;
    } else if (kVec) {  // 32 lanes x 4 floats = a 512-byte row segment; 2 chunks per thread
      r = (tid % 32) * 4, kk = tid / 32;
    } else {  // 128 lanes walk a 512-byte row segment, 2 k-rows per pass; 8 elements per thread
      r = tid % kBM, kk = tid / kBM;
    }
    rows_left = rows - r0 - r;
    k_left = k - kk;
    soff = kk * kLdS + r;
    // Rows past the end are never read (zero-fill), but keep the pointer in range anyway.
    const int gr = min(r0 + r, rows - 1);
    gp = kContigK ? ptr + static_cast<size_t>(gr) * ld + kk
                  : ptr + static_cast<size_t>(kk) * ld + gr;
  }

  __device__ __forceinline__ void load(float* Xs) {
    if (kContigK) {
      const float* p = gp;
#pragma unroll
      for (int j = 0; j < 4; ++j) {  // rows r + 32 j
#pragma unroll
        for (int h = 0; h < 2; ++h)  // k = kk + 8 h
          cp_async_4(Xs + soff + h * 8 * kLdS + 32 * j, p + 8 * h,
                     32 * j < rows_left && 8 * h < k_left);
        p += static_cast<size_t>(32) * ld;
      }
      gp += kBK;
    } else if (kVec) {
      // Bytes of this thread's 16-byte row chunk inside op(X): 16, a partial 4..12, or 0.
      const int bytes = max(0, min(rows_left, 4)) * 4;
#pragma unroll
      for (int i = 0; i < 2; ++i)  // k = kk + 8 i
        cp_async_16_partial(Xs + soff + i * 8 * kLdS, gp + static_cast<size_t>(8 * i) * ld,
                            8 * i < k_left ? bytes : 0);
      gp += static_cast<size_t>(kBK) * ld;
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i)  // k = kk + 2 i
        cp_async_4(Xs + soff + i * 2 * kLdS, gp + static_cast<size_t>(2 * i) * ld,
                   rows_left > 0 && 2 * i < k_left);
      gp += static_cast<size_t>(kBK) * ld;
    }
    k_left -= kBK;
  }
};

// Two blocks per SM: 2 x 66 KB of shared memory and <= 128 registers per thread.
template <bool kAT, bool kBT, bool kAVec, bool kBVec>
__global__ void __launch_bounds__(kThreads, 2)
    cp_async_kernel(const float* A, int lda, const float* B, int ldb, Epilogue ep, int k,
                    int m_tiles, int n_tiles) {
  extern __shared__ float4 smem_f4[];  // float4: 16-byte alignment for the cp.async targets
  float* As = reinterpret_cast<float*>(smem_f4);
  float* Bs = As + kStages * kStageFloats;

  const TileCoord t =
      tile_grouped(static_cast<int>(blockIdx.x), kBM, kBN, m_tiles, n_tiles, kGroup);
  const ThreadPos pos = thread_pos();
  AsyncLoader<!kAT, kAVec> la(A, lda, ep.m, k, t.row0);  // A with op N: k contiguous
  AsyncLoader<kBT, kBVec> lb(B, ldb, ep.n, k, t.col0);   // B with op T: k contiguous

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

  const int k_tiles = ceil_div(k, kBK);
  // Prologue: the first kStages-1 tiles in flight, one commit group each (empty groups past the
  // end keep the group count uniform, so wait<kStages-2> below always means "tile kt landed").
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) {
      la.load(As + s * kStageFloats);
      lb.load(Bs + s * kStageFloats);
    }
    cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();  // this thread's copies of tile kt are done...
    __syncthreads();               // ...and everyone's; also: all finished computing tile kt-1
    // Refill the stage tile kt-1 used (free now, by the barrier above) with tile kt+kStages-1.
    const int pf = kt + kStages - 1;
    if (pf < k_tiles) {
      la.load(As + (pf % kStages) * kStageFloats);
      lb.load(Bs + (pf % kStages) * kStageFloats);
    }
    cp_async_commit();
    const int cur = kt % kStages;
    mma_ktile<kBK>(acc, As + cur * kStageFloats, Bs + cur * kStageFloats, pos);
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits
  store_tile(ep, t.row0, t.col0, pos, acc);
}

using KernelFn = void (*)(const float*, int, const float*, int, Epilogue, int, int, int);

struct Picked {
  KernelFn f;
  cudaError_t err;  // from opting in to the shared-memory size
};

template <bool kAT, bool kBT, bool kAVec, bool kBVec>
Picked prepared() {
  KernelFn f = cp_async_kernel<kAT, kBT, kAVec, kBVec>;
  // Above 48 KB of dynamic shared memory a kernel must opt in; the max carveout lets two blocks
  // (2 x 66 KB) share an SM. Done once per instantiation (thread-safe static initialization).
  static const cudaError_t once = [f] {
    cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(f),
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    if (e == cudaSuccess)
      e = cudaFuncSetAttribute(reinterpret_cast<const void*>(f),
                               cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxShared);
    return e;
  }();
  return {f, once};
}

// The 16-byte loaders exist only where the operand's contiguous direction is the tile's rows
// (A^T, B); they need every row 16-byte aligned.
Picked pick(const GemmProblem& p) {
  const bool at = p.op_a == Op::T, bt = p.op_b == Op::T;
  const bool av = at && rows_aligned(p.A, p.lda, sizeof(float), 16);
  const bool bv = !bt && rows_aligned(p.B, p.ldb, sizeof(float), 16);
  if (!at && !bt)
    return bv ? prepared<false, false, false, true>() : prepared<false, false, false, false>();
  if (!at && bt) return prepared<false, true, false, false>();
  if (at && !bt) {
    if (av) return bv ? prepared<true, false, true, true>() : prepared<true, false, true, false>();
    return bv ? prepared<true, false, false, true>() : prepared<true, false, false, false>();
  }
  return av ? prepared<true, true, true, false>() : prepared<true, true, false, false>();
}

LaunchConfig config(const GemmProblem& p) {
  return {reinterpret_cast<const void*>(pick(p).f), grid_1d(make_tile_grid(p, kBM, kBN)),
          dim3(kThreads), static_cast<size_t>(kSmemBytes)};
}

cudaError_t launch(const GemmProblem& p) {
  const Picked k = pick(p);
  if (k.err != cudaSuccess) return k.err;
  const TileGrid g = make_tile_grid(p, kBM, kBN);
  k.f<<<grid_1d(g), kThreads, kSmemBytes, p.stream>>>(
      static_cast<const float*>(p.A), static_cast<int>(p.lda), static_cast<const float*>(p.B),
      static_cast<int>(p.ldb), make_epilogue(p), static_cast<int>(p.k), g.m_tiles, g.n_tiles);
  return cudaGetLastError();
}

}  // namespace

extern const KernelDesc kSimtCpAsyncMultistage = {
    "simt/13_cp_async_multistage", 13, "simt", "beyond the seeds",
    "cp.async 4-stage pipeline (16 B or 4 B copies by layout/alignment), 128x128x16 block, "
    "32x64 warps, 8x8 per thread, grouped tile order",
    kFP32, 80, 100, nullptr, launch, config};

}  // namespace gemmlab
