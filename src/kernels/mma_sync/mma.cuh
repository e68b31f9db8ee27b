// Warp-level tensor-core PTX for sm_80+ (Ampere, Ada, Hopper's legacy path): ldmatrix, mma.sync
// for tf32/bf16/fp16 with fp32 accumulation, and the tf32 rounding. The PTX lives here once;
// kernels call these wrappers (and pick the per-precision pieces through MmaTraits).
//
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k16 / m16n8k8"), with g = lane / 4
// and t = lane % 4:
//   m16n8k16 (16-bit A/B): a0 = A[g][2t,2t+1]  a1 = A[g+8][2t,2t+1]  a2 = A[g][2t+8,+9]
//                          a3 = A[g+8][2t+8,+9]   b0 = B[2t,2t+1][g]  b1 = B[2t+8,+9][g]
//   m16n8k8 (tf32):        a0 = A[g][t]  a1 = A[g+8][t]  a2 = A[g][t+4]  a3 = A[g+8][t+4]
//                          b0 = B[t][g]  b1 = B[t+4][g]
//   accumulator (both):    c0,c1 = C[g][2t,2t+1]   c2,c3 = C[g+8][2t,2t+1]
// ldmatrix loads 8x8 matrices of 16-bit elements, one 16-byte row per address (lanes 8j..8j+7
// give the rows of matrix j); lane i receives row i/4, elements 2(i%4), 2(i%4)+1 of each matrix
// (.trans: column i/4 instead). Read as 32-bit words, an 8x8 b16 matrix is an 8x4 matrix of
// floats, and lane i receives word (i/4, i%4): exactly the tf32 a0/b0 pattern, so k-contiguous
// tf32 tiles load with ldmatrix too (there is no 32-bit transpose, so mn-contiguous tf32 tiles
// are read with scalar LDS).
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/common/cp_async.cuh"  // smem_addr

namespace gemmlab {

// ---- ldmatrix (addresses are shared-state-space byte addresses, see smem_addr) ----
__device__ __forceinline__ void ldmatrix_x1(uint32_t& r0, uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r0) : "r"(addr));
#endif
}
__device__ __forceinline__ void ldmatrix_x2(uint32_t& r0, uint32_t& r1, uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r0), "=r"(r1)
               : "r"(addr));
#endif
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#endif
}
__device__ __forceinline__ void ldmatrix_x1_trans(uint32_t& r0, uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
               : "=r"(r0)
               : "r"(addr));
#endif
}
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t& r0, uint32_t& r1, uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r0), "=r"(r1)
               : "r"(addr));
#endif
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#endif
}

// One 32-bit word from shared memory (for fragments ldmatrix cannot produce).
__device__ __forceinline__ uint32_t lds32(uint32_t addr) {
  uint32_t r = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(r) : "r"(addr));
#endif
  return r;
}

// Round an fp32 value to tf32 (10-bit mantissa), to nearest with ties away from zero; the result
// is an fp32 bit pattern with the low 13 bits zero, as the tf32 mma expects.
__device__ __forceinline__ uint32_t cvt_tf32(uint32_t f32_bits) {
  uint32_t r = f32_bits;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(f32_bits)));
#endif
  return r;
}

// ---- mma.sync: D = A * B + D, fp32 accumulators ----
__device__ __forceinline__ void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4],
                                                  const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ __forceinline__ void mma_m16n8k16_f16(float (&d)[4], const uint32_t (&a)[4],
                                                 const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
// A and B registers must already hold tf32 bit patterns (cvt_tf32).
__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4],
                                                 const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// ---- per-precision pieces, so one kernel template serves tf32, bf16 and fp16 ----
// T is the storage type of A and B. kK is the mma's K; one fragment register holds
// 32 / (8 * sizeof(T)) k-elements, so a 16-byte smem chunk holds kChunkElems of them.
template <typename T>
struct MmaTraits;

template <>
struct MmaTraits<float> {  // TF32
  static constexpr int kK = 8;
  static constexpr int kChunkElems = 4;
  static constexpr bool kRoundTf32 = true;
  __device__ __forceinline__ static void mma(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    mma_m16n8k8_tf32(d, a, b);
  }
};
template <>
struct MmaTraits<__nv_bfloat16> {
  static constexpr int kK = 16;
  static constexpr int kChunkElems = 8;
  static constexpr bool kRoundTf32 = false;
  __device__ __forceinline__ static void mma(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    mma_m16n8k16_bf16(d, a, b);
  }
};
template <>
struct MmaTraits<__half> {
  static constexpr int kK = 16;
  static constexpr int kChunkElems = 8;
  static constexpr bool kRoundTf32 = false;
  __device__ __forceinline__ static void mma(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    mma_m16n8k16_f16(d, a, b);
  }
};

}  // namespace gemmlab
