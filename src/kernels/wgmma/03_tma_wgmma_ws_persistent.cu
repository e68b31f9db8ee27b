// Ladder step 3 (wgmma, sm_90a): warp-specialized, persistent TMA + wgmma. What `auto` runs for
// tf32, bf16 and fp16 on Hopper.
//
// Bottleneck attacked: in step 2 the same warps issue the loads, wait for them and run the
// epilogue, so the tensor cores idle at every refill and between tiles. Here a producer warpgroup
// (one thread issues TMA; setmaxnreg gives its registers away: 40) keeps a 4-stage ring of
// 128x256x64 tiles full, and two consumer warpgroups (232 registers each) only wait on mbarriers
// and issue wgmma m64n256k16, releasing each stage once the wgmma that read it has retired. The
// grid is persistent (one CTA per SM) and walks the tiles heavy-first in a grouped order (bands of
// 16 tile rows: tile_schedule.h) so the A rows and B columns in flight stay in L2; the producer
// fetches the next tile's stages while the consumers store the last one.
// Changed from step 2: warp specialization, setmaxnreg, the persistent scheduler, 128x256 tiles
// (m64n256 per warpgroup; 16-bit grids that fill the last round of SMs badly take 128x192:
// wgmma_plan::persistent_bn). B rows 16-byte but not 128-byte aligned: CTA pairs (2 x 1
// clusters) each load half of the shared B tile and multicast it instead of the host packing B
// (wgmma_plan::pairs_pay). tf32 with an MN-major A loads A into registers (conflict-free row
// order, one block ahead) unless K is short (transposed while packed: transpose_a_pays), and tf32
// NN runs swapped (C^T = B^T A^T). Edge tiles with <= 8 valid rows or columns load 8 rows of that
// operand and use m64n8. Small deep 16-bit grids run stream-k: the (tile, k-block) sequence is cut
// into one equal run per CTA, and the CTAs that share a tile sum their partials in a fixed order.
// A strided batch is one launch (3-D tensor maps; the tile sequence runs entry after entry). Under
// DynamicTiles (gemmlab_dist's pieces) a CTA draws its tiles after the first from a counter. A D
// written without reading C goes out through TMA stores after the epilogue is applied in
// registers (epilogue.cuh: store_fragment_tma); a 16-bit D keeps the last two of each warp's
// boxes rounded in registers and stores them under the next tile's first k-blocks
// (deferred_store.cuh); other epilogues go through the staged float4 drain.
// Seed: beyond the seeds.
// Measured (H100 SXM, cuBLAS in the same run, 2026-11-25): 4096^3 bf16 97%, tf32 99%; 4097^3
// 2.3-3.6x. bf16 D (cuBLASLt bf16-out, 2026-11-28 07:40): 4096^3 762 TFLOP/s (98%), 4096 x
// 4096 x 1024 643-646 (96-97%; 623-625, 93%, with the boxes stored between main loops).
// History (pairs, 128x192, stream-k tails, 128 x 128 tiles, deferred boxes): docs/history.md.
#include <algorithm>
#include <type_traits>

#include "kernels/common/launch.cuh"
#include "kernels/common/split_k.cuh"
#include "kernels/wgmma/deferred_store.cuh"
#include "kernels/wgmma/host.h"
#include "kernels/wgmma/persistent.cuh"
#include "kernels/wgmma/plan.h"
#include "kernels/wgmma/sm90.cuh"
#include "kernels/wgmma/stream_k_tiles.cuh"
#include "runtime/device_props.h"
#include "runtime/plan_choice.h"
#include "runtime/reserve_sms.h"
#include "runtime/workspace.h"

