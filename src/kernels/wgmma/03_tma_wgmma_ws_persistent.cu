// Ladder step 3 (wgmma, sm_90a): warp-specialized, persistent TMA + wgmma.
//
// Bottleneck attacked: in step 2 the same warps issue the loads, wait for them and run the
// epilogue, so the tensor cores idle at every refill and between tiles. Here a producer warpgroup
// (one thread issues TMA; setmaxnreg gives its registers away: 40) keeps a 4-stage ring of
// 128x256x64 tiles full, and two consumer warpgroups (232 registers each) only wait on mbarriers
// and issue wgmma m64n256k16, releasing each stage once the wgmma that read it has retired. The
// grid is persistent (one CTA per SM) and walks the tiles in a grouped order (bands of 16 tile
// rows) so the A rows and B columns in flight stay in L2; the producer fetches the next tile's
// stages while the consumers store the last one.
// Changed from step 2: warp specialization, setmaxnreg, persistent grouped scheduler, 128x256
// tiles (m64n256 per warpgroup, 128 accumulators per thread). tf32 with an MN-major A loads A
// into registers (conflict-free row order, one block ahead) instead of transposing it, and tf32
// NN runs swapped (C^T = B^T A^T) so B takes that place; partial tiles run last, with m64n8 when
// they hold <= 8 columns and idle warpgroups when rows run out. Edge tiles with <= 8 valid rows
// or columns load only 8 rows (or one chunk) of that operand. The epilogue stages each 64 x 64
// piece of the accumulators in shared memory and writes C as coalesced float4 rows (for the
// swapped tf32 NN transposed on the way), instead of 8-byte (4-byte when transposed) stores.
// Small deep grids (16-bit; 1024 x 1024 x 4096: 32 tiles for 132 SMs) run stream-k: the grid's
// (tile, k-block) sequence is cut into one equal run per CTA, and the CTAs that share a tile sum
// their partials in a fixed order (StreamK below; bf16 1024 x 1024 x 4096 192 -> 274 TFLOP/s).
// Seed: beyond the seeds.
// Measured 2026-11-22, H100 80GB HBM3, gemm-bench NN, same run as cuBLAS (median of 20):
//   4096^3: bf16 748.9 TFLOP/s (99% of cuBLAS 759.1), fp16 722.5 (98% of 738.9),
//           tf32 399.8 (99% of 405.8); tf32 NT 98%, TT 97%, TN 116%; bf16 NT/TN/TT 98-99%.
//   8192^3: bf16 775.4 (99% of 785.5), fp16 738.8 (98% of 750.6), tf32 399.6 (98% of 408.3).
//   4097^3 (operands packed to 128-byte rows inside the call): bf16 475.8 (3.54x cuBLAS 134.5),
//           fp16 468.7 (3.46x of 135.6), tf32 267.4 (2.30x of 116.1).
//   The committed report (docs/results/h100-tensorcore.md, 21:43 UTC the same day): 4096^3 bf16
//   732 (99%), fp16 711 (99%), tf32 393 (99%); 8192^3 bf16 773 (99%), fp16 734 (98%), tf32 397
//   (96%); 4097^3 3.6x, 3.6x, 2.3x. Weak where the 128 x 256 tiles fill the GPU badly (h100-odd:
//   bf16 3000^3 408 vs 620, 288 tiles = 2.2 waves of 132; 5000^3 580 vs 654; 1024 x 1024 x 4096
//   273 vs 448 even with stream-k).
// Tried, measured slower, not kept: a stream-k tail like simt/13's (the last wave and the
// remainder cut into equal k runs per CTA, shared tiles summed through a workspace): bf16 3000^3
// 394 vs 406 TFLOP/s, 2500^3 288 vs 340, 5000^3 556 vs 577 (H100, 2026-11-22). At ~700 TFLOP/s
// the CTAs draw ~8 TB/s from L2, and tail CTAs that no longer walk k together miss it. Stream-k
// over only the remainder after the full waves: 3000^3 408 -> 440, but 2500^3 338 -> 316 and
// 5000^3 580 -> 560, with no rule found that separates them from three points. Nor
// 128 x 128 tiles where they balance the waves better: per tile they run at ~82% of 128 x 256
// (bf16 4096^3 596 vs 722), which more than eats the gain (3000^3 343 vs 406, 5000^3 397 vs 578).
// (Before the staged epilogue and edge loads: 4096^3 bf16 95%, fp16 96%, tf32 94%; 4097^3
// tf32 2.03x.) kCluster = 2 (B multicast) passes the tests but ran at 42% of cuBLAS: parked at 1.
#include <algorithm>
#include <type_traits>
#include <utility>

