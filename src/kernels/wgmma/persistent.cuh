// The pieces wgmma/03 and wgmma/pingpong share: a strided batch walked as one tile sequence
// (batch_of, batch_tile), the operand maps' prefetch, and the producer thread's loads of one
// tile's k-blocks into the stage ring (produce).
#pragma once

#include "kernels/common/tile_schedule.h"
#include "kernels/wgmma/host.h"
#include "kernels/wgmma/plan.h"
#include "kernels/wgmma/sm90.cuh"

namespace gemmlab {
namespace sm90 {

// A strided batch: the kernel's tiles run over every entry (entry-major), so a persistent CTA
// or a stream-k run crosses from one entry into the next like from one tile to the next.
struct Batch {
  int count;              // entries
  int a_step, b_step;     // 1: a / b has an entry per batch entry (3-D map); 0: broadcast
  int64_t stride_c, stride_d;
};

// A tile of the whole batch: its entry and its place in that entry's C.
struct BatchTile {
  int entry;
  TileCoord tc;
};

// The batch of p as the kernels walk it (a / b broadcast where their operand is one matrix).
inline Batch batch_of(const GemmProblem& p, const PreparedOperands& ops) {
  return Batch{static_cast<int>(p.batch), ops.a.batched() ? 1 : 0, ops.b.batched() ? 1 : 0,
               p.stride_c, p.stride_d};
}

// Tile `tile` of the whole batch: entry-major, each entry's bm x bn tiles in the heavy-first
// grouped order over the extents (order_rows, order_cols) the kernel's planner gives.
__device__ __forceinline__ BatchTile batch_tile(int tile, int entry_tiles, int bm, int bn,
                                                int order_rows, int order_cols, int group) {
  const int entry = tile / entry_tiles;
  return BatchTile{entry, tile_heavy_first(tile - entry * entry_tiles, bm, bn, order_rows,
                                           order_cols, group)};
}

// The batch's tiles as a persistent kernel walks them: tile t of [0, tiles) at at(t). group: tile
// rows per band of the grouped order (a CTA pair's tiles are two rows high: half the band).
struct TileWalk {
  int entry_tiles, tiles, bm, bn, group;
  wgmma_plan::TileOrder order;
  __device__ __forceinline__ TileWalk(int rows, int cols, int bm_, int bn_, int entries,
                                      wgmma_plan::TileOrder o, int group_ = wgmma_plan::kGroupRows)
      : entry_tiles(ceil_div(rows, bm_) * ceil_div(cols, bn_)),
        tiles(entry_tiles * entries), bm(bm_), bn(bn_), group(group_), order(o) {}
  __device__ __forceinline__ BatchTile at(int tile) const {
    return batch_tile(tile, entry_tiles, bm, bn, order.rows, order.cols, group);
  }
};

// Dynamic tiles (DynamicTiles, runtime/reserve_sms.h): after its first tile (blockIdx.x) a CTA of wgmma/03
// takes gridDim.x + atomicAdd(counter, 1), so CTAs that start late (their SMs busy with other
// work) take fewer tiles instead of finishing late. The producer thread draws each next tile
// before it loads the current one and hands it to the consumers through a ring of tile ids in
// shared memory (full: the producer's arrive; empty: one arrive per consumer warpgroup).
constexpr int kTileSlots = 4;
struct TileRing {
  int* ids;
  uint64_t* full;
  uint64_t* empty;
  int s = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void advance() {
    if (++s == kTileSlots) s = 0, phase ^= 1;
  }
  // Producer: draws the next tile and publishes it (also a past-the-end one, which stops all).
  __device__ __forceinline__ int draw(int* counter) {
    const int t = static_cast<int>(gridDim.x) + atomicAdd(counter, 1);
    mbar_wait(&empty[s], phase ^ 1);
    ids[s] = t;
    mbar_arrive(&full[s]);
    advance();
    return t;
  }
  // Consumers: the tile the producer drew. The warpgroup meets at a named barrier first, so its
  // four warps enter each tile together (a warpgroup that skips a tile past the last row issues
  // no wgmma that would hold its warps together); one arrive per warpgroup frees the slot.
  __device__ __forceinline__ int take(int cw) {
    mbar_wait(&full[s], phase);
    const int t = *static_cast<volatile int*>(&ids[s]);
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + cw) : "memory");
    if (threadIdx.x % 128 == 0) mbar_arrive(&empty[s]);
    advance();
    return t;
  }
};

