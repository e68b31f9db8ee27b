// cp.async (sm_80+): asynchronous global -> shared copies that bypass the registers. The PTX lives
// here once; kernels call these wrappers.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace gemmlab {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Copy 16 bytes; when `valid` is false, write 16 zero bytes instead (src is not read).
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)),
               "l"(gmem), "r"(src_bytes));
#endif
}

// Copy the first `src_bytes` (0..16) bytes of a 16-byte chunk and zero-fill the rest: a tile's
// last partial vector along a row (e.g. k = 1025 with 16-byte aligned rows) without a scalar path.
// Only src_bytes bytes of gmem are read. kL2Prefetch: L2 fetches the whole aligned 256-byte block
// around the source from DRAM; for an operand read 64 bytes per row and k-tile (simt/sgemm's
// row-major A tile), the next k-tiles of each row arrive in the same DRAM burst.
template <bool kL2Prefetch = false>
__device__ __forceinline__ void cp_async_16_partial(void* smem, const void* gmem, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (kL2Prefetch)
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)),
                 "l"(gmem), "r"(src_bytes));
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)),
                 "l"(gmem), "r"(src_bytes));
#endif
}

// Copy 4 bytes (any 4-byte-aligned address); zero-fill when `valid` is false. kL2Prefetch: the
// same 256-byte L2 fetch (a k-major tile's 4-byte copies of an A stored with k contiguous: 64
// bytes per row and k-tile).
template <bool kL2Prefetch = false>
__device__ __forceinline__ void cp_async_4(void* smem, const void* gmem, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int src_bytes = valid ? 4 : 0;
  if constexpr (kL2Prefetch)
    asm volatile("cp.async.ca.shared.global.L2::256B [%0], [%1], 4, %2;\n" ::"r"(smem_addr(smem)),
                 "l"(gmem), "r"(src_bytes));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(smem)),
                 "l"(gmem), "r"(src_bytes));
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Wait until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

}  // namespace gemmlab

namespace gemmlab {

// Copy `src_bytes` (0..16) bytes to a 16-byte smem chunk (a shared-state-space address, see
// smem_addr) and zero the remaining 16 - src_bytes: one instruction for an in-range chunk, a chunk
// straddling the end of a row (only its in-range elements are read) and an out-of-range chunk
// (src_bytes = 0, nothing is read). Both addresses must be 16-byte aligned.
__device__ __forceinline__ void cp_async_16_zfill(uint32_t smem, const void* gmem, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem),
               "r"(src_bytes));
#endif
}

}  // namespace gemmlab
