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
// bias_pre (transposed only, else null): the bias this thread's drain needs (bias8 of
// row0 + 8 (lane % 8), the same for every chunk), loaded by the caller before its main loop.
template <bool kTransposed, int kUnit, int kStore>
__device__ __forceinline__ void drain_chunk(const Epilogue& ep, const float* buf, int chunk,
                                            int row0, int col0, const float* bias_pre = nullptr) {
  const int lane = threadIdx.x % 128;
  if constexpr (kStore == kStoreInline && (!kTransposed || kUnit == 8)) {
    // The general epilogue costs instructions per store, not bytes: 8 columns per thread and
    // step (two float4 side by side: the swizzles here move float4s in pairs), so half the steps
    // and one 16-byte store of a 16-bit D. 64 rows x 8 groups of 8: 4 rows per warp, 4 steps.
    // A thread's 8 columns are the same in every step: their bias is loaded once.
    float bv[8];
    if (kTransposed && bias_pre) {
#pragma unroll
      for (int i = 0; i < 8; ++i) bv[i] = bias_pre[i];
    } else {
      ep.bias8(kTransposed ? row0 + 8 * (lane % 8) : col0 + 64 * chunk + 8 * (lane % 8), bv);
    }
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
                                                      int row_hi, int row0, int col0,
                                                      const float* bias_pre = nullptr) {
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
      drain_chunk<kTransposed, kUnit, kStore>(ep, buf, chunk, row0, col0, bias_pre);
    }
  }
  warpgroup_bar(wg_bar);  // the buffer is free for the next tile
}

// ---------------------------------------------------------------------------------------------
// Epilogue through TMA stores (wgmma/03, beta = 0; a 16-bit D, or an fp32 one with a bias or an
// activation). The staged drain above keeps the consumer warps busy with global stores while the
// tensor cores idle; here each thread applies the whole epilogue (alpha, bias, activation,
// rounding to D's dtype) to its fragment in registers and writes the result into shared memory
// in the layout of a 128-byte-swizzled TMA box, and the warp's lane 0 hands the box to TMA
// (cp.async.bulk.tensor, bulk_group): the warp goes on to its next box, and to the next tile's
// main loop, while the copy to global memory runs. Rows and columns past D's edges are clipped by
// TMA. Each warp stores its own 16 rows (boxes of 16 rows x 128 bytes: 64 16-bit or 32 fp32
// columns) through its quarter of the warpgroup's 16 KB buffer, two boxes deep: before box i is
// written, lane 0 waits until the warp's store of box i - 2 has read the half it reuses
// (wait_group.read 1), and a warp sync and a proxy fence are all that order the rest; no barrier
// across the warpgroup (one 64-row box per warpgroup needed two per box).
// The epilogue is paid on every tile while the tensor cores idle (it is not overlapped with a
// main loop), so its instructions count: the boxes are unrolled (each box's accumulators at
// constant indices, no selects), and each 8 x 8 piece of 16-bit results goes out with stmatrix,
// four per instruction, in the fragment's own layout (a group of 8 columns x 16 rows of a warp
// is two such pieces: d[4j], d[4j+1] above, d[4j+2], d[4j+3] below). Swizzle: the 16-byte chunk
// q of box row r sits at chunk q ^ (r % 8); the 8 rows of a piece are 8 consecutive ones, so each
// piece's 8 chunks fall in 8 distinct bank groups (fp32: a warp's 8-byte stores fill two
// wavefronts).
// ---------------------------------------------------------------------------------------------
constexpr int kTmaStoreBoxBytes = 16 * 128;  // a warp's box; two per warp in the warpgroup's buffer

// The bias of one box's columns for this thread: two per fragment group (kGroups of them), c =
// the box's first column + 2 (lane % 4); 0 past n or without a bias.
template <int kGroups>
struct BoxBias {
  float v[2 * kGroups];
  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int i = 0; i < 2 * kGroups; ++i) v[i] = 0.f;
  }
  __device__ __forceinline__ void load(const Epilogue& ep, int c) {
    zero();
    if (!ep.bias) return;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      float b[2] = {0.f, 0.f};
      add_n<2>(b, ep.bias, ep.bias_type, c + 8 * g, ep.n - (c + 8 * g), 1.f);
      v[2 * g] = b[0], v[2 * g + 1] = b[1];
    }
  }
};

