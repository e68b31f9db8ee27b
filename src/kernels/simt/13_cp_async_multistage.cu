// Ladder step 13 (simt): cp.async multi-stage pipeline + warp tiling + grouped tile order + split-k.
//
// Bottleneck attacked: global-load latency and the register cost of staging. In step 12 every
// thread waits for its global loads once per k-tile and spends registers and STS instructions
// passing them into shared memory. Here cp.async copies global -> shared directly (no registers),
// 4 k-tiles of 16 are in flight, and a block only waits for the oldest one. The FFMA loop is the
// shared warp-tiled one (src/kernels/common/simt_warptile.cuh: k-major padded shared tiles,
// LDS.128 fragments, double-buffered in registers), in two sizes: 128 x 256 blocks with 8 x 16 per
// thread (6 LDS.128 per 128 FFMA, 212 registers, one block per SM) for aligned NN problems, and
// 128 x 128 blocks with 8 x 8 per thread (<= 128 registers, two blocks per SM) elsewhere.
// Full tiles are issued first, in bands of 16 tile rows (tile_grouped) for L2 reuse; partial edge
// tiles come last and their idle warps skip the FFMAs. When the full tiles cannot fill the GPU
// (1024^3: 32 or 64 tiles for 132 SMs) the depth is split and partial products are added with
// atomics after a beta pass over C (results then vary at rounding level from run to run).
//
// Transposes and alignment: the shared layout is k-major for both operands whatever the transpose,
// so the inner loop is one and the same. Each operand is copied by one of three loaders:
//  - contiguous direction = rows of the tile (A^T, B), 16-byte rows: 16-byte cp.async, the last
//    partial vector of a row zero-filled by src-size (no scalar tail);
//  - same, rows not 16-byte aligned (ld % 4 != 0, e.g. 4097): 4-byte cp.async per element;
//  - contiguous direction = k (A, B^T): 4-byte cp.async that transpose on the way in (each element
//    to its k-row), any alignment; 8 lanes read 32 contiguous bytes of a row (full sectors) and
//    their shared writes fall in distinct banks thanks to the 4-float row skew.
// Out-of-range elements are zero-filled by cp.async (src-size 0); the epilogue is guarded.
// Seed: beyond the seeds.
// Measured (H100 SXM, gemm-bench, 2026-11-22, same run as cuBLAS SGEMM), fp32 TFLOP/s (% cuBLAS):
//   NN 1024^3 33.8 (98%), 1025^3 20.2 (66%), 2048^3 44.9 (89%), 4096^3 46.0 (89%),
//   4097^3 39.6 (90%), 8192^3 46.3 (90%); 4096^3 NT 42.6 (84%), TN 47.3 (92%), TT 43.4 (88%).
// What limits it: FFMA is ~87% of the main-loop instructions (1024 FFMA, 64 LDS.128, ~90 other
// per k-tile at 8 x 8), no spills, no bank conflicts by construction, so the gap to cuBLAS is
// issue/latency: 8 warps per SM at 8 x 16 (one block) or 16 at 8 x 8; H100's 128 FP32 lanes per SM
// against 128 B/clk of shared bandwidth leave little slack for the LDS traffic. 1025^3 and 4097^3
// pay for 4-byte copies (rows misaligned) and for the edge tiles.
#include <algorithm>

#include "kernels/common/cp_async.cuh"
#include "kernels/common/scale_c.h"
#include "kernels/common/simt_warptile.cuh"

