// Building blocks of the FP32 (simt) ladder steps 2-13: the kernel argument bundle, the launch
// helper, global -> shared tile copies (scalar and float4, with zero fill at the edges), and the
// per-thread register-tile micro-kernel. Step files call these; what makes a step that step stays
// in its own file.
#pragma once

#include "kernels/common/gemm_common.cuh"
#include "kernels/common/launch.cuh"

namespace gemmlab {

// Everything a simt kernel needs, passed by value.
struct SimtArgs {
  Operand<float> a, b;  // op(A) is m x k, op(B) is k x n
  Epilogue ep;          // holds C, ldc, alpha, beta, m, n
  int k;
  int n_tiles;          // tiles along n, for the 1-D grid
  bool vec_a, vec_b;    // rows of A / B allow 16-byte loads (pointer and ld aligned)
};

inline SimtArgs make_simt_args(const GemmProblem& p, int bn) {
  SimtArgs s;
  s.a = operand_a<float>(p);
  s.b = operand_b<float>(p);
  s.ep = make_epilogue(p);
  s.k = static_cast<int>(p.k);
  s.n_tiles = ceil_div(static_cast<int>(p.n), bn);
  s.vec_a = rows_aligned(p.A, p.lda, 4, 16);
  s.vec_b = rows_aligned(p.B, p.ldb, 4, 16);
  return s;
}

using SimtKernel = void (*)(SimtArgs);

// One block per BM x BN tile of C on a 1-D grid.
template <SimtKernel kKernel, int BM, int BN>
LaunchConfig simt_config(const GemmProblem& p, dim3 block) {
  return {reinterpret_cast<const void*>(kKernel), grid_1d(make_tile_grid(p, BM, BN)), block, 0};
}

template <SimtKernel kKernel, int BM, int BN>
cudaError_t simt_launch(const GemmProblem& p, dim3 block) {
  const LaunchConfig c = simt_config<kKernel, BM, BN>(p, block);
  return launch_kernel(kKernel, c.grid, c.block, 0, p.stream, make_simt_args(p, BN));
}

__device__ __forceinline__ int thread_rank() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

// Copies the ROWS x COLS tile of op(X) at (r0, c0) into shared memory with row stride SLD
// (s[r * SLD + c]), or transposed (s[c * SLD + r]) when kTransposeInSmem. Elements outside the
// rows x cols matrix become zero, so edge tiles need no special case in the compute loop.
// kGuard = false skips the bounds checks for tiles known to be inside (step 4's interior path).
// Consecutive threads take consecutive addresses of the *stored* matrix: along c when X is
// stored as op(X), along r when it is stored transposed, so the loads coalesce either way.
template <int ROWS, int COLS, int SLD, int THREADS, bool kTransposeInSmem, bool kGuard = true>
__device__ __forceinline__ void copy_tile(float* s, const Operand<float>& x, int r0, int c0,
                                          int rows, int cols) {
  const int t = thread_rank();
#pragma unroll
  for (int i = t; i < ROWS * COLS; i += THREADS) {
    const int r = x.trans ? i % ROWS : i / COLS;
    const int c = x.trans ? i / ROWS : i % COLS;
    const float v = kGuard ? at_or_zero(x, r0 + r, c0 + c, rows, cols) : x.at(r0 + r, c0 + c);
    s[kTransposeInSmem ? c * SLD + r : r * SLD + c] = v;
  }
}

// copy_tile that skips the bounds checks when the caller knows the tile is `inside` the matrix.
// `inside` must be the same for the whole block (a uniform branch: no divergence in a warp).
template <int ROWS, int COLS, int SLD, int THREADS, bool kTransposeInSmem>
__device__ __forceinline__ void copy_tile_unchecked_inside(float* s, const Operand<float>& x,
                                                           bool inside, int r0, int c0, int rows,
                                                           int cols) {
  if (inside)
    copy_tile<ROWS, COLS, SLD, THREADS, kTransposeInSmem, false>(s, x, r0, c0, rows, cols);
  else
    copy_tile<ROWS, COLS, SLD, THREADS, kTransposeInSmem, true>(s, x, r0, c0, rows, cols);
}

// The same copy with 16-byte global loads (float4) along the stored matrix's contiguous
// direction, when the rows are 16-byte aligned and the tile lies inside the matrix; otherwise
// it falls back to copy_tile (edge tiles, misaligned leading dimensions or pointers).
template <int ROWS, int COLS, int SLD, int THREADS, bool kTransposeInSmem>
__device__ __forceinline__ void copy_tile_vec4(float* s, const Operand<float>& x, bool vec_ok,
                                               int r0, int c0, int rows, int cols) {
  const bool inside = r0 + ROWS <= rows && c0 + COLS <= cols;
  if (!(vec_ok && inside)) {
    copy_tile<ROWS, COLS, SLD, THREADS, kTransposeInSmem>(s, x, r0, c0, rows, cols);
    return;
  }
  const int t = thread_rank();
#pragma unroll
  for (int i = t; i < ROWS * COLS / 4; i += THREADS) {
    // Four consecutive stored elements: along c (op(X) stored as-is) or along r (transposed).
    const int r = x.trans ? (i % (ROWS / 4)) * 4 : i / (COLS / 4);
    const int c = x.trans ? i / (ROWS / 4) : (i % (COLS / 4)) * 4;
    const float* src = x.trans ? x.ptr + (c0 + c) * x.ld + (r0 + r) : x.ptr + (r0 + r) * x.ld + (c0 + c);
    const float4 v = *reinterpret_cast<const float4*>(src);
    // Element j of v sits at (r + j, c) when X is stored transposed, else at (r, c + j).
    const int step = (x.trans ? 1 : 0) * (kTransposeInSmem ? 1 : SLD) +
                     (x.trans ? 0 : 1) * (kTransposeInSmem ? SLD : 1);
    float* dst = s + (kTransposeInSmem ? c * SLD + r : r * SLD + c);
    dst[0] = v.x;
    dst[step] = v.y;
    dst[2 * step] = v.z;
    dst[3 * step] = v.w;
  }
}

// acc[TM][TN] += a[TM] (outer) b[TN]: the register-blocking micro-kernel.
template <int TM, int TN>
__device__ __forceinline__ void outer_product(float (&acc)[TM][TN], const float (&a)[TM],
                                              const float (&b)[TN]) {
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}

// The k-loop over one shared tile for a thread owning TM consecutive rows and TN consecutive
// columns: a_rows points at the thread's first A row (row-major, stride SLDA, KT wide), b_cols at
// its first B column (row-major, stride SLDB). Per k: TM + TN shared loads, TM * TN FMAs.
template <int TM, int TN, int KT, int SLDA, int SLDB>
__device__ __forceinline__ void accumulate_tile(float (&acc)[TM][TN], const float* a_rows,
                                                const float* b_cols) {
#pragma unroll
  for (int kk = 0; kk < KT; ++kk) {
    float a[TM], b[TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) a[i] = a_rows[i * SLDA + kk];
#pragma unroll
    for (int j = 0; j < TN; ++j) b[j] = b_cols[kk * SLDB + j];
    outer_product(acc, a, b);
  }
}

// Writes a thread's TM x TN accumulators whose element (i, j) sits at C(row0 + i * row_step,
// col0 + j) through the epilogue; rows use 16-byte stores where TN is a multiple of 4.
template <int TM, int TN>
__device__ __forceinline__ void store_thread_tile(const Epilogue& ep, const float (&acc)[TM][TN],
                                                  int row0, int col0, int row_step = 1) {
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    if constexpr (TN % 4 == 0) {
#pragma unroll
      for (int j = 0; j < TN; j += 4)
        ep.store4(row0 + i * row_step, col0 + j,
                  make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
    } else {
#pragma unroll
      for (int j = 0; j < TN; ++j) ep.store(row0 + i * row_step, col0 + j, acc[i][j]);
    }
  }
}

}  // namespace gemmlab
