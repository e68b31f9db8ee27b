// Stores of wgmma accumulator fragments through the Epilogue: direct, or staged in shared memory.
#pragma once

#include "kernels/wgmma/ptx.cuh"

namespace gemmlab {
namespace sm90 {

// ---------------------------------------------------------------------------------------------
// Epilogue of a wgmma accumulator fragment (64 x kN fp32 per warpgroup). Thread t (warp w = t/32
// of the warpgroup, lane l) holds, for each 8-column group j, the pair of columns
// col0 + 8j + 2(l%4) + {0,1} of row row0 + 16w + l/4 in d[4j], d[4j+1], and of the row 8 below
// in d[4j+2], d[4j+3]. Pairs go through Epilogue::store2 (8-byte stores where aligned and in bounds).
// ---------------------------------------------------------------------------------------------

// The two rows of the 64 a thread's fragment holds (wgmma's own order: 16w + g and 8 below).
__device__ __forceinline__ int fragment_row(int half) {
  const int t = threadIdx.x % 128;
  return (t / 32) * 16 + (t % 32) / 4 + 8 * half;
}

// row_lo / row_hi: the C rows of the thread's d[4j], d[4j+1] and d[4j+2], d[4j+3].
// The general epilogue goes out as a call per pair with the values in registers: handing the
// fragment to one call by reference made ptxas serialize the kernel's wgmmas (C7514).
// kPlainOnly: the caller knows the epilogue is plain (fp32 in place: no general path at all).
template <int kN, bool kPlainOnly = false>
__device__ __forceinline__ void store_fragment(const Epilogue& ep, const float (&d)[kN / 2],
                                               int row_lo, int row_hi, int col0) {
  const int c = col0 + 2 * (threadIdx.x % 4);
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    if constexpr (kPlainOnly) {
      ep.store2_plain(row_lo, c + 8 * j, d[4 * j + 0], d[4 * j + 1]);
      ep.store2_plain(row_hi, c + 8 * j, d[4 * j + 2], d[4 * j + 3]);
    } else {
      ep.store2(row_lo, c + 8 * j, d[4 * j + 0], d[4 * j + 1]);
      ep.store2(row_hi, c + 8 * j, d[4 * j + 2], d[4 * j + 3]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Epilogue through shared memory. The fragment layout above makes direct stores narrow (8 bytes
// per thread, or 4 when transposed); instead each warpgroup writes its 64 x kN fragment, one
// 64 x 64 chunk at a time, into a private 16 KB buffer and reads it back as rows of float4, so
// every warp store instruction writes 16 bytes per thread and whole 256-byte row segments of C.
//
// The buffer holds 64 rows of 64 floats (256 B), unpadded, so float4 reads stay aligned; bank
// conflicts are avoided with an XOR swizzle on the column that moves whole float4s (multiples of
// 4 words), so a row's 16 float4s stay a permutation of one another:
//   row-major chunk (C row = fragment row):  column ^ 8 (row % 4). A half-warp's float2 stores
//     cover 4 rows (g % 4 differs in both row orders below) x 8 words: 4 distinct 8-word groups.
//   transposed chunk (C row = fragment column 8j + 2t + e): column ^ kUnit * t, with the
//     fragment row as column. kUnit = 8 for wgmma's row order (lanes' rows are 8 consecutive
//     ones: t moves them by whole groups of 8), 4 for StageTile::register_a_row (rows
//     {0..3, 16..19} + a multiple of 4 below 16: t fills bits 2 and 3).
// Both: 32 lanes of a store hit 32 banks; each 8-lane phase of a float4 read covers one row's 8
// float4s, permuted within an aligned group of 8. A named barrier per warpgroup (id 1 + wg, 128
// threads) separates writing a chunk from reading it and reading from overwriting it.
// ---------------------------------------------------------------------------------------------
constexpr int kStagedEpilogueBytes = 64 * 64 * 4;  // per warpgroup

__device__ __forceinline__ void warpgroup_bar(int id) {
#ifdef GEMMLAB_SM90A
  asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory");
#endif
}

// row_lo / row_hi: this thread's fragment rows within the warpgroup's 64 (fragment_row or
// register_a_row); (row0, col0): the fragment's origin in the kernel's result D. kTransposed:
// D = C^T (a swapped problem), so D(r, c) goes to C(c, r). kUnit: see above (transposed only).
// kStore: how each float4 goes out. kStorePlain: the fp32 in-place store only (the caller
// knows the epilogue is plain); kStoreInline: the general epilogue inlined when it is not;
// kStoreCall: the general epilogue as a call per float4, values in registers (kernels at their
// register limit, where inlining it spilled).
enum StoreMode : int { kStorePlain = 0, kStoreInline = 1, kStoreCall = 2 };
// Chunk `chunk` (64 columns) of the fragment into the buffer.
template <int kN, bool kTransposed, int kUnit>
__device__ __forceinline__ void stage_chunk(const float (&d)[kN / 2], float* buf, int chunk,
                                            int row_lo, int row_hi) {
  const int t = threadIdx.x % 4;
#pragma unroll
  for (int jj = 0; jj < 8; ++jj) {
    const int j = chunk * 8 + jj, c = 8 * jj + 2 * t;  // chunk column of d[4j], d[4j+2]
    if constexpr (kTransposed) {
      // buffer row = chunk column (a C row), buffer column = fragment row (a C column)
      const int swz = kUnit * t;  // ((c >> 1) & 3) == t for both c and c + 1
      buf[c * 64 + (row_lo ^ swz)] = d[4 * j + 0];
      buf[(c + 1) * 64 + (row_lo ^ swz)] = d[4 * j + 1];
      buf[c * 64 + (row_hi ^ swz)] = d[4 * j + 2];
      buf[(c + 1) * 64 + (row_hi ^ swz)] = d[4 * j + 3];
    } else {
      *reinterpret_cast<float2*>(&buf[row_lo * 64 + (c ^ (8 * (row_lo % 4)))]) =
          make_float2(d[4 * j + 0], d[4 * j + 1]);
      *reinterpret_cast<float2*>(&buf[row_hi * 64 + (c ^ (8 * (row_hi % 4)))]) =
          make_float2(d[4 * j + 2], d[4 * j + 3]);
    }
  }
}

// The buffer's chunk back as rows of float4, each through the Epilogue. 64 rows x 16 float4: a
// warp covers 2 rows per step, 8 steps (the inlined general epilogue: 8 columns per step, 4
// steps). Not unrolled: the accumulators are still live, and unrolled steps would hold 8
// addresses and float4s at once.
template <bool kTransposed, int kUnit, int kStore>
__device__ __forceinline__ void drain_chunk(const Epilogue& ep, const float* buf, int chunk,
                                            int row0, int col0) {
  const int lane = threadIdx.x % 128;
  if constexpr (kStore == kStoreInline && (!kTransposed || kUnit == 8)) {
    // The general epilogue costs instructions per store, not bytes: 8 columns per thread and
    // step (two float4 side by side: the swizzles here move float4s in pairs), so half the steps
    // and one 16-byte store of a 16-bit D. 64 rows x 8 groups of 8: 4 rows per warp, 4 steps.
    // A thread's 8 columns are the same in every step: their bias is loaded once.
    float bv[8];
    ep.bias8(kTransposed ? row0 + 8 * (lane % 8) : col0 + 64 * chunk + 8 * (lane % 8), bv);
#pragma unroll 1
    for (int i = 0; i < 4; ++i) {
      const int r = i * 16 + lane / 8, p = lane % 8;
      const int swz4 = kTransposed ? 2 * ((r >> 1) & 3) : 2 * (r % 4);
      const float* src = &buf[r * 64 + 4 * ((2 * p) ^ swz4)];
      const float4 a = *reinterpret_cast<const float4*>(src);
      const float4 b = *reinterpret_cast<const float4*>(src + 4);
      const int dr = kTransposed ? col0 + 64 * chunk + r : row0 + r;
      const int dc = kTransposed ? row0 + 8 * p : col0 + 64 * chunk + 8 * p;
      ep.store8_general(dr, dc, a, b, bv);
    }
  } else {
#pragma unroll 1
    for (int i = 0; i < 8; ++i) {
      const int r = i * 8 + lane / 16, q = lane % 16;
      const int swz4 = kTransposed ? kUnit / 4 * ((r >> 1) & 3) : 2 * (r % 4);
      const float4 v = *reinterpret_cast<const float4*>(&buf[r * 64 + 4 * (q ^ swz4)]);
      const int dr = kTransposed ? col0 + 64 * chunk + r : row0 + r;
      const int dc = kTransposed ? row0 + 4 * q : col0 + 64 * chunk + 4 * q;
      if constexpr (kStore == kStorePlain) ep.store4_plain(dr, dc, v);
      else ep.store4<kStore == kStoreInline>(dr, dc, v);
    }
  }
}

template <int kN, bool kTransposed, int kUnit = 8, int kStore = kStoreInline>
__device__ __forceinline__ void store_fragment_staged(const Epilogue& ep, const float (&d)[kN / 2],
                                                      float* buf, int wg_bar, int row_lo,
                                                      int row_hi, int row0, int col0) {
  static_assert(kN % 64 == 0, "whole 64-column chunks");
  if constexpr (kStore == kStorePlain) {
    // The fp32 store is a few instructions: every chunk unrolled.
#pragma unroll
    for (int chunk = 0; chunk < kN / 64; ++chunk) {
      if (chunk > 0) warpgroup_bar(wg_bar);  // the previous chunk has been read
      stage_chunk<kN, kTransposed, kUnit>(d, buf, chunk, row_lo, row_hi);
      warpgroup_bar(wg_bar);  // the chunk is complete
      drain_chunk<kTransposed, kUnit, kStore>(ep, buf, chunk, row0, col0);
    }
  } else {
    // The general epilogue (loads of C and bias, an activation, three D dtypes) is hundreds of
    // instructions: one copy of the drain for all chunks (the chunk loop is not unrolled; each
    // chunk's accumulators, which need constant indices, are picked by an unrolled test). With
    // the drain unrolled per chunk, the kernel grew to ~50K instructions and ran 30% slower.
#pragma unroll 1
    for (int chunk = 0; chunk < kN / 64; ++chunk) {
      if (chunk > 0) warpgroup_bar(wg_bar);
#pragma unroll
      for (int cc = 0; cc < kN / 64; ++cc)
        if (cc == chunk) stage_chunk<kN, kTransposed, kUnit>(d, buf, cc, row_lo, row_hi);
      warpgroup_bar(wg_bar);
      drain_chunk<kTransposed, kUnit, kStore>(ep, buf, chunk, row0, col0);
    }
  }
  warpgroup_bar(wg_bar);  // the buffer is free for the next tile
}

}  // namespace sm90
}  // namespace gemmlab