#include "runtime/device_props.h"
#include "kernels/wgmma/sm90.cuh"
#include "kernels/wgmma/host.h"
#include "kernels/common/split_k.cuh"
#include "runtime/workspace.h"

namespace gemmlab {
namespace {

using namespace sm90;

constexpr int kBM = 128, kBN = 256, kStages = 4;
constexpr int kThreads = 384;    // warpgroup 0: producer; 1 and 2: consumers
constexpr int kGroupRows = 16;   // tile rows per band of the grouped order: a wave of 132 tiles
                                 // covers ~16 x 8 tiles, i.e. ~2048 rows of A and ~2048 columns of B
// Clusters of kCluster CTAs stacked along M run the tiles of one kCluster * 128 x 256 cluster
// tile: they need the same B tile, so each loads 1 / kCluster of it and multicasts that part to
// all of them (L2 -> SM traffic for B divided by kCluster). A stage may then be overwritten by
// any CTA of the cluster, so it is free only once the consumers of every CTA released it.
// kCluster = 2 passes every test, with 66 clusters resident, but ran at 42% of cuBLAS (bf16
// 4096^3 and 8192^3, H100, 2026-11-22): something in the cross-CTA handshake serializes and is
// not yet found, so the kernel runs without clusters (1) until then.
constexpr int kCluster = 1;
constexpr int kCM = kBM * kCluster;  // rows of a cluster tile

template <typename T, bool kAK, bool kBK>
using Tile = StageTile<T, kBM, kBN, kAK, kBK>;

// The epilogue goes through a private shared-memory buffer per consumer warpgroup (the stages
// can't host it: the producer is already filling them for the next tile).

template <typename T, bool kAK, bool kBK>
constexpr int smem_bytes() {
  return kStages * Tile<T, kAK, kBK>::kBytes + 2 * kStagedEpilogueBytes +
         1024 /* alignment slack */ + 2 * kStages * 8;
}

// Tile order: the full tiles first, in grouped order, then the partial ones (the last tile column,
// then the last tile row). Partial tiles of a size like 4097 hold 1 row or 1 column; the edge
// handling below makes them cheap, and putting them last lets them fill the final, partial wave
// instead of costing a whole extra round of full tiles.
// The order runs over cluster tiles (kCM x kBN); m_tiles counts cluster tile rows.
[[maybe_unused]] __device__ __forceinline__ TileCoord tile_of(int linear, int rows, int cols, int m_tiles,
                                             int n_tiles) {
  const int full_m = rows / kCM, full_n = cols / kBN;
  if (linear < full_m * full_n)
    return tile_grouped(linear, kCM, kBN, full_m, full_n, kGroupRows / kCluster);
  int e = linear - full_m * full_n;
  if (n_tiles > full_n) {
    if (e < m_tiles) return {e * kCM, full_n * kBN};
    e -= m_tiles;
  }
  return {full_m * kCM, e * kBN};
}

// Stream-k for small grids: when the tiles cannot keep every SM busy (bf16 1536^3: 72 tiles of
// 128 x 256 for 132 SMs), the grid's (tile, k-block) sequence is cut into one equal run per CTA,
// across tile boundaries. A tile then has one or more contributors (consecutive CTAs); each
// consumer warpgroup publishes its 64 x 256 partial, and the last to arrive sums them all in
// contributor order (deterministic) and stores. Scratch: kMaxContrib partials per warpgroup half
// of a tile, one counter per half (split_k.cuh).
struct StreamK {
  int ctas;   // CTAs sharing the work (0: no stream-k, one tile at a time)
  int iters;  // k-blocks per CTA run
  SplitWorkspace ws;
};
constexpr int kPartialFloats = 64 * kBN;  // one consumer warpgroup's accumulators
constexpr int kMaxContrib = 8;            // contributors per tile at most (planned so)
// Only the 16-bit kernels use it; the tf32 register-A variants have no registers to spare.
template <typename T>
constexpr bool kHasStreamK = sizeof(T) == 2;

// Calls seg(tile, kb_begin, kb_end) for this CTA's work in order.
template <bool kSk, typename Seg>
__device__ __forceinline__ void for_each_segment(int cta, int ctas, int tiles, int num_kb,
                                                 const StreamK& sk, Seg&& seg) {
  if (!kSk || sk.ctas == 0) {
    for (int tile = cta; tile < tiles; tile += ctas) seg(tile, 0, num_kb);
    return;
  }
  const int end = min((cta + 1) * sk.iters, tiles * num_kb);
  for (int it = cta * sk.iters; it < end;) {
    const StreamKSegment g = stream_k_segment(it, end, num_kb);
    seg(g.tile, g.k_begin, g.k_end);
    it += g.k_end - g.k_begin;
  }
}

// kSwapped: the kernel computes C^T (see PreparedOperands) and stores its result transposed.
template <typename T, bool kAK, bool kBK, bool kSwapped>
__global__ void __launch_bounds__(kThreads, 1)
    ws_persistent_kernel(const __grid_constant__ CUtensorMap map_a,
                         const __grid_constant__ CUtensorMap map_b,
                         const __grid_constant__ CUtensorMap map_a_edge,
                         const __grid_constant__ CUtensorMap map_b_edge, Epilogue ep, int k, int rows,
                         int cols, int m_tiles, int n_tiles, StreamK sk) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using TileT = Tile<T, kAK, kBK>;
  // tf32 with an MN-major A: A goes shared memory -> registers -> wgmma (see StageTile).
  constexpr bool kRegisterA = TileT::kTf32 && !kAK;
  extern __shared__ uint8_t smem_raw[];
  // Swizzled tiles must start on 1024-byte boundaries (the swizzle pattern's period).
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  float* epilogue_buf = reinterpret_cast<float*>(smem + kStages * TileT::kBytes);
  uint64_t* full =
      reinterpret_cast<uint64_t*>(smem + kStages * TileT::kBytes + 2 * kStagedEpilogueBytes);
  uint64_t* empty = full + kStages;
  __shared__ int sk_last[2];  // per consumer warpgroup: "arrived last at a shared tile"

