// Building blocks every gemmlab kernel shares: tile scheduling on a 1-D grid, element access to
// op(A) / op(B) with transposes and bounds, and the alpha/beta epilogue. They live here once.
//
// Index width: the API guarantees every matrix extent fits in int32 (registry.h), so 32-bit
// index arithmetic is safe in kernels; the products row * ld are formed in int for that reason.
#pragma once

#include <climits>
#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/common/tile_schedule.h"
#include "runtime/aligned_rows.h"  // rows_aligned
#include "registry/registry.h"

namespace gemmlab {

// Tile grids, tile orders and stream-k segments: tile_schedule.h.
inline TileGrid make_tile_grid(const GemmProblem& p, int bm, int bn) {
  return tile_grid(p.m, p.n, bm, bn);
}
// The 1-D grid for a tile grid; {0,0,0} (which fails to launch) if it has more than INT_MAX tiles.
inline dim3 grid_1d(TileGrid t) {
  const unsigned blocks = grid_blocks(t);
  return blocks == 0 ? dim3(0, 0, 0) : dim3(blocks);
}

// Row-major tile order: consecutive blocks walk along a row of C tiles.
__device__ __forceinline__ TileCoord tile_rowmajor(int bm, int bn, int n_tiles) {
  const int t = static_cast<int>(blockIdx.x);
  return {(t / n_tiles) * bm, (t % n_tiles) * bn};
}

// ---------------------------------------------------------------------------------------------
// Operand access. op(X) is rows x cols; stored row-major, or as its transpose when `trans`.
// ---------------------------------------------------------------------------------------------
template <typename T>
struct Operand {
  const T* ptr;
  int ld;
  bool trans;
  __device__ __forceinline__ T at(int r, int c) const {
    return trans ? ptr[c * ld + r] : ptr[r * ld + c];
  }
};

template <typename T>
inline Operand<T> operand_a(const GemmProblem& p) {
  return {static_cast<const T*>(p.A), static_cast<int>(p.lda), p.op_a == Op::T};
}
template <typename T>
inline Operand<T> operand_b(const GemmProblem& p) {
  return {static_cast<const T*>(p.B), static_cast<int>(p.ldb), p.op_b == Op::T};
}

// op(X)(r, c), or zero outside rows x cols: out-of-range tile elements contribute nothing.
template <typename T>
__device__ __forceinline__ float at_or_zero(const Operand<T>& x, int r, int c, int rows, int cols) {
  return (r < rows && c < cols) ? static_cast<float>(x.at(r, c)) : 0.f;
}

// ---------------------------------------------------------------------------------------------
// Epilogue: C = alpha * acc + beta * C. beta == 0 must not read C (it may be uninitialized/NaN).
// ---------------------------------------------------------------------------------------------
struct Epilogue {
  float* C;
  int ldc;
  float alpha, beta;
  int m, n;

  __device__ __forceinline__ float apply(float acc, const float* c_elem) const {
    return beta == 0.f ? alpha * acc : fmaf(beta, *c_elem, alpha * acc);
  }
  // One element, bounds-checked.
  __device__ __forceinline__ void store(int r, int c, float acc) const {
    if (r < m && c < n) {
      float* dst = C + r * ldc + c;
      *dst = apply(acc, dst);
    }
  }
  // Two consecutive elements of one row (an mma / wgmma accumulator pair); one 8-byte store
  // when in bounds and aligned, else element by element.
  __device__ __forceinline__ void store2(int r, int c, float x, float y) const {
    if (r >= m) return;
    float* dst = C + r * ldc + c;
    if (c + 1 < n && (reinterpret_cast<uintptr_t>(dst) & 7) == 0) {
      float2 v;
      if (beta == 0.f) {
        v = make_float2(alpha * x, alpha * y);
      } else {
        const float2 old = *reinterpret_cast<const float2*>(dst);
        v = make_float2(fmaf(beta, old.x, alpha * x), fmaf(beta, old.y, alpha * y));
      }
      *reinterpret_cast<float2*>(dst) = v;
    } else {
      store(r, c, x);
      store(r, c + 1, y);
    }
  }
  // Four consecutive elements of one row, in bounds or not. In bounds, the widest stores the row
  // segment's alignment allows: one 16-byte store, two 8-byte ones, or 4 + 8 + 4 bytes (an odd
  // ldc puts 3 of 4 rows off 16 bytes: 1025^3 fp32 spent ~3% in element-wise stores).
  __device__ __forceinline__ void store4(int r, int c, float4 acc) const {
    if (r >= m) return;
    float* dst = C + r * ldc + c;
    if (c + 3 >= n) {
      store(r, c + 0, acc.x);
      store(r, c + 1, acc.y);
      store(r, c + 2, acc.z);
      store(r, c + 3, acc.w);
      return;
    }
    float4 v = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    const uintptr_t mis = reinterpret_cast<uintptr_t>(dst) & 15;
    if (mis == 0) {
      if (beta != 0.f) {
        const float4 old = *reinterpret_cast<const float4*>(dst);
        v.x = fmaf(beta, old.x, v.x), v.y = fmaf(beta, old.y, v.y);
        v.z = fmaf(beta, old.z, v.z), v.w = fmaf(beta, old.w, v.w);
      }
      *reinterpret_cast<float4*>(dst) = v;
    } else if (mis == 8) {
      float2* d2 = reinterpret_cast<float2*>(dst);
      if (beta != 0.f) {
        const float2 o0 = d2[0], o1 = d2[1];
        v.x = fmaf(beta, o0.x, v.x), v.y = fmaf(beta, o0.y, v.y);
        v.z = fmaf(beta, o1.x, v.z), v.w = fmaf(beta, o1.y, v.w);
      }
      d2[0] = make_float2(v.x, v.y);
      d2[1] = make_float2(v.z, v.w);
    } else {  // mis 4 or 12: dst + 1 is 8-byte aligned
      float2* mid = reinterpret_cast<float2*>(dst + 1);
      if (beta != 0.f) {
        const float2 o = *mid;
        v.x = fmaf(beta, dst[0], v.x), v.y = fmaf(beta, o.x, v.y);
        v.z = fmaf(beta, o.y, v.z), v.w = fmaf(beta, dst[3], v.w);
      }
      dst[0] = v.x;
      *mid = make_float2(v.y, v.z);
      dst[3] = v.w;
    }
  }
};

inline Epilogue make_epilogue(const GemmProblem& p) {
  return {p.C, static_cast<int>(p.ldc), p.alpha, p.beta, static_cast<int>(p.m),
          static_cast<int>(p.n)};
}

}  // namespace gemmlab
