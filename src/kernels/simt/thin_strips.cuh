// Thin edge strips of C, computed by extra blocks appended to a tiled FP32 kernel's grid.
//
// Why: with BM x BN tiles, a problem like 4097^3 has 4096 / BM x 4096 / BN full tiles plus a last
// tile row that holds 1 row of C and a last tile column that holds 1 column. Each of those edge
// tiles still streams a whole A and B panel through the tile kernel and runs most of its K loop,
// so the 1-row / 1-column fringe costs like a wave of full tiles. Here the tile kernel covers only
// the "main" region [0, m_main) x [0, n_main) (m_main = m - m % BM when the remainder is thin,
// else m; n_main likewise), and the fringe is two strips of at most kThin rows or columns:
//   right strip:  rows [0, m)      x cols [n_main, n)   (includes the corner)
//   bottom strip: rows [m_main, m) x cols [0, n_main)
// Each strip is a GEMV-like product: a "long" operand (op(A) rows for the right strip, op(B)
// columns for the bottom one) against <= kThin "thin" vectors. One strip block takes kL entries of
// the long side over the whole depth (no split, no atomics: beta is applied once, results are
// deterministic) and streams them through a kStages-deep cp.async pipeline; the work is memory
// bound, so the point is to keep many bytes in flight per SM. The blocks come after the tile
// blocks in the grid, so they run on the SMs the tile kernel's last partial wave leaves idle.
// Small problems whose tile blocks already fill (nearly) every SM (1025^3: 128 split-k blocks on
// 132 SMs) leave no such room, so there the strips are split along k as well (Plan::splits): the
// few idle SMs take pieces during the tile phase and the rest spread over all SMs right after it.
// Split strip pieces are summed like split tiles (split_k.cuh): deterministic, beta applied once.
#pragma once

#include "kernels/common/cp_async.cuh"
#include "kernels/common/gemm_common.cuh"
#include "kernels/common/split_k.cuh"
#include "kernels/simt/strips_plan.h"

