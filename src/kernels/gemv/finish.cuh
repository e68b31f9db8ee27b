// The end of a gemv block, shared by the gemv kernels: the block's rows x cols results, summed
// over its warps into shared memory, go through the epilogue, or (the depth split over blocks)
// are published as this split's partial; the column strip's last block then sums the splits in
// order (split_k.cuh): deterministic, beta * C applied once.
#pragma once

#include "kernels/common/gemm_common.cuh"
#include "kernels/common/split_k.cuh"

namespace gemmlab {

// buf: rows x cols floats, [row][col], for columns col0.. of C. Every thread of the block calls
// it; kThreads is the block size. The column strip `tile` has `splits` contributors (this block is
// number `split`); its partials start at partial number tile * stride (stride >= splits).
// swapped: the kernel computes C^T (ep's m and n are C's n and m; its pointers and leading
// dimensions C's), so element (row, col) of the block is C's (col, row).
template <int kThreads>
__device__ __forceinline__ void gemv_finish(const float* buf, int rows, int cols,
                                            const Epilogue& ep, const SplitWorkspace& ws,
                                            int splits, int tile, int split, int col0,
                                            int stride, bool swapped = false) {
  const int count = rows * cols;
  if (splits > 1) {
    float* part = ws.partials + (static_cast<int64_t>(tile) * stride + split) * count;
    for (int i = threadIdx.x; i < count; i += kThreads) __stcg(part + i, buf[i]);
    if (!split_arrive_last(ws.counters + tile, ws.tag, splits)) return;
  }
  for (int i = threadIdx.x; i < count; i += kThreads) {
    float v = buf[i];
    if (splits > 1) {
      const float* p = ws.partials + static_cast<int64_t>(tile) * stride * count + i;
      v = __ldcg(p);
      for (int s = 1; s < splits; ++s) v += __ldcg(p + static_cast<int64_t>(s) * count);
    }
    if (!swapped) {
      ep.store<true>(i / cols, col0 + i % cols, v);
    } else {
      Epilogue c = ep;  // C's own extents
      c.m = ep.n, c.n = ep.m;
      c.store<true>(col0 + i % cols, i / cols, v);
    }
  }
}

}  // namespace gemmlab