// A 16-bit bias for a whole tile: the pair of columns col0 + 8j + 2t + {0, 1} (t = lane % 4) as
// one 32-bit word, word 4j + t of a 512-byte shared-memory block per warpgroup (the 4 lanes of a
// group read 4 consecutive words; the 8 groups of a warp share them: broadcast). Each of the
// warpgroup's 128 threads loads one word before the tile's main loop (load_bias_word) and stores
// it at the start of the epilogue, so that no bias load waits on L2 in the epilogue. An fp32
// bias (twice the bytes, and no shared memory left for them) is loaded box by box instead
// (BoxBias).
constexpr int kTileBiasBytes = 512;  // per warpgroup: 128 words, 256 columns
__device__ __forceinline__ uint32_t load_bias_word(const Epilogue& ep, int col0) {
  if (!ep.bias || ep.bias_type == DType::F32) return 0;
  const int i = threadIdx.x % 128, c = col0 + 8 * (i / 4) + 2 * (i % 4);
  const uint16_t* b = static_cast<const uint16_t*>(ep.bias);
  if (c + 1 < ep.n) {
    if ((reinterpret_cast<uintptr_t>(b) & 3) == 0) return *reinterpret_cast<const uint32_t*>(b + c);
    return (static_cast<uint32_t>(b[c + 1]) << 16) | b[c];
  }
  return c < ep.n ? b[c] : 0u;
}
__device__ __forceinline__ float2 unpack_bias_word(uint32_t x, DType t) {
  if (t == DType::BF16) return make_float2(__uint_as_float(x << 16), __uint_as_float(x & 0xffff0000u));
  return __half22float2(*reinterpret_cast<const __half2*>(&x));
}

// A warp's finished values of one box (v[4g], v[4g + 1]: its upper row, columns 8g + 2 (lane % 4)
// + {0, 1}; v[4g + 2], v[4g + 3]: 8 rows below), rounded to bf16 or fp16 pairs: w[j] holds
// v[2j], v[2j + 1].
template <int kVals>
__device__ __forceinline__ void pack_box(const float (&v)[kVals], bool bf16,
                                         uint32_t (&w)[kVals / 2]) {
  if (bf16) {
#pragma unroll
    for (int j = 0; j < kVals / 2; ++j) {
      const __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * j], v[2 * j + 1]);
      w[j] = *reinterpret_cast<const uint32_t*>(&h);
    }
  } else {
#pragma unroll
    for (int j = 0; j < kVals / 2; ++j) {
      const __half2 h = __floats2half2_rn(v[2 * j], v[2 * j + 1]);
      w[j] = *reinterpret_cast<const uint32_t*>(&h);
    }
  }
}

// A warp's packed 16-bit box (pack_box; kWords = 2 per fragment group, from word `first` of w)
// into the 16-row box at `box`: stmatrix step s writes groups 2s and 2s + 1 (matrices: group 2s
// above, below; group 2s + 1 above, below); lane l gives row l % 8 of matrix l / 8: box row
// srow, group 2s + l / 16.
template <int kWords, int kAll>
__device__ __forceinline__ void stmatrix_box(uint8_t* box, const uint32_t (&w)[kAll], int first) {
  const int lane = threadIdx.x % 32;
  const int srow = 8 * ((lane >> 3) & 1) + (lane & 7);
  const uint32_t row_addr = smem_addr(box) + srow * 128;
#pragma unroll
  for (int s = 0; s < kWords / 4; ++s)
    stmatrix_x4(row_addr + (((2 * s + (lane >> 4)) ^ (lane & 7)) << 4), w[first + 4 * s],
                w[first + 4 * s + 1], w[first + 4 * s + 2], w[first + 4 * s + 3]);
}

// A warp's finished values of one box into the 16-row box at `box` in D's dtype (kEs bytes;
// bf16 or fp16 by `bf16`). fp32: 8-byte stores of the pairs, rows lane / 4 and 8 below.
template <int kEs, int kVals>
__device__ __forceinline__ void write_box(uint8_t* box, const float (&v)[kVals], bool bf16) {
  constexpr int kGroups = kVals / 4;
  if constexpr (kEs == 2) {
    uint32_t w[kVals / 2];
    pack_box(v, bf16, w);
    stmatrix_box<kVals / 2>(box, w, 0);
  } else {
    const int lane = threadIdx.x % 32, t = lane % 4;
    const int row_lo = lane / 4, row_hi = row_lo + 8;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      const int q = 2 * g + t / 2, off = 8 * (t % 2);  // 16-byte chunk, byte in it
      *reinterpret_cast<float2*>(box + row_lo * 128 + ((q ^ (row_lo % 8)) << 4) + off) =
          make_float2(v[4 * g], v[4 * g + 1]);
      *reinterpret_cast<float2*>(box + row_hi * 128 + ((q ^ (row_hi % 8)) << 4) + off) =
          make_float2(v[4 * g + 2], v[4 * g + 3]);
    }
  }
}