namespace gemmlab {
namespace {

constexpr int kBK = 16;
constexpr int kGroup = 16;  // tile rows per band of the grouped tile order

// Copies one operand's kBK x kRows tiles into shared memory Xs[k][r] (r = row of op(A) or column
// of op(B), row stride kLd), one k-tile per load() call, in order. kContigK: X's contiguous
// direction is k. kVec: 16-byte copies (only when r is contiguous and rows are 16-byte aligned).
template <int kRows, int kLd, bool kContigK, bool kVec>
struct AsyncLoader {
  static_assert(!(kContigK && kVec), "the k-contiguous loader transposes element by element");
  static constexpr int kThreads = 256;
  // Element (or 16-byte chunk) e = tid + kThreads * i of the tile sits at:
  //  kContigK: k = e % 8 + 8 * (i % 2): 8 lanes read 32 contiguous bytes of a row, 32 rows a pass
  //  kVec:     r = 4 * (e % (kRows / 4)), k = e / (kRows / 4): lanes walk a row segment
  //  else:     r = e % kRows,             k = e / kRows
  static constexpr int kPerThread = kVec ? kRows * kBK / 4 / kThreads : kRows * kBK / kThreads;
  static constexpr int kKStep = kVec ? kThreads / (kRows / 4) : kThreads / kRows;  // k per i
  const float* gp;  // this thread's first element of the next k-tile
  int ld;
  int rows_left;    // rows of op(X) from this thread's first row on (<= 0: none valid)
  int k_left;       // depth from this thread's first k of the next tile on
  int soff;         // shared offset of this thread's first element

  __device__ __forceinline__ AsyncLoader(const float* ptr, int ld_, int rows, int k, int r0,
                                         int k0)
      : ld(ld_) {
    const int tid = threadIdx.x;
    int r, kk;
    if (kContigK) {
      r = tid / 8, kk = tid % 8;
    } else if (kVec) {
      r = (tid % (kRows / 4)) * 4, kk = tid / (kRows / 4);
    } else {
      r = tid % kRows, kk = tid / kRows;
    }
    rows_left = rows - r0 - r;
    k_left = k - k0 - kk;
    soff = kk * kLd + r;
    // Rows past the end are never read (zero-fill), but keep the pointer in range anyway.
    const int gr = min(r0 + r, rows - 1);
    gp = kContigK ? ptr + static_cast<size_t>(gr) * ld + (k0 + kk)
                  : ptr + static_cast<size_t>(k0 + kk) * ld + gr;
  }

