// cp.async tile loaders of the simt family (steps 15 and simt/sgemm): one operand's kBK-deep
// k-tiles go from global memory straight into k-major shared tiles Xs[k][r] (warptile.cuh's
// layout), with no register staging. Three copy shapes, by the operand's layout and alignment:
//  - contiguous direction = rows of the tile (A^T, B), 16-byte aligned rows: 16-byte cp.async; the
//    last partial vector of a row is zero-filled by src-size (no scalar tail);
//  - same, rows not 16-byte aligned (ld % 4 != 0): 4-byte cp.async per element;
//  - contiguous direction = k (A, B^T): 4-byte cp.async that transpose on the way in (each element
//    to its k-row), any alignment; 8 lanes read 32 contiguous bytes of a row (full sectors) and
//    their shared writes fall in distinct banks thanks to the tiles' 4-float row skew.
// Out-of-range elements are zero-filled (src-size 0), so edge tiles need no other care.
#pragma once

#include "kernels/common/cp_async.cuh"
#include "kernels/common/gemm_common.cuh"

namespace gemmlab {

// kN 16-byte copies down a column of chunks, copy i from src + i * step rows of ld floats to
// dst + i * sstep floats: `bytes` of it (the rest zero-filled) while i * step < left, none after
// (rows or k-steps past the operand's end).
template <int kN, bool kL2Prefetch>
__device__ __forceinline__ void copy_chunks(float* dst, int sstep, const float* src, int ld,
                                            int step, int left, int bytes) {
#pragma unroll
  for (int i = 0; i < kN; ++i)
    cp_async_16_partial<kL2Prefetch>(dst + i * sstep, src + static_cast<size_t>(i * step) * ld,
                                     i * step < left ? bytes : 0);
}

// Copies one operand's kBK x kRows tiles into shared memory Xs[k][r] (r = row of op(A) or column
// of op(B), row stride kLd), one k-tile per load() call, in order. kContigK: X's contiguous
// direction is k. kVec: 16-byte copies (only when r is contiguous and rows are 16-byte aligned).
// kL2Prefetch (kContigK): each row's 64 bytes ask L2 for its 256-byte block (cp_async_4<true>).
template <int kRows, int kLd, bool kContigK, bool kVec, bool kL2Prefetch = false>
struct AsyncLoader {
  static constexpr int kBK = 16;  // k-tile depth: the k-contiguous copy is 2 x 8 lanes deep
  static_assert(!(kContigK && kVec), "the k-contiguous loader transposes element by element");
  static constexpr int kThreads = 256;
  // Element (or 16-byte chunk) e = tid + kThreads * i of the tile sits at:
  //  kContigK: k = e % 8 + 8 * (i % 2): 8 lanes read 32 contiguous bytes of a row, 32 rows a pass
  //  kVec:     r = 4 * (e % (kRows / 4)), k = e / (kRows / 4): lanes walk a row segment
  //  else:     r = e % kRows,             k = e / kRows
  // A narrow tile (op(B) of the 32-column tile: 128 chunks of 16 bytes) has fewer copies than
  // threads: the threads past them copy nothing (kSpare).
  static constexpr int kChunks = kVec ? kRows * kBK / 4 : kRows * kBK;  // copies per k-tile
  static constexpr bool kSpare = kChunks < kThreads;
  static constexpr int kPerThread = kSpare ? 1 : kChunks / kThreads;
  static constexpr int kKStep = kVec ? kThreads / (kRows / 4) : kThreads / kRows;  // k per i
  static_assert(kContigK ? kRows % 32 == 0 : kKStep >= 1 && (kSpare || kChunks % kThreads == 0),
                "the copies of a k-tile spread evenly over the threads");
  const float* gp;  // this thread's first element of the next k-tile
  int ld;
  int rows_left;    // rows of op(X) from this thread's first row on (<= 0: none valid)
  int k_left;       // depth from this thread's first k of the next tile on
  int soff;         // shared offset of this thread's first element