  const int wg = threadIdx.x / 128;
  const int num_kb = ceil_div(k, TileT::kBK);
  const int tiles = m_tiles * n_tiles;  // cluster tiles
  // This CTA's 128 rows of a cluster tile.
  const int rank = kCluster > 1 ? static_cast<int>(cluster_ctarank()) : 0;
  const int cluster = blockIdx.x / kCluster, clusters = gridDim.x / kCluster;
  // Releases a stage in every CTA of the cluster (their producers may all write into it).
  auto release = [&](int slot) {
    if constexpr (kCluster == 1) {
      mbar_arrive(&empty[slot]);
    } else {
#pragma unroll
      for (int c = 0; c < kCluster; ++c) mbar_arrive_cluster(&empty[slot], c);
    }
  };

  if (threadIdx.x == 0) {
    prefetch_tensor_map(&map_a);
    prefetch_tensor_map(&map_b);
    prefetch_tensor_map(&map_a_edge);
    prefetch_tensor_map(&map_b_edge);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);   // the producer's arrive_expect_tx (+ the TMA bytes)
      mbar_init(&empty[s], 2 * kCluster);  // one arrive per consumer warpgroup of the cluster
    }
    fence_barrier_init();
  }
  // The barriers of every CTA must be initialized before any multicast or remote arrive.
  if constexpr (kCluster > 1) cluster_sync();
  else __syncthreads();

  if (wg == 0) {
    // ---- producer ----
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      int s = 0;
      uint32_t phase = 0;
      for_each_segment<kHasStreamK<T>>(cluster, clusters, tiles, num_kb, sk, [&](int tile, int kb0,
                                                                                int kb1) {
        TileCoord tc = tile_of(tile, rows, cols, m_tiles, n_tiles);
        tc.row0 += kBM * rank;  // past the end for a CTA without rows: zero-filled, not stored
        const bool edge_a = rows - tc.row0 <= TileT::kEdgeRows;
        const bool edge_b = cols - tc.col0 <= TileT::kEdgeRows;
        const uint32_t bytes = (edge_a ? TileT::kAEdgeBytes : TileT::kABytes) +
                               (edge_b ? TileT::kBEdgeBytes : TileT::kBBytes);
        for (int kb = kb0; kb < kb1; ++kb) {
          // Wait until all consumers of the cluster released this slot. On the first pass the
          // wait is for the phase before the barrier's first one, which counts as complete.
          mbar_wait(&empty[s], phase ^ 1);
          uint8_t* stage = smem + s * TileT::kBytes;
          // OOB zero-fill still counts full boxes; the bytes of B multicast by the other CTAs
          // count here too (and may land before this arrive: the phase still needs it).
          mbar_arrive_expect_tx(&full[s], bytes);
          const int k0 = kb * TileT::kBK;
          if (edge_a) TileT::load_a_edge(&map_a, &map_a_edge, stage, &full[s], tc.row0, k0);
          else TileT::load_a(&map_a, stage, &full[s], tc.row0, k0);
          if (edge_b) TileT::load_b_edge(&map_b, &map_b_edge, stage, &full[s], tc.col0, k0);
          else if constexpr (kCluster == 1)
            TileT::load_b(&map_b, stage, &full[s], tc.col0, k0, 0, kBN, 0);
          else  // this CTA's 1 / kCluster of the columns, to every CTA of the cluster
            TileT::load_b(&map_b, stage, &full[s], tc.col0, k0, rank * (kBN / kCluster),
                          kBN / kCluster, (1u << kCluster) - 1);
          if (++s == kStages) s = 0, phase ^= 1;
        }
      });
    }
  } else {
    // ---- consumers: warpgroup cw owns rows [64 cw, 64 cw + 64) of each 128 x 256 tile ----
    setmaxnreg_inc<232>();
    const int cw = wg - 1;
    const bool signals = threadIdx.x % 128 == 0;  // one arrive per warpgroup
    const uint32_t smem_base = smem_addr(smem);
    float d[kBN / 2];
    int s = 0;
    uint32_t phase = 0;
    for_each_segment<kHasStreamK<T>>(cluster, clusters, tiles, num_kb, sk, [&](int tile, int kb0,
                                                                              int kb1) {
      TileCoord tc = tile_of(tile, rows, cols, m_tiles, n_tiles);
      tc.row0 += kBM * rank;
      // Edge tiles: a warpgroup whose 64 rows are all past the end only keeps the ring moving;
      // a tile with <= 8 valid columns uses m64n8 (d[0..3]; the other accumulators are stale but
      // their columns are past the end, so the epilogue's bounds checks drop them).
      const bool active = tc.row0 + 64 * cw < rows;
      const bool narrow = cols - tc.col0 <= 8;
      int prev = 0;
      auto mainloop = [&](auto narrow_tag) {
        constexpr bool kNarrow = decltype(narrow_tag)::value;
        if constexpr (!kRegisterA) {
          for (int kb = kb0; kb < kb1; ++kb) {
            mbar_wait(&full[s], phase);
            wgmma_fence();
            TileT::template mma<kNarrow>(d, smem_base + s * TileT::kBytes, cw, kb > kb0);
            wgmma_commit();
            // Keep this k-block's wgmmas in flight; the previous block's have retired, so its
            // stage can go back to the producer.
            wgmma_wait<1>();
            if (kb > kb0 && signals) release(prev);
            prev = s;
            if (++s == kStages) s = 0, phase ^= 1;
          }
        } else {
          // The A registers of block kb are read by its wgmmas until they retire, i.e. until
          // the wait<1> of block kb + 1: two register sets alternate (the loop is unrolled by
          // two so that they are indexed at compile time), and fence_operand keeps each set live
          // and unmodified until its wgmmas are known to be done. Block kb + 1's fragment is
          // loaded as soon as block kb - 1 retires, while block kb's wgmmas run, so the
          // shared-memory loads are off the issue path.
          uint32_t a0[TileT::kKSteps * 4], a1[TileT::kKSteps * 4];
          auto load = [&](uint32_t(&a)[TileT::kKSteps * 4]) {
            mbar_wait(&full[s], phase);
            TileT::load_a_fragment(a, smem_base + s * TileT::kBytes, cw);
          };
          auto step = [&](uint32_t(&cur)[TileT::kKSteps * 4],
                          uint32_t(&other)[TileT::kKSteps * 4], int kb) {
            wgmma_fence();
            TileT::template mma_rs<kNarrow>(d, cur, smem_base + s * TileT::kBytes, kb > kb0);
            wgmma_commit();
            wgmma_wait<1>();
            fence_operand(other);
            if (kb > kb0 && signals) release(prev);
            prev = s;
            if (++s == kStages) s = 0, phase ^= 1;
            if (kb + 1 < kb1) load(other);  // same slot/phase the next step will use
          };
          load(a0);
          for (int kb = kb0; kb < kb1; kb += 2) {
            step(a0, a1, kb);
            if (kb + 1 < kb1) step(a1, a0, kb + 1);
          }
          wgmma_wait<0>();
          fence_operand(a0);
          fence_operand(a1);
        }
      };
      if (!active) {
        for (int kb = kb0; kb < kb1; ++kb) {
          mbar_wait(&full[s], phase);
          if (signals) release(s);
          if (++s == kStages) s = 0, phase ^= 1;
        }
        return;
      }
      if (narrow) mainloop(std::true_type{});
      else mainloop(std::false_type{});
      wgmma_wait<0>();
      fence_operand(d);
      if (signals) release(prev);
      if constexpr (kHasStreamK<T>) {
        int first = 0, last = 0;
        if (sk.ctas > 0) stream_k_runs(tile, num_kb, sk.iters, &first, &last);
        if (last > first) {  // shared: publish, the last to arrive sums in order
          const int half = 2 * tile + cw, n = last - first + 1;
          float* parts = sk.ws.partials + static_cast<int64_t>(half) * kMaxContrib * kPartialFloats;
          const int t = threadIdx.x % 128;
          split_publish<128>(parts + (cluster - first) * kPartialFloats, d, t);
          if (!split_arrive_last_group(sk.ws.counters + half, sk.ws.tag, n, &sk_last[cw], t == 0,
                                       [&] { warpgroup_bar(1 + cw); }))
            return;
          split_sum<128>(parts, n, kPartialFloats, d, t);  // in contributor order
        }
      }
      // The rows (within the warpgroup's 64) this thread's accumulators hold.
      const int row_lo = kRegisterA ? TileT::register_a_row(0) : fragment_row(0);
      const int row_hi = kRegisterA ? TileT::register_a_row(1) : fragment_row(1);
      const int row0 = tc.row0 + 64 * cw;
      float* buf = epilogue_buf + cw * (kStagedEpilogueBytes / 4);
      if constexpr (kSwapped) {
        static_assert(kRegisterA, "only tf32 NN is swapped, and it has a register A");
        store_fragment_staged<kBN, true, 4>(ep, d, buf, 1 + cw, row_lo, row_hi, row0, tc.col0);
      } else if constexpr (!kRegisterA) {
        // (tf32 TN/TT, with their two A register sets, would spill in the staged epilogue.)
        store_fragment_staged<kBN, false>(ep, d, buf, 1 + cw, row_lo, row_hi, row0, tc.col0);
      } else {
        store_fragment<kBN>(ep, d, row0 + row_lo, row0 + row_hi, tc.col0);
      }
    });
  }
  // No CTA may exit while another one of its cluster can still multicast into its shared memory
  // or arrive on its barriers.
  if constexpr (kCluster > 1) cluster_sync();
