// One pipeline stage of the wgmma kernels in shared memory: its layout, TMA loads and wgmma issue.
#pragma once

#include "kernels/wgmma/wgmma_ops.cuh"

namespace gemmlab {
namespace sm90 {

// ---------------------------------------------------------------------------------------------
// The shared-memory tile of one pipeline stage, as TMA writes it and wgmma reads it.
//
// Every operand row holds one 128-byte swizzle row of K: kBK = 64 elements for 16-bit types,
// 32 for tf32 (fp32 storage). 128-byte swizzle: the 16-byte chunk c of row r lands at chunk
// c ^ (r % 8), so the 8 rows a wgmma core matrix reads hit 8 different bank groups.
//   K-major operand (rows = M or N):  row i at byte 128 * i; one TMA box of kBK x rows.
//   MN-major operand: chunks of 128 bytes of M/N (64 elements, or 32 for tf32), each kBK rows of
//                     K x 128 bytes (8 KB / 4 KB), one TMA box per chunk.
// A warpgroup's 64 rows of A start at byte 8192 * wg in both layouts (64 rows x 128 B, or 64
// elements' worth of chunks). Within a stage, wgmma step kk (16 or 8 elements of K) starts 32 * kk
// bytes into each K-major row, or kKStep * 128 * kk bytes further down an MN-major chunk.
// wgmma reads tf32 only K-major from shared memory; an MN-major tf32 A is instead loaded into
// registers (load_a_fragment + mma_rs), which is how gemmlab avoids transposing it.
// ---------------------------------------------------------------------------------------------
template <typename T, int kBM, int kBN, bool kAKMajor, bool kBKMajor>
struct StageTile {
  static constexpr bool kAK = kAKMajor;  // A is K-major
  static constexpr int kCols = kBN;      // B's rows: the accumulator tile is 64 x kCols per warpgroup
  static constexpr bool kTf32 = sizeof(T) == 4;
  static constexpr bool kHalf = std::is_same<T, __half>::value;
  static_assert(!kTf32 || kBKMajor, "tf32 wgmma reads B K-major only (A may come from registers)");
  // B may be narrower than 64 (8, 16, 32: wgmma/decode's tokens) or not a multiple of it (96:
  // wgmma/small's 192 x 96 and 128 x 208, 16-bit) where it is K-major: a box of kBN rows of 128
  // bytes, whole swizzle atoms of 8 rows. Or wider than one wgmma's N (320: wgmma/small's
  // 128 x 320, 16-bit): K-major, two TMA boxes of kBN / 2 rows (a box has at most 256), or
  // MN-major, five 64-wide chunks; per k-step an m64n256 wgmma on accumulators [0, 128) over
  // B's first 256 columns and an m64n64 on [128, 160) over the last 64 (32 KB into the stage
  // either way: 256 rows of 128 bytes, or four chunks of 8 KB), which together hold the fragment
  // of one m64n320 (column 8j + 2t + (q & 1) in d[4j + q] either way).
  static_assert(kBM % 64 == 0 && kBM <= 256 &&
                    ((kBN % 64 == 0 && kBN <= 256) || (kBN == 320 && !kTf32) ||
                     (kBKMajor && (kBN == 8 || kBN == 16 || kBN == 32 || kBN == 96 ||
                                   (kBN == 208 && !kTf32)))),
                "tile shape");
  static constexpr bool kTwoWgmmas = kBN > 256;
  static constexpr int kBBox = kTwoWgmmas ? kBN / 2 : kBN;  // B's TMA box rows (K-major)
  static constexpr int kBK = 128 / static_cast<int>(sizeof(T));  // K per stage
  static constexpr int kKStep = kTf32 ? 8 : 16;                    // K per wgmma
  static constexpr int kKSteps = kBK / kKStep;                     // 4
  static constexpr int kABytes = kBM * 128;
  static constexpr int kBBytes = kBN * 128;
  static constexpr int kBytes = kABytes + kBBytes;  // a multiple of 1024: stages stay aligned
  static constexpr int kMNChunk = 128 / static_cast<int>(sizeof(T));  // MN-major chunk width
  static constexpr int kChunkBytes = kBK * 128;                        // and its bytes