namespace gemmlab {
namespace {

using namespace sm90;
using wgmma_plan::kBM;
using wgmma_plan::kBN;
using wgmma_plan::kBNNarrow;
using wgmma_plan::kMaxContrib;

constexpr int kStages = 4;
constexpr int kThreads = 384;  // warpgroup 0: producer; 1 and 2: consumers

// kN: the tile's columns, kBN or (16-bit) kBNNarrow (wgmma_plan::persistent_bn).
template <typename T, bool kAK, bool kBK, int kN>
using Tile = StageTile<T, kBM, kN, kAK, kBK>;

// Per consumer warpgroup: an epilogue buffer (the producer is already filling the stages for the
// next tile) and a block for the TMA-store epilogue's 16-bit bias (kTileBiasBytes).
template <typename T, bool kAK, bool kBK, int kN>
constexpr int smem_bytes() {
  return persistent_smem_bytes(kStages * Tile<T, kAK, kBK, kN>::kBytes, 2 * kStages);
}

// Only the 16-bit kernels of the wide tile run stream-k; the tf32 register-A variants have no
// registers to spare.
template <typename T, int kN>
constexpr bool kHasStreamK = sizeof(T) == 2 && kN == kBN;

// kSwapped: the kernel computes C^T (see PreparedOperands) and stores its result transposed.
// kEpi: see EpiKind; map_d is D's store map under kEpiTma (unused otherwise).
// kPair: 2 x 1 clusters (16-bit, no stream-k, no DynamicTiles): the pair runs tiles of 2 kBM x kN,
// each CTA its own 128 rows, each loading half of the shared B tile into both CTAs' stages.
template <typename T, bool kAK, bool kBK, bool kSwapped, int kEpi, int kN, bool kPair>
__global__ void __launch_bounds__(kThreads, 1)
    ws_persistent_kernel(const __grid_constant__ CUtensorMap map_a,
                         const __grid_constant__ CUtensorMap map_b,
                         const __grid_constant__ CUtensorMap map_a_edge,
                         const __grid_constant__ CUtensorMap map_b_edge,
                         const __grid_constant__ CUtensorMap map_d, Epilogue ep, int k,
                         int rows, int cols, wgmma_plan::TileOrder order, Batch batch,
                         StreamK sk, SplitWorkspace ws, int* tile_counter) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using TileT = Tile<T, kAK, kBK, kN>;
  extern __shared__ uint8_t smem_raw[];
  const PersistentSmem sm(smem_raw, kStages * TileT::kBytes);
  uint8_t* smem = sm.ring;
  std::conditional_t<kPair, PairRing<kStages>, Ring<kStages>> ring{};
  ring.full = sm.bars, ring.empty = sm.bars + kStages;
  __shared__ int sk_last[2];  // per consumer warpgroup: "arrived last at a shared tile"
  __shared__ int tile_ids[kTileSlots];
  __shared__ alignas(8) uint64_t tile_bars[2 * kTileSlots];
  TileRing tiles_ring{tile_ids, tile_bars, tile_bars + kTileSlots};

  const int wg = threadIdx.x / 128;
  const int num_kb = ceil_div(k, TileT::kBK);
  // In pairs a tile is the pair's 2 kBM x kN and this CTA takes rows kBM rank + [0, kBM) of it.
  const int rank = kPair ? static_cast<int>(cluster_ctarank()) : 0;
  const int first = static_cast<int>(blockIdx.x) / (kPair ? 2 : 1);
  const int step = static_cast<int>(gridDim.x) / (kPair ? 2 : 1);
  const TileWalk walk(rows, cols, kPair ? 2 * kBM : kBM, kN, batch.count, order,
                      kPair ? wgmma_plan::kGroupRows / 2 : wgmma_plan::kGroupRows);
  const auto tile_at = [&](int tile) {
    BatchTile bt = walk.at(tile);
    bt.tc.row0 += kBM * rank;
    return bt;
  };
  const int tiles = walk.tiles;
  if (threadIdx.x == 0) {
    prefetch_maps(&map_a, &map_b, &map_a_edge, &map_b_edge, kEpi == kEpiTma ? &map_d : nullptr);
    ring.init(kPair ? 4 : 2);  // both consumer warpgroups (of both CTAs) read every stage
    for (int s = 0; s < kTileSlots; ++s) {
      mbar_init(&tiles_ring.full[s], 1);
      mbar_init(&tiles_ring.empty[s], 2);  // one arrive per consumer warpgroup
    }
    fence_barrier_init();
  }
  // A pair's barriers are initialized before either CTA multicasts or arrives into the other.
  if constexpr (kPair) {
    cluster_sync();
    ring.peer_empty = cluster_map(ring.empty, static_cast<uint32_t>(rank ^ 1));
  } else {
    __syncthreads();
  }

