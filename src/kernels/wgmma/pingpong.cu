// wgmma/pingpong: 16-bit GEMMs whose epilogue costs (a 16-bit D, bias, activation, short K,
// batches), on Hopper tensor cores, with the epilogue of one tile run under the main loop of the
// next.
//
// Bottleneck attacked: in wgmma/03 both consumer warpgroups share each 128 x 256 tile, so they
// finish its main loop together and store it together while the tensor cores idle: ~3,800
// cycles a tile with a bf16 D, ~8,200 with bias + GELU, against ~66,000 for the main loop at
// 4096^3, and a third of the tile or more where K is 512-1024 (batches of attention-sized
// GEMMs). Compiled without its store, wgmma/03 ran faster than cuBLASLt (docs/history.md: the
// shared epilogue).
// What changed from wgmma/03: each consumer warpgroup owns whole 128 x 128 tiles (two m64n128
// wgmmas per k-step, 128 accumulators per thread as before), the CTA's tiles alternating between
// the two. The producer fills one ring in tile order, so the warpgroups' main loops take turns
// on the tensor cores, and while one runs its main loop the other stores its last tile. A turn
// barrier per warpgroup orders them: a warpgroup starts waiting for its tile's stages only once
// the other has received all of its own, so no warpgroup waits on a slot a whole ring lap ahead
// of the producer (an mbarrier's parity names only two phases). The price: 128 x 128 tiles read
// a third more operand bytes from L2 per flop than 128 x 256 ones (ncu at 4096^3: L2 84% busy
// against 68%), and its two m64n128 wgmmas per k-step are slower than wgmma/03's one m64n256
// (2-3% in NN at the same tiles: docs/history.md, wgmma/03), so where K is long it loses; `auto`
// takes it for short K over many tiles (wgmma_plan::pingpong_pays). A plain fp32 D goes out
// through TMA as well. 6 stages of 32 KB.
// No stream-k (many tiles is where it pays), no tf32 (wgmma/03's register-A paths).
// Seed: beyond the seeds (issue: framework epilogues). CUTLASS calls this schedule "ping-pong".
// Measured (H100 SXM, bf16, fp32 D, cuBLAS in the same run, 2026-11-27 10:43 UTC,
// results/h100-epilogue): 16 x 1024^3 573 TFLOP/s (102% of cublasGemmStridedBatchedEx; wgmma/03
// 527, 94%), 4096 x 4096 x 512 439 (105%; 397), 8192 x 8192 x 1024 NT 641 (110%; 570).
// History (CTA pairs with B multicast, the measured map of where it wins): docs/history.md.
#include <algorithm>
#include <type_traits>

#include "kernels/common/gemm_common.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/wgmma/host.h"
#include "kernels/wgmma/persistent.cuh"
#include "kernels/wgmma/plan.h"
#include "kernels/wgmma/sm90.cuh"
#include "runtime/device_props.h"
#include "runtime/reserve_sms.h"

namespace gemmlab {
namespace {

using namespace sm90;

constexpr int kBM = 128, kBN = 128;  // one consumer warpgroup's tile
constexpr int kStages = 6;
constexpr int kThreads = 384;  // warpgroup 0: producer; 1 and 2: consumers, a tile each in turn

template <typename T, bool kAK, bool kBK>
using Tile = StageTile<T, kBM, kBN, kAK, kBK>;

template <typename T, bool kAK, bool kBK>
constexpr int smem_bytes() {
  return persistent_smem_bytes(kStages * Tile<T, kAK, kBK>::kBytes, 2 * kStages + 2);
}

// A warpgroup's main loop over one tile: both 64-row halves of A against the stage's 128 columns
// of B, two m64n128 wgmmas per k-step (every wgmma of the kernel on the same two accumulator
// arrays: ptxas serializes wgmmas on parts of one register group, docs/history.md). Rows past the
// end are computed from zero-filled or stale rows and dropped by the epilogue. *prev: the slot
// of the last block, released by the caller after its wgmma_wait<0>.
template <class TileT, bool kNarrow, class RingT>
__device__ __forceinline__ void consume_tile(float (&d0)[kBN / 2], float (&d1)[kBN / 2],
                                             RingT& ring, uint32_t smem_base, bool signals,
                                             int num_kb, int* prev) {
  for (int kb = 0; kb < num_kb; ++kb, ring.advance()) {
    mbar_wait(&ring.full[ring.s], ring.phase);
    wgmma_fence();
    const uint32_t stage = smem_base + ring.s * TileT::kBytes;
    TileT::template mma<kNarrow>(d0, stage, 0, kb > 0);
    TileT::template mma<kNarrow>(d1, stage, 1, kb > 0);
    wgmma_commit();
    wgmma_wait<1>();
    if (kb > 0 && signals) mbar_arrive(&ring.empty[*prev]);
    *prev = ring.s;
  }
}

template <typename T, bool kAK, bool kBK, int kEpi>
__global__ void __launch_bounds__(kThreads, 1)
    pingpong_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_a_edge,
                    const __grid_constant__ CUtensorMap map_b_edge,
                    const __grid_constant__ CUtensorMap map_d, Epilogue ep, int k, int rows,
                    int cols, wgmma_plan::TileOrder order, Batch batch) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using TileT = Tile<T, kAK, kBK>;
  extern __shared__ uint8_t smem_raw[];
  const PersistentSmem sm(smem_raw, kStages * TileT::kBytes);
  uint8_t* smem = sm.ring;
  Ring<kStages> ring{sm.bars, sm.bars + kStages};
  uint64_t* turn = sm.bars + 2 * kStages;  // turn[c]: warpgroup c may start its next main loop

