// The consumers' side of the warp-specialized wgmma kernels (wgmma/03 and the strips kernel of
// wgmma/decode and wgmma/small), written once: the mbarrier ring of pipeline stages as each role
// walks it, and the main loops that wait for a stage, issue its wgmmas and hand the stage before
// back to the producer once the wgmmas that read it have retired.
#pragma once

#include "kernels/wgmma/stage_tile.cuh"

namespace gemmlab {
namespace sm90 {

// The mbarrier ring as each role walks it: slot s, phase parity, advanced together.
template <int kStages>
struct Ring {
  uint64_t* full;   // producer -> consumers: stage s holds its bytes
  uint64_t* empty;  // consumers -> producer: stage s may be overwritten
  int s = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void advance() {
    if (++s == kStages) s = 0, phase ^= 1;
  }
  // A consumer warpgroup is done with stage `slot`: its producer may overwrite it.
  __device__ __forceinline__ void release(int slot) const { mbar_arrive(&empty[slot]); }
  // (one thread, before the CTA's first barrier) full: the producer's arrive_expect_tx and the
  // TMA bytes; empty: one arrive per warpgroup that reads a stage.
  __device__ __forceinline__ void init(int readers) const {
    for (int i = 0; i < kStages; ++i) {
      mbar_init(&full[i], 1);
      mbar_init(&empty[i], readers);
    }
  }
};

// The ring of a CTA in a pair (wgmma/03's 2 x 1 clusters): the other CTA's producer writes into
// this CTA's stages too, so a stage is released on both CTAs' empty barriers (peer_empty: the
// other CTA's, as a shared::cluster address; each is initialized for both CTAs' readers).
template <int kStages>
struct PairRing : Ring<kStages> {
  uint32_t peer_empty = 0;
  __device__ __forceinline__ void release(int slot) const {
    mbar_arrive(&this->empty[slot]);
    mbar_arrive_cluster(peer_empty + 8 * slot);
  }
};

// The loops below run k-blocks [kb0, kb1) (kb1 > kb0) of one tile into d; signals: this thread
// arrives on the ring's "empty" barriers for its warpgroup; *prev: the slot of the last block,
// whose release is left to the caller (after its wgmma_wait<0>).
// Consumer main loop, A and B from shared memory: keep each k-block's wgmmas in flight until the
// next block's are issued; the previous block's have retired then, so its stage goes back.
// side(): run after the block's commit, while its wgmmas do.
template <class TileT, bool kNarrow, class RingT, class Side>
__device__ __forceinline__ void consume_ss_step(float (&d)[TileT::kCols / 2], RingT& ring,
                                                uint32_t smem_base, int cw, bool signals,
                                                bool first, int* prev, Side&& side) {
  mbar_wait(&ring.full[ring.s], ring.phase);
  wgmma_fence();
  TileT::template mma<kNarrow>(d, smem_base + ring.s * TileT::kBytes, cw, !first);
  wgmma_commit();
  side();
  wgmma_wait<1>();
  if (!first && signals) ring.release(*prev);
  *prev = ring.s;
  ring.advance();
}
template <class TileT, bool kNarrow, class RingT>
__device__ __forceinline__ void consume_ss(float (&d)[TileT::kCols / 2], RingT& ring,
                                           uint32_t smem_base, int cw, bool signals, int kb0,
                                           int kb1, int* prev) {
  for (int kb = kb0; kb < kb1; ++kb)
    consume_ss_step<TileT, kNarrow>(d, ring, smem_base, cw, signals, kb == kb0, prev, [] {});
}
// The same with side(i) after the commit of each of the tile's first kSide k-blocks (the caller
// makes sure there are that many: no wgmma sits under a branch), e.g. the last tile's deferred
// stores (deferred_store.cuh).
template <class TileT, int kSide, class RingT, class Side>
__device__ __forceinline__ void consume_ss_with(float (&d)[TileT::kCols / 2], RingT& ring,
                                                uint32_t smem_base, int cw, bool signals, int kb0,
                                                int kb1, int* prev, Side&& side) {
#pragma unroll
  for (int i = 0; i < kSide; ++i)
    consume_ss_step<TileT, false>(d, ring, smem_base, cw, signals, i == 0, prev,
                                  [&] { side(i); });
  for (int kb = kb0 + kSide; kb < kb1; ++kb)
    consume_ss_step<TileT, false>(d, ring, smem_base, cw, signals, false, prev, [] {});
}

// Consumer main loop with A from registers (tf32, MN-major A). The A registers of block kb are
// read by its wgmmas until they retire, i.e. until the wait<1> of block kb + 1: two register sets
// alternate (the loop is unrolled by two so that they are indexed at compile time), and
// fence_operand keeps each set live and unmodified until its wgmmas are known to be done. Block
// kb + 1's fragment is loaded while block kb's wgmmas run.
template <class TileT, bool kNarrow, class RingT>
__device__ __forceinline__ void consume_rs_step(float (&d)[TileT::kCols / 2],
                                                uint32_t (&cur)[TileT::kKSteps * 4],
                                                uint32_t (&other)[TileT::kKSteps * 4], RingT& ring,
                                                uint32_t smem_base, int cw, bool signals, int kb,
                                                int kb0, int kb1, int* prev) {
  wgmma_fence();
  TileT::template mma_rs<kNarrow>(d, cur, smem_base + ring.s * TileT::kBytes, kb > kb0);
  wgmma_commit();
  wgmma_wait<1>();
  fence_operand(other);
  if (kb > kb0 && signals) ring.release(*prev);
  *prev = ring.s;
  ring.advance();
  if (kb + 1 < kb1) {  // the slot and phase the next step will use
    mbar_wait(&ring.full[ring.s], ring.phase);
    TileT::load_a_fragment(other, smem_base + ring.s * TileT::kBytes, cw);
  }
}
template <class TileT, bool kNarrow, class RingT>
__device__ __forceinline__ void consume_rs(float (&d)[TileT::kCols / 2], RingT& ring,
                                           uint32_t smem_base, int cw, bool signals, int kb0,
                                           int kb1, int* prev) {
  uint32_t a0[TileT::kKSteps * 4], a1[TileT::kKSteps * 4];
  mbar_wait(&ring.full[ring.s], ring.phase);
  TileT::load_a_fragment(a0, smem_base + ring.s * TileT::kBytes, cw);
  for (int kb = kb0; kb < kb1; kb += 2) {
    consume_rs_step<TileT, kNarrow>(d, a0, a1, ring, smem_base, cw, signals, kb, kb0, kb1, prev);
    if (kb + 1 < kb1)
      consume_rs_step<TileT, kNarrow>(d, a1, a0, ring, smem_base, cw, signals, kb + 1, kb0, kb1,
                                      prev);
  }
  wgmma_wait<0>();
  fence_operand(a0);
  fence_operand(a1);
}

template <class TileT, bool kNarrow, class RingT>
__device__ __forceinline__ void consume(float (&d)[TileT::kCols / 2], RingT& ring,
                                        uint32_t smem_base, int cw, bool signals, int kb0, int kb1,
                                        int* prev) {
  if constexpr (TileT::kTf32 && !TileT::kAK)
    consume_rs<TileT, kNarrow>(d, ring, smem_base, cw, signals, kb0, kb1, prev);
  else
    consume_ss<TileT, kNarrow>(d, ring, smem_base, cw, signals, kb0, kb1, prev);
}

// A warpgroup whose 64 rows are all past the end only keeps the ring moving.
template <class RingT>
__device__ __forceinline__ void skip(RingT& ring, bool signals, int kb0, int kb1) {
  for (int kb = kb0; kb < kb1; ++kb, ring.advance()) {
    mbar_wait(&ring.full[ring.s], ring.phase);
    if (signals) ring.release(ring.s);
  }
}

}  // namespace sm90
}  // namespace gemmlab
