// Building blocks every gemmlab kernel shares: tile scheduling on a 1-D grid, element access to
// op(A) / op(B) with transposes and bounds, and the alpha/beta epilogue. They live here once.
//
// Index width: A and B extents fit in int32 unless a kernel declares kLargeOperands (registry.h),
// so operand index arithmetic may be 32-bit; C and D offsets are 64-bit (the Epilogue).
#pragma once

#include <climits>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/common/activation.cuh"
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
// Epilogue: D = act(alpha * acc + beta * C + bias), rounded to D's dtype (registry.h's
// GemmProblem). beta == 0 must not read C (it may be uninitialized/NaN). Offsets r * ld are formed
// in 64 bits: C and D may span more than 2^31 elements (one IMAD.WIDE per row, nothing per
// element). `plain` (fp32 D, no bias or activation, and C read in place of D or not at all) keeps
// the fp32 path below; anything else goes through store_general.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ float load_as_float(const void* base, DType t, int64_t i) {
  if (t == DType::F32) return static_cast<const float*>(base)[i];
  if (t == DType::BF16) return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
  return __half2float(static_cast<const __half*>(base)[i]);
}

// v[i] += scale * base[off + i] for i < valid (N at most), base in dtype t: one test of the dtype.
template <int N>
__device__ __forceinline__ void add_n(float (&v)[N], const void* base, DType t, int64_t off,
                                      int valid, float scale) {
  if (t == DType::F32) {
    const float* p = static_cast<const float*>(base) + off;
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (i < valid) v[i] = fmaf(scale, p[i], v[i]);
  } else if (t == DType::BF16) {
    const __nv_bfloat16* p = static_cast<const __nv_bfloat16*>(base) + off;
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (i < valid) v[i] = fmaf(scale, __bfloat162float(p[i]), v[i]);
  } else {
    const __half* p = static_cast<const __half*>(base) + off;
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (i < valid) v[i] = fmaf(scale, __half2float(p[i]), v[i]);
  }
}

struct Epilogue {
  void* D;
  const void* C;
  const void* bias;  // n values, or null
  int64_t ldd, ldc;
  float alpha, beta;
  int m, n;
  DType d_type, c_type, bias_type;
  Activation act;
  bool plain;

  __device__ __forceinline__ float* Df() const { return static_cast<float*>(D); }

  // The epilogue of batch entry b (D and C moved by their strides; bias is shared).
  __device__ __forceinline__ Epilogue entry(int64_t b, int64_t stride_c, int64_t stride_d) const {
    Epilogue e = *this;
    e.D = static_cast<char*>(D) + b * stride_d * (d_type == DType::F32 ? 4 : 2);
    e.C = static_cast<const char*>(C) + b * stride_c * (c_type == DType::F32 ? 4 : 2);
    return e;
  }