  const int wg = threadIdx.x / 128;
  const int num_kb = ceil_div(k, TileT::kBK);
  const TileWalk walk(rows, cols, kBM, kBN, batch.count, order);
  const int tiles = walk.tiles;
  if (threadIdx.x == 0) {
    prefetch_maps(&map_a, &map_b, &map_a_edge, &map_b_edge, kEpi == kEpiTma ? &map_d : nullptr);
    ring.init(1);  // the one warpgroup that reads it
    mbar_init(&turn[0], 1);
    mbar_init(&turn[1], 1);
    fence_barrier_init();
  }
  __syncthreads();

  const int stride = static_cast<int>(gridDim.x);
  if (wg == 0) {  // ---- producer: every tile of the CTA, in order ----
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0)
      for (int tile = blockIdx.x; tile < tiles; tile += stride)
        produce<TileT>(&map_a, &map_b, &map_a_edge, &map_b_edge, smem, ring, walk.at(tile), batch,
                       rows, cols, 0, num_kb);
    return;
  }
  // ---- consumers: warpgroup cw takes the CTA's tiles j = cw, cw + 2, ... ----
  setmaxnreg_inc<232>();
  const int cw = wg - 1;
  const bool signals = threadIdx.x % 128 == 0;
  const uint32_t smem_base = smem_addr(smem);
  float d0[kBN / 2], d1[kBN / 2];
  int j = cw;
  for (int tile = static_cast<int>(blockIdx.x) + cw * stride; tile < tiles;
       tile += 2 * stride, j += 2) {
    const BatchTile bt = walk.at(tile);
    const TileCoord tc = bt.tc;
    uint32_t bias_word = 0;
    if constexpr (kEpi == kEpiTma) bias_word = load_bias_word(ep, tc.col0);
    // The CTA's j-th tile starts at stage j * num_kb of the ring's sequence.
    const int64_t pos = static_cast<int64_t>(j) * num_kb;
    ring.s = static_cast<int>(pos % kStages);
    ring.phase = static_cast<uint32_t>((pos / kStages) & 1);
    // Tile j - 1 (the other warpgroup's) has received all its stages: the slots of tile j are
    // at most one lap ahead of the producer. Completion (j - 2 + cw) / 2 of turn[cw].
    if (j > 0) mbar_wait(&turn[cw], static_cast<uint32_t>(((j - 2 + cw) / 2) & 1));
    int prev = 0;
    if (cols - tc.col0 <= 8) consume_tile<TileT, true>(d0, d1, ring, smem_base, signals, num_kb, &prev);
    else consume_tile<TileT, false>(d0, d1, ring, smem_base, signals, num_kb, &prev);
    if (signals) mbar_arrive(&turn[cw ^ 1]);  // the other warpgroup's turn
    wgmma_wait<0>();
    fence_operand(d0);
    fence_operand(d1);
    if (signals) mbar_arrive(&ring.empty[prev]);
    // The epilogue, under the other warpgroup's main loop.
    float* buf = sm.epilogue_of(cw);
    uint32_t* bias_smem = sm.bias_of(cw);
    // (TMA stores take the batch entry as the map's third coordinate, the others a moved D.)
    const Epilogue e = kEpi == kEpiTma ? ep : ep.entry(bt.entry, batch.stride_c, batch.stride_d);
    store_tile<TileT, false, kEpi>(e, d0, buf, cw, tc.row0, tc.col0, bt.entry, &map_d, bias_smem,
                                   bias_word);
    if (tc.row0 + 64 < rows)  // (the bias block already holds this tile's words)
      store_tile<TileT, false, kEpi>(e, d1, buf, cw, tc.row0 + 64, tc.col0, bt.entry, &map_d,
                                     bias_smem, bias_word, false);
  }
  // Each warp's last TMA stores (its lane 0 issued them) are done before the CTA exits.
  if constexpr (kEpi == kEpiTma) if (threadIdx.x % 32 == 0) bulk_wait_all<0>();
#endif
}

// Calls f(integral_constant<int, kEpi>) for the problem's epilogue instance (EpiKind). A plain
// fp32 D goes out through TMA too: here the store runs under the other warpgroup's main loop,
// so what counts is the consumers' instructions, not the store's latency.
template <typename F>
cudaError_t by_epilogue(const GemmProblem& p, F&& f) {
  if (tma_storable(p, /*plain_f32=*/true)) return f(std::integral_constant<int, kEpiTma>{});
  if (plain_epilogue(p)) return f(std::integral_constant<int, kEpiPlain>{});
  return f(std::integral_constant<int, kEpiGeneral>{});
}

