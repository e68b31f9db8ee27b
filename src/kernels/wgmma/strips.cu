// The strips kernel of wgmma/decode and wgmma/small (strips.h): one tile of C per CTA, a strip of
// the weight W (64 rows per consumer warpgroup, wgmma's M side) against tok tokens X (wgmma's N
// side, m64nNk16, N = 8 .. 256), over a range of K.
//
// A producer warp keeps a deep ring of TMA stages full (W: 64, 128 or 192 rows x 128 bytes of K,
// K- or MN-major; X: the tile's tokens x 128 bytes of K; a last token tile with many rows past the
// end loads only those that exist, TMA's out-of-bounds fill being slow there: plan.h,
// tail_box_pays), one to three consumer warpgroups issue the wgmmas and release each stage once
// the wgmma that read it has retired (mainloop.cuh). tf32 runs with the tokens as C's rows
// (K-major: tf32 wgmma reads B only so); an MN-major W is loaded into registers (wgmma's A from
// registers, as in wgmma/03) instead of transposed. The splits of a tile publish their partials
// and the last to arrive sums them in split order (split_k.cuh): deterministic, beta * C read
// once. The epilogue goes through the shared Epilogue (bias, activation, D's dtype): tiles of 64
// tokens or more staged in shared memory and written as 16-byte rows of C (wgmma/03's staged
// drain, transposed where the tokens are C's rows), narrower ones element by element (and the
// tokens of 96 and 208 past their whole 64-token chunks). wgmma/small's 320-token tile takes a
// producer warpgroup instead of a warp, which moves its registers to the consumers (setmaxnreg).
// The kernels that run it say what they attack and what they measured: decode.cu, small.cu.
#include "kernels/wgmma/strips.h"

#include "kernels/common/launch.cuh"
#include "kernels/common/split_k.cuh"
#include "kernels/wgmma/host.h"
#include "kernels/wgmma/sm90.cuh"
#include "kernels/wgmma/strips_dispatch.cuh"
#include "runtime/device_props.h"
#include "runtime/workspace.h"

