// simt/sgemm: the production FP32 kernel, what `auto` runs for FP32 on CUDA cores.
//
// Bottleneck attacked: everything step 15 leaves on the table outside its inner loop. Step 15's
// cp.async pipeline on the warp-tiled micro-kernel already runs the FFMA pipe at ~77% of peak
// inside a wave; what separates it from cuBLAS is the shape of the work around that loop:
// - grids that cannot fill the GPU (1024^3: 32 tiles of 128 x 256 for 132 SMs): ordered split-k.
//   Where the tiles are few next to their splits (decode rows, deep K, small squares) each split
//   writes a whole slice of C and a second kernel, launched as a programmatic dependent, sums the
//   slices in split order with the epilogue on every SM (kernels/common/slice_sum.h; the planner's
//   slices_pay). Elsewhere each split publishes its partial tile and the tile's last block sums
//   them in split order (split_k.cuh), from 17 splits in two levels (groups of 8, then the group
//   sums). Either way deterministic, no atomics, no pass over C. Forced plans (the tuning table)
//   split up to 256 deep: one 128 x 128 tile over k = 131072 on two blocks per SM;
// - a badly filled last wave (3000^3: 288 tiles = 2.2 waves): a stream-k tail, equal runs of
//   k-tiles per block across tile boundaries, shared tiles summed the same ordered way;
// - a 1-row / 1-column fringe (4097^3): thin edge strips as GEMV-like blocks (thin_strips.cuh) on
//   the SMs the last wave leaves idle, instead of a wave of nearly empty tiles;
// - misaligned rows on a 16-byte path (ld % 4 != 0) and B^T: copied once to aligned (or
//   transposed) rows when that is cheap next to the GEMM;
// - six tiles (128 x 128 two blocks per SM; 128 x 256 with 8 x 16 per thread, fewer LDS per
//   FFMA; 64 x 256 and 32 x 256 for decode rows, M <= 64 and M <= 32, where a 128-row tile
//   computes 2-8 times the rows it keeps, and 32 x 256 for a tiny C over a short K (tiny_c); 256 x 64 and 256 x 32, their transposes, for thin
//   outputs, N <= 64) and 4 or 8 pipeline stages, chosen by the planner
//   (sgemm_plan.h), which config() and launch() share, or forced by gemm-tune's table (the tile
//   and depth splits: variants()). The device side is sgemm_kernel.cuh;
// - a strided batch as one launch (grid.y: the entries), each entry planned on its share of the
//   SMs (plan_batch_tiles), its own copy of the split scratch, operands read in place (history:
//   docs/history.md, operand packing and batches).
// Seed: beyond the seeds (production).
// Measured (H100 SXM, docs/results/h100-ladder.md and h100-large.md, cuBLAS SGEMM in the same
// run): 1025^3 30.9 TFLOP/s (101%), 4096^3 50.2 (97%), 4097^3 48.1 (108%), 8192^3 50.2 (97%);
// decode 32 x 8192 x 8192 NN 31.3 (140%), 32 x 4096 x 14336 NN 29.7 (88%; h100-decode.md);
// deep K 128 x 128 x 131072 39.5 (101%), 1024 x 1024 x 32768 46.5 (88%), 1024^3 34.3 (98%),
// 1280^3 35.5 (106%; h100-suite-deep-k / -small, 2026-11-27 03:28 UTC, with the plain and split
// loops' FFMAs column by column: docs/history.md); thin outputs 8192 x 16 / 32 / 64 x
// 8192 NN 14.5 / 28.6 / 36.7 (98 / 97 / 88%; h100-suite-skinny, same run); small K 8192 x 8192 x
// 16 NN 17.4 (118%; docs/results/h100-simt-local-stores.txt, 2026-11-26 21:37 UTC).
// History: docs/history.md.
#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/common/launch.cuh"
#include "kernels/common/slice_sum.h"
#include "kernels/simt/sgemm_kernel.cuh"
#include "runtime/aligned_rows.h"
#include "runtime/device_props.h"
#include "runtime/plan_choice.h"
#include "runtime/workspace.h"

