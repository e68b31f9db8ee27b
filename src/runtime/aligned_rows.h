// Operands whose rows are not 16-byte aligned (a misaligned base pointer, or ld * element size not
// a multiple of 16, e.g. ld = 4097) cannot feed 16-byte cp.async / TMA loads. Kernels that need
// aligned rows copy such an operand into a workspace with ld rounded up to 16 bytes, inside their
// launch function and on the problem's stream, so the copy is part of the kernel's time.
//
// The workspace comes from gemmlab's stream-ordered pool (workspace.h).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace gemmlab {

// dst <- src (rows x cols, elements of elem_bytes = 2 or 4, pitch ld_src, any alignment), or
// with `transpose` dst (cols x rows) <- src^T; enqueued on `stream`. dst must be 16-byte aligned
// with ld_dst * elem_bytes a multiple of 16 (a straight copy writes 16-byte chunks, zeroing the
// columns past the last one in the final chunk of each row). entries: a strided batch of such
// copies in one launch, src_stride / dst_stride elements apart.
cudaError_t copy_matrix(const void* src, int64_t ld_src, void* dst, int64_t ld_dst, int64_t rows,
                        int64_t cols, int elem_bytes, bool transpose, cudaStream_t stream,
                        int64_t entries = 1, int64_t src_stride = 0, int64_t dst_stride = 0);

// True when a pointer and leading dimension allow `bytes`-wide vector access to every row.
inline bool rows_aligned(const void* ptr, int64_t ld, int64_t elem_bytes, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(ptr) % bytes == 0 && (ld * elem_bytes) % bytes == 0;
}

// The same for every entry of a strided batch (batch > 1): entries `stride` elements apart, so an
// entry's base moves by stride * elem_bytes from the first one's.
inline bool batch_rows_aligned(const void* ptr, int64_t ld, int64_t stride, int64_t batch,
                               int64_t elem_bytes, int64_t bytes) {
  return rows_aligned(ptr, ld, elem_bytes, bytes) &&
         (batch <= 1 || (stride * elem_bytes) % bytes == 0);
}

// The leading dimension (in elements) of the realigned copy: cols rounded up to 16 bytes.
inline int64_t aligned_ld_16(int64_t cols, int elem_bytes) {
  const int64_t per16 = 16 / elem_bytes;
  return (cols + per16 - 1) / per16 * per16;
}

struct AlignedRows {
  const void* ptr = nullptr;  // rows 16-byte aligned: the original or the copy
  int64_t ld = 0;
  void* owned = nullptr;      // the copy's workspace, or nullptr when the original was used
};

// A rows x cols matrix of elem_bytes-sized elements (2 or 4) at ptr with leading dimension ld.
// When its rows are 16-byte aligned, *out refers to it unchanged; otherwise a copy is enqueued on
// `stream` and *out refers to the copy (release it with release_aligned_rows after the consumer
// has been enqueued on the same stream).
cudaError_t align_rows_16(const void* ptr, int64_t rows, int64_t cols, int64_t ld, int elem_bytes,
                          cudaStream_t stream, AlignedRows* out);
cudaError_t release_aligned_rows(AlignedRows* a, cudaStream_t stream);

// The transpose of a rows x cols float matrix (src, leading dimension ld) into a workspace copy of
// cols x rows with 16-byte aligned rows, enqueued on `stream` (32 x 32 tiles through shared
// memory: reads and writes coalesced). For kernels whose fast loader wants the other layout.
// Release with release_aligned_rows.
cudaError_t transpose_aligned_rows(const float* src, int64_t rows, int64_t cols, int64_t ld,
                                   cudaStream_t stream, AlignedRows* out);

}  // namespace gemmlab