#endif
}

// K-blocks of a problem: each pipeline stage holds 128 bytes of K (StageTile::kBK elements).
int k_blocks_of(const GemmProblem& p) {
  return ceil_div(static_cast<int>(p.k), 128 / input_bytes(p.precision));
}

// Stream-k pays when the SMs it brings in outweigh the partial sums it adds (each shared tile
// writes and reads 128 KB per contributor). Measured (bf16, H100, 2026-11-22, TFLOP/s without ->
// with): 1024 x 1024 x 4096 192 -> 275, 512 x 4096 x 4096 369 -> 414, 4096 x 512 x 4096 366 -> 402,
// but 1024^3 120 -> 92, 1536^3 312 -> 200, 1792^3 436 -> 297. Model fitted to those: the gain
// grows with k (1 - tiles / ctas), the cost with the contributors per tile, ~ctas / tiles + 1.
bool stream_k_pays(int64_t tiles, int64_t k, int ctas) {
  if (tiles >= ctas || tiles <= 0) return false;
  const double fill = static_cast<double>(tiles) / ctas;
  return static_cast<double>(k) * (1.0 - fill) > 400.0 * (1.0 / fill + 1.0);
}

// The stream-k split of `tiles` tiles of num_kb k-blocks over at most max_ctas CTAs (16-bit
// kernels only): {ctas, iters}, or {0, 0} for one tile at a time. Every run spans >= 4 k-blocks
// (the pipeline's depth) and no tile has more than kMaxContrib contributors.
std::pair<int, int> plan_stream_k(bool half_precision, int tiles, int64_t k, int num_kb,
                                  int max_ctas) {
  if (kCluster != 1 || !half_precision || !stream_k_pays(tiles, k, max_ctas)) return {0, 0};
  const int64_t total = static_cast<int64_t>(tiles) * num_kb;
  const int iters = static_cast<int>((total + max_ctas - 1) / max_ctas);
  if (iters < 4 || (num_kb + iters - 1) / iters + 1 > kMaxContrib) return {0, 0};
  return {static_cast<int>((total + iters - 1) / iters), iters};
}