namespace gemmlab {
namespace {

using namespace sm90;
namespace dp = wgmma_decode_plan;
using strips_detail::dispatch_strips;
using strips_detail::Instance;

struct Args {
  int k;
  int ttiles;  // tiles of kTok tokens (1 but for wgmma/small); CTA b: tile b / splits
  int kb_per_split, splits;
  SplitWorkspace ws;
  // A strided batch: entry blockIdx.y; W and X move by a 3-D map's entry (step 1) or are
  // broadcast (step 0); C and D by their strides.
  int w_step, x_step;
  int64_t stride_c, stride_d;
  int x_rows;  // the tokens (X's rows): where the last token tile ends (the kTail instances)
};

// The map of the last token tile's last box (kTail: StageTile::load_b_rows), or nothing: the
// instances without it are the kernel as it was before tail boxes (with the map and a branch on
// the tile, whole tiles ran 2-9% slower: docs/history.md, "Out-of-bounds rows").
template <bool kTail>
struct TailBox {
  CUtensorMap map;
};
template <>
struct TailBox<false> {};

// kTok tokens; kWK: W (the kernel's A: op(B)^T, or op(A) when skinny) is K-major; kXK: X (the
// tokens) is K-major (always where the tokens are C's rows; as C's columns, a B stored k x n is
// read MN-major, in 64-wide chunks: kTok >= 64).
// kG: the consumer warpgroups where not the default for kTok (0): one for wgmma/small's 64 x 64;
// kDeep: its deep ring (one CTA per SM, dp::stages).
template <typename T, int kTok, bool kWK, bool kXK = true, int kG = 0, bool kDeep = false>
struct Shape {
  static constexpr int kGroups = kG ? kG : dp::groups(kTok);
  static constexpr int kStrip = 64 * kGroups;
  static constexpr int kStages = dp::stages(kTok, kG, kDeep);
  static constexpr int kThreads = dp::threads(kTok, kG);
  static constexpr int kConsumers = 128 * kGroups;
  static constexpr int kSmem = dp::smem_bytes(kTok, kG, kDeep);
  using Tile = StageTile<T, kStrip, kTok, kWK, kXK>;
  static_assert(kStages * Tile::kBytes + 1024 + 2 * kStages * 8 <= kSmem, "smem plan");
};

// The producer thread: k-blocks [kb0, kb1) of weight rows n0.. and tokens t0.. into the ring;
// kRows: only x_rows tokens, the last box through map_x_tail (StageTile::load_b_rows).
template <class TileT, bool kRows = false, class RingT>
__device__ __forceinline__ void produce_strip(const CUtensorMap* map_w, const CUtensorMap* map_x,
                                              uint8_t* smem, RingT ring, int n0, int t0, int wz,
                                              int xz, int kb0, int kb1,
                                              const CUtensorMap* map_x_tail = nullptr,
                                              int x_rows = 0) {
  prefetch_tensor_map(map_w);
  prefetch_tensor_map(map_x);
  if constexpr (kRows) prefetch_tensor_map(map_x_tail);
  // (OOB zero-fill counts full boxes)
  const int bytes = kRows ? TileT::kABytes + TileT::b_bytes(x_rows) : TileT::kBytes;
  for (int kb = kb0; kb < kb1; ++kb, ring.advance()) {
    // The first pass waits on the phase before the first, which counts as complete.
    mbar_wait(&ring.empty[ring.s], ring.phase ^ 1);
    uint8_t* stage = smem + ring.s * TileT::kBytes;
    uint64_t* full = &ring.full[ring.s];
    mbar_arrive_expect_tx(full, bytes);
    TileT::load_a(map_w, stage, full, n0, kb * TileT::kBK, wz);
    if constexpr (kRows)
      TileT::load_b_rows(map_x, map_x_tail, stage, full, t0, kb * TileT::kBK, xz, x_rows);
    else
      TileT::load_b(map_x, stage, full, t0, kb * TileT::kBK, xz);
  }
}

// A plain fp32 D (alpha * acc, + beta * D where D is C) whose rows are the tokens: d[4j + q] is
// C(t0 + 8j + 2t + (q & 1), q < 2 ? w_lo : w_hi), t = lane % 4. One pointer per token row pair,
// moved 8 rows per group; the weight columns' bounds are the thread's, the tokens' the group's.
template <int kTok>
__device__ __forceinline__ void store_plain_transposed(const Epilogue& out, const float (&d)[kTok / 2],
                                                       int w_lo, int w_hi, int t0) {
  const int tok0 = t0 + 2 * (threadIdx.x % 4);
  const bool lo_in = w_lo < out.n, hi_in = w_hi < out.n;
  const int64_t step = 8 * out.ldd;
  float* p = out.Df() + static_cast<int64_t>(tok0) * out.ldd + w_lo;  // (tok0, w_lo)
  const int hi = w_hi - w_lo;
  const float a = out.alpha, b = out.beta;
#pragma unroll
  for (int j = 0; j < kTok / 8; ++j, p += step) {
    const int tok = tok0 + 8 * j;
    float* p1 = p + out.ldd;
    const bool r0 = tok < out.m, r1 = tok + 1 < out.m;
    if (b == 0.f) {
      if (r0 && lo_in) p[0] = a * d[4 * j + 0];
      if (r1 && lo_in) p1[0] = a * d[4 * j + 1];
      if (r0 && hi_in) p[hi] = a * d[4 * j + 2];
      if (r1 && hi_in) p1[hi] = a * d[4 * j + 3];
    } else {
      if (r0 && lo_in) p[0] = fmaf(b, p[0], a * d[4 * j + 0]);
      if (r1 && lo_in) p1[0] = fmaf(b, p1[0], a * d[4 * j + 1]);
      if (r0 && hi_in) p[hi] = fmaf(b, p[hi], a * d[4 * j + 2]);
      if (r1 && hi_in) p1[hi] = fmaf(b, p1[hi], a * d[4 * j + 3]);
    }
  }
}

// A consumer warpgroup's epilogue: its accumulators d hold weight rows w0 + row_lo / row_hi of
// tokens t0..; bias_pre: the bias loaded before the main loop (where the weight's rows are C's
// columns). Tiles of 64 tokens or more go through shared memory (the ring, free once every
// consumer's last wgmma has read it), narrower ones element by element.
template <int kTok, bool kSkinny, bool kRegisterA, int kConsumers, int kBias>
__device__ __forceinline__ void store_strip_tile(const Epilogue& out, const float (&d)[kTok / 2],
                                                 uint8_t* smem, int cw, int w0, int row_lo,
                                                 int row_hi, int t0,
                                                 const float (&bias_pre)[kBias]) {
  if constexpr ((kTok % 64 == 0 || kTok == 96 || kTok == 208) && !kSkinny && !kRegisterA) {
    // Tokens as C's rows and a plain fp32 D: straight from the registers. For one accumulator
    // d[4j + q] a warp writes 4 token rows x 8 consecutive weight columns (wgmma's row order),
    // four whole 32-byte sectors per store, where the staged drain below (its transposed chunks)
    // moved every value through shared memory twice and met at 8 barriers per tile. Not in the
    // register-A row order (tf32, an MN-major W), whose 8 lanes' rows are not consecutive
    // (measured slower there: docs/history.md, wgmma/small).
    if (out.plain) return store_plain_transposed<kTok>(out, d, w0 + row_lo, w0 + row_hi, t0);
  }
  if constexpr (kTok % 64 == 0) {
    // Whole 64-token chunks: staged in shared memory and written as rows of 16 bytes
    // (epilogue.cuh), transposed where the tokens are C's rows.
    asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers) : "memory");
    float* buf = reinterpret_cast<float*>(smem) + cw * (kStagedEpilogueBytes / 4);
    if (out.plain)
      store_fragment_staged<kTok, !kSkinny, 8, kStorePlain>(out, d, buf, 2 + cw, row_lo, row_hi,
                                                            w0, t0);
    else
      store_fragment_staged<kTok, !kSkinny, 8, kStoreInline>(out, d, buf, 2 + cw, row_lo, row_hi,
                                                             w0, t0, kSkinny ? nullptr : bias_pre);
  } else {
    // Tokens as C's rows past whole 64-token chunks (128 x 208, 192 x 96): the chunks staged as
    // above (their bias loaded by the drain), the rest element by element below.
    // (A plain D of these tiles has gone out above.)
    constexpr int kHead = kTok > 64 && !kSkinny && !kRegisterA ? kTok / 64 * 64 : 0;
    if constexpr (kHead > 0) {
      static_assert(kTok == 96 || kTok == 208, "a plain D returned above");
      asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers) : "memory");
      float* buf = reinterpret_cast<float*>(smem) + cw * (kStagedEpilogueBytes / 4);
      store_fragment_staged<kHead, true, 8, kStoreInline>(
          out, *reinterpret_cast<const float(*)[kHead / 2]>(&d[0]), buf, 2 + cw, row_lo, row_hi, w0,
          t0);
    }
    // d[4j + q]: weight row w (fragment row 16w + g, + 8 for q >= 2), token 8j + 2t + (q & 1);
    // C's (token, w) element, or (w, token) when skinny.
    const int w_lo = w0 + row_lo, w_hi = w0 + row_hi;
    const int t = threadIdx.x % 4;
    const int tokens = kSkinny ? out.n : out.m;
    // (b: the weight row's bias_pre; a general epilogue where the tokens are C's rows takes it)
    const auto put = [&](int tok, int w, float v, float b) {
      if constexpr (kSkinny) out.store(w, tok, v);
      else if (out.plain) out.store(tok, w, v);
      else epilogue_store_biased(out, tok, w, v, b);
    };