  if (wg == 0) {  // ---- producer ----
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      for_each_segment<kHasStreamK<T, kN> && !kPair>(first, tiles, num_kb, sk, [&](int tile) {
        return tile_counter ? tiles_ring.draw(tile_counter) : tile + step;
      }, [&](int tile, int kb0, int kb1) {
        produce<TileT, kPair>(&map_a, &map_b, &map_a_edge, &map_b_edge, smem, ring, tile_at(tile),
                              batch, rows, cols, kb0, kb1, rank);
      });
      // In a pair the CTA stays until every consumer of both CTAs has released its last stages:
      // the other CTA's consumers arrive on this CTA's barriers until then.
      if constexpr (kPair)
        for (int i = 0; i < kStages; ++i, ring.advance()) mbar_wait(&ring.empty[ring.s], ring.phase ^ 1);
    }
    return;
  }
  // ---- consumers: warpgroup cw owns rows [64 cw, 64 cw + 64) of each 128 x kN tile ----
  setmaxnreg_inc<232>();
  const int cw = wg - 1;
  const bool signals = threadIdx.x % 128 == 0;  // one arrive per warpgroup
  const uint32_t smem_base = smem_addr(smem);
  float d[kN / 2];
  // A 16-bit D through TMA stores: each tile's boxes go out under the next tile's first k-blocks
  // (deferred_store.cuh). (kEpiTma never has tf32's register-A main loop: by_epilogue.)
  constexpr bool kDefer = kEpi == kEpiTma && !(TileT::kTf32 && !TileT::kAK);
  constexpr int kBoxes = PackedTile<kN>::kBoxes;
  const bool defer = kDefer && ep.d_type != DType::F32;
  PackedTile<kN> packed;
  uint8_t* box_buf = reinterpret_cast<uint8_t*>(sm.epilogue_of(cw));
  const auto next = [&](int tile) {
    return tile_counter ? tiles_ring.take(cw) : tile + step;
  };
  for_each_segment<kHasStreamK<T, kN> && !kPair>(first, tiles, num_kb, sk, next, [&](int tile, int kb0, int kb1) {
    const BatchTile bt = tile_at(tile);
    const TileCoord tc = bt.tc;
    if (tc.row0 + 64 * cw >= rows) {
      if constexpr (kDefer) packed.flush(box_buf, &map_d);
      return skip(ring, signals, kb0, kb1);
    }
    // The TMA-store epilogue's 16-bit bias word, loaded before the main loop (load_bias_word).
    uint32_t bias_word = 0;
    if constexpr (kEpi == kEpiTma) bias_word = load_bias_word(ep, tc.col0);
    int prev = 0;
    // A tile with <= 8 valid columns uses m64n8 (d[0..3]; the other accumulators are stale but
    // their columns are past the end, so the epilogue's bounds checks drop them).
    const bool narrow = cols - tc.col0 <= 8;
    bool done = false;  // main loop run (with the last tile's stores)
    if constexpr (kDefer) {
      if (packed.pending && !narrow && kb1 - kb0 >= kBoxes) {
        consume_ss_with<TileT, kBoxes>(d, ring, smem_base, cw, signals, kb0, kb1, &prev,
                                       [&](int box) { packed.store_box(box, box_buf, &map_d); });
        packed.pending = false, done = true;
      } else {
        packed.flush(box_buf, &map_d);
      }
    }
    if (!done) {
      if (narrow) consume<TileT, true>(d, ring, smem_base, cw, signals, kb0, kb1, &prev);
      else consume<TileT, false>(d, ring, smem_base, cw, signals, kb0, kb1, &prev);
    }
    wgmma_wait<0>();
    fence_operand(d);
    if (signals) ring.release(prev);
    if constexpr (kHasStreamK<T, kN> && !kPair)
      if (sk.ctas > 0 && !reduce_shared_tile(d, sk, ws, tile, cw, &sk_last[cw],
                                             tc.row0 + 64 * cw + fragment_row(0) < rows))
        return;
    if (defer)
      packed.pack(ep, d, box_buf, &map_d, sm.bias_of(cw), bias_word, 1 + cw, tc.row0 + 64 * cw,
                  tc.col0, bt.entry);
    else
      store_tile<TileT, kSwapped, kEpi>(
          kEpi == kEpiTma ? ep : ep.entry(bt.entry, batch.stride_c, batch.stride_d), d,
          sm.epilogue_of(cw), cw, tc.row0 + 64 * cw, tc.col0, bt.entry, &map_d, sm.bias_of(cw),
          bias_word);
  });
  if constexpr (kDefer) packed.flush(box_buf, &map_d);
  // Each warp's last TMA stores (its lane 0 issued them) are done before the CTA exits.
  if constexpr (kEpi == kEpiTma) if (threadIdx.x % 32 == 0) bulk_wait_all<0>();
#endif
}