// Calls f(bool_constant<swapped>) for a kernel of a and b's majorness; only tf32 with an
// MN-major (register) A is ever swapped, so only that instantiates the swapped kernel.
template <typename T, bool kAK, typename F>
cudaError_t by_swap(bool swapped, F&& f) {
  if constexpr (std::is_same<T, float>::value && !kAK)
    if (swapped) return f(std::true_type{});
  return f(std::false_type{});
}

LaunchConfig config(const GemmProblem& p) {
  LaunchConfig c;
  const KernelLayout kl = kernel_layout(p, true);
  dispatch<true>(p.precision, kl.a_k_major, kl.b_k_major, [&](auto tag, auto ak, auto bk) {
    using T = typename decltype(tag)::type;
    constexpr bool kAK = decltype(ak)::value, kBK = decltype(bk)::value;
    return by_swap<T, kAK>(kl.swapped, [&](auto sw) {
      c.kernel = reinterpret_cast<const void*>(ws_persistent_kernel<T, kAK, kBK, decltype(sw)::value>);
      c.smem_bytes = smem_bytes<T, kAK, kBK>();
      return cudaSuccess;
    });
  });
  TileGrid tg = make_tile_grid(p, kBM, kBN);
  if (kl.swapped) std::swap(tg.m_tiles, tg.n_tiles);
  const int cluster_tiles = ceil_div(tg.m_tiles, kCluster) * tg.n_tiles;
  const int max_ctas = device_sm_count() / kCluster;
  const bool half = p.precision == Precision::BF16 || p.precision == Precision::FP16;
  const int sk_ctas = plan_stream_k(half, cluster_tiles, p.k, k_blocks_of(p), max_ctas).first;
  c.grid = dim3(static_cast<unsigned>(
      kCluster * (sk_ctas > 0 ? sk_ctas : std::min(cluster_tiles, max_ctas))));
  c.block = dim3(kThreads);
  return c;
}

