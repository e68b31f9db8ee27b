// Realigning copies of operands with misaligned rows (see aligned_rows.h).
#include "kernels/common/aligned_rows.h"

#include <algorithm>
#include <cstdint>
#include <mutex>

#include <cuda_runtime.h>

namespace gemmlab {
namespace {

constexpr uint64_t kRetainBytes = 512ull << 20;  // freed workspace kept mapped by the pool
constexpr int kMaxDevices = 64;

// One pool per device, created on first use.
cudaError_t workspace_pool(cudaMemPool_t* pool) {
  static std::mutex mutex;
  static cudaMemPool_t pools[kMaxDevices] = {};
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  if (dev < 0 || dev >= kMaxDevices) return cudaErrorInvalidDevice;
  std::lock_guard<std::mutex> lock(mutex);
  if (!pools[dev]) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t p = nullptr;
    if (cudaError_t e = cudaMemPoolCreate(&p, &props); e != cudaSuccess) return e;
    uint64_t retain = kRetainBytes;
    if (cudaError_t e = cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &retain);
        e != cudaSuccess)
      return e;
    pools[dev] = p;
  }
  *pool = pools[dev];
  return cudaSuccess;
}

// One thread per 16-byte chunk of the destination: it gathers kE source elements (the source is
// only element-aligned) and writes them with one 16-byte store. Columns past `cols` in the last
// chunk of a row are written as zero. Consecutive threads take consecutive chunks of a row, so
// both sides are coalesced.
template <typename U>
__global__ void realign_kernel(const U* src, int64_t ld, U* dst, int64_t dst_ld, int64_t rows,
                               int64_t cols) {
  constexpr int kE = 16 / sizeof(U);
  const int64_t chunks_per_row = dst_ld / kE;
  const int64_t total = rows * chunks_per_row;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / chunks_per_row, c0 = (i % chunks_per_row) * kE;
    union {
      uint4 v;
      U e[kE];
    } chunk;
#pragma unroll
    for (int j = 0; j < kE; ++j) chunk.e[j] = c0 + j < cols ? src[r * ld + c0 + j] : U(0);
    *reinterpret_cast<uint4*>(dst + r * dst_ld + c0) = chunk.v;
  }
}

}  // namespace

cudaError_t align_rows_16(const void* ptr, int64_t rows, int64_t cols, int64_t ld, int elem_bytes,
                          cudaStream_t stream, AlignedRows* out) {
  *out = AlignedRows{ptr, ld, nullptr};
  if (reinterpret_cast<uintptr_t>(ptr) % 16 == 0 && (ld * elem_bytes) % 16 == 0) return cudaSuccess;
  const int64_t dst_ld = aligned_ld_16(cols, elem_bytes);
  cudaMemPool_t pool = nullptr;
  if (cudaError_t e = workspace_pool(&pool); e != cudaSuccess) return e;
  void* buf = nullptr;
  if (cudaError_t e = cudaMallocFromPoolAsync(&buf, static_cast<size_t>(rows * dst_ld * elem_bytes),
                                              pool, stream);
      e != cudaSuccess)
    return e;
  const int64_t chunks = rows * (dst_ld * elem_bytes / 16);
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((chunks + threads - 1) / threads, 1 << 16));
  if (elem_bytes == 4)
    realign_kernel<<<blocks, threads, 0, stream>>>(static_cast<const uint32_t*>(ptr), ld,
                                                   static_cast<uint32_t*>(buf), dst_ld, rows, cols);
  else
    realign_kernel<<<blocks, threads, 0, stream>>>(static_cast<const uint16_t*>(ptr), ld,
                                                   static_cast<uint16_t*>(buf), dst_ld, rows, cols);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    cudaFreeAsync(buf, stream);
    return e;
  }
  *out = AlignedRows{buf, dst_ld, buf};
  return cudaSuccess;
}

cudaError_t release_aligned_rows(AlignedRows* a, cudaStream_t stream) {
  cudaError_t e = cudaSuccess;
  if (a->owned) e = cudaFreeAsync(a->owned, stream);
  a->owned = nullptr;
  return e;
}

}  // namespace gemmlab
