// Realigning copies of operands with misaligned rows (see aligned_rows.h).
#include "kernels/common/aligned_rows.h"

#include "kernels/common/workspace.h"

#include <algorithm>
#include <cstdint>

#include <cuda_runtime.h>

namespace gemmlab {
namespace {

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

// dst (cols x rows) = src (rows x cols)^T, one 32 x 32 tile per block of 32 x 8 threads. The +1
// column of the shared tile keeps the transposed reads free of bank conflicts.
// Tile rows beyond gridDim.y * 32 are taken by the same blocks in later rounds.
__global__ void transpose_kernel(const float* src, int64_t ld, float* dst, int64_t dst_ld,
                                 int64_t rows, int64_t cols) {
  __shared__ float tile[32][33];
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * 32;
  for (int64_t r0 = static_cast<int64_t>(blockIdx.y) * 32; r0 < rows;
       r0 += static_cast<int64_t>(gridDim.y) * 32) {
    for (int i = threadIdx.y; i < 32; i += 8) {
      const int64_t r = r0 + i, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * ld + c];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += 8) {
      const int64_t c = c0 + i, r = r0 + threadIdx.x;
      if (c < cols && r < rows) dst[c * dst_ld + r] = tile[threadIdx.x][i];
    }
    __syncthreads();  // the tile is rewritten in the next round
  }
}

}  // namespace

cudaError_t transpose_aligned_rows(const float* src, int64_t rows, int64_t cols, int64_t ld,
                                   cudaStream_t stream, AlignedRows* out) {
  *out = AlignedRows{};
  const int64_t dst_ld = aligned_ld_16(rows, sizeof(float));
  const int64_t gx = (cols + 31) / 32, gy = std::min<int64_t>((rows + 31) / 32, 65535);
  if (gx > INT32_MAX) return cudaErrorInvalidValue;
  void* buf = nullptr;
  if (cudaError_t e = workspace_alloc(&buf, static_cast<size_t>(cols * dst_ld) * sizeof(float), stream);
      e != cudaSuccess)
    return e;
  transpose_kernel<<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), dim3(32, 8), 0,
                     stream>>>(src, ld, static_cast<float*>(buf), dst_ld, rows, cols);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    workspace_free(buf, stream);
    return e;
  }
  *out = AlignedRows{buf, dst_ld, buf};
  return cudaSuccess;
}

cudaError_t align_rows_16(const void* ptr, int64_t rows, int64_t cols, int64_t ld, int elem_bytes,
                          cudaStream_t stream, AlignedRows* out) {
  *out = AlignedRows{ptr, ld, nullptr};
  if (reinterpret_cast<uintptr_t>(ptr) % 16 == 0 && (ld * elem_bytes) % 16 == 0) return cudaSuccess;
  const int64_t dst_ld = aligned_ld_16(cols, elem_bytes);
  void* buf = nullptr;
  if (cudaError_t e = workspace_alloc(&buf, static_cast<size_t>(rows * dst_ld * elem_bytes), stream);
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
    workspace_free(buf, stream);
    return e;
  }
  *out = AlignedRows{buf, dst_ld, buf};
  return cudaSuccess;
}

cudaError_t release_aligned_rows(AlignedRows* a, cudaStream_t stream) {
  cudaError_t e = cudaSuccess;
  if (a->owned) e = workspace_free(a->owned, stream);
  a->owned = nullptr;
  return e;
}

}  // namespace gemmlab