#pragma unroll
    for (int j = kHead / 8; j < kTok / 8; ++j) {
      const int tok = t0 + 8 * j + 2 * t;
      if (tok < tokens) {
        put(tok, w_lo, d[4 * j + 0], bias_pre[0]);
        put(tok, w_hi, d[4 * j + 2], bias_pre[1]);
      }
      if (tok + 1 < tokens) {
        put(tok + 1, w_lo, d[4 * j + 1], bias_pre[0]);
        put(tok + 1, w_hi, d[4 * j + 3], bias_pre[1]);
      }
    }
  }
}

// kSkinny: the weight's rows are C's rows and the tokens its columns (else the other way round).
// kTail: the last token tile loads only the tokens that exist (tail.map: its last box).
template <typename T, int kTok, bool kWK, bool kXK, bool kSkinny, int kG, bool kDeep,
          bool kTail = false>
__global__ void __launch_bounds__(dp::threads(kTok, kG), 1)
    strips_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_x,
                  Epilogue ep, Args a, const __grid_constant__ TailBox<kTail> tail) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Shape<T, kTok, kWK, kXK, kG, kDeep>;
  using TileT = typename S::Tile;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + S::kStages * TileT::kBytes);
  uint64_t* empty = full + S::kStages;
  __shared__ int last_flag;

  // CTA b: tile b / splits (strip tile / ttiles, token tile tile % ttiles), split b % splits, of
  // batch entry blockIdx.y.
  const int tile = blockIdx.x / a.splits, split = blockIdx.x % a.splits;
  const int strip = tile / a.ttiles;
  const int entry = blockIdx.y, wz = entry * a.w_step, xz = entry * a.x_step;
  const int num_kb = ceil_div(a.k, TileT::kBK);
  const int kb0 = split * a.kb_per_split, kb1 = min(num_kb, kb0 + a.kb_per_split);
  const int n0 = strip * S::kStrip, t0 = (tile - strip * a.ttiles) * kTok;
  const int warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S::kStages; ++s) {
      mbar_init(&full[s], 1);              // the producer's arrive_expect_tx (+ the TMA bytes)
      mbar_init(&empty[s], S::kGroups);    // one arrive per consumer warpgroup
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warp >= 4 * S::kGroups) {  // ---- producer warp: one thread issues the TMA loads ----
    // (a producer warpgroup hands its registers to the consumers: 2 x 128 x 232 + 128 x 40)
    if constexpr (dp::producer_warpgroup(kTok)) setmaxnreg_dec<40>();
    if (threadIdx.x == 128 * S::kGroups) {
      const Ring<S::kStages> ring{full, empty};
      if constexpr (kTail) {
        if (t0 + kTok > a.x_rows)
          return produce_strip<TileT, true>(&map_w, &map_x, smem, ring, n0, t0, wz, xz, kb0, kb1,
                                            &tail.map, a.x_rows - t0);
      }
      produce_strip<TileT>(&map_w, &map_x, smem, ring, n0, t0, wz, xz, kb0, kb1);
    }
    return;
  }
  if constexpr (dp::producer_warpgroup(kTok)) {
    static_assert(S::kGroups == 2, "setmaxnreg's split: two consumer warpgroups");
    setmaxnreg_inc<232>();
  }

  // ---- consumers: warpgroup cw owns columns [n0 + 64 cw, n0 + 64 cw + 64) of C ----
  const int cw = warp / 4;
  const bool signals = threadIdx.x % 128 == 0;
  const uint32_t smem_base = smem_addr(smem);
  float d[kTok / 2];
  // The weight rows (within the warpgroup's 64) this thread's accumulators hold: wgmma's fragment
  // rows, or the register-A order of an MN-major tf32 W (loaded into registers: stage_tile.cuh).
  constexpr bool kRegisterA = TileT::kTf32 && !kWK;
  const int row_lo = kRegisterA ? TileT::register_a_row(0) : fragment_row(0);
  const int row_hi = kRegisterA ? TileT::register_a_row(1) : fragment_row(1);
  // The epilogue's bias where the weight's rows are C's columns (the same for every token),
  // loaded now: loaded after the main loop, its latency (the GPU streaming the weight from HBM)
  // was paid by every CTA at its end. Staged tiles: the drain's 8 columns; narrow ones: the
  // thread's two weight rows.
  float bias_pre[kTok % 64 == 0 ? 8 : 2] = {};
  if constexpr (!kSkinny) {
    if constexpr (kTok % 64 == 0) {
      if (!ep.plain) ep.bias8(n0 + 64 * cw + 8 * (threadIdx.x % 8), bias_pre);
    } else {
      bias_pre[0] = ep.bias1(n0 + 64 * cw + row_lo);
      bias_pre[1] = ep.bias1(n0 + 64 * cw + row_hi);
    }
  }
  Ring<S::kStages> ring{full, empty};
  int prev = 0;  // (the last stage is not handed back: the CTA ends with this tile)
  consume<TileT, false>(d, ring, smem_base, cw, signals, kb0, kb1, &prev);
  wgmma_wait<0>();
  fence_operand(d);

  if (a.splits > 1) {  // publish; the tile's last CTA sums the partials (split_reduce: fixed order)
    const int64_t per = static_cast<int64_t>(S::kConsumers) * (kTok / 2);
    const int64_t slot = static_cast<int64_t>(entry) * (gridDim.x / a.splits) + tile;
    float* parts = a.ws.partials + slot * a.splits * per;
    if (!split_reduce<S::kConsumers>(
            parts, per, split, a.splits, a.ws.counters + slot * split_counters(a.splits), a.ws.tag,
            &last_flag, threadIdx.x == 0,
            [] { asm volatile("bar.sync 1, %0;\n" ::"n"(S::kConsumers) : "memory"); }, d,
            static_cast<int>(threadIdx.x)))
      return;
  }
  store_strip_tile<kTok, kSkinny, kRegisterA, S::kConsumers>(ep.entry(entry, a.stride_c, a.stride_d), d, smem,
                                                 cw, n0 + 64 * cw, row_lo, row_hi, t0, bias_pre);