  // TMA boxes (host side builds the maps to match): K-major {kBK, rows}, MN-major {64, kBK}; z is
  // the batch entry (the maps are 3-D: make_tensor_map).
  // A: rows [m0, m0 + kBM) of op(A), K [k0, k0 + kBK).
  __device__ static void load_a(const CUtensorMap* map, uint8_t* stage, uint64_t* bar, int m0,
                                int k0, int z) {
    if constexpr (kAKMajor) {
      tma_load_3d(stage, map, bar, k0, m0, z);
    } else {
#pragma unroll
      for (int c = 0; c < kBM / kMNChunk; ++c)
        tma_load_3d(stage + c * kChunkBytes, map, bar, m0 + kMNChunk * c, k0, z);
    }
  }
  // B: columns [n0, n0 + kBN) of op(B), K [k0, k0 + kBK).
  __device__ static void load_b(const CUtensorMap* map, uint8_t* stage, uint64_t* bar, int n0,
                                int k0, int z) {
    uint8_t* b = stage + kABytes;
    if constexpr (kBKMajor) {
#pragma unroll
      for (int i = 0; i < kBN / kBBox; ++i)  // (kBBox * 128 bytes: whole 1 KB swizzle atoms)
        tma_load_3d(b + i * kBBox * 128, map, bar, k0, n0 + i * kBBox, z);
    } else {
#pragma unroll
      for (int c = 0; c < kBN / kMNChunk; ++c)
        tma_load_3d(b + c * kChunkBytes, map, bar, n0 + kMNChunk * c, k0, z);
    }
  }

  // The strips kernel's last token tile (wgmma_decode_plan::tail_box_pays, plan.h) loads only
  // its `rows` rows of a K-major B that exist: TMA's out-of-bounds fill is not free (H200: a last
  // token tile of 16 of 128 rows took 1.8x the time of a full one). The last box comes through a
  // second map, map_tail, whose box has the rows left past the whole boxes (rows % box rows). The
  // rest of the stage keeps stale data, which only feeds accumulator columns past the end: the
  // epilogue drops them.
  __device__ static int b_bytes(int rows) { return rows >= kBN ? kBBytes : rows * 128; }
  __device__ static void load_b_rows(const CUtensorMap* map, const CUtensorMap* map_tail,
                                     uint8_t* stage, uint64_t* bar, int n0, int k0, int z,
                                     int rows) {
    static_assert(kBKMajor, "rows of a K-major B");
    uint8_t* b = stage + kABytes;
#pragma unroll
    for (int i = 0; i < kBN / kBBox; ++i) {
      if (i * kBBox >= rows) break;
      tma_load_3d(b + i * kBBox * 128, (i + 1) * kBBox <= rows ? map : map_tail, bar, k0,
                  n0 + i * kBBox, z);
    }
  }

  // B in a CTA pair (wgmma/03's 2 x 1 clusters: both CTAs need the same B tile): CTA `rank`
  // loads its half of the columns (a K-major box of kBN / 2 rows: map_half; or every other
  // MN-major chunk, starting at its rank) into both CTAs' stages (mask 0b11). An edge tile's few
  // columns: rank 0 alone.
  __device__ static void load_b_pair(const CUtensorMap* map_half, uint8_t* stage, uint64_t* bar,
                                     int n0, int k0, int z, int rank) {
    uint8_t* b = stage + kABytes;
    if constexpr (kBKMajor) {
      static_assert(kBN % 16 == 0 && kBN <= 256, "two K-major halves of whole swizzle atoms");
      tma_load_3d_multicast(b + rank * (kBN / 2) * 128, map_half, bar, k0, n0 + rank * (kBN / 2), z,
                            3);
    } else {
#pragma unroll
      for (int c = 0; c < kBN / kMNChunk; ++c)
        if (c % 2 == rank)
          tma_load_3d_multicast(b + c * kChunkBytes, map_half, bar, n0 + kMNChunk * c, k0, z, 3);
    }
  }
  __device__ static void load_b_edge_pair(const CUtensorMap* map, const CUtensorMap* map_edge,
                                          uint8_t* stage, uint64_t* bar, int n0, int k0, int z,
                                          int rank) {
    if (rank != 0) return;
    if constexpr (kBKMajor) tma_load_3d_multicast(stage + kABytes, map_edge, bar, k0, n0, z, 3);
    else tma_load_3d_multicast(stage + kABytes, map, bar, n0, k0, z, 3);
  }

