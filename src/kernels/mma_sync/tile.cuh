// Shared-memory tiles and warp-level fragment traffic for the mma.sync kernels: the smem layouts
// (padded or XOR-swizzled), the cp.async tile loader, the ldmatrix / LDS fragment loaders for
// every operand orientation, the warp's mma loop and its epilogue. Kernel files choose tile
// shapes and pipelining; what they share is here once.
//
// Orientation. A tile is kept in shared memory as the operand is stored in global memory, so that
// 16-byte cp.async chunks copy it unchanged:
//   k-contiguous ("KContig"): op(A) = A (A stored m x k), op(B) = B^T (B stored n x k):
//                              smem rows are m (or n), chunks run along k.
//   mn-contiguous:            op(A) = A^T (stored k x m), op(B) = B (stored k x n):
//                              smem rows are k, chunks run along m (or n).
// The fragment loaders below turn either into the mma's fragments (ldmatrix for k-contiguous,
// ldmatrix.trans for mn-contiguous 16-bit, scalar LDS for mn-contiguous tf32).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/common/cp_async.cuh"
#include "kernels/common/gemm_common.cuh"
#include "kernels/mma_sync/mma.cuh"

namespace gemmlab {

// ---------------------------------------------------------------------------------------------
// Shared-memory layouts: kRows rows of kRowChunks 16-byte chunks.
// ---------------------------------------------------------------------------------------------
enum class SmemSwizzle {
  // Each row padded by one chunk: with an even chunk count per row, 8 consecutive rows start in
  // 8 different 16-byte bank groups, so an ldmatrix (8 rows x 16 bytes) is conflict free.
  kPadded,
  // Chunk c of row r is stored at c ^ f(r), f permuting within each aligned 128-byte line; the 8
  // rows an ldmatrix phase reads at one logical chunk land in 8 different bank groups, with no
  // padding. Rows of >= 128 bytes: f(r) = r % 8. Rows of 64 bytes (two per line): f(r) = (r/2) % 4,
  // (with the row's half-line, that gives 8 distinct groups for 8 rows).
  kXor,
  // For scalar tf32 fragment reads of an mn-contiguous tile: a warp reads 4 rows (k = t) x 8
  // consecutive floats (mn = g), i.e. two adjacent chunks per row. f(r) = 2 (r % 4) + (r / 4) % 2
  // moves the chunk pair of each of the 4 rows to its own pair of bank groups.
  kXorPairs,
};

template <int kRows_, int kRowChunks_, SmemSwizzle kSwizzle>
struct SmemLayout {
  static constexpr int kRows = kRows_;
  static constexpr int kRowChunks = kRowChunks_;
  static constexpr int kPitchChunks = kSwizzle == SmemSwizzle::kPadded ? kRowChunks + 1 : kRowChunks;
  static constexpr int kBytes = kRows * kPitchChunks * 16;
  static_assert((kRowChunks & (kRowChunks - 1)) == 0, "chunks per row must be a power of two");
  static_assert(kSwizzle != SmemSwizzle::kPadded || kRowChunks % 2 == 0,
                "padding by one chunk needs an even chunk count");
  static_assert(kSwizzle != SmemSwizzle::kXor || kRowChunks >= 4, "rows of >= 64 bytes");
  static_assert(kSwizzle != SmemSwizzle::kXorPairs || kRowChunks >= 8, "rows of >= 128 bytes");

  // The swizzle permutes the low kXorBits chunks of a row by a mask that depends on row % 8 only.
  static constexpr int kXorWidth =
      kSwizzle == SmemSwizzle::kPadded ? 1 : (kRowChunks >= 8 ? 8 : kRowChunks);
  __device__ __forceinline__ static int mask(int r_lo) {
    if constexpr (kSwizzle == SmemSwizzle::kXor) {
      if constexpr (kRowChunks >= 8) return r_lo;
      else return (r_lo / (8 / kRowChunks)) % kRowChunks;
    } else if constexpr (kSwizzle == SmemSwizzle::kXorPairs) {
      return ((r_lo % 4) * 2) | (r_lo / 4);
    } else {
      return 0;
    }
  }