// The shapes of store_fragment_tma's boxes for a D of kEs-byte elements and kN-column tiles.
template <int kN, int kEs>
struct TmaBoxes {
  static constexpr int kW = 128 / kEs;       // D columns per box (128 bytes)
  static constexpr int kGroups = kW / 8;     // fragment groups of 8 columns per box
  static constexpr int kVals = 4 * kGroups;  // a thread's values per box
  static constexpr int kBoxes = kN / kW;
  static_assert(kN % kW == 0, "whole boxes");
  static_assert(kN / 8 * 4 * 4 <= kTileBiasBytes, "the tile's bias words fit their block");
};

// The 16-bit bias words of the tile (load_bias_word) into the warpgroup's block, before its
// boxes read them (the last tile's words were all read before this barrier).
__device__ __forceinline__ void stage_tile_bias(const Epilogue& ep, uint32_t* bias_smem,
                                                uint32_t bias_word, int wg_bar) {
  if (ep.bias && ep.bias_type != DType::F32) {
    bias_smem[threadIdx.x % 128] = bias_word;
    warpgroup_bar(wg_bar);
  }
}

// This thread's finished values of box `box` of the fragment (alpha, bias, activation; not yet
// rounded): v[4g], v[4g + 1]: the upper row, columns col0 + kW box + 8g + 2 (lane % 4) + {0, 1};
// v[4g + 2], v[4g + 3]: 8 rows below. A 16-bit bias from the staged block, an fp32 one from L2.
template <int kN, int kEs, int kVals = TmaBoxes<kN, kEs>::kVals>
__device__ __forceinline__ void tma_box_values(const Epilogue& ep, const float (&d)[kN / 2],
                                               int box, int col0, const uint32_t* bias_smem,
                                               float (&v)[kVals]) {
  using B = TmaBoxes<kN, kEs>;
  const int t = threadIdx.x % 4;
#pragma unroll
  for (int i = 0; i < kVals; ++i) v[i] = d[box * kVals + i];
  BoxBias<B::kGroups> cur;
  if (ep.bias && ep.bias_type == DType::F32) {
    cur.load(ep, col0 + B::kW * box + 2 * t);
  } else if (ep.bias) {  // this box's words of the 16-bit bias
#pragma unroll
    for (int g = 0; g < B::kGroups; ++g) {
      const float2 f = unpack_bias_word(bias_smem[4 * (box * B::kGroups + g) + t], ep.bias_type);
      cur.v[2 * g] = f.x, cur.v[2 * g + 1] = f.y;
    }
  } else {
    cur.zero();
  }
#pragma unroll
  for (int i = 0; i < kVals; ++i) v[i] = fmaf(v[i], ep.alpha, cur.v[2 * (i / 4) + i % 2]);
  activate_n<kVals>(v, ep.act);
}

// The warp's half of its two box buffers that box `box` of a tile of kBoxes uses, once the
// warp's store of box - 2 has read it. With an odd number of boxes a tile's first box reuses the
// half of the last tile's last box: all its stores first (long done by then).
template <int kBoxes>
__device__ __forceinline__ uint8_t* tma_box_half(uint8_t* buf, int box) {
  const int warp = threadIdx.x % 128 / 32;
  if (threadIdx.x % 32 == 0) {
    if (kBoxes % 2 != 0 && box == 0) bulk_wait_read<0>();
    else bulk_wait_read<1>();
  }
  __syncwarp();
  return buf + warp * 2 * kTmaStoreBoxBytes + (box & 1) * kTmaStoreBoxBytes;
}

// The box just written to `half` out to D at (col, the warp's 16 rows from row0, entry z).
__device__ __forceinline__ void tma_box_issue(const CUtensorMap* map, uint8_t* half, int col,
                                              int row0, int z) {
  fence_proxy_async();  // the box's generic-proxy writes, visible to TMA after the sync
  __syncwarp();
  if (threadIdx.x % 32 == 0) {
    tma_store_3d(map, half, col, row0 + 16 * (threadIdx.x % 128 / 32), z);
    bulk_commit_group();
  }
}