  // Edge tiles with at most kEdgeRows valid rows of A (or columns of B) load only that part of
  // the operand: 8 rows of a K-major one (through a second tensor map whose box has 8 rows), or
  // the first chunk of an MN-major one. The rest of the stage keeps stale data from earlier
  // tiles; it only feeds accumulator rows (columns) past the end, which the epilogue drops.
  // A size like 4097 makes every partial tile such a 1-row or 1-column strip.
  static constexpr int kEdgeRows = 8;
  static constexpr int kAEdgeBytes = kAKMajor ? kEdgeRows * 128 : kChunkBytes;
  static constexpr int kBEdgeBytes = kBKMajor ? kEdgeRows * 128 : kChunkBytes;
  __device__ static void load_a_edge(const CUtensorMap* map, const CUtensorMap* map_edge,
                                     uint8_t* stage, uint64_t* bar, int m0, int k0, int z) {
    if constexpr (kAKMajor) tma_load_3d(stage, map_edge, bar, k0, m0, z);
    else tma_load_3d(stage, map, bar, m0, k0, z);
  }
  __device__ static void load_b_edge(const CUtensorMap* map, const CUtensorMap* map_edge,
                                     uint8_t* stage, uint64_t* bar, int n0, int k0, int z) {
    if constexpr (kBKMajor) tma_load_3d(stage + kABytes, map_edge, bar, k0, n0, z);
    else tma_load_3d(stage + kABytes, map, bar, n0, k0, z);
  }

  // d (64 x kBN) += A rows [64 wg, 64 wg + 64) x B over the stage's kBK. scale_d = 0 on the first
  // wgmma of a tile overwrites d instead of accumulating (no zero-initialization needed).
  // kNarrow: only the first 8 columns (an edge tile with <= 8 valid ones): m64n8, d[0..3].
  template <bool kNarrow = false>
  __device__ static void mma(float (&d)[kBN / 2], uint32_t stage_addr, int wg, bool accumulate) {
    static_assert(!kTf32 || kAKMajor, "MN-major tf32 A goes through registers (mma_rs)");
    const uint32_t a_addr = stage_addr + wg * 8192;
    const uint32_t b_addr = stage_addr + kABytes;
    constexpr uint32_t a_step = kAKMajor ? 32 : kKStep * 128;
    constexpr uint32_t b_step = kBKMajor ? 32 : kKStep * 128;
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      const uint64_t da = make_smem_desc(a_addr + kk * a_step, kAKMajor ? 16 : kChunkBytes, 1024);
      const uint64_t db = make_smem_desc(b_addr + kk * b_step, kBKMajor ? 16 : kChunkBytes, 1024);
      const int scale_d = (accumulate || kk > 0) ? 1 : 0;
      if constexpr (kTf32) {
        wgmma_tf32<kNarrow ? 8 : kBN>(d, da, db, scale_d);
      } else if constexpr (kNarrow) {
        wgmma_m64n8k16<kHalf, !kAKMajor, !kBKMajor>(d, da, db, scale_d);
      } else if constexpr (kTwoWgmmas) {
        // Every wgmma of the kernel on the same two register groups (ptxas serializes them
        // otherwise: docs/history.md, wgmma/03).
        static_assert(256 * 128 == 4 * kChunkBytes, "B's last 64 columns: 32 KB in either layout");
        const uint64_t db2 = make_smem_desc(b_addr + 256 * 128 + kk * b_step,
                                            kBKMajor ? 16 : kChunkBytes, 1024);
        wgmma_m64nNk16<kHalf, !kAKMajor, !kBKMajor, 256>(*reinterpret_cast<float(*)[128]>(&d[0]),
                                                         da, db, scale_d);
        wgmma_m64nNk16<kHalf, !kAKMajor, !kBKMajor, kBN - 256>(
            *reinterpret_cast<float(*)[kBN / 2 - 128]>(&d[128]), da, db2, scale_d);
      } else {
        if constexpr (kBN == 8) wgmma_m64n8k16<kHalf, !kAKMajor, !kBKMajor>(d, da, db, scale_d);
        else wgmma_m64nNk16<kHalf, !kAKMajor, !kBKMajor, kBN>(d, da, db, scale_d);
      }
    }
  }