template <typename T, bool kAK, bool kBK, bool kSwapped>
cudaError_t launch_typed(const GemmProblem& p, const PreparedOperands& ops) {
  using TileT = Tile<T, kAK, kBK>;
  CUtensorMap map_a, map_b, map_a_edge, map_b_edge;
  cudaError_t e = make_tensor_map(&map_a, ops.a, p.precision, kBM);
  if (e == cudaSuccess) e = make_tensor_map(&map_b, ops.b, p.precision, kBN / kCluster);
  if (e == cudaSuccess) e = make_tensor_map(&map_a_edge, ops.a, p.precision, TileT::kEdgeRows);
  if (e == cudaSuccess) e = make_tensor_map(&map_b_edge, ops.b, p.precision, TileT::kEdgeRows);
  if (e != cudaSuccess) return e;
  auto* kern = ws_persistent_kernel<T, kAK, kBK, kSwapped>;
  constexpr int smem = smem_bytes<T, kAK, kBK>();
  e = prepare_function(reinterpret_cast<const void*>(kern), smem);
  if (e != cudaSuccess) return e;
  // The tile grid runs over the kernel's a x b (n x m when swapped), in cluster tiles.
  const int rows = static_cast<int>(ops.a.mn), cols = static_cast<int>(ops.b.mn);
  const int m_tiles = ceil_div(rows, kCM), n_tiles = ceil_div(cols, kBN);
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kCluster, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr, cfg.numAttrs = kCluster > 1 ? 1 : 0;
  cfg.blockDim = dim3(kThreads), cfg.dynamicSmemBytes = smem, cfg.stream = p.stream;
  // Persistent: one CTA per SM, or as many clusters as fit at once (a cluster's CTAs share a
  // GPC), queried once.
  const int max_clusters = device_sm_count() / kCluster;  // per device (cached there)
  const int tiles = m_tiles * n_tiles;
  int ctas = std::min(tiles, max_clusters);
  // Stream-k (see StreamK) where it pays (stream_k_pays) and every run still spans >= 4
  // k-blocks (the pipeline's depth).
  StreamK sk{0, 0, {nullptr, nullptr, 0}};
  const auto [sk_ctas, sk_iters] = plan_stream_k(
      kHasStreamK<T>, tiles, p.k, k_blocks_of(p), max_clusters);
  static_assert(TileT::kBK * sizeof(T) == 128, "k_blocks_of: 128 bytes of K per stage");
  {
    if (sk_ctas > 0) {
      sk.ctas = sk_ctas, sk.iters = sk_iters, ctas = sk_ctas;
      const size_t floats = static_cast<size_t>(tiles) * 2 * kMaxContrib * kPartialFloats;
      void* buf = nullptr;
      if (cudaError_t e2 = workspace_alloc(
              &buf, floats * sizeof(float) + static_cast<size_t>(tiles) * 2 * 8, p.stream);
          e2 != cudaSuccess)
        return e2;
      sk.ws = {static_cast<float*>(buf),
               reinterpret_cast<unsigned long long*>(static_cast<float*>(buf) + floats),
               next_split_tag()};
    }
  }
  cfg.gridDim = dim3(static_cast<unsigned>(kCluster * ctas));
  e = cudaLaunchKernelEx(&cfg, kern, map_a, map_b, map_a_edge, map_b_edge, make_epilogue(p),
                         static_cast<int>(p.k), rows, cols, m_tiles, n_tiles, sk);
  if (sk.ws.partials != nullptr) {
    const cudaError_t ef = workspace_free(sk.ws.partials, p.stream);  // after the kernel
    if (e == cudaSuccess) e = ef;
  }
  return e;
}