// kEs: D's element bytes (2: bf16 / fp16, 4: fp32). (row0, col0): the fragment's origin in D; z: the batch entry
// (the map's third coordinate). bias_smem: the warpgroup's kTileBiasBytes block; bias_word:
// load_bias_word(ep, col0), loaded before the tile's main loop. stage_bias = false: the block
// already holds this tile's words (a second fragment of the same columns: wgmma/pingpong).
// Each warp stores its own 16 rows: boxes of 16 rows x 128 bytes in its quarter of the buffer
// (two 2 KB halves), handed to TMA by its lane 0; no barrier between the warps.
template <int kN, int kEs>
__device__ __forceinline__ void store_fragment_tma(const Epilogue& ep, const float (&d)[kN / 2],
                                                   uint8_t* buf, int wg_bar, const CUtensorMap* map,
                                                   int row0, int col0, int z, uint32_t* bias_smem,
                                                   uint32_t bias_word, bool stage_bias = true) {
  using B = TmaBoxes<kN, kEs>;
  if (stage_bias) stage_tile_bias(ep, bias_smem, bias_word, wg_bar);
  const bool bf16 = ep.d_type == DType::BF16;
#pragma unroll
  for (int box = 0; box < B::kBoxes; ++box) {
    float v[B::kVals];
    tma_box_values<kN, kEs>(ep, d, box, col0, bias_smem, v);
    uint8_t* half = tma_box_half<B::kBoxes>(buf, box);
    write_box<kEs>(half, v, bf16);
    tma_box_issue(map, half, col0 + B::kW * box, row0, z);
  }
}

// The three epilogue instances of each kernel: kEpiPlain keeps the fp32 store code alone (fp32
// D read in place or not at all, no bias or activation), so the extension costs those problems
// nothing; kEpiGeneral: bias, activation, 16-bit D, C apart from D; kEpiTma: any of those with
// beta = 0 and a 16-byte-aligned D, through TMA stores (store_fragment_tma), on the kernels whose
// accumulators are in wgmma's row order (not swapped, no register A).
enum EpiKind : int { kEpiPlain = 0, kEpiGeneral = 1, kEpiTma = 2 };

// wgmma/03's consumers' epilogue for rows [row0, row0 + 64) of tile column col0 (batch entry z):
// the instance kEpi, kSwapped (the kernel computed C^T), TileT's register-A row order or not.
// stage_bias: see store_fragment_tma.
template <class TileT, bool kSwapped, int kEpi, int kBN = TileT::kCols>
__device__ __forceinline__ void store_tile(const Epilogue& ep, const float (&d)[kBN / 2],
                                           float* buf, int cw, int row0, int col0, int z,
                                           const CUtensorMap* map_d, uint32_t* bias_smem,
                                           uint32_t bias_word, bool stage_bias = true) {
  constexpr bool kRegisterA = TileT::kTf32 && !TileT::kAK;
  constexpr bool kGeneral = kEpi == kEpiGeneral;
  // The rows (within the warpgroup's 64) this thread's accumulators hold.
  const int row_lo = kRegisterA ? TileT::register_a_row(0) : fragment_row(0);
  const int row_hi = kRegisterA ? TileT::register_a_row(1) : fragment_row(1);
  if constexpr (kEpi == kEpiTma) {
    static_assert(!kSwapped && !kRegisterA, "TMA stores take wgmma's row order");
    uint8_t* b = reinterpret_cast<uint8_t*>(buf);
    if (ep.d_type == DType::F32)  // (wgmma/03: with a bias or an activation: tma_storable)
      store_fragment_tma<kBN, 4>(ep, d, b, 1 + cw, map_d, row0, col0, z, bias_smem, bias_word,
                                 stage_bias);
    else
      store_fragment_tma<kBN, 2>(ep, d, b, 1 + cw, map_d, row0, col0, z, bias_smem, bias_word,
                                 stage_bias);
  } else if constexpr (kSwapped) {
    static_assert(kRegisterA, "only tf32 NN is swapped, and it has a register A");
    // At its register limit: the general epilogue is a call per float4 (inlined, it spilled).
    store_fragment_staged<kBN, true, 4, kGeneral ? kStoreCall : kStorePlain>(
        ep, d, buf, 1 + cw, row_lo, row_hi, row0, col0);
  } else if constexpr (!kRegisterA) {
    store_fragment_staged<kBN, false, 8, kGeneral ? kStoreInline : kStorePlain>(
        ep, d, buf, 1 + cw, row_lo, row_hi, row0, col0);
  } else {  // (tf32 TN/TT, with their two A register sets, would spill in the staged epilogue)
    store_fragment<kBN, /*kPlainOnly=*/!kGeneral>(ep, d, row0 + row_lo, row0 + row_hi, col0);
  }
}

}  // namespace sm90
}  // namespace gemmlab