#endif
}

}  // namespace

LaunchConfig strips_config(const GemmProblem& p, bool skinny, const dp::Plan& pl) {
  // (tf32's tokens are made K-major while packed)
  const bool tf32 = p.precision == Precision::TF32;
  const Instance in =
      skinny ? Instance{true, p.op_a == Op::N, tf32 || p.op_b == Op::T, pl.groups, pl.deep}
             : Instance{false, p.op_b == Op::T, tf32 || p.op_a == Op::N, pl.groups, pl.deep};
  LaunchConfig c;
  dispatch_strips(p.precision, pl.tok, in,
                  [&](auto tag, auto tk, auto wk, auto xk, auto sk, auto g, auto deep) {
    using T = typename decltype(tag)::type;
    constexpr int kTok = decltype(tk)::value, kG = decltype(g)::value;
    constexpr bool kDeep = decltype(deep)::value;
    c.kernel = reinterpret_cast<const void*>(strips_kernel<T, kTok, decltype(wk)::value,
                                                           decltype(xk)::value, decltype(sk)::value,
                                                           kG, kDeep>);
    c.smem_bytes = dp::smem_bytes(kTok, kG, kDeep);
    c.block = dim3(dp::threads(kTok, kG));
    return cudaSuccess;
  });
  c.grid = dim3(static_cast<unsigned>(pl.blocks()), pl.entries);
  return c;
}