  __device__ __forceinline__ AsyncLoader(const float* ptr, int ld_, int rows, int k, int r0,
                                         int k0)
      : ld(ld_) {
    const int tid = threadIdx.x;
    int r, kk;
    if (kContigK) {
      r = tid / 8, kk = tid % 8;
    } else if (kVec) {
      r = (tid % (kRows / 4)) * 4, kk = tid / (kRows / 4);
    } else {
      r = tid % kRows, kk = tid / kRows;
    }
    rows_left = rows - r0 - r;
    k_left = k - k0 - kk;
    soff = kk * kLd + r;
    // Rows past the end are never read (zero-fill), but keep the pointer in range anyway.
    const int gr = min(r0 + r, rows - 1);
    gp = kContigK ? ptr + static_cast<size_t>(gr) * ld + (k0 + kk)
                  : ptr + static_cast<size_t>(k0 + kk) * ld + gr;
  }

  __device__ __forceinline__ void load(float* Xs) {
    if constexpr (kSpare) {
      if (static_cast<int>(threadIdx.x) >= kChunks) return;
    }
    if (kContigK) {
      const float* p = gp;
#pragma unroll
      for (int j = 0; j < kRows / 32; ++j) {  // rows r + 32 j
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // k = kk + 8 h
          const bool valid = 32 * j < rows_left && 8 * h < k_left;
          cp_async_4<kL2Prefetch>(Xs + soff + h * 8 * kLd + 32 * j, p + 8 * h, valid);
        }
        p += static_cast<size_t>(32) * ld;
      }
      gp += kBK;
    } else if (kVec) {
      // Bytes of this thread's 16-byte row chunk inside op(X): 16, a partial 4..12, or 0.
      copy_chunks<kPerThread, false>(Xs + soff, kKStep * kLd, gp, ld, kKStep, k_left,
                                     max(0, min(rows_left, 4)) * 4);
      gp += static_cast<size_t>(kBK) * ld;
    } else {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
        cp_async_4(Xs + soff + i * kKStep * kLd, gp + static_cast<size_t>(i * kKStep) * ld,
                   rows_left > 0 && i * kKStep < k_left);
      gp += static_cast<size_t>(kBK) * ld;
    }
    k_left -= kBK;
  }
};

// A row-major A tile (warptile.cuh, kARows): A stored with k contiguous in 16-byte aligned rows,
// each k-tile's kRows x 16 floats copied 16 bytes at a time into As[r][k], row r's chunk c (k =
// 4c..4c+3) at chunk c ^ (r / 4 % 4). Four lanes copy one row's 64 bytes (whole sectors); rows
// past the operand and k past its depth are zero-filled (src-size).
template <int kRows>
struct ARowLoader {
  static constexpr int kBK = 16, kThreads = 256;
  static constexpr int kPerThread = kRows * kBK / 4 / kThreads;  // 16-byte chunks
  static constexpr int kRowStep = kThreads / 4;                  // rows per pass
  static_assert(kPerThread >= 1 && kRows % kRowStep == 0, "whole passes of 64 rows");
  const float* gp;  // this thread's chunk of its first row, next k-tile
  int ld;
  int rows_left;  // rows from this thread's first row on
  int k_left;     // depth from this thread's chunk of the next k-tile on
  int soff;       // shared offset (floats) of its first chunk

  __device__ __forceinline__ ARowLoader(const float* ptr, int ld_, int rows, int k, int r0, int k0)
      : ld(ld_) {
    const int r = threadIdx.x / 4, c = threadIdx.x % 4;
    rows_left = rows - r0 - r;
    k_left = k - k0 - 4 * c;
    soff = r * kBK + ((c ^ (r / 4 % 4)) * 4);  // r + kRowStep * i keeps r / 4 % 4
    gp = ptr + static_cast<size_t>(min(r0 + r, rows - 1)) * ld + (k0 + 4 * c);
  }

  __device__ __forceinline__ void load(float* Xs) {
    copy_chunks<kPerThread, true>(Xs + soff, kRowStep * kBK, gp, ld, kRowStep, rows_left,
                                  max(0, min(k_left, 4)) * 4);
    gp += kBK;
    k_left -= kBK;
  }
};

// The k loop: kPlain (one split, or the last of several without the partial-k-tile shortcut),
// kCarry (fragments carried across k-tiles, long loops), kSplit (split-k: partial k-tile done
// step by step, partials summed through split_k.cuh). Separate instantiations, so the code each
// variant does not need cannot cost the others registers (NT 4096^3: 39.1 vs 42.5 TFLOP/s with
// the split-k paths compiled into the plain loop).

}  // namespace gemmlab