// Calls f(bool_constant<swapped>) for a kernel of a and b's majorness; only tf32 with an
// MN-major (register) A is ever swapped, so only that instantiates the swapped kernel.
template <typename T, bool kAK, typename F>
cudaError_t by_swap(bool swapped, F&& f) {
  if constexpr (std::is_same<T, float>::value && !kAK)
    if (swapped) return f(std::true_type{});
  return f(std::false_type{});
}

// Plan variants (gemm-tune), 16-bit only: tiles 1 and 2 are 128 x 256 and 128 x 192 on single
// CTAs, 3 and 4 the same in CTA pairs ("c2": 2 x 1 clusters).
const char* const kTileNames[] = {"128x256", "128x192", "128x256c2", "128x192c2", nullptr};
int wanted_bn() {
  const int t = forced_plan().tile;
  return t == 1 || t == 3 ? kBN : t == 2 || t == 4 ? kBNNarrow : 0;
}

// The plan of a problem whose kernel operands are rows x k and cols x k (rows x cols swapped),
// without pairs; pairs_of decides those.
wgmma_plan::PersistentPlan plan_of(const GemmProblem& p, bool swapped, bool pairs = false) {
  const int64_t rows = swapped ? p.n : p.m, cols = swapped ? p.m : p.n;
  return wgmma_plan::plan_persistent(rows, cols, p.k, p.precision, current_device_desc(), p.batch,
                                     wanted_bn(), pairs);
}

// Whether p runs in CTA pairs: a forced variant (3, 4: pairs; 1, 2: none), else the planner's
// rule (wgmma_plan::pairs_pay); never with DynamicTiles (gemmlab_dist's pieces) or swapped.
bool pairs_of(const GemmProblem& p, bool swapped) {
  if (p.precision == Precision::TF32 || swapped || dynamic_tiles()) return false;
  const int t = forced_plan().tile;
  if (t >= 1 && t <= 4) return t >= 3;  // (another index: ignored, as ForcePlan promises)
  const wgmma_plan::PersistentPlan single = plan_of(p, swapped);
  return single.sk.ctas == 0 &&
         wgmma_plan::pairs_pay(p.precision, b_rows_off_lines(p), single.tiles, current_device_desc());
}

int max_pairs(const void* kern, int smem) { return max_active_pairs(kern, kThreads, smem); }

// Calls f(integral_constant<int, kN>, bool_constant<pairs>) for the plan's tile width and CTA
// pairs; only 16-bit inputs have the narrow tile and the pairs, and a swapped kernel neither.
template <typename T, bool kSwapped, typename F>
cudaError_t by_tile(const wgmma_plan::PersistentPlan& pl, F&& f) {
  if constexpr (sizeof(T) == 2 && !kSwapped) {
    if (pl.pairs) {
      if (pl.bn == kBNNarrow)
        return f(std::integral_constant<int, kBNNarrow>{}, std::true_type{});
      return f(std::integral_constant<int, kBN>{}, std::true_type{});
    }
    if (pl.bn == kBNNarrow) return f(std::integral_constant<int, kBNNarrow>{}, std::false_type{});
  }
  return f(std::integral_constant<int, kBN>{}, std::false_type{});
}

// Calls f(integral_constant<int, kEpi>) for the problem's epilogue instance (EpiKind): TMA
// stores where D allows them and the kernel keeps wgmma's row order.
template <typename T, bool kAK, bool kSwapped, typename F>
cudaError_t by_epilogue(const GemmProblem& p, F&& f) {
  constexpr bool kRowOrder = !kSwapped && !(std::is_same<T, float>::value && !kAK);
  if constexpr (kRowOrder)
    if (tma_storable(p)) return f(std::integral_constant<int, kEpiTma>{});
  if (plain_epilogue(p)) return f(std::integral_constant<int, kEpiPlain>{});
  return f(std::integral_constant<int, kEpiGeneral>{});
}

// tf32's MN-major A: through registers, or transposed while packed where K is short.
Tf32Mn tf32_layout(const GemmProblem& p) {
  return p.precision == Precision::TF32 && p.op_a == Op::T && wgmma_plan::transpose_a_pays(p.k)
             ? Tf32Mn::None
             : Tf32Mn::RegisterA;
}