  // tf32 with A MN-major: the wgmma A fragment of the whole stage (kKSteps x 4 registers) read
  // from the swizzled chunks. Fragment of m64nNk8 tf32: thread (warp w, lane l = 4g + t) holds
  // fragment rows 16w + g + {0, 8} and K columns t + {0, 4} of each k8 step, as a0..a3 =
  // (row, k), (row + 8, k), (row, k + 4), (row + 8, k + 4). Element (mn, kk) of a chunk sits at
  // 128 kk + 16 ((mn / 4) ^ (kk % 8)) + 4 (mn % 4).
  // Which tile row a fragment row holds is ours to choose (D's rows follow A's): register_a_row
  // picks rows so that the 32 lanes of each load hit 32 different banks. For a fixed word mn % 4
  // the two g's sharing it get mn / 4 differing by 4, so (mn / 4) ^ t covers 8 distinct chunks.
  __device__ static int register_a_row(int half) {  // tile row within the warpgroup's 64
    const int t = threadIdx.x % 128, w = t / 32, g = (t % 32) / 4;
    return 32 * (w / 2) + 8 * (w % 2) + (g % 4) + 16 * (g / 4) + 4 * half;
  }
  __device__ static void load_a_fragment(uint32_t (&a)[kKSteps * 4], uint32_t stage_addr, int wg) {
    static_assert(kTf32 && !kAKMajor, "register A only for MN-major tf32");
    const int l = threadIdx.x % 32;
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = 64 * wg + register_a_row(i & 1);
        const int kc = kk * kKStep + l % 4 + 4 * (i >> 1);
        const int mn = r % kMNChunk;
        const uint32_t addr = stage_addr + (r / kMNChunk) * kChunkBytes + kc * 128 +
                              ((((mn >> 2) ^ (kc & 7))) << 4) + ((mn & 3) << 2);
        a[kk * 4 + i] = lds32(addr);
      }
    }
  }

  template <bool kNarrow = false>
  __device__ static void mma_rs(float (&d)[kBN / 2], const uint32_t (&a)[kKSteps * 4],
                                uint32_t stage_addr, bool accumulate) {
    static_assert(kTf32 && !kAKMajor && kBKMajor, "register-A wgmma: tf32, B K-major");
    const uint32_t b_addr = stage_addr + kABytes;
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      const uint64_t db = make_smem_desc(b_addr + kk * 32, 16, 1024);
      const int scale_d = (accumulate || kk > 0) ? 1 : 0;
      wgmma_tf32_rs<kNarrow ? 8 : kBN>(d, a[kk * 4 + 0], a[kk * 4 + 1], a[kk * 4 + 2],
                                       a[kk * 4 + 3], db, scale_d);
    }
  }
};

}  // namespace sm90
}  // namespace gemmlab
