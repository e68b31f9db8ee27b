// Copies of operands into aligned rows, straight or transposed (see aligned_rows.h). The one
// place gemmlab's packing and realigning passes live: simt/13's realigned and transposed B, and
// the TMA kernels' packed operands (sm90_host.cu) all come through copy_matrix.
#include "runtime/aligned_rows.h"

#include "runtime/workspace.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include <cuda_runtime.h>
#include "kernels/common/launch.cuh"

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

// dst (cols x rows, pitch dst_ld) <- transpose of src (rows x cols, pitch ld), through a
// 32 x 32 shared tile (padded by one element against bank conflicts) so reads and writes are
// both coalesced. One tile per block of 32 x 8 threads.
template <typename U>
__global__ void transpose_kernel(const U* __restrict__ src, int64_t ld, U* __restrict__ dst,
                                 int64_t dst_ld, int rows, int cols, int col_tiles) {
  __shared__ U tile[32][33];
  const int r0 = (blockIdx.x / col_tiles) * 32, c0 = (blockIdx.x % col_tiles) * 32;
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * ld + c];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int c = c0 + i, r = r0 + threadIdx.x;  // dst row c, column r
    if (r < rows && c < cols) dst[c * dst_ld + r] = tile[threadIdx.x][i];
  }
}

template <typename U>
cudaError_t launch_copy(const void* src, int64_t ld, void* dst, int64_t dst_ld, int64_t rows,
                        int64_t cols, bool transpose, cudaStream_t stream) {
  if (rows > INT_MAX || cols > INT_MAX) return cudaErrorInvalidValue;
  if (transpose) {
    const int64_t col_tiles = (cols + 31) / 32, blocks = (rows + 31) / 32 * col_tiles;
    if (blocks > INT_MAX) return cudaErrorInvalidValue;
    return launch_kernel(transpose_kernel<U>, static_cast<unsigned>(blocks), dim3(32, 8), 0,
                         stream, static_cast<const U*>(src), ld, static_cast<U*>(dst), dst_ld,
                         static_cast<int>(rows), static_cast<int>(cols),
                         static_cast<int>(col_tiles));
  } else {
    const int64_t chunks = rows * (dst_ld * static_cast<int64_t>(sizeof(U)) / 16);
    const int threads = 256;
    const int blocks =
        static_cast<int>(std::min<int64_t>((chunks + threads - 1) / threads, 1 << 16));
    return launch_kernel(realign_kernel<U>, blocks, threads, 0, stream, static_cast<const U*>(src), ld,
                         static_cast<U*>(dst), dst_ld, rows, cols);
  }
}

// A workspace copy of the rows x cols matrix (transpose: of its transpose) with aligned rows.
cudaError_t aligned_copy(const void* ptr, int64_t rows, int64_t cols, int64_t ld, int elem_bytes,
                         bool transpose, cudaStream_t stream, AlignedRows* out) {
  const int64_t out_rows = transpose ? cols : rows, out_cols = transpose ? rows : cols;
  const int64_t dst_ld = aligned_ld_16(out_cols, elem_bytes);
  void* buf = nullptr;
  if (cudaError_t e =
          workspace_alloc(&buf, static_cast<size_t>(out_rows * dst_ld * elem_bytes), stream);
      e != cudaSuccess)
    return e;
  if (cudaError_t e = copy_matrix(ptr, ld, buf, dst_ld, rows, cols, elem_bytes, transpose, stream);
      e != cudaSuccess) {
    workspace_free(buf, stream);
    return e;
  }
  *out = AlignedRows{buf, dst_ld, buf};
  return cudaSuccess;
}

}  // namespace

cudaError_t copy_matrix(const void* src, int64_t ld_src, void* dst, int64_t ld_dst, int64_t rows,
                        int64_t cols, int elem_bytes, bool transpose, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  return elem_bytes == 2
             ? launch_copy<uint16_t>(src, ld_src, dst, ld_dst, rows, cols, transpose, stream)
             : launch_copy<uint32_t>(src, ld_src, dst, ld_dst, rows, cols, transpose, stream);
}

cudaError_t align_rows_16(const void* ptr, int64_t rows, int64_t cols, int64_t ld, int elem_bytes,
                          cudaStream_t stream, AlignedRows* out) {
  *out = AlignedRows{ptr, ld, nullptr};
  if (reinterpret_cast<uintptr_t>(ptr) % 16 == 0 && (ld * elem_bytes) % 16 == 0) return cudaSuccess;
  return aligned_copy(ptr, rows, cols, ld, elem_bytes, false, stream, out);
}

cudaError_t transpose_aligned_rows(const float* src, int64_t rows, int64_t cols, int64_t ld,
                                   cudaStream_t stream, AlignedRows* out) {
  *out = AlignedRows{};
  return aligned_copy(src, rows, cols, ld, sizeof(float), true, stream, out);
}

cudaError_t release_aligned_rows(AlignedRows* a, cudaStream_t stream) {
  cudaError_t e = cudaSuccess;
  if (a->owned) e = workspace_free(a->owned, stream);
  a->owned = nullptr;
  return e;
}

}  // namespace gemmlab