  // Byte offset of logical chunk c of row r.
  __device__ __forceinline__ static uint32_t offset(int r, int c) {
    return offset(r & ~7, r & 7, c & ~(kXorWidth - 1), c & (kXorWidth - 1));
  }
  // The same with row r = r_hi + r_lo (r_hi % 8 == 0, r_lo < 8) and chunk c = c_hi + c_lo
  // (c_hi % kXorWidth == 0, c_lo < kXorWidth). Fragment loaders pass warp/tile offsets in r_hi
  // and c_hi and lane-dependent parts in r_lo and c_lo: the XOR then only involves per-lane values
  // and compile-time constants, and everything else is an add the compiler folds into the
  // instruction's immediate offset, instead of one runtime XOR (and one live register) per
  // fragment address.
  __device__ __forceinline__ static uint32_t offset(int r_hi, int r_lo, int c_hi, int c_lo) {
    return static_cast<uint32_t>(((r_hi + r_lo) * kPitchChunks + c_hi + (c_lo ^ mask(r_lo))) * 16);
  }
};

// ---------------------------------------------------------------------------------------------
// Global -> shared with cp.async, tile in stored orientation: smem row r, chunk c hold stored row
// row0 + r, columns col0 + c*E .. +E-1 (E elements per chunk). Elements outside rows x cols are
// zero-filled (partially for a chunk straddling the row end), so edge tiles need no other care.
// Needs every stored row 16-byte aligned (base and ld * sizeof(T)); launchers ensure it.
// ---------------------------------------------------------------------------------------------
template <typename T, class Layout, int kThreads>
__device__ __forceinline__ void cp_async_tile(uint32_t smem_tile, const T* g, int ld, int rows,
                                              int cols, int row0, int col0, int tid) {
  constexpr int kE = 16 / static_cast<int>(sizeof(T));
  constexpr int kChunks = Layout::kRows * Layout::kRowChunks;
  static_assert(kChunks % kThreads == 0, "tile chunks must divide evenly among threads");
#pragma unroll
  for (int i = 0; i < kChunks / kThreads; ++i) {
    // Consecutive threads take consecutive chunks of a row: coalesced 16-byte global reads.
    const int L = tid + i * kThreads;
    const int r = L / Layout::kRowChunks, c = L % Layout::kRowChunks;
    const int gr = row0 + r, gc = col0 + c * kE;
    const int in_row = min(max(cols - gc, 0), kE);
    const int bytes = gr < rows ? in_row * static_cast<int>(sizeof(T)) : 0;
    // Form the address only for in-range chunks; src is not read when bytes == 0.
    const T* src = bytes > 0 ? g + (gr * ld + gc) : g;
    cp_async_16_zfill(smem_tile + Layout::offset(r, c), src, bytes);
  }
}

// ---------------------------------------------------------------------------------------------
// Fragment loaders: one warp, the k-step at k_off (a multiple of the mma's K) of a smem tile whose
// base is the shared-state-space address `tile`.
// ---------------------------------------------------------------------------------------------
template <typename T>
__device__ __forceinline__ void round_tf32_if_needed(uint32_t* r, int count) {
  if constexpr (MmaTraits<T>::kRoundTf32) {
#pragma unroll
    for (int i = 0; i < count; ++i) r[i] = cvt_tf32(r[i]);
  }
}

// Splits a chunk index known as (compile-time part) + (lane part < 2) into the (c_hi, c_lo) of
// SmemLayout::offset; `ct` is even so the lane part never carries.
template <class Layout>
struct ChunkSplit {
  static constexpr int hi(int ct) { return ct / Layout::kXorWidth * Layout::kXorWidth; }
  static constexpr int lo(int ct) { return ct % Layout::kXorWidth; }
};

// A fragments for kMT m16 tiles starting at row m0 of the block tile. m0 must be a multiple of 8
// (k-contiguous) or of 8 * kXorWidth chunks' elements (mn-contiguous: 64 for 16-bit, 32 for tf32).
template <typename T, bool kKContig, class Layout, int kMT>
__device__ __forceinline__ void load_frags_a(uint32_t (&a)[kMT][4], uint32_t tile, int m0,
                                             int k_off, int lane) {
  constexpr int kE = 16 / static_cast<int>(sizeof(T));
  using CS = ChunkSplit<Layout>;
  const int j = lane / 8;
#pragma unroll
  for (int i = 0; i < kMT; ++i) {
    if constexpr (kKContig) {
      // Matrices 0..3 = (rows 0-7, k lo), (rows 8-15, k lo), (rows 0-7, k hi), (rows 8-15, k hi):
      // lanes 0-15 address rows 0-15 at the low k chunk, lanes 16-31 the same rows one chunk on.
      const int kc = k_off / kE;
      ldmatrix_x4(a[i], tile + Layout::offset(m0 + i * 16 + (j % 2) * 8, lane % 8, CS::hi(kc),
                                              CS::lo(kc) + lane / 16));
    } else if constexpr (sizeof(T) == 2) {
      // Stored k x m: matrix j covers k rows (j/2)*8.., m columns (j%2)*8..; .trans hands each
      // lane A[m][k] pairs along k, as for the k-contiguous case.
      const int mc = i * 16 / kE;
      ldmatrix_x4_trans(a[i], tile + Layout::offset(k_off + (j / 2) * 8, lane % 8,
                                                    m0 / kE + CS::hi(mc), CS::lo(mc) + j % 2));
    } else {
      // tf32 stored k x m: no 32-bit transpose in ldmatrix; four scalar reads per lane,
      // a0..a3 = (k t, m g), (k t, m g+8), (k t+4, m g), (k t+4, m g+8).
      const int g = lane / 4, t = lane % 4;
      const uint32_t w = (g % 4) * 4;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int mc = (i * 16 + (q % 2) * 8) / kE;
        a[i][q] = lds32(tile + w + Layout::offset(k_off, t + (q / 2) * 4, m0 / kE + CS::hi(mc),
                                                  CS::lo(mc) + g / 4));
      }
    }
    round_tf32_if_needed<T>(a[i], 4);
  }
}