namespace gemmlab {
namespace {

using namespace sgemm;

using KernelFn = void (*)(const float*, int, const float*, int, Epilogue, int, TileWork, Scratch,
                          Entries);

struct Picked {
  KernelFn f;
  cudaError_t err;  // from opting in to the shared-memory size on this device
  int smem;         // dynamic shared memory per block
};

// Above 48 KB of dynamic shared memory a kernel must opt in (per device). The carveout asks for
// just the shared memory kBlocksPerSm blocks need and leaves the rest of the SM to L1: the 4-byte
// copies (cp.async.ca) of k-contiguous or misaligned rows go through L1.
template <Tile kTile, bool kAT, bool kBT, bool kAVec, bool kBVec, Loop kLoop, int kStages = 4,
          bool kStreamK = false>
Picked prepared_f() {
  using V = Variant<kTile, kAT, kBT, kAVec, kBVec, kLoop, kStages, kStreamK>;
  KernelFn f = sgemm_kernel<V>;
  constexpr int kSmem = V::C::kSmemBytes;
  const cudaError_t e = prepare_function(reinterpret_cast<const void*>(f), kSmem,
                                         carveout_for(kBlocksPerSm<kTile>, kSmem));
  return {f, e, kSmem};
}

// The carried-fragment loop only where it was measured to win: the 128 x 256 tile, and the
// 128 x 128 tile with op(A) = A^T (with A and B^T the 128 x 128 kernel spills at its 128-register
// cap, so that one is not even instantiated). The decode tiles run the plain loop.
template <Tile kTile, bool kAT, bool kBT, bool kAVec, bool kBVec>
Picked prepared(Loop loop) {
  if (loop == Loop::kSplit) return prepared_f<kTile, kAT, kBT, kAVec, kBVec, Loop::kSplit>();
  if constexpr (kTile == Tile::k128x256 || (kTile == Tile::k128x128 && kAT)) {
    if (loop == Loop::kCarry) return prepared_f<kTile, kAT, kBT, kAVec, kBVec, Loop::kCarry>();
  }
  return prepared_f<kTile, kAT, kBT, kAVec, kBVec, Loop::kPlain>();
}

// The plan -> template instance table. The 16-byte loaders exist only where the operand's
// contiguous direction is the tile's rows (A^T, B); av / bv: those rows are 16-byte aligned. Only
// the instances the planner can choose are compiled.
template <Tile kTile>
Picked pick(bool at, bool bt, bool av, bool bv, const TilePlan& L) {
  const Loop loop = L.loop;
  constexpr Tile W = Tile::k128x256;
  if constexpr (kTile == W) {  // layouts and sizes as plan_operands picks them; 8 stages when deep
    if (L.work.sk.ctas > 0) {
      if (loop != Loop::kCarry) return {nullptr, cudaErrorNotSupported, 0};
      if (!at && !bt) return prepared_f<W, false, false, false, true, Loop::kCarry, 8, true>();
      if (!at) return prepared_f<W, false, true, false, false, Loop::kCarry, 8, true>();
      return prepared_f<W, true, false, true, true, Loop::kCarry, 8, true>();
    }
    if (at || bt) {  // NT, or TN with aligned rows: planned only for unsplit long k loops
      if (loop != Loop::kCarry) return {nullptr, cudaErrorNotSupported, 0};
      if (!at) return prepared_f<W, false, true, false, false, Loop::kCarry, 8>();
      return prepared_f<W, true, false, true, true, Loop::kCarry, 8>();
    }
    // Deep splits too run the split loop (4 stages, FFMAs column by column), which measured
    // faster than carried fragments on 8 stages (docs/history.md, simt/sgemm).
    if (!L.deep || loop == Loop::kSplit) return prepared<W, false, false, false, true>(loop);
    return prepared_f<W, false, false, false, true, Loop::kCarry, 8>();
  } else if constexpr (thin_tile(kTile)) {  // thin tiles: thin_layout's cases only
    if (!thin_layout(at, bt, av)) return {nullptr, cudaErrorNotSupported, 0};
    if constexpr (a_rows_tile(kTile)) {
      if (!at && av)  // A's rows 16-byte aligned: a row-major A tile (kARows)
        return bv ? prepared<kTile, false, false, true, true>(loop)
                  : prepared<kTile, false, false, true, false>(loop);
    }
    if (!at)  // the k-major A tile and its 4-byte copies
      return bv ? prepared<kTile, false, false, false, true>(loop)
                : prepared<kTile, false, false, false, false>(loop);
    return bv ? prepared<kTile, true, false, true, true>(loop)
              : prepared<kTile, true, false, true, false>(loop);
  } else if constexpr (kTile != Tile::k128x128) {  // decode tiles: A^T on the 4-byte loader
    if (!at && bt) return prepared<kTile, false, true, false, false>(loop);
    if (at && bt) return prepared<kTile, true, true, false, false>(loop);
    if (!at)
      return bv ? prepared<kTile, false, false, false, true>(loop)
                : prepared<kTile, false, false, false, false>(loop);
    return bv ? prepared<kTile, true, false, false, true>(loop)
              : prepared<kTile, true, false, false, false>(loop);
  } else {  // (an else, so that none of these is instantiated for the other tiles)
    if (!at && !bt)
      return bv ? prepared<kTile, false, false, false, true>(loop)
                : prepared<kTile, false, false, false, false>(loop);
    if (!at && bt) return prepared<kTile, false, true, false, false>(loop);
    if (at && !bt) {
      if (av)
        return bv ? prepared<kTile, true, false, true, true>(loop)
                  : prepared<kTile, true, false, true, false>(loop);
      return bv ? prepared<kTile, true, false, false, true>(loop)
                : prepared<kTile, true, false, false, false>(loop);
    }
    return av ? prepared<kTile, true, true, true, false>(loop)
              : prepared<kTile, true, true, false, false>(loop);
  }
}

// The split-k scratch of a plan for `entries` batch entries (a copy of the layout each, 256-byte
// aligned: *entry_bytes apart), allocated on `stream` (nothing allocated when it needs none).
cudaError_t alloc_scratch(const TilePlan& L, const TileShape& t, int64_t entries,
                          cudaStream_t stream, void** buf, Scratch* s, int64_t* entry_bytes) {
  const ScratchLayout lay = scratch_layout(L, t);
  *buf = nullptr;
  *s = Scratch{};
  *entry_bytes = static_cast<int64_t>((lay.bytes() + 255) / 256 * 256);
  if (lay.bytes() == 0) return cudaSuccess;
  if (cudaError_t e = workspace_alloc_split(buf, static_cast<size_t>(*entry_bytes * entries), stream);
      e != cudaSuccess)
    return e;
  float* f = static_cast<float*>(*buf);
  s->tile_parts = f, s->sk_parts = f + lay.tile_partials;
  s->strip_parts = s->sk_parts + lay.sk_partials;
  auto* c = reinterpret_cast<unsigned long long*>(s->strip_parts + lay.strip_partials);
  s->tile_counters = c, s->sk_counters = c + lay.tile_counters;
  s->strip_counters = s->sk_counters + lay.sk_counters;
  s->tag = next_split_tag();
  return cudaSuccess;
}

// A batch's entries per launch (the grid's y dimension).
constexpr int64_t kEntriesPerLaunch = 65535;

// The launches of the tile kernel over q (operands as the kernel reads them): one, or one per
// kEntriesPerLaunch entries of a strided batch. Where the plan's split-k scratch cannot be had,
// the plan without it runs.
template <Tile kTile>
cudaError_t launch_tiles(const GemmProblem& q, bool av, bool bv) {
  constexpr TileShape t = tile_shape(kTile);
  const DeviceDesc dev = current_device_desc();
  const int m = static_cast<int>(q.m), n = static_cast<int>(q.n), k = static_cast<int>(q.k);
  const int64_t entries = std::max<int64_t>(1, q.batch);
  const TilePlan planned =
      plan_batch_tiles(m, n, k, t, dev, entries, /*scratch=*/true, forced_plan().splits);
  cudaError_t e = cudaSuccess;
  for (int64_t e0 = 0; e0 < entries && e == cudaSuccess; e0 += kEntriesPerLaunch) {
    const int64_t here = std::min(kEntriesPerLaunch, entries - e0);
    TilePlan L = planned;
    void* buf = nullptr;
    Scratch s;
    int64_t entry_bytes = 0;
    e = alloc_scratch(L, t, here, q.stream, &buf, &s, &entry_bytes);
    if (e == cudaErrorMemoryAllocation) {
      L = plan_batch_tiles(m, n, k, t, dev, entries, /*scratch=*/false);
      entry_bytes = 0;
      e = cudaSuccess;
    }
    if (e != cudaSuccess) return e;
    const Picked kp = pick<kTile>(q.op_a == Op::T, q.op_b == Op::T, av, bv, L);
    e = kp.err != cudaSuccess ? kp.err : L.blocks == 0 ? cudaErrorInvalidValue : cudaSuccess;
    const Entries en{q.stride_a, q.stride_b, q.stride_c, q.stride_d, entry_bytes, e0};
    if (e == cudaSuccess)
      e = launch_kernel(kp.f, dim3(L.blocks, static_cast<unsigned>(here)), 256, kp.smem, q.stream,
                        static_cast<const float*>(q.A), static_cast<int>(q.lda),
                        static_cast<const float*>(q.B), static_cast<int>(q.ldb), make_epilogue(q),
                        k, L.work, s, en);
    if (e == cudaSuccess && L.work.sliced)  // the splits' slices, summed with the epilogue
      e = launch_slice_sum(s.tile_parts, L.work.splits, make_epilogue(q), q.stream);
    const cudaError_t ef = workspace_free(buf, q.stream);  // stream-ordered: after the kernel
    if (e == cudaSuccess) e = ef;
  }
  return e;
}

// f(integral_constant<Tile, t>): a call of the template instance for the planned tile.
template <typename F>
auto with_tile(Tile t, F&& f) {
  using std::integral_constant;
  switch (t) {
    case Tile::k128x256: return f(integral_constant<Tile, Tile::k128x256>{});
    case Tile::k64x256: return f(integral_constant<Tile, Tile::k64x256>{});
    case Tile::k32x256: return f(integral_constant<Tile, Tile::k32x256>{});
    case Tile::k256x64: return f(integral_constant<Tile, Tile::k256x64>{});
    case Tile::k256x32: return f(integral_constant<Tile, Tile::k256x32>{});
    default: return f(integral_constant<Tile, Tile::k128x128>{});
  }
}

constexpr const char* kTileNames[] = {"128x128", "128x256", "64x256", "32x256",
                                      "256x64",  "256x32",  nullptr};
constexpr int kTileCount = 6;

// The tile a ForcePlan on this thread asks for (runtime/plan_choice.h), or null.
const Tile* forced_tile(Tile* storage) {
  const int t = forced_plan().tile;
  if (t < 1 || t > kTileCount) return nullptr;
  *storage = static_cast<Tile>(t - 1);
  return storage;
}

OperandPlan operand_plan(const GemmProblem& p, bool copies) {
  Tile t;
  return plan_operands(p, batch_rows_aligned(p.A, p.lda, p.stride_a, p.batch, sizeof(float), 16),
                       batch_rows_aligned(p.B, p.ldb, p.stride_b, p.batch, sizeof(float), 16),
                       current_device_desc(), copies, forced_tile(&t));
}

// The copies the plan asks for, enqueued on p.stream; *q becomes the problem the tile kernel runs.
cudaError_t make_copies(const GemmProblem& p, const OperandPlan& pl, GemmProblem* q,
                        AlignedRows* ra, AlignedRows* rb) {
  cudaError_t e = cudaSuccess;
  if (pl.transpose_b) {  // B^T stored n x k -> B stored k x n
    e = transpose_aligned_rows(static_cast<const float*>(p.B), p.n, p.k, p.ldb, p.stream, rb);
    q->B = rb->ptr, q->ldb = rb->ld, q->op_b = Op::N;
  }
  if (e == cudaSuccess && pl.realign_a) {
    e = align_rows_16(p.A, p.k, p.m, p.lda, sizeof(float), p.stream, ra);
    q->A = ra->ptr, q->lda = ra->ld;
  }
  if (e == cudaSuccess && pl.realign_b) {
    e = align_rows_16(p.B, p.k, p.n, p.ldb, sizeof(float), p.stream, rb);
    q->B = rb->ptr, q->ldb = rb->ld;
  }
  return e;
}

cudaError_t launch(const GemmProblem& p) {
  // A strided batch reads its operands as they are (the copies are of one matrix each).
  OperandPlan pl = operand_plan(p, p.batch <= 1);
  GemmProblem q = p;  // p with the copies in place of the operands they replace
  AlignedRows ra, rb;
  cudaError_t e = make_copies(p, pl, &q, &ra, &rb);
  if (e == cudaErrorMemoryAllocation) {  // no scratch for a copy: the loaders that need none
    release_aligned_rows(&ra, p.stream);
    release_aligned_rows(&rb, p.stream);
    pl = operand_plan(p, false);
    q = p;
    e = cudaSuccess;
  }
  if (e == cudaSuccess) e = with_tile(pl.tile, [&](auto t) { return launch_tiles<decltype(t)::value>(q, pl.av, pl.bv); });
  // Stream-ordered: the copies are freed after the kernel that reads them has run.
  const cudaError_t ea = release_aligned_rows(&ra, p.stream);
  const cudaError_t eb = release_aligned_rows(&rb, p.stream);
  return e != cudaSuccess ? e : ea != cudaSuccess ? ea : eb;
}

template <Tile kTile>
LaunchConfig config_tiles(const GemmProblem& q, bool av, bool bv) {
  const int64_t entries = std::max<int64_t>(1, q.batch);
  const TilePlan L = plan_batch_tiles(static_cast<int>(q.m), static_cast<int>(q.n),
                                      static_cast<int>(q.k), tile_shape(kTile),
                                      current_device_desc(), entries, /*scratch=*/true,
                                      forced_plan().splits);
  const Picked kp = pick<kTile>(q.op_a == Op::T, q.op_b == Op::T, av, bv, L);
  return {reinterpret_cast<const void*>(kp.f),
          dim3(L.blocks, static_cast<unsigned>(std::min(entries, kEntriesPerLaunch))), dim3(256),
          static_cast<size_t>(kp.smem)};
}

LaunchConfig config(const GemmProblem& p) {
  const OperandPlan pl = operand_plan(p, p.batch <= 1);
  GemmProblem q = p;
  if (pl.transpose_b) q.op_b = Op::N;  // what the tile kernel then runs
  return with_tile(pl.tile, [&](auto t) { return config_tiles<decltype(t)::value>(q, pl.av, pl.bv); });
}

// The plans gemm-tune may time for p: every tile the planner can take for it, each with the
// model's splits and with 1, 2, 4, ... 32 (where that many fit the depth), and 64 .. 256 where
// they make at most two waves of blocks (deep k on a few tiles); each distinct plan once.
int variants(const GemmProblem& p, PlanChoice* out, int max) {
  const DeviceDesc dev = current_device_desc();
  int n = 0;
  std::vector<std::pair<int, int>> seen;  // (tile, splits) as planned
  for (int tile = 1; tile <= kTileCount; ++tile)
    for (int splits : {0, 1, 2, 4, 8, 16, 32, 64, 128, 256}) {
      const ForcePlan force({tile, splits});
      const OperandPlan pl = operand_plan(p, true);
      if (static_cast<int>(pl.tile) != tile - 1) continue;  // not this problem's to take
      GemmProblem q = p;
      if (pl.transpose_b) q.op_b = Op::N;
      const TilePlan L = plan_tiles(static_cast<int>(q.m), static_cast<int>(q.n),
                                    static_cast<int>(q.k), tile_shape(pl.tile), dev, true, splits);
      if (splits > 1 && L.work.splits != splits) continue;  // deeper than the k-tiles allow
      const TileShape ts = tile_shape(pl.tile);
      if (splits > 32 && static_cast<int64_t>(L.grid.m_tiles) * L.grid.n_tiles * splits >
                             2 * dev.sms * ts.blocks_per_sm)
        continue;
      const std::pair<int, int> planned{tile, L.work.splits};
      if (std::find(seen.begin(), seen.end(), planned) != seen.end()) continue;
      if (config(p).kernel == nullptr) continue;  // no kernel instance for this plan
      seen.push_back(planned);
      if (n < max) out[n] = PlanChoice{tile, splits};
      ++n;
    }
  return std::min(n, max);
}

}  // namespace

extern const KernelDesc kSimtSgemm = {
    .name = "simt/sgemm",
    .step = 16,
    .family = "simt",
    .seed = "beyond the seeds (production)",
    .summary = "step 15's pipeline (4-8 stages, 16 B or 4 B copies by layout/alignment) in "
               "128x256 or 128x128 blocks (64x256, 32x256 for decode rows, 256x64, 256x32 for thin "
               "outputs), ordered split-k for "
               "small grids, stream-k tail for a badly filled last wave, thin edge strips, "
               "misaligned or transposed B copied once when cheap",
    .dtypes = kFP32,
    .min_cc = 80,
    .auto_priority = 100,
    .unsupported = nullptr,
    .launch = launch,
    .config = config,
    .features = kBatched,
    .variants = variants,
    .tile_names = kTileNames,
};

}  // namespace gemmlab
