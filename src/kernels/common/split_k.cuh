// Split-k without atomics into C: "publish, and the last block sums".
//
// When a problem has too few output tiles to fill the GPU, its depth is cut into `splits` pieces
// and each piece is one block. Every block of a tile writes its partial product to a workspace
// (L2-resident at the sizes where splitting pays), then bumps the tile's counter; the block that
// arrives last reads all partials back, adds them in split order (0, 1, ..., splits-1, whichever
// block happens to be last) and runs the normal epilogue, beta * C included. Compared with atomic
// adds into C after a separate beta pass, this
//  - is deterministic: the same inputs give bit-identical results from run to run;
//  - needs no pass over C before the GEMM, and never reads C when beta = 0;
//  - does not depend on C's alignment: 16-byte vector atomics need 16-byte aligned C rows, and
//    with ldc % 4 != 0 the fallback of one atomic per element cost 1025^3 ~15% (25.5 -> 29.5
//    TFLOP/s on H100 with this scheme, with the partial k-tile change of simt/13).
// The counters need no clearing pass: each holds (launch tag << 8) | arrivals, and a value with
// another launch's tag counts as zero arrivals. The launcher draws a fresh 56-bit tag per launch
// (next_split_tag, never 0), so stale workspace contents never match; and the last arriver of a
// slot resets its counter to 0, so a CUDA graph that replays one launch (and its tag) finds the
// counters clear again.
#pragma once

#include <cstdint>

#include "kernels/common/tile_schedule.h"
#include "runtime/split_tags.h"