cudaError_t launch_strips(const GemmProblem& p, bool skinny, const dp::Plan& planned,
                          const dp::Plan& unsplit) {
  return with_prepared_operands(p, skinny ? Tf32Mn::OpA : Tf32Mn::OpB, [&](const PreparedOperands& ops) {
    // ops.a = op(A) (m x k), ops.b = op(B)^T (n x k): the kernel's X and W, or its W and X
    // (skinny). Packing keeps a 16-bit operand's majorness.
    const TmaOperand& w = skinny ? ops.a : ops.b;
    const TmaOperand& x = skinny ? ops.b : ops.a;
    dp::Plan pl = planned;
    void* buf = nullptr;
    const size_t bytes = dp::scratch_bytes(pl);
    if (bytes > 0 && workspace_alloc_split(&buf, bytes, p.stream) != cudaSuccess) {
      buf = nullptr;
      pl = unsplit;  // no scratch: one CTA per tile over the whole depth
    }
    Args a{static_cast<int>(p.k), pl.ttiles, pl.kb_per_split, pl.splits, {nullptr, nullptr, 0},
           w.batched() ? 1 : 0, x.batched() ? 1 : 0, p.stride_c, p.stride_d,
           static_cast<int>(x.mn)};
    if (buf != nullptr) {
      a.ws.partials = static_cast<float*>(buf);
      a.ws.counters = reinterpret_cast<unsigned long long*>(
          a.ws.partials + static_cast<size_t>(pl.blocks()) * pl.entries * pl.strip * pl.tok);
      a.ws.tag = next_split_tag();
    }
    const Instance in{skinny, w.k_major, x.k_major, pl.groups, pl.deep};
    cudaError_t e = dispatch_strips(p.precision, pl.tok, in,
                                    [&](auto tag, auto tk, auto wk, auto xk, auto sk, auto g,
                                        auto deep) {
      using T = typename decltype(tag)::type;
      constexpr int kTok = decltype(tk)::value, kG = decltype(g)::value;
      constexpr bool kWK = decltype(wk)::value, kXK = decltype(xk)::value;
      constexpr bool kDeep = decltype(deep)::value;
      using S = Shape<T, kTok, kWK, kXK, kG, kDeep>;
      constexpr bool kSkinny = decltype(sk)::value;
      CUtensorMap map_w, map_x;
      cudaError_t r = make_tensor_map(&map_w, w, p.precision, S::kStrip);
      if (r == cudaSuccess) r = make_tensor_map(&map_x, x, p.precision, S::Tile::kBBox);
      const dim3 grid(static_cast<unsigned>(pl.blocks()), pl.entries);
      const auto run = [&](auto* kern, const auto& tail) -> cudaError_t {
        if (r == cudaSuccess) r = prepare_function(reinterpret_cast<const void*>(kern), S::kSmem);
        if (r != cudaSuccess) return r;
        return launch_kernel(kern, grid, S::kThreads, S::kSmem, p.stream, map_w, map_x,
                             make_epilogue(p), a, tail);
      };
      // Tail boxes: K-major tokens as C's rows, in tiles of 64 or more (plan.h: tail_box_pays).
      if constexpr (kXK && !kSkinny && kTok >= 64) {
        if (dp::tail_box_pays(x.mn, kTok)) {
          TailBox<true> tail;
          const int rows = static_cast<int>((x.mn % kTok) % S::Tile::kBBox);
          if (r == cudaSuccess)
            r = make_tensor_map(&tail.map, x, p.precision, rows > 0 ? rows : S::Tile::kBBox);
          return run(strips_kernel<T, kTok, kWK, kXK, kSkinny, kG, kDeep, true>, tail);
        }
      }
      return run(strips_kernel<T, kTok, kWK, kXK, kSkinny, kG, kDeep>, TailBox<false>{});
    });
    const cudaError_t ef = workspace_free(buf, p.stream);
    return e != cudaSuccess ? e : ef;
  });
}

}  // namespace gemmlab