LaunchConfig config(const GemmProblem& p) {
  LaunchConfig c;
  const KernelLayout kl = kernel_layout(p, tf32_layout(p));
  const wgmma_plan::PersistentPlan pl = plan_of(p, kl.swapped, pairs_of(p, kl.swapped));
  int ctas = pl.ctas;
  dispatch<true>(p.precision, kl.a_k_major, kl.b_k_major, [&](auto tag, auto ak, auto bk) {
    using T = typename decltype(tag)::type;
    constexpr bool kAK = decltype(ak)::value, kBK = decltype(bk)::value;
    return by_swap<T, kAK>(kl.swapped, [&](auto sw) {
      constexpr bool kSw = decltype(sw)::value;
      return by_epilogue<T, kAK, kSw>(p, [&](auto epi) {
        return by_tile<T, kSw>(pl, [&](auto bn, auto pair) {
          constexpr int kN = decltype(bn)::value;
          auto* kern = ws_persistent_kernel<T, kAK, kBK, kSw, decltype(epi)::value, kN,
                                            decltype(pair)::value>;
          c.kernel = reinterpret_cast<const void*>(kern);
          c.smem_bytes = smem_bytes<T, kAK, kBK, kN>();
          if constexpr (decltype(pair)::value)
            ctas = 2 * std::min(pl.tiles, max_pairs(c.kernel, c.smem_bytes));
          return cudaSuccess;
        });
      });
    });
  });
  c.grid = dim3(static_cast<unsigned>(ctas));
  c.block = dim3(kThreads);
  return c;
}

// Stream-k scratch: kMaxContrib partials per warpgroup half of a tile, one counter per half.
// Where it cannot be had, the plan without stream-k runs.
cudaError_t stream_k_scratch(wgmma_plan::PersistentPlan* pl, int sms, cudaStream_t stream,
                             SplitWorkspace* ws) {
  *ws = SplitWorkspace{nullptr, nullptr, 0};
  if (pl->sk.ctas == 0) return cudaSuccess;
  const int tiles = pl->tiles;
  const size_t floats = static_cast<size_t>(tiles) * 2 * kMaxContrib * kPartialFloats;
  void* buf = nullptr;
  const cudaError_t e =
      workspace_alloc_split(&buf, floats * sizeof(float) + static_cast<size_t>(tiles) * 2 * 8, stream);
  if (e == cudaErrorMemoryAllocation) {
    pl->sk = StreamK{0, 0, 0, 0, 0};
    pl->ctas = tiles < sms ? tiles : sms;
    return cudaSuccess;
  }
  if (e != cudaSuccess) return e;
  *ws = {static_cast<float*>(buf),
         reinterpret_cast<unsigned long long*>(static_cast<float*>(buf) + floats), next_split_tag()};
  return cudaSuccess;
}

