// Copies of operands into aligned rows, straight or transposed (see aligned_rows.h). The one
// place gemmlab's packing and realigning passes live: simt/13's realigned and transposed B, and
// the TMA kernels' packed operands (sm90_host.cu) all come through copy_matrix.
#include "runtime/aligned_rows.h"

#include "runtime/copy_plan.h"
#include "runtime/workspace.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>
#include "kernels/common/launch.cuh"

namespace gemmlab {
namespace {

// 16-byte chunk c of a row: kE source elements read in loads of L, written with one 16-byte
// store; columns past `cols` written as zero.
template <typename U, typename L>
__device__ __forceinline__ void copy_chunk(const U* __restrict__ s, uint4* __restrict__ d,
                                           int64_t c, int64_t cols) {
  constexpr int kE = 16 / sizeof(U), kL = 16 / sizeof(L);
  const int64_t c0 = c * kE;
  union {
    uint4 v;
    L l[kL];
    U e[kE];
  } chunk;
  if (c0 + kE <= cols) {
#pragma unroll
    for (int j = 0; j < kL; ++j) chunk.l[j] = reinterpret_cast<const L*>(s + c0)[j];
  } else {
#pragma unroll
    for (int j = 0; j < kE; ++j) chunk.e[j] = c0 + j < cols ? s[c0 + j] : U(0);
  }
  d[c] = chunk.v;
}

// One warp per row, a lane per 16-byte chunk of the destination: it reads kE source elements in
// loads of L (as wide as the source's rows allow: elements, or 4, 8, 16 bytes where the base,
// pitch and batch stride are so aligned) and writes them with one 16-byte store. Columns past
// `cols` in the last chunk of a row are written as zero. Consecutive lanes take consecutive
// chunks of a row, so both sides are coalesced. Batch entries along the grid's y (strides in
// elements).
template <typename U, typename L>
__global__ void realign_kernel(const U* __restrict__ src, int64_t ld, U* __restrict__ dst,
                               int64_t dst_ld, int64_t rows, int64_t cols, int64_t entries,
                               int64_t src_stride, int64_t dst_stride) {
  constexpr int kE = 16 / sizeof(U);
  const int64_t chunks_per_row = dst_ld / kE;
  const int warps = blockDim.x / 32, lane = threadIdx.x % 32;
  for (int64_t e = blockIdx.y; e < entries; e += gridDim.y) {
    for (int64_t r = blockIdx.x * static_cast<int64_t>(warps) + threadIdx.x / 32; r < rows;
         r += static_cast<int64_t>(gridDim.x) * warps) {
      const U* s = src + e * src_stride + r * ld;
      uint4* d = reinterpret_cast<uint4*>(dst + e * dst_stride + r * dst_ld);
#pragma unroll 4
      for (int64_t c = lane; c < chunks_per_row; c += 32) copy_chunk<U, L>(s, d, c, cols);
    }
  }
}

// The same copy where a warp per row would leave the GPU idle (plan_straight_copy): a warp takes
// 32 / tpr rows of tpr lanes each (tpr a power of two covering a short row's chunks) and, along
// a long row, one segment of `seg` chunks.
// kFullWarp: rows of 32 chunks or more, a whole warp per segment, stepping by a constant 32.
template <typename U, typename L, bool kFullWarp>
__global__ void realign_split_kernel(const U* __restrict__ src, int64_t ld, U* __restrict__ dst,
                                     int64_t dst_ld, int64_t rows, int64_t cols, int64_t entries,
                                     int64_t src_stride, int64_t dst_stride, CopySplit sp) {
  constexpr int kE = 16 / sizeof(U);
  const int64_t chunks_per_row = dst_ld / kE;
  const int warps = blockDim.x / 32, lane = threadIdx.x % 32;
  const int lg = kFullWarp ? 5 : sp.tpr_log2;
  const int tpr = kFullWarp ? 32 : 1 << lg;
  const int sub = kFullWarp ? 0 : lane >> lg, col_lane = kFullWarp ? lane : lane & (tpr - 1);
  const int64_t items = sp.row_groups * sp.segs;
  for (int64_t e = blockIdx.y; e < entries; e += gridDim.y) {
    for (int64_t it = blockIdx.x * static_cast<int64_t>(warps) + threadIdx.x / 32; it < items;
         it += static_cast<int64_t>(gridDim.x) * warps) {
      const int64_t group = sp.segs == 1 ? it : it / sp.segs, seg = it - group * sp.segs;
      const int64_t r = kFullWarp ? group : (group << (5 - lg)) + sub;
      if (!kFullWarp && r >= rows) continue;
      const U* s = src + e * src_stride + r * ld;
      uint4* d = reinterpret_cast<uint4*>(dst + e * dst_stride + r * dst_ld);
      const int64_t c_end =
          sp.segs == 1 ? chunks_per_row : min(chunks_per_row, (seg + 1) * sp.seg);
#pragma unroll 4
      for (int64_t c = seg * sp.seg + col_lane; c < c_end; c += tpr)
        copy_chunk<U, L>(s, d, c, cols);
    }
  }
}

// dst (cols x rows, pitch dst_ld) <- transpose of src (rows x cols, pitch ld), through a
// 32 x 32 shared tile (padded by one element against bank conflicts) so reads and writes are
// both coalesced. One tile per block of 32 x 8 threads; batch entries along the grid's y.
template <typename U>
__global__ void transpose_kernel(const U* __restrict__ src, int64_t ld, U* __restrict__ dst,
                                 int64_t dst_ld, int rows, int cols, int col_tiles,
                                 int64_t entries, int64_t src_stride, int64_t dst_stride) {
  __shared__ U tile[32][33];
  const int r0 = (blockIdx.x / col_tiles) * 32, c0 = (blockIdx.x % col_tiles) * 32;
  for (int64_t e = blockIdx.y; e < entries; e += gridDim.y) {
    const U* s = src + e * src_stride;
    U* d = dst + e * dst_stride;
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
      const int r = r0 + i, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[i][threadIdx.x] = s[r * ld + c];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
      const int c = c0 + i, r = r0 + threadIdx.x;  // dst row c, column r
      if (r < rows && c < cols) d[c * dst_ld + r] = tile[threadIdx.x][i];
    }
    __syncthreads();  // (the tile is rewritten for the next entry)
  }
}

template <typename U>
cudaError_t launch_copy(const void* src, int64_t ld, void* dst, int64_t dst_ld, int64_t rows,
                        int64_t cols, bool transpose, cudaStream_t stream, int64_t entries,
                        int64_t src_stride, int64_t dst_stride) {
  if (rows > INT_MAX || cols > INT_MAX) return cudaErrorInvalidValue;
  // Every entry in one launch (one per entry cost ~4 us each at 1000 x 500 bf16: 64 launches
  // were 73% of a 32 x 1000 x 1000 x 500 NT batch's time, docs/history.md).
  const unsigned ys = static_cast<unsigned>(std::min<int64_t>(entries, 65535));
  if (transpose) {
    const int64_t col_tiles = (cols + 31) / 32, blocks = (rows + 31) / 32 * col_tiles;
    if (blocks > INT_MAX) return cudaErrorInvalidValue;
    return launch_kernel(transpose_kernel<U>, dim3(static_cast<unsigned>(blocks), ys), dim3(32, 8),
                         0, stream, static_cast<const U*>(src), ld, static_cast<U*>(dst), dst_ld,
                         static_cast<int>(rows), static_cast<int>(cols),
                         static_cast<int>(col_tiles), entries, src_stride, dst_stride);
  } else {
    // The widest load every source row allows: the base, the pitch and the batch stride in
    // bytes all multiples of it (up to 16).
    const uint64_t bits = reinterpret_cast<uintptr_t>(src) | static_cast<uint64_t>(ld * sizeof(U)) |
                          (entries > 1 ? static_cast<uint64_t>(src_stride * sizeof(U)) : 0) | 16;
    const int width = static_cast<int>(bits & (~bits + 1));  // lowest set bit
    const int warps = 8;
    const CopySplit sp =
        plan_straight_copy(rows, dst_ld / (16 / static_cast<int64_t>(sizeof(U))), warps, ys);
    const dim3 grid(static_cast<unsigned>(sp.blocks), ys);
    auto go = [&](auto kern) {
      return launch_kernel(kern, grid, 32 * warps, 0, stream, static_cast<const U*>(src), ld,
                           static_cast<U*>(dst), dst_ld, rows, cols, entries, src_stride,
                           dst_stride, sp);
    };
    if (sp.warp_per_row()) {
      auto go_rows = [&](auto kern) {
        return launch_kernel(kern, grid, 32 * warps, 0, stream, static_cast<const U*>(src), ld,
                             static_cast<U*>(dst), dst_ld, rows, cols, entries, src_stride,
                             dst_stride);
      };
      if (width >= 16) return go_rows(realign_kernel<U, uint4>);
      if (width >= 8) return go_rows(realign_kernel<U, uint2>);
      if (width >= 4) return go_rows(realign_kernel<U, uint32_t>);
      return go_rows(realign_kernel<U, U>);
    }
    auto by_width = [&](auto full) {
      constexpr bool kFull = decltype(full)::value;
      if (width >= 16) return go(realign_split_kernel<U, uint4, kFull>);
      if (width >= 8) return go(realign_split_kernel<U, uint2, kFull>);
      if (width >= 4) return go(realign_split_kernel<U, uint32_t, kFull>);
      return go(realign_split_kernel<U, U, kFull>);
    };
    return sp.tpr_log2 == 5 ? by_width(std::true_type{}) : by_width(std::false_type{});
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
                        int64_t cols, int elem_bytes, bool transpose, cudaStream_t stream,
                        int64_t entries, int64_t src_stride, int64_t dst_stride) {
  if (rows <= 0 || cols <= 0 || entries <= 0) return cudaSuccess;
  return elem_bytes == 2
             ? launch_copy<uint16_t>(src, ld_src, dst, ld_dst, rows, cols, transpose, stream,
                                     entries, src_stride, dst_stride)
             : launch_copy<uint32_t>(src, ld_src, dst, ld_dst, rows, cols, transpose, stream,
                                     entries, src_stride, dst_stride);
}

cudaError_t align_rows_16(const void* ptr, int64_t rows, int64_t cols, int64_t ld, int elem_bytes,
                          cudaStream_t stream, AlignedRows* out) {
  *out = AlignedRows{ptr, ld, nullptr};
  if (rows_aligned(ptr, ld, elem_bytes, 16)) return cudaSuccess;
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