// Every partial tile costs a whole one here (both halves, all 128 columns): the tiles are walked
// in the grouped order over the extents rounded up to whole tiles.
wgmma_plan::TileOrder order_of(int64_t rows, int64_t cols) {
  return {ceil_div(static_cast<int>(rows), kBM) * kBM, ceil_div(static_cast<int>(cols), kBN) * kBN};
}

// CTAs of the grid: one per tile, up to one per SM.
int ctas_of(const GemmProblem& p) {
  const int64_t tiles = ((p.m + kBM - 1) / kBM) * ((p.n + kBN - 1) / kBN) * p.batch;
  return static_cast<int>(std::min<int64_t>(tiles, device_sm_count()));
}

template <typename F>
cudaError_t with_instance(const GemmProblem& p, bool a_k_major, bool b_k_major, F&& f) {
  return dispatch(p.precision, a_k_major, b_k_major, [&](auto tag, auto ak, auto bk) {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) == 4) {
      return cudaErrorInvalidValue;  // 16-bit only (the registry's dtypes say so)
    } else {
      return by_epilogue(p, [&](auto epi) { return f(TypeTag<T>{}, ak, bk, epi); });
    }
  });
}

LaunchConfig config(const GemmProblem& p) {
  LaunchConfig c;
  const KernelLayout kl = kernel_layout(p, Tf32Mn::None);
  with_instance(p, kl.a_k_major, kl.b_k_major, [&](auto tag, auto ak, auto bk, auto epi) {
    using T = typename decltype(tag)::type;
    constexpr bool kAK = decltype(ak)::value, kBK = decltype(bk)::value;
    c.kernel = reinterpret_cast<const void*>(pingpong_kernel<T, kAK, kBK, decltype(epi)::value>);
    c.smem_bytes = smem_bytes<T, kAK, kBK>();
    return cudaSuccess;
  });
  c.grid = dim3(static_cast<unsigned>(ctas_of(p)));
  c.block = dim3(kThreads);
  return c;
}

cudaError_t launch(const GemmProblem& p) {
  return with_prepared_operands(p, Tf32Mn::None, [&](const PreparedOperands& ops) {
    return with_instance(p, ops.a.k_major, ops.b.k_major, [&](auto tag, auto ak, auto bk, auto epi) {
      using T = typename decltype(tag)::type;
      constexpr bool kAK = decltype(ak)::value, kBK = decltype(bk)::value;
      constexpr int kEpi = decltype(epi)::value;
      using TileT = Tile<T, kAK, kBK>;
      static_assert(TileT::kBK * sizeof(T) == 128, "128 bytes of K per stage");
      KernelMaps m;
      cudaError_t e = make_kernel_maps(p, ops, kBM, kBN, TileT::kEdgeRows, kEpi == kEpiTma, &m);
      if (e != cudaSuccess) return e;
      auto* kern = pingpong_kernel<T, kAK, kBK, kEpi>;
      constexpr int smem = smem_bytes<T, kAK, kBK>();
      e = prepare_function(reinterpret_cast<const void*>(kern), smem);
      if (e != cudaSuccess) return e;
      return launch_kernel(kern, dim3(static_cast<unsigned>(ctas_of(p))), kThreads, smem,
                           p.stream, m.a, m.b, m.a_edge, m.b_edge, m.d, make_epilogue(p),
                           static_cast<int>(p.k), static_cast<int>(ops.a.mn),
                           static_cast<int>(ops.b.mn), order_of(ops.a.mn, ops.b.mn),
                           batch_of(p, ops));
    });
  });
}

// Under DynamicTiles (gemmlab_dist's pieces beside NCCL's kernels) wgmma/03 takes its tiles from a
// counter; this kernel walks fixed lists, so it steps back there. It steps back too where B's rows
// are 16-byte but not 128-byte aligned: wgmma/03 runs CTA pairs that multicast B there
// (wgmma_plan::pairs_pay), 1.3-1.6x this kernel on such batches (docs/history.md, wgmma/03).
int auto_priority(const GemmProblem& p) {
  if (dynamic_tiles() || b_rows_off_lines(p)) return 0;
  const bool heavy = p.d_type == DType::F32 || p.act != Activation::None;
  return wgmma_plan::pingpong_pays(p.m, p.n, p.k, p.batch, heavy, current_device_desc())
             ? 210  // above wgmma/03 (200)
             : 0;
}

const char* unsupported(const GemmProblem& p) { return too_many_tiles(p, kBM, kBN); }

}  // namespace

extern const KernelDesc kWgmmaPingpong = {
    .name = "wgmma/pingpong",
    .step = 7,
    .family = "wgmma",
    .seed = "beyond the seeds",
    .summary = "two consumer warpgroups on separate 128x128 tiles in turn: one's epilogue under the "
               "other's main loop; TMA producer, 6-stage ring, persistent grouped scheduler",
    .dtypes = kBF16 | kFP16,
    .min_cc = 90,
    .auto_priority = 210,
    .unsupported = unsupported,
    .launch = launch,
    .config = config,
    .auto_priority_for = auto_priority,
    .features = kBatched | kLargeOperands,
};

}  // namespace gemmlab