namespace gemmlab {
namespace strips {

// op(X) element (l, k) where l runs along the long / thin side: stored with k contiguous
// (x[l * ld + k]) or with l contiguous (x[k * ld + l]).
__device__ __forceinline__ const float* elem(const float* x, int ld, bool k_contig, int l, int k) {
  return k_contig ? x + static_cast<int64_t>(l) * ld + k : x + static_cast<int64_t>(k) * ld + l;
}

// Strip block `idx` (0-based among the strip blocks). smem: kSmemBytes, 16-byte aligned.
// ep holds the full m, n. kAT / kBT: op(A) / op(B) transposed.
template <bool kAT, bool kBT>
__device__ __forceinline__ void strip_block(float* smem, const float* A, int lda, const float* B,
                                            int ldb, const Epilogue& ep, int k, const Plan& plan,
                                            int idx, const SplitWorkspace& ws) {
  const int split = idx % plan.splits;
  idx /= plan.splits;
  const int k_begin = split * plan.k_per_split;
  const int k_end = min(k, k_begin + plan.k_per_split);
  const bool right = idx < plan.right_blocks;
  // Right strip: long = rows of op(A) (k contiguous when A is not transposed), thin = columns
  // n_main.. of op(B) (k contiguous when B is transposed). Bottom strip: the other way round.
  const float* lp = right ? A : B;
  const int lld = right ? lda : ldb;
  const bool l_kc = right ? !kAT : kBT;
  const int l0 = (right ? idx : idx - plan.right_blocks) * kL;
  const int l_count = right ? ep.m : plan.n_main;
  const float* tp = right ? B : A;
  const int tld = right ? ldb : lda;
  const bool t_kc = right ? kBT : !kAT;
  const int t0 = right ? plan.n_main : plan.m_main;
  const int t_count = (right ? ep.n : ep.m) - t0;

  // Long tile element e = tid + 256 i of a stage. Consecutive lanes take consecutive addresses
  // of the contiguous direction (coalesced): k contiguous: k = tid % 32, l = tid / 32 + 8 i;
  // l contiguous: l = tid % 128, k = tid / 128 + 2 i. So one base pointer and a stride per i.
  const int tid = threadIdx.x;
  const int l_first = l_kc ? tid / kKT : tid % kL, k_first = l_kc ? tid % kKT : tid / kL;
  const int dl = l_kc ? 256 / kKT : 0, dk = l_kc ? 0 : 256 / kL;  // per i
  // Base pointers clamped into the matrix (32-bit index math): a thread whose first element is
  // past the end has all its later ones (larger l or k) past the end too, and never reads.
  const float* lbase =
      elem(lp, lld, l_kc, min(l0 + l_first, l_count - 1), min(k_begin + k_first, k - 1));
  const int g_step = l_kc ? dl * lld : dk * lld;         // global elements per i
  const int s_first = k_first * kLdL + l_first, s_step = dk * kLdL + dl;
  const int t_first = tid / kKT, tk = tid % kKT;  // thin: thread = (t, k), 8 x 32
  const float* tbase =
      elem(tp, tld, t_kc, t0 + min(t_first, t_count - 1), min(k_begin + tk, k - 1));
  auto load_stage = [&](int kt, float* st) {
    const int dk0 = kt * kKT, k0 = k_begin + dk0;  // this stage's first k
    const bool t_ok = t_first < t_count && k0 + tk < k_end;
    cp_async_4(st + t_first * kKT + tk, t_ok ? tbase + (t_kc ? dk0 : dk0 * tld) : tp, t_ok);
    float* Ls = st + kThin * kKT;
    const float* g = lbase + (l_kc ? dk0 : dk0 * lld);
#pragma unroll 4  // not fully: the tile kernel this runs in is at the 128-register cap
    for (int i = 0; i < kKT * kL / 256; ++i) {
      const bool ok = l0 + l_first + i * dl < l_count && k0 + k_first + i * dk < k_end;
      cp_async_4(Ls + s_first + i * s_step, ok ? g + i * g_step : lp, ok);
    }
  };

  // Thread = (l, half of the stage's depth); acc[t] = partial dot of long entry l with thin t.
  const int l = tid % kL, kh = tid / kL;
  float acc[kThin];
#pragma unroll
  for (int t = 0; t < kThin; ++t) acc[t] = 0.f;

  const int k_tiles = ceil_div(k_end - k_begin, kKT);
#pragma unroll 1
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_stage(s, smem + s * kStageFloats);
    cp_async_commit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();  // same protocol as the tile kernels: stage kt landed and
    __syncthreads();               // everyone finished reading stage kt - 1
    const int pf = kt + kStages - 1;
    if (pf < k_tiles) load_stage(pf, smem + (pf % kStages) * kStageFloats);
    cp_async_commit();
    const float* Ts = smem + (kt % kStages) * kStageFloats;
    const float* Ls = Ts + kThin * kKT;
#pragma unroll
    for (int q = 0; q < kKT / 2; q += 4) {
      const int kk = kh * (kKT / 2) + q;
      float lv[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) lv[j] = Ls[(kk + j) * kLdL + l];
#pragma unroll
      for (int t = 0; t < kThin; ++t) {  // warp-uniform address: a broadcast
        const float4 tv = *reinterpret_cast<const float4*>(Ts + t * kKT + kk);
        acc[t] = fmaf(tv.x, lv[0], acc[t]);
        acc[t] = fmaf(tv.y, lv[1], acc[t]);
        acc[t] = fmaf(tv.z, lv[2], acc[t]);
        acc[t] = fmaf(tv.w, lv[3], acc[t]);
      }
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // all reads of the stages done: reuse stage 0 to add the two depth halves
  if (kh == 1)
#pragma unroll
    for (int t = 0; t < kThin; ++t) smem[t * kL + l] = acc[t];
  __syncthreads();
  if (kh == 0)
#pragma unroll
    for (int t = 0; t < kThin; ++t) acc[t] += smem[t * kL + l];
  if (plan.splits > 1) {  // split_k.cuh: publish; the last piece of this block sums in order
    // The kL threads with kh == 0 (threadIdx.x = l) hold the results: they publish and sum.
    float* parts = ws.partials + static_cast<int64_t>(idx) * plan.splits * kPartialFloats;
    if (kh == 0) split_publish<kL>(parts + split * kPartialFloats, acc);
    if (!split_arrive_last(ws.counters + idx, ws.tag, plan.splits)) return;
    if (kh == 0) split_sum<kL>(parts, plan.splits, kPartialFloats, acc);
  }
  if (kh == 1 || l0 + l >= l_count) return;
#pragma unroll
  for (int t = 0; t < kThin; ++t) {
    if (t >= t_count) break;
    // Bottom: l0 + l < n_main, the corner belongs to the right strip.
    const int r = right ? l0 + l : t0 + t, c = right ? t0 + t : l0 + l;
    ep.store(r, c, acc[t]);
  }
}

}  // namespace strips
}  // namespace gemmlab