// B fragments for kNT n8 tiles starting at column n0 of the block tile (kNT even: each ldmatrix.x4
// serves two n8 tiles). Same alignment rule for n0 as for m0 above.
template <typename T, bool kKContig, class Layout, int kNT>
__device__ __forceinline__ void load_frags_b(uint32_t (&b)[kNT][2], uint32_t tile, int n0,
                                             int k_off, int lane) {
  static_assert(kNT % 2 == 0, "B fragments are loaded two n8 tiles at a time");
  constexpr int kE = 16 / static_cast<int>(sizeof(T));
  using CS = ChunkSplit<Layout>;
  const int j = lane / 8;
#pragma unroll
  for (int i = 0; i < kNT; i += 2) {
    uint32_t r[4];
    if constexpr (kKContig) {
      // Stored n x k: matrices (n 0-7, k lo), (n 0-7, k hi), (n 8-15, k lo), (n 8-15, k hi)
      // = b0, b1 of tile i, then b0, b1 of tile i+1.
      const int kc = k_off / kE;
      ldmatrix_x4(r, tile + Layout::offset(n0 + i * 8 + (j / 2) * 8, lane % 8, CS::hi(kc),
                                           CS::lo(kc) + j % 2));
    } else if constexpr (sizeof(T) == 2) {
      // Stored k x n: matrices (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15).
      const int nc = i * 8 / kE;
      ldmatrix_x4_trans(r, tile + Layout::offset(k_off + (j % 2) * 8, lane % 8,
                                                 n0 / kE + CS::hi(nc), CS::lo(nc) + j / 2));
    } else {
      // tf32 stored k x n: r0..r3 = (k t, n g), (k t+4, n g), (k t, n 8+g), (k t+4, n 8+g).
      const int g = lane / 4, t = lane % 4;
      const uint32_t w = (g % 4) * 4;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int nc = (i * 8 + (q / 2) * 8) / kE;
        r[q] = lds32(tile + w + Layout::offset(k_off, t + (q % 2) * 4, n0 / kE + CS::hi(nc),
                                               CS::lo(nc) + g / 4));
      }
    }
    round_tf32_if_needed<T>(r, 4);
    b[i][0] = r[0], b[i][1] = r[1], b[i + 1][0] = r[2], b[i + 1][1] = r[3];
  }
}

template <typename T, int kMT, int kNT>
__device__ __forceinline__ void warp_mma(float (&acc)[kMT][kNT][4], const uint32_t (&a)[kMT][4],
                                         const uint32_t (&b)[kNT][2]) {
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j) MmaTraits<T>::mma(acc[i][j], a[i], b[j]);
}

// ---------------------------------------------------------------------------------------------
// Epilogue: each lane holds C[g][2t, 2t+1] and C[g+8][2t, 2t+1] of every m16n8 tile; stored as
// float2 (one 32-byte sector per row per warp instruction) by Epilogue::store2.
// ---------------------------------------------------------------------------------------------

// The general epilogue (bias, activation, 16-bit D) of the warp tile in one call (the
// accumulators go to local memory once instead of being saved around a call per pair).
template <int kMT, int kNT>
__device__ __noinline__ void store_warp_acc_general(const Epilogue ep,
                                                    const float (&acc)[kMT][kNT][4], int row0,
                                                    int col0, int lane) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll 1
  for (int i = 0; i < kMT; ++i)
#pragma unroll 1
    for (int j = 0; j < kNT; ++j) {
      const int r = row0 + i * 16 + g, c = col0 + j * 8 + 2 * t;
      ep.store2<true>(r, c, acc[i][j][0], acc[i][j][1]);
      ep.store2<true>(r + 8, c, acc[i][j][2], acc[i][j][3]);
    }
}

template <int kMT, int kNT>
__device__ __forceinline__ void store_warp_acc(const Epilogue& ep, const float (&acc)[kMT][kNT][4],
                                               int row0, int col0, int lane) {
  if (!ep.plain) {
    // A copy made in the branch (see simt/warptile.cuh: store_tile): passed acc itself, the
    // compiler stored it to local memory on the plain path too.
    float spill[kMT][kNT][4];
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
      for (int j = 0; j < kNT; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) spill[i][j][q] = acc[i][j][q];
    return store_warp_acc_general<kMT, kNT>(ep, spill, row0, col0, lane);
  }
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j) {
      const int r = row0 + i * 16 + g, c = col0 + j * 8 + 2 * t;
      ep.store2_plain(r, c, acc[i][j][0], acc[i][j][1]);
      ep.store2_plain(r + 8, c, acc[i][j][2], acc[i][j][3]);
    }
}

}  // namespace gemmlab