// A persistent kernel's dynamic shared memory: the stage ring from a 1024-byte boundary (the
// swizzle's period), then per consumer warpgroup an epilogue buffer (kStagedEpilogueBytes) and a
// 16-bit bias block (kTileBiasBytes), then `bars` mbarriers.
constexpr int persistent_smem_bytes(int ring_bytes, int bars) {
  return ring_bytes + 2 * kStagedEpilogueBytes + 2 * kTileBiasBytes + 1024 /* alignment slack */ +
         bars * 8;
}
struct PersistentSmem {
  uint8_t* ring;
  float* epilogue;
  uint32_t* bias;
  uint64_t* bars;
  __device__ __forceinline__ PersistentSmem(uint8_t* raw, int ring_bytes) {
    ring = raw + ((1024 - (smem_addr(raw) & 1023)) & 1023);
    epilogue = reinterpret_cast<float*>(ring + ring_bytes);
    bias = reinterpret_cast<uint32_t*>(ring + ring_bytes + 2 * kStagedEpilogueBytes);
    bars = reinterpret_cast<uint64_t*>(ring + ring_bytes + 2 * kStagedEpilogueBytes +
                                       2 * kTileBiasBytes);
  }
  // Consumer warpgroup cw's epilogue buffer and bias block.
  __device__ __forceinline__ float* epilogue_of(int cw) const {
    return epilogue + cw * (kStagedEpilogueBytes / 4);
  }
  __device__ __forceinline__ uint32_t* bias_of(int cw) const {
    return bias + cw * (kTileBiasBytes / 4);
  }
};

// The kernel's operand maps into the constant cache before the first TMA (d: null without TMA
// stores).
__device__ __forceinline__ void prefetch_maps(const CUtensorMap* a, const CUtensorMap* b,
                                              const CUtensorMap* a_edge, const CUtensorMap* b_edge,
                                              const CUtensorMap* d) {
  prefetch_tensor_map(a);
  prefetch_tensor_map(b);
  prefetch_tensor_map(a_edge);
  prefetch_tensor_map(b_edge);
  if (d) prefetch_tensor_map(d);
}

// Producer: k-blocks [kb0, kb1) of tile bt into the ring. kPair: a CTA of a 2 x 1 cluster
// (wgmma/03's pairs), `rank` in it: it loads its own A rows and half of the pair's B tile into
// both CTAs' stages (map_b: the half box); a CTA whose rows are all past the end loads no A.
template <class TileT, bool kPair = false, class RingT>
__device__ __forceinline__ void produce(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                        const CUtensorMap* map_a_edge, const CUtensorMap* map_b_edge,
                                        uint8_t* smem, RingT& ring, BatchTile bt, const Batch& batch,
                                        int rows, int cols, int kb0, int kb1, int rank = 0) {
  const TileCoord tc = bt.tc;
  const int za = bt.entry * batch.a_step, zb = bt.entry * batch.b_step;
  const bool no_a = kPair && tc.row0 >= rows;
  const bool edge_a = rows - tc.row0 <= TileT::kEdgeRows;
  const bool edge_b = cols - tc.col0 <= TileT::kEdgeRows;
  const uint32_t bytes = (no_a ? 0 : edge_a ? TileT::kAEdgeBytes : TileT::kABytes) +
                         (edge_b ? TileT::kBEdgeBytes : TileT::kBBytes);
  for (int kb = kb0; kb < kb1; ++kb, ring.advance()) {
    // Wait until the slot's consumers released it. On the first pass the wait is for the phase
    // before the barrier's first one, which counts as complete.
    mbar_wait(&ring.empty[ring.s], ring.phase ^ 1);
    uint8_t* stage = smem + ring.s * TileT::kBytes;
    uint64_t* full = &ring.full[ring.s];
    mbar_arrive_expect_tx(full, bytes);  // OOB zero-fill still counts full boxes
    const int k0 = kb * TileT::kBK;
    if (no_a) {
    } else if (edge_a) {
      TileT::load_a_edge(map_a, map_a_edge, stage, full, tc.row0, k0, za);
    } else {
      TileT::load_a(map_a, stage, full, tc.row0, k0, za);
    }
    if constexpr (kPair) {
      if (edge_b) TileT::load_b_edge_pair(map_b, map_b_edge, stage, full, tc.col0, k0, zb, rank);
      else TileT::load_b_pair(map_b, stage, full, tc.col0, k0, zb, rank);
    } else {
      if (edge_b) TileT::load_b_edge(map_b, map_b_edge, stage, full, tc.col0, k0, zb);
      else TileT::load_b(map_b, stage, full, tc.col0, k0, zb);
    }
  }
}

}  // namespace sm90
}  // namespace gemmlab