  __device__ __forceinline__ void load(float* Xs) {
    if (kContigK) {
      const float* p = gp;
#pragma unroll
      for (int j = 0; j < kRows / 32; ++j) {  // rows r + 32 j
#pragma unroll
        for (int h = 0; h < 2; ++h)  // k = kk + 8 h
          cp_async_4(Xs + soff + h * 8 * kLd + 32 * j, p + 8 * h,
                     32 * j < rows_left && 8 * h < k_left);
        p += static_cast<size_t>(32) * ld;
      }
      gp += kBK;
    } else if (kVec) {
      // Bytes of this thread's 16-byte row chunk inside op(X): 16, a partial 4..12, or 0.
      const int bytes = max(0, min(rows_left, 4)) * 4;
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
        cp_async_16_partial(Xs + soff + i * kKStep * kLd,
                            gp + static_cast<size_t>(i * kKStep) * ld,
                            i * kKStep < k_left ? bytes : 0);
      gp += static_cast<size_t>(kBK) * ld;
    } else {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
        cp_async_4(Xs + soff + i * kKStep * kLd, gp + static_cast<size_t>(i * kKStep) * ld,
                   rows_left > 0 && i * kKStep < k_left);
      gp += static_cast<size_t>(kBK) * ld;
    }
    k_left -= kBK;
  }
};

// kTN = 2: 128 x 128 block, 8 x 8 per thread, <= 128 registers so two blocks share an SM.
// kTN = 4: 128 x 256 block, 8 x 16 per thread (fewer LDS per FFMA), one block per SM.
template <int kTN>
struct Cfg {
  using WT = simt_wt::WarpTile<kTN>;
  static constexpr int kStages = 4;
  static constexpr int kMinBlocks = kTN == 2 ? 2 : 1;
  static constexpr int kStageA = kBK * WT::kLdA, kStageB = kBK * WT::kLdB;  // floats
  static constexpr int kSmemBytes = kStages * (kStageA + kStageB) * static_cast<int>(sizeof(float));
};

// Tile order: first the full tiles, in grouped order over the grid of full tiles (L2 reuse), then
// the partial tiles of the last tile column and the last tile row. The block scheduler hands out
// blocks roughly in index order, so the cheap partial tiles (most of their warps idle, see
// warp_active) fill the SMs that finish early instead of forming a last wave of their own.
__device__ __forceinline__ TileCoord heavy_first_tile(int linear, int bm, int bn, int m, int n,
                                                      int m_tiles, int n_tiles) {
  const int m_full = m / bm, n_full = n / bn;
  const int heavy = m_full * n_full;
  if (linear < heavy) return tile_grouped(linear, bm, bn, m_full, n_full, kGroup);
  linear -= heavy;
  const int col_slivers = m_full * (n_tiles - n_full);  // last tile column, full rows
  if (linear < col_slivers) return {linear * bm, n_full * bn};
  linear -= col_slivers;
  return {m_full * bm, linear * bn};  // last tile row (m_tiles - m_full == 1 here)
}

// One block computes one C tile over the k-tiles [kt0, kt0 + k_tiles_per_split) of its split.
// splits == 1: the whole depth, normal epilogue. splits > 1: C was scaled by beta beforehand and
// each split adds alpha * its partial product with atomics.
template <int kTN, bool kAT, bool kBT, bool kAVec, bool kBVec>
__global__ void __launch_bounds__(256, Cfg<kTN>::kMinBlocks)
    cp_async_kernel(const float* A, int lda, const float* B, int ldb, Epilogue ep, int k,
                    int m_tiles, int n_tiles, int splits, int k_tiles_per_split) {
  using C = Cfg<kTN>;
  using WT = typename C::WT;
  constexpr int kStages = C::kStages;
  extern __shared__ float4 smem_f4[];  // float4: 16-byte alignment for the cp.async targets
  float* As = reinterpret_cast<float*>(smem_f4);
  float* Bs = As + kStages * C::kStageA;

  const int split = static_cast<int>(blockIdx.x) % splits;
  const TileCoord t = heavy_first_tile(static_cast<int>(blockIdx.x) / splits, WT::kBM, WT::kBN,
                                       ep.m, ep.n, m_tiles, n_tiles);
  const int kt0 = split * k_tiles_per_split;
  const int k_tiles = min(ceil_div(k, kBK) - kt0, k_tiles_per_split);
  const typename WT::Pos pos = WT::pos();
  const bool active = WT::warp_active(pos, t.row0, t.col0, ep);
  // A with op N and B with op T are stored with k contiguous.
  AsyncLoader<WT::kBM, WT::kLdA, !kAT, kAVec> la(A, lda, ep.m, k, t.row0, kt0 * kBK);
  AsyncLoader<WT::kBN, WT::kLdB, kBT, kBVec> lb(B, ldb, ep.n, k, t.col0, kt0 * kBK);

  float acc[8][WT::kCols];
  WT::zero(acc);

  // Prologue: the first kStages-1 tiles in flight, one commit group each (empty groups past the
  // end keep the group count uniform, so wait<kStages-2> below always means "tile kt landed").
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) {
      la.load(As + s * C::kStageA);
      lb.load(Bs + s * C::kStageB);
    }
    cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();  // this thread's copies of tile kt are done...
    __syncthreads();               // ...and everyone's; also: all finished computing tile kt-1
    // Refill the stage tile kt-1 used (free now, by the barrier above) with tile kt+kStages-1.
    const int pf = kt + kStages - 1;
    if (pf < k_tiles) {
      la.load(As + (pf % kStages) * C::kStageA);
      lb.load(Bs + (pf % kStages) * C::kStageB);
    }
    cp_async_commit();
    const int cur = kt % kStages;
    if (active) WT::template mma_ktile<kBK>(acc, As + cur * C::kStageA, Bs + cur * C::kStageB, pos);
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits
  if (splits == 1)
    WT::store_tile(ep, t.row0, t.col0, pos, acc);
  else
    WT::add_tile_atomic(ep, t.row0, t.col0, pos, acc);
}

using KernelFn = void (*)(const float*, int, const float*, int, Epilogue, int, int, int, int, int);

struct Picked {
  KernelFn f;
  cudaError_t err;  // from opting in to the shared-memory size
};

template <int kTN, bool kAT, bool kBT, bool kAVec, bool kBVec>
Picked prepared() {
  KernelFn f = cp_async_kernel<kTN, kAT, kBT, kAVec, kBVec>;
  // Above 48 KB of dynamic shared memory a kernel must opt in; the max carveout lets two
  // 128 x 128 blocks (2 x 66 KB) share an SM. Once per instantiation (thread-safe static init).
  static const cudaError_t once = [f] {
    cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(f),
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         Cfg<kTN>::kSmemBytes);
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
template <int kTN>
Picked pick(const GemmProblem& p) {
  const bool at = p.op_a == Op::T, bt = p.op_b == Op::T;
  const bool av = at && rows_aligned(p.A, p.lda, sizeof(float), 16);
  const bool bv = !bt && rows_aligned(p.B, p.ldb, sizeof(float), 16);
  if (!at && !bt)
    return bv ? prepared<kTN, false, false, false, true>()
              : prepared<kTN, false, false, false, false>();
  if (!at && bt) return prepared<kTN, false, true, false, false>();
  if (at && !bt) {
    if (av)
      return bv ? prepared<kTN, true, false, true, true>()
                : prepared<kTN, true, false, true, false>();
    return bv ? prepared<kTN, true, false, false, true>()
              : prepared<kTN, true, false, false, false>();
  }
  return av ? prepared<kTN, true, true, true, false>() : prepared<kTN, true, true, false, false>();
}

// Split-k when the C tiles alone cannot fill the GPU (1024^3 with 128 x 256 tiles: 32 tiles for
// 132 SMs). Cost model in k-tiles of one block: a full tile's unit costs ceil(KT/s) + 3 (pipeline
// fill, epilogue); a partial tile costs its fraction of active warps; full-tile units are issued
// first and the partial ones fill in. An SM holding only one of the two 128 x 128 blocks it could
// run goes at ~60%. Splitting costs a pass over C (scale by beta), ~3 units, and must win >= 15%.
template <int kTN>
int choose_splits(const GemmProblem& p) {
  using WT = typename Cfg<kTN>::WT;
  constexpr int kPerSm = Cfg<kTN>::kMinBlocks;
  int dev = 0, sms = 132;
  if (cudaGetDevice(&dev) == cudaSuccess)
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n);
  const int m_full = m / WT::kBM, n_full = n / WT::kBN;
  const int heavy = m_full * n_full;
  if (heavy >= sms * kPerSm) return 1;  // a full wave already
  // Work of the partial tiles, in full-tile equivalents (fraction of warps with rows/columns).
  const double col_w = (n % WT::kBN) ? ceil_div(n % WT::kBN, WT::kWarpN) / 2.0 : 0.0;
  const double row_w = (m % WT::kBM) ? ceil_div(m % WT::kBM, WT::kWarpM) / 4.0 : 0.0;
  const double light = m_full * col_w + (row_w > 0 ? n_full * row_w + col_w * row_w * 4 : 0.0);
  const double light_max = std::max(col_w, row_w);
  const int kt = ceil_div(static_cast<int>(p.k), kBK);
  auto makespan = [&](int s) {
    const double c = ceil_div(kt, s) + 3.0;
    const int units = heavy * s, per_sm = ceil_div(units, sms);
    double t = (per_sm == 0) ? 0.0 : per_sm * c;
    if (kPerSm == 2 && units <= sms) t /= 0.6;
    const double fill = (units * c + light * s * c) / sms + light_max * c;
    return std::max(t, fill) + (s > 1 ? 3.0 : 0.0);
  };
  int best = 1;
  const double base = makespan(1);
  double best_cost = base;
  for (int s = 2; s <= 16 && ceil_div(kt, s) >= 4; ++s) {
    const double c = makespan(s);
    if (c < best_cost) best = s, best_cost = c;
  }
  return best_cost < 0.85 * base ? best : 1;
}

template <int kTN>
LaunchConfig config_t(const GemmProblem& p) {
  using WT = typename Cfg<kTN>::WT;
  const TileGrid g = make_tile_grid(p, WT::kBM, WT::kBN);
  const dim3 grid = grid_1d(g);
  return {reinterpret_cast<const void*>(pick<kTN>(p).f),
          dim3(grid.x * choose_splits<kTN>(p)), dim3(WT::kThreads),
          static_cast<size_t>(Cfg<kTN>::kSmemBytes)};
}

template <int kTN>
cudaError_t launch_t(const GemmProblem& p) {
  using WT = typename Cfg<kTN>::WT;
  const Picked k = pick<kTN>(p);
  if (k.err != cudaSuccess) return k.err;
  const TileGrid g = make_tile_grid(p, WT::kBM, WT::kBN);
  const int splits = choose_splits<kTN>(p);
  const int kt = ceil_div(static_cast<int>(p.k), kBK);
  const int per_split = ceil_div(kt, splits);
  const int used = ceil_div(kt, per_split);  // every split gets >= 1 k-tile
  if (used > 1) {
    const cudaError_t e = scale_c(p.C, p.ldc, p.m, p.n, p.beta, p.stream);
    if (e != cudaSuccess) return e;
  }
  const dim3 grid = grid_1d(g);
  if (grid.x == 0 || static_cast<int64_t>(grid.x) * used > INT_MAX) return cudaErrorInvalidValue;
  k.f<<<dim3(grid.x * used), WT::kThreads, Cfg<kTN>::kSmemBytes, p.stream>>>(
      static_cast<const float*>(p.A), static_cast<int>(p.lda), static_cast<const float*>(p.B),
      static_cast<int>(p.ldb), make_epilogue(p), static_cast<int>(p.k), g.m_tiles, g.n_tiles, used,
      per_split);
  return cudaGetLastError();
}

// Which tile: the 128 x 256 one (8 x 16 per thread) wins only where both operands take 16-byte
// or k-transposing copies that it can issue cheaply: op NN with B rows 16-byte aligned (H100,
// 2026-11-22: 46.0 vs 44.5 TFLOP/s at 4096^3, 46.3 vs 44.9 at 8192^3). Elsewhere the 128 x 128 tile
// with two blocks per SM hides the 4-byte copies better (4097^3 NN: 39.6 vs 33.5; 4096^3 NT/TT:
// 42.6 / 43.4 vs 40.9 / 41.6).
bool use_wide(const GemmProblem& p) {
  return p.op_a == Op::N && p.op_b == Op::N && rows_aligned(p.B, p.ldb, sizeof(float), 16);
}

LaunchConfig config(const GemmProblem& p) { return use_wide(p) ? config_t<4>(p) : config_t<2>(p); }
cudaError_t launch(const GemmProblem& p) { return use_wide(p) ? launch_t<4>(p) : launch_t<2>(p); }

}  // namespace

extern const KernelDesc kSimtCpAsyncMultistage = {
    "simt/13_cp_async_multistage", 13, "simt", "beyond the seeds",
    "cp.async 4-stage pipeline (16 B or 4 B copies by layout/alignment), 128x256 (8x16/thread) or "
    "128x128 (8x8/thread) blocks, grouped tile order, split-k for small grids",
    kFP32, 80, 100, nullptr, launch, config};

}  // namespace gemmlab