  __device__ __forceinline__ float apply(float acc, const float* c_elem) const {
    return beta == 0.f ? alpha * acc : fmaf(beta, *c_elem, alpha * acc);
  }
  // The full epilogue of element (r, c) (in bounds) before rounding to D's dtype.
  __device__ __forceinline__ float value(int r, int c, float acc) const {
    float x = alpha * acc;
    if (beta != 0.f) x = fmaf(beta, load_as_float(C, c_type, static_cast<int64_t>(r) * ldc + c), x);
    if (bias) x += load_as_float(bias, bias_type, c);
    return activate(x, act);
  }
  // The epilogue of N consecutive elements of row r from column c, v holding their accumulators
  // (elements past n are computed from garbage and never stored).
  template <int N>
  __device__ __forceinline__ void compute(int r, int c, float (&v)[N]) const {
    const int valid = n - c;  // elements in bounds: min(N, valid)
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] *= alpha;
    if (beta != 0.f) add_n<N>(v, C, c_type, static_cast<int64_t>(r) * ldc + c, valid, beta);
    if (bias) add_n<N>(v, bias, bias_type, c, valid, 1.f);
    activate_n<N>(v, act);
  }
  // v (N = 1, 2, 4, 8 final values) into D at (r, c) in D's dtype, bounds-checked: one vector
  // store where they are in bounds and aligned, else pairs or single elements.
  template <int N>
  __device__ __forceinline__ void put(int r, int c, const float (&v)[N]) const {
    const int64_t off = static_cast<int64_t>(r) * ldd + c;
    if constexpr (N == 8) {
      // In bounds: the widest stores the address allows. A row of odd length (a vocabulary of
      // 50257) leaves every other row 4- or 2-byte aligned: there the middle six values go as
      // aligned pairs and the two ends alone, not as eight single stores.
      if (c + 7 < n) {
        char* base = static_cast<char*>(D) + off * (d_type == DType::F32 ? 4 : 2);
        const uintptr_t addr = reinterpret_cast<uintptr_t>(base);
        if (d_type == DType::F32) {
          float* dst = reinterpret_cast<float*>(base);
          if (addr % 16 == 0) {
            reinterpret_cast<float4*>(dst)[0] = make_float4(v[0], v[1], v[2], v[3]);
            reinterpret_cast<float4*>(dst)[1] = make_float4(v[4], v[5], v[6], v[7]);
          } else if (addr % 8 == 0) {
#pragma unroll
            for (int i = 0; i < 8; i += 2)
              *reinterpret_cast<float2*>(dst + i) = make_float2(v[i], v[i + 1]);
          } else {
            dst[0] = v[0];
#pragma unroll
            for (int i = 1; i < 7; i += 2)
              *reinterpret_cast<float2*>(dst + i) = make_float2(v[i], v[i + 1]);
            dst[7] = v[7];
          }
          return;
        }
        uint16_t* dst = reinterpret_cast<uint16_t*>(base);
        if (addr % 4 == 0) {
          uint32_t w[4];
#pragma unroll
          for (int i = 0; i < 4; ++i) w[i] = pack16(v[2 * i], v[2 * i + 1]);
          if (addr % 16 == 0) {
            *reinterpret_cast<uint4*>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
          } else if (addr % 8 == 0) {
            reinterpret_cast<uint2*>(dst)[0] = make_uint2(w[0], w[1]);
            reinterpret_cast<uint2*>(dst)[1] = make_uint2(w[2], w[3]);
          } else {
#pragma unroll
            for (int i = 0; i < 4; ++i) reinterpret_cast<uint32_t*>(dst)[i] = w[i];
          }
        } else {
          dst[0] = static_cast<uint16_t>(pack16(v[0], 0.f));
#pragma unroll
          for (int i = 1; i < 7; i += 2)
            *reinterpret_cast<uint32_t*>(dst + i) = pack16(v[i], v[i + 1]);
          dst[7] = static_cast<uint16_t>(pack16(v[7], 0.f));
        }
        return;
      }
      const float lo[4] = {v[0], v[1], v[2], v[3]}, hi[4] = {v[4], v[5], v[6], v[7]};
      put<4>(r, c, lo);
      put<4>(r, c + 4, hi);
      return;
    } else {
      if (d_type == DType::F32) {
        float* dst = Df() + off;
        const uintptr_t addr = reinterpret_cast<uintptr_t>(dst);
        if (N == 4 && c + 3 < n && addr % 16 == 0) {
          *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[N - 1]);
        } else if (N >= 2 && c + N - 1 < n && addr % 8 == 0) {
#pragma unroll
          for (int i = 0; i < N; i += 2)
            *reinterpret_cast<float2*>(dst + i) = make_float2(v[i], v[(i + 1) % N]);
        } else {
#pragma unroll
          for (int i = 0; i < N; ++i)
            if (c + i < n) dst[i] = v[i];
        }
        return;
      }
      // 16-bit D: pairs packed in 32 bits.
      uint16_t* dst = static_cast<uint16_t*>(D) + off;
      const uintptr_t addr = reinterpret_cast<uintptr_t>(dst);
      if (N == 4 && c + 3 < n && addr % 8 == 0) {
        *reinterpret_cast<uint2*>(dst) =
            make_uint2(pack16(v[0], v[1 % N]), pack16(v[2 % N], v[3 % N]));
      } else if (N >= 2 && c + N - 1 < n && addr % 4 == 0) {
#pragma unroll
        for (int i = 0; i < N; i += 2)
          reinterpret_cast<uint32_t*>(dst)[i / 2] = pack16(v[i], v[(i + 1) % N]);
      } else {
#pragma unroll
        for (int i = 0; i < N; ++i)
          if (c + i < n) dst[i] = static_cast<uint16_t>(pack16(v[i], 0.f));
      }
    }
  }
  // Two values rounded to D's 16-bit dtype, packed (x in the low half).
  __device__ __forceinline__ uint32_t pack16(float x, float y) const {
    if (d_type == DType::BF16) {
      const __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
      return *reinterpret_cast<const uint32_t*>(&h);
    }
    const __half2 h = __floats2half2_rn(x, y);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
  // N consecutive elements of row r from column c (N = 1, 2, 4), any dtype, bounds-checked.
  template <int N>
  __device__ __forceinline__ void store_general(int r, int c, float4 a) const {
    if (r >= m) return;
    const float acc[4] = {a.x, a.y, a.z, a.w};
    float v[N];
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = acc[i];
    compute<N>(r, c, v);
    put<N>(r, c, v);
  }
  // Eight consecutive elements (a, then b), the general epilogue inlined: one 16-byte store of a
  // 16-bit D where in bounds and aligned.
  // bv: the bias of these columns (bias8), loaded once for all the rows a thread stores.
  __device__ __forceinline__ void store8_general(int r, int c, float4 a, float4 b,
                                                 const float (&bv)[8]) const {
    if (r >= m) return;
    float v[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] *= alpha;
    if (beta != 0.f) add_n<8>(v, C, c_type, static_cast<int64_t>(r) * ldc + c, n - c, beta);
    if (bias) {
#pragma unroll
      for (int i = 0; i < 8; ++i) v[i] += bv[i];
    }
    activate_n<8>(v, act);
    put<8>(r, c, v);
  }
  // One element, in bounds or not, whose bias value the caller loaded ahead (b; 0 without a
  // bias): the general epilogue without its bias load (wgmma/decode's narrow tiles load their
  // bias before the main loop).
  __device__ __forceinline__ void store_biased(int r, int c, float acc, float b) const {
    if (r >= m || c >= n) return;
    float x = alpha * acc;
    if (beta != 0.f) x = fmaf(beta, load_as_float(C, c_type, static_cast<int64_t>(r) * ldc + c), x);
    const float v[1] = {activate(x + b, act)};
    put<1>(r, c, v);
  }
  // The bias of column c (0 past n, or without a bias).
  __device__ __forceinline__ float bias1(int c) const {
    return bias && c < n ? load_as_float(bias, bias_type, c) : 0.f;
  }
  // The bias of columns c .. c + 7 (0 past n, or without a bias).
  __device__ __forceinline__ void bias8(int c, float (&bv)[8]) const {
#pragma unroll
    for (int i = 0; i < 8; ++i) bv[i] = 0.f;
    if (bias) add_n<8>(bv, bias, bias_type, c, n - c, 1.f);
  }

  // The stores below take the general path out of line (a call) unless kInline: a call keeps
  // kernels with dozens of unrolled store sites small; a kernel whose few store sites run hot
  // (wgmma/03's staged epilogue, gemv) inlines it.
  template <int N, bool kInline>
  __device__ __forceinline__ void general(int r, int c, float4 a) const;

  // One element, bounds-checked.
  template <bool kInline = false>
  __device__ __forceinline__ void store(int r, int c, float acc) const {
    if (!plain) return general<1, kInline>(r, c, make_float4(acc, 0.f, 0.f, 0.f));
    store_plain(r, c, acc);
  }
  __device__ __forceinline__ void store_plain(int r, int c, float acc) const {
    if (r < m && c < n) {
      float* dst = Df() + static_cast<int64_t>(r) * ldd + c;
      *dst = apply(acc, dst);
    }
  }
  // Two consecutive elements of one row (an mma / wgmma accumulator pair); one 8-byte store
  // when in bounds and aligned, else element by element.
  template <bool kInline = false>
  __device__ __forceinline__ void store2(int r, int c, float x, float y) const {
    if (!plain) return general<2, kInline>(r, c, make_float4(x, y, 0.f, 0.f));
    store2_plain(r, c, x, y);
  }
  __device__ __forceinline__ void store2_plain(int r, int c, float x, float y) const {
    if (r >= m) return;
    float* dst = Df() + static_cast<int64_t>(r) * ldd + c;
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
      store_plain(r, c, x);
      store_plain(r, c + 1, y);
    }
  }
  // Four consecutive elements of one row, in bounds or not. In bounds, the widest stores the row
  // segment's alignment allows: one 16-byte store, two 8-byte ones, or 4 + 8 + 4 bytes (an odd
  // ldc puts 3 of 4 rows off 16 bytes: 1025^3 fp32 spent ~3% in element-wise stores).
  template <bool kInline = false>
  __device__ __forceinline__ void store4(int r, int c, float4 acc) const {
    if (!plain) return general<4, kInline>(r, c, acc);
    store4_plain(r, c, acc);
  }
  __device__ __forceinline__ void store4_plain(int r, int c, float4 acc) const {
    if (r >= m) return;
    float* dst = Df() + static_cast<int64_t>(r) * ldd + c;
    if (c + 3 >= n) {
      store_plain(r, c + 0, acc.x);
      store_plain(r, c + 1, acc.y);
      store_plain(r, c + 2, acc.z);
      store_plain(r, c + 3, acc.w);
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

template <int N>
__device__ __noinline__ void epilogue_store_general(const Epilogue ep, int r, int c, float4 a) {
  ep.store_general<N>(r, c, a);
}

__device__ __noinline__ inline void epilogue_store_biased(const Epilogue ep, int r, int c, float acc,
                                                          float b) {
  ep.store_biased(r, c, acc, b);
}

template <int N, bool kInline>
__device__ __forceinline__ void Epilogue::general(int r, int c, float4 a) const {
  if constexpr (kInline) store_general<N>(r, c, a);
  else epilogue_store_general<N>(*this, r, c, a);
}

// The fp32 fast path applies: fp32 D, no bias or activation, and C (if read) is D itself.
inline bool plain_epilogue(const GemmProblem& p) {
  return p.d_type == DType::F32 && p.bias == nullptr && p.act == Activation::None &&
         (p.beta == 0.f || (p.C == p.D && p.ldc == p.ldd && p.c_type == DType::F32));
}

inline Epilogue make_epilogue(const GemmProblem& p) {
  Epilogue e;
  e.D = p.D, e.C = p.C, e.bias = p.bias;
  e.ldd = p.ldd, e.ldc = p.ldc;
  e.alpha = p.alpha, e.beta = p.beta;
  e.m = static_cast<int>(p.m), e.n = static_cast<int>(p.n);
  e.d_type = p.d_type, e.c_type = p.c_type, e.bias_type = p.bias_type;
  e.act = p.act;
  e.plain = plain_epilogue(p);
  return e;
}

}  // namespace gemmlab
