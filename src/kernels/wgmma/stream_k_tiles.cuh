// wgmma/03's walk over its work: a tile at a time, or a stream-k run cut at tile boundaries, and
// the sum of a tile that several CTAs' runs share.
#pragma once

#include "kernels/common/split_k.cuh"
#include "kernels/common/tile_schedule.h"
#include "kernels/wgmma/epilogue.cuh"
#include "kernels/wgmma/plan.h"

namespace gemmlab {
namespace sm90 {

using wgmma_plan::kBN;
using wgmma_plan::kMaxContrib;
constexpr int kPartialFloats = 64 * kBN;  // one consumer warpgroup's accumulators

// Calls seg(tile, kb_begin, kb_end) for this CTA's work in order: one tile at a time (the first
// is cta: blockIdx.x, or the pair's index; then next(tile)), or its stream-k run cut at tile
// boundaries. One call site: the consumers' body is inlined into seg (a second doubles the code).
template <bool kSk, typename Next, typename Seg>
__device__ __forceinline__ void for_each_segment(int cta, int tiles, int num_kb, const StreamK& sk,
                                                 Next&& next, Seg&& seg) {
  const bool sk_on = kSk && sk.ctas != 0;
  const int end = sk_on ? min((cta + 1) * sk.iters, tiles * num_kb) : tiles;
  for (int it = sk_on ? cta * sk.iters : cta; it < end;) {
    int tile = it, kb0 = 0, kb1 = num_kb;
    if (sk_on) {
      const StreamKSegment g = stream_k_segment(it, end, num_kb);
      tile = g.tile, kb0 = g.k_begin, kb1 = g.k_end;
      it += kb1 - kb0;
    } else {
      it = next(it);
    }
    seg(tile, kb0, kb1);
  }
}

// Stream-k: a tile shared by several CTAs. Each consumer warpgroup publishes its 64 x 256 partial
// and the last to arrive sums them in contributor order (deterministic); false in the others.
// live: this thread's rows are inside C (else it publishes and sums nothing, but arrives).
__device__ __forceinline__ bool reduce_shared_tile(float (&d)[kBN / 2], const StreamK& sk,
                                                   const SplitWorkspace& ws, int tile, int cw,
                                                   volatile int* flag, bool live) {
  int first = 0, last = 0;
  stream_k_runs(tile, sk.kt, sk.iters, &first, &last);
  if (last == first) return true;
  const int half = 2 * tile + cw, n = last - first + 1;
  float* parts = ws.partials + static_cast<int64_t>(half) * kMaxContrib * kPartialFloats;
  const int t = threadIdx.x % 128;
  if (live) split_publish<128>(parts + (static_cast<int>(blockIdx.x) - first) * kPartialFloats, d, t);
  if (!split_arrive_last_group(ws.counters + half, ws.tag, n, flag, t == 0,
                               [&] { warpgroup_bar(1 + cw); }))
    return false;
  if (live) split_sum<128>(parts, n, kPartialFloats, d, t);  // in contributor order
  return true;
}

}  // namespace sm90
}  // namespace gemmlab