// pl: the plan over the kernel's a x b (n x m when swapped), pl.bn == kN, pl.pairs == kPair.
template <typename T, bool kAK, bool kBK, bool kSwapped, int kEpi, int kN, bool kPair>
cudaError_t launch_typed(const GemmProblem& p, const PreparedOperands& ops,
                         wgmma_plan::PersistentPlan pl) {
  using TileT = Tile<T, kAK, kBK, kN>;
  static_assert(TileT::kBK * sizeof(T) == 128, "k_blocks_of: 128 bytes of K per stage");
  KernelMaps m;
  // (in pairs each CTA loads half of a K-major B tile's rows)
  cudaError_t e = make_kernel_maps(p, ops, kBM, kPair ? kN / 2 : kN, TileT::kEdgeRows,
                                   kEpi == kEpiTma, &m);
  if (e != cudaSuccess) return e;
  auto* kern = ws_persistent_kernel<T, kAK, kBK, kSwapped, kEpi, kN, kPair>;
  constexpr int smem = smem_bytes<T, kAK, kBK, kN>();
  e = prepare_function(reinterpret_cast<const void*>(kern), smem);
  if (e != cudaSuccess) return e;
  const Batch batch = batch_of(p, ops);
  const wgmma_plan::TileOrder order = wgmma_plan::tile_order(ops.a.mn, ops.b.mn, kN);
  if constexpr (kPair) {
    const int pairs = std::min(pl.tiles, max_pairs(reinterpret_cast<const void*>(kern), smem));
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
    return launch_kernel_ex(kern, dim3(static_cast<unsigned>(2 * pairs)), dim3(kThreads), smem,
                            p.stream, &attr, 1, m.a, m.b, m.a_edge, m.b_edge, m.d,
                            make_epilogue(p), static_cast<int>(p.k), static_cast<int>(ops.a.mn),
                            static_cast<int>(ops.b.mn), order, batch, StreamK{0, 0, 0, 0, 0},
                            SplitWorkspace{nullptr, nullptr, 0}, static_cast<int*>(nullptr));
  }
  SplitWorkspace ws;
  e = stream_k_scratch(&pl, device_sm_count(), p.stream, &ws);
  if (e != cudaSuccess) return e;
  int* counter = nullptr;  // DynamicTiles: the tile counter, zeroed before the launch
  if (dynamic_tiles() && pl.sk.ctas == 0 && pl.ctas < pl.tiles) {
    e = workspace_alloc(reinterpret_cast<void**>(&counter), sizeof(int), p.stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(counter, 0, sizeof(int), p.stream);
    if (e != cudaSuccess) {  // the fixed lists need no memory: run them
      if (counter) workspace_free(counter, p.stream);
      counter = nullptr;
    }
  }
  e = launch_kernel(kern, dim3(static_cast<unsigned>(pl.ctas)), kThreads, smem, p.stream, m.a,
                    m.b, m.a_edge, m.b_edge, m.d, make_epilogue(p), static_cast<int>(p.k),
                    static_cast<int>(ops.a.mn), static_cast<int>(ops.b.mn), order, batch, pl.sk,
                    ws, counter);
  const cudaError_t ef = workspace_free(ws.partials, p.stream);  // after the kernel
  const cudaError_t ec = counter ? workspace_free(counter, p.stream) : cudaSuccess;
  return e != cudaSuccess ? e : ef != cudaSuccess ? ef : ec;
}

cudaError_t launch(const GemmProblem& p) {
  // In pairs B's rows are read in place (kernel_layout: 16-bit runs unswapped).
  const bool pairs = pairs_of(p, kernel_layout(p, tf32_layout(p)).swapped);
  return with_prepared_operands(p, tf32_layout(p), [&](const PreparedOperands& ops) {
    const wgmma_plan::PersistentPlan pl = plan_of(p, ops.swapped, pairs && !ops.swapped);
    return dispatch<true>(p.precision, ops.a.k_major, ops.b.k_major, [&](auto tag, auto ak, auto bk) {
      using T = typename decltype(tag)::type;
      constexpr bool kAK = decltype(ak)::value, kBK = decltype(bk)::value;
      return by_swap<T, kAK>(ops.swapped, [&](auto sw) {
        constexpr bool kSw = decltype(sw)::value;
        return by_epilogue<T, kAK, kSw>(p, [&](auto epi) {
          return by_tile<T, kSw>(pl, [&](auto bn, auto pair) {
            return launch_typed<T, kAK, kBK, kSw, decltype(epi)::value, decltype(bn)::value,
                                decltype(pair)::value>(p, ops, pl);
          });
        });
      });
    });
  }, /*keep_b_rows=*/pairs);
}

// Plan variants for gemm-tune: both tiles, single and in pairs, for 16-bit inputs (tf32 has the
// wide single one only).
int variants(const GemmProblem& p, PlanChoice* out, int max) {
  if (p.precision == Precision::TF32 || max < 4) return 0;
  for (int t = 1; t <= 4; ++t) out[t - 1] = PlanChoice{t, 0};
  return 4;
}

int auto_priority(const GemmProblem& p) {
  return wgmma_plan::auto_priority(p, current_device_desc());
}

const char* unsupported(const GemmProblem& p) { return too_many_tiles(p, kBM, kBN); }

}  // namespace

extern const KernelDesc kWgmmaWarpSpecializedPersistent = {
    .name = "wgmma/03_tma_wgmma_ws_persistent",
    .step = 3,
    .family = "wgmma",
    .seed = "beyond the seeds",
    .summary = "TMA producer warp + 2 consumer warpgroups (setmaxnreg 40/232), 4-stage mbarrier ring, "
               "128x256x64 tiles (16-bit: 128x192 where they fill the last round better), "
               "persistent grouped scheduler, stream-k for small deep grids",
    .dtypes = kBF16 | kFP16 | kTF32,
    .min_cc = 90,
    .auto_priority = 200,
    .unsupported = unsupported,
    .launch = launch,
    .config = config,
    .auto_priority_for = auto_priority,
    .features = kBatched | kLargeOperands,
    .variants = variants,
    .tile_names = kTileNames,
};

}  // namespace gemmlab