cudaError_t launch(const GemmProblem& p) {
  return with_prepared_operands(p, /*tf32_register_a=*/true, [&](const PreparedOperands& ops) {
    return dispatch<true>(p.precision, ops.a.k_major, ops.b.k_major, [&](auto tag, auto ak, auto bk) {
      using T = typename decltype(tag)::type;
      constexpr bool kAK = decltype(ak)::value, kBK = decltype(bk)::value;
      return by_swap<T, kAK>(ops.swapped, [&](auto sw) {
        return launch_typed<T, kAK, kBK, decltype(sw)::value>(p, ops);
      });
    });
  });
}

// `auto` priority: below wgmma/02's (100) for 16-bit problems whose 128 x 256 tiles would keep
// at most half the SMs busy and that are too shallow for stream-k, where the persistent kernel's
// fixed costs are not paid back (H100,
// 2026-11-22, bf16 TFLOP/s, wgmma/02 vs 03: 1024^3 143 vs 119, 1408^3 (66 tiles) 277 vs 255,
// 1024 x 1024 x 4096 200 vs 191; 1536^3 (72 tiles) 281 vs 311, 512 x 4096 x 4096 (64 tiles) 350
// vs 363). tf32 keeps wgmma/03 everywhere (1024^3: 79 vs 69).
int auto_priority(const GemmProblem& p) {
  if (p.precision == Precision::BF16 || p.precision == Precision::FP16) {
    const int64_t tiles = ((p.m + kBM - 1) / kBM) * ((p.n + kBN - 1) / kBN);
    if (2 * tiles <= device_sm_count() &&
        plan_stream_k(true, static_cast<int>(tiles), p.k, k_blocks_of(p), device_sm_count())
                .first == 0)
      return 60;  // still above mma_sync/02 (50)
  }
  return 200;
}

}  // namespace

extern const KernelDesc kWgmmaWarpSpecializedPersistent = {
    "wgmma/03_tma_wgmma_ws_persistent", 3, "wgmma", "beyond the seeds",
    "TMA producer warp + 2 consumer warpgroups (setmaxnreg 40/232), 4-stage mbarrier ring, "
    "128x256x64 tiles, persistent grouped scheduler, stream-k for small deep grids",
    kBF16 | kFP16 | kTF32, 90, 200, nullptr, launch, config, auto_priority};

}  // namespace gemmlab