namespace gemmlab {

// One split-k launch's scratch: the partial of split s of slot i at partials + (i * splits + s) *
// (floats per partial), and one counter per slot (a slot = one output tile or strip block).
struct SplitWorkspace {
  float* partials;
  unsigned long long* counters;
  unsigned long long tag;  // this launch's tag, < 2^56
};


// Call after this group of threads stored its partial (all of them reach it; `bar` synchronizes
// exactly them, `leader` is one of them, `flag` a shared int of this group). Returns true in the
// group that completes the slot; all of the slot's partials are then visible to it (use ld.cg
// loads: L1 is not coherent across SMs). splits <= 255.
template <typename Bar>
__device__ __forceinline__ bool split_arrive_last_group(unsigned long long* counter,
                                                        unsigned long long tag, int splits,
                                                        volatile int* flag, bool leader, Bar bar) {
  __threadfence();  // this thread's partial is visible device-wide before the counter moves
  bar();
  if (leader) {
    unsigned long long seen = *reinterpret_cast<volatile unsigned long long*>(counter), old;
    int arrived;
    while (true) {
      arrived = (seen >> 8) == tag ? static_cast<int>(seen & 0xff) : 0;
      // The last arriver clears the counter (0 is no launch's tag), so the next launch finds it
      // clear even when it carries the same tag: a replayed CUDA graph does.
      const unsigned long long next =
          arrived + 1 == splits ? 0ull : (tag << 8) | static_cast<unsigned long long>(arrived + 1);
      old = atomicCAS(counter, seen, next);
      if (old == seen) break;
      seen = old;
    }
    *flag = arrived + 1 == splits;
  }
  bar();
  const bool last = *flag != 0;
  if (last) __threadfence();  // order the partial reads after the counter read
  return last;
}

// The same for a whole block.
__device__ __forceinline__ bool split_arrive_last(unsigned long long* counter,
                                                  unsigned long long tag, int splits) {
  __shared__ int last;
  return split_arrive_last_group(counter, tag, splits, &last, threadIdx.x == 0,
                                 [] { __syncthreads(); });
}

// Stream-k segments and runs: tile_schedule.h.

// A block's partial accumulators, kN floats per thread (kN % 4 == 0), in a thread-private
// layout: float4 number q of thread tid at part[q * kThreads + tid]. Stores and loads are fully
// coalesced and the block that sums reads back exactly the elements its own threads hold, so
// any accumulator layout (FFMA tiles, wgmma fragments) works unchanged.
// tid: this thread's index in the group of kThreads that owns the partial (the block by default).
template <int kThreads, int kN>
__device__ __forceinline__ void split_publish(float* part, const float (&acc)[kN],
                                              int tid = static_cast<int>(threadIdx.x)) {
  static_assert(kN % 4 == 0, "whole float4s");
  float4* p4 = reinterpret_cast<float4*>(part) + tid;
#pragma unroll
  for (int q = 0; q < kN / 4; ++q)
    __stcg(p4 + q * kThreads,
           make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
}

// acc = partial 0 + partial 1 + ... in split order (deterministic); parts: the slot's first
// partial, the others partial_floats apart. Partial 0 goes straight into acc (dead by then: it was
// published); the others are added 8 float4 at a time, so the loads in flight do not push a
// kernel at its register cap into spills.
template <int kThreads, int kN>
__device__ __forceinline__ void split_sum(const float* parts, int splits, int64_t partial_floats,
                                          float (&acc)[kN], int tid = static_cast<int>(threadIdx.x)) {
  const float4* p4 = reinterpret_cast<const float4*>(parts) + tid;
#pragma unroll
  for (int q = 0; q < kN / 4; ++q) {
    const float4 v = __ldcg(p4 + q * kThreads);
    acc[4 * q] = v.x, acc[4 * q + 1] = v.y, acc[4 * q + 2] = v.z, acc[4 * q + 3] = v.w;
  }
#pragma unroll 1
  for (int s = 1; s < splits; ++s) {
    p4 += partial_floats / 4;
#pragma unroll
    for (int q0 = 0; q0 < kN / 4; q0 += 8) {
      float4 v[8];
#pragma unroll
      for (int q = 0; q < 8; ++q)
        if (q0 + q < kN / 4) v[q] = __ldcg(p4 + (q0 + q) * kThreads);
#pragma unroll
      for (int q = 0; q < 8; ++q)
        if (q0 + q < kN / 4) {
          float* a = &acc[4 * (q0 + q)];
          a[0] += v[q].x, a[1] += v[q].y, a[2] += v[q].z, a[3] += v[q].w;
        }
    }
  }
}

// Publish acc (a group of kThreads threads' accumulators) as partial `index` of the n at parts
// (stride floats apart) and count its arrival; true in the group that completes the slot, with
// acc = the n partials summed in a fixed order. Up to kGroupedSplitsFrom - 1 partials: the last
// arriver sums them all in split order (counters[0]). From there on in two levels
// (tile_schedule.h): the last arriver of each group of kSplitSumGroup consecutive splits
// (counters[1 + g]) sums its group in split order and publishes the sum in the group's first
// slot; the last group (counters[0]) sums the group sums in group order. Deterministic; one
// block reads 8 + n / 8 partials instead of n (fp32 128 x 128 x 8192 in 64 splits: 16 instead
// of 64 partials of 64 KB). counters: split_counters(n) of them; bar/leader/flag as in
// split_arrive_last_group.
template <int kThreads, int kN, typename Bar>
__device__ __forceinline__ bool split_reduce(float* parts, int64_t stride, int index, int n,
                                             unsigned long long* counters, unsigned long long tag,
                                             volatile int* flag, bool leader, Bar bar,
                                             float (&acc)[kN], int tid) {
  split_publish<kThreads>(parts + index * stride, acc, tid);
  if (n < kGroupedSplitsFrom) {
    if (!split_arrive_last_group(counters, tag, n, flag, leader, bar)) return false;
    split_sum<kThreads>(parts, n, stride, acc, tid);
    return true;
  }
  const int g0 = index / kSplitSumGroup * kSplitSumGroup;
  const int members = min_int(kSplitSumGroup, n - g0);
  if (!split_arrive_last_group(counters + 1 + g0 / kSplitSumGroup, tag, members, flag, leader, bar))
    return false;
  split_sum<kThreads>(parts + g0 * stride, members, stride, acc, tid);
  if (members > 1) split_publish<kThreads>(parts + g0 * stride, acc, tid);
  const int groups = ceil_div(n, kSplitSumGroup);
  if (!split_arrive_last_group(counters, tag, groups, flag, leader, bar)) return false;
  split_sum<kThreads>(parts, groups, kSplitSumGroup * stride, acc, tid);
  return true;
}

}  // namespace gemmlab
