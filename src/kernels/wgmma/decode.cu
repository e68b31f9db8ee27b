// wgmma/decode: 16-bit GEMMs with few rows of C (LLM decode, M = 1..256), on Hopper tensor cores.
//
// Bottleneck attacked: such a problem streams B (the weights) once and is bound by HBM. wgmma/03
// puts the rows of C on wgmma's M side in 128-row tiles: at M <= 64 most of each tile is padding,
// and its 16..56 tiles of 128 x 256 must be split in depth 5-8 ways to fill 132 SMs, each split
// writing a 128 KB partial as large as its share of B (bf16 128 x 4096 x 4096: 28.5 us, cuBLAS
// 16.9). gemv/mma reads B with ordinary loads and reaches ~1.2-2.5 TB/s.
// What changed: the problem runs swapped, C^T = op(B)^T op(A)^T. The columns of C are wgmma's
// 64-row M side (one consumer warpgroup per 64; two at >= 64 tokens) and the rows of C, the
// tokens, its N side, 8 .. 256 wide (the smallest power of two >= M; m64nNk16), so no lane works
// on padding rows. A CTA owns a strip of columns and a range of K: a producer warp keeps a deep
// ring of TMA stages full (W: 64 or 128 columns x 64 of K, K- or MN-major as B is stored; X: the
// tokens x 64 of K), two CTAs per SM, and the strips x splits grid is the planner's
// (wgmma/plan.h: waves x depth + partials). The splits of a strip publish their partials and the
// last to arrive sums them in split order (split_k.cuh): deterministic, beta * C once.
// Skinny C (N <= 64 columns, M large: the transposed decode) runs the same kernel unswapped: op(A)
// is the weight and the columns of C the tokens; a B stored k x n (NN) is read MN-major, one
// 64-wide chunk per stage (m64n64k16 with 64 - n columns of zeros: the kernel is bound by
// streaming A, not by the tensor cores).
// Seed: beyond the seeds (issue: decode shapes).
// Measured (H100, cuBLAS in the same run, docs/results/h100-decode.md, 2026-11-24 00:17 UTC): bf16
// 1 x 4096 x 4096 NN 15.9 us (101%, 2.1 TB/s), 16 x 14336 x 4096 NN 110% (2.7 TB/s), 128 x 4096 x
// 14336 NN 100%; M <= 16 geometric mean 1.01x (bf16, fp16); 128 x 4096 x 4096 still 70%.
#include "kernels/common/launch.cuh"
#include "kernels/common/split_k.cuh"
#include "kernels/wgmma/host.h"
#include "kernels/wgmma/plan.h"
#include "kernels/wgmma/sm90.cuh"
#include "runtime/aligned_rows.h"
#include "runtime/device_props.h"
#include "runtime/plan_choice.h"
#include "runtime/workspace.h"

namespace gemmlab {
namespace {

using namespace sm90;
namespace dp = wgmma_decode_plan;

struct Args {
  int k;
  int kb_per_split, splits;
  SplitWorkspace ws;
};

// kTok tokens; kWK: W (the kernel's A: op(B)^T, or op(A) when skinny) is K-major; kXK: X (the
// tokens) is K-major (always for decode; skinny NN reads B's k x n rows MN-major, kTok = 64).
template <typename T, int kTok, bool kWK, bool kXK = true>
struct Shape {
  static constexpr int kGroups = dp::groups(kTok, kXK);
  static constexpr int kStrip = 64 * kGroups;
  static constexpr int kStages = dp::stages(kTok, kXK);
  static constexpr int kThreads = dp::threads(kTok, kXK);
  static constexpr int kConsumers = 128 * kGroups;
  static constexpr int kSmem = dp::smem_bytes(kTok, kXK);
  using Tile = StageTile<T, kStrip, kTok, kWK, kXK>;
  static_assert(kStages * Tile::kBytes + 1024 + 2 * kStages * 8 <= kSmem, "smem plan");
};

// kSkinny: the weight's rows are C's rows and the tokens its columns (else the other way round).
template <typename T, int kTok, bool kWK, bool kXK, bool kSkinny>
__global__ void __launch_bounds__(dp::threads(kTok, kXK), 1)
    decode_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_x,
                  Epilogue ep, Args a) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Shape<T, kTok, kWK, kXK>;
  using TileT = typename S::Tile;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + S::kStages * TileT::kBytes);
  uint64_t* empty = full + S::kStages;
  __shared__ int last_flag;

  const int strip = blockIdx.x / a.splits, split = blockIdx.x % a.splits;
  const int num_kb = ceil_div(a.k, dp::kBK);
  const int kb0 = split * a.kb_per_split, kb1 = min(num_kb, kb0 + a.kb_per_split);
  const int n0 = strip * S::kStrip;
  const int warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S::kStages; ++s) {
      mbar_init(&full[s], 1);              // the producer's arrive_expect_tx (+ the TMA bytes)
      mbar_init(&empty[s], S::kGroups);    // one arrive per consumer warpgroup
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warp == 4 * S::kGroups) {  // ---- producer warp: one thread issues the TMA loads ----
    if (threadIdx.x % 32 == 0) {
      prefetch_tensor_map(&map_w);
      prefetch_tensor_map(&map_x);
      int s = 0;
      uint32_t phase = 0;
      for (int kb = kb0; kb < kb1; ++kb) {
        mbar_wait(&empty[s], phase ^ 1);  // the first pass waits on the phase before the first
        uint8_t* stage = smem + s * TileT::kBytes;
        mbar_arrive_expect_tx(&full[s], TileT::kBytes);  // OOB zero-fill counts full boxes
        TileT::load_a(&map_w, stage, &full[s], n0, kb * dp::kBK, 0);
        TileT::load_b(&map_x, stage, &full[s], 0, kb * dp::kBK, 0);
        if (++s == S::kStages) s = 0, phase ^= 1;
      }
    }
    return;
  }

  // ---- consumers: warpgroup cw owns columns [n0 + 64 cw, n0 + 64 cw + 64) of C ----
  const int cw = warp / 4;
  const bool signals = threadIdx.x % 128 == 0;
  const uint32_t smem_base = smem_addr(smem);
  float d[kTok / 2];
  int s = 0, prev = 0;
  uint32_t phase = 0;
  for (int kb = kb0; kb < kb1; ++kb) {
    mbar_wait(&full[s], phase);
    wgmma_fence();
    TileT::mma(d, smem_base + s * TileT::kBytes, cw, kb > kb0);
    wgmma_commit();
    wgmma_wait<1>();  // the previous block's wgmmas have retired: its stage goes back
    if (kb > kb0 && signals) mbar_arrive(&empty[prev]);
    prev = s;
    if (++s == S::kStages) s = 0, phase ^= 1;
  }
  wgmma_wait<0>();
  fence_operand(d);

  if (a.splits > 1) {  // publish; the strip's last CTA sums the partials in split order
    const int64_t per = static_cast<int64_t>(S::kConsumers) * (kTok / 2);
    float* parts = a.ws.partials + static_cast<int64_t>(strip) * a.splits * per;
    split_publish<S::kConsumers>(parts + split * per, d);
    if (!split_arrive_last_group(a.ws.counters + strip, a.ws.tag, a.splits, &last_flag,
                                 threadIdx.x == 0, [] {
                                   asm volatile("bar.sync 1, %0;\n" ::"n"(S::kConsumers) : "memory");
                                 }))
      return;
    split_sum<S::kConsumers>(parts, a.splits, per, d);
  }
  // d[4j + q]: weight row w (fragment row 16w + g, + 8 for q >= 2), token 8j + 2t + (q & 1);
  // C's (token, w) element, or (w, token) when skinny.
  const int w_lo = n0 + 64 * cw + fragment_row(0), w_hi = n0 + 64 * cw + fragment_row(1);
  const int t = threadIdx.x % 4;
  const int tokens = kSkinny ? ep.n : ep.m;
  const auto put = [&](int tok, int w, float v) {
    if constexpr (kSkinny) ep.store(w, tok, v);
    else ep.store(tok, w, v);
  };
#pragma unroll
  for (int j = 0; j < kTok / 8; ++j) {
    const int tok = 8 * j + 2 * t;
    if (tok < tokens) {
      put(tok, w_lo, d[4 * j + 0]);
      put(tok, w_hi, d[4 * j + 2]);
    }
    if (tok + 1 < tokens) {
      put(tok + 1, w_lo, d[4 * j + 1]);
      put(tok + 1, w_hi, d[4 * j + 3]);
    }
  }
#endif
}

using KernelFn = void (*)(CUtensorMap, CUtensorMap, Epilogue, Args);

// Which kernel instance runs: the mode and the majorness of W and X (after packing).
struct Instance {
  bool skinny, w_k_major, x_k_major;
};

// Calls f(TypeTag<T>, integral_constant<tok>, bool_constant<w_k_major>, bool_constant<x_k_major>,
// bool_constant<skinny>). Instances: decode (X K-major, 8..256 tokens), skinny with X K-major
// (8..64 tokens) and skinny with X MN-major (64 tokens).
template <typename F>
cudaError_t dispatch_decode(Precision prec, int tok, Instance in, F&& f) {
  using std::false_type;
  using std::true_type;
  auto by_w = [&](auto tag, auto tk, auto xk, auto sk) -> cudaError_t {
    if (in.w_k_major) return f(tag, tk, true_type{}, xk, sk);
    return f(tag, tk, false_type{}, xk, sk);
  };
  auto by_mode = [&](auto tag, auto tk) -> cudaError_t {
    constexpr int kTok = decltype(tk)::value;
    if (!in.skinny) return by_w(tag, tk, true_type{}, false_type{});
    if constexpr (kTok <= dp::kMaxSkinnyN) {
      if (in.x_k_major) return by_w(tag, tk, true_type{}, true_type{});
      if constexpr (kTok == 64) return by_w(tag, tk, false_type{}, true_type{});
    }
    return cudaErrorInvalidValue;
  };
  auto by_tok = [&](auto tag) -> cudaError_t {
    switch (tok) {
      case 8: return by_mode(tag, std::integral_constant<int, 8>{});
      case 16: return by_mode(tag, std::integral_constant<int, 16>{});
      case 32: return by_mode(tag, std::integral_constant<int, 32>{});
      case 64: return by_mode(tag, std::integral_constant<int, 64>{});
      case 128: return by_mode(tag, std::integral_constant<int, 128>{});
      default: return by_mode(tag, std::integral_constant<int, 256>{});
    }
  };
  if (prec == Precision::BF16) return by_tok(TypeTag<__nv_bfloat16>{});
  if (prec == Precision::FP16) return by_tok(TypeTag<__half>{});
  return cudaErrorInvalidValue;
}

dp::Roles roles_of(const GemmProblem& p) {
  return dp::roles_of(dp::mode_of(p.m, p.n, p.op_a == Op::N), p.m, p.n);
}

// x_k_major: the tokens' majorness (MN-major tokens take a 64-wide chunk: tok >= 64).
dp::Plan plan_of(const GemmProblem& p, bool scratch, bool x_k_major) {
  const dp::Roles r = roles_of(p);
  return dp::plan(r.tokens, r.weights, p.k, current_device_desc(), scratch, forced_plan().splits,
                  x_k_major);
}

// One row (column) of C whose operand is a contiguous vector stored MN-major (lda or ldb 1: a
// k x 1 matrix) is the same vector K-major: read it so, as a K-major operand needs no packing
// and takes the narrowest tokens.
GemmProblem vectors_as_k_major(const GemmProblem& p) {
  GemmProblem q = p;
  const int64_t ld = (p.k + 7) / 8 * 8;  // only row 0 is read; TMA wants a 16-byte pitch
  if (p.m == 1 && p.op_a == Op::T && p.lda == 1) q.op_a = Op::N, q.lda = ld;
  if (p.n == 1 && p.op_b == Op::N && p.ldb == 1) q.op_b = Op::T, q.ldb = ld;
  return q;
}

// Skinny NN with at most 8 columns: B's k rows of n elements are 16 bytes or less, and TMA
// fetches each as a request of its own, twice the time of the same tokens K-major (H100, bf16
// 8192 x 8 x 8192: 96 us read MN-major, 50 us NT). launch copies such a B transposed (n x k) into
// a workspace first: one small copy kernel (k x n elements).
constexpr int64_t kTransposeTokensUpTo = 8;
bool transposes_tokens(const GemmProblem& p) {
  return p.op_b == Op::N && p.n <= kTransposeTokensUpTo &&
         dp::mode_of(p.m, p.n, p.op_a == Op::N) == dp::Mode::Skinny;
}

// The problem as the kernel reads it: vectors as K-major, and a B that transposes_tokens as the
// n x k matrix launch copies it to (B still points at the original; launch moves it).
GemmProblem kernel_view(const GemmProblem& q) {
  GemmProblem p = vectors_as_k_major(q);
  if (transposes_tokens(p)) p.op_b = Op::T, p.ldb = aligned_ld_16(p.k, input_bytes(p.precision));
  return p;
}

// The instance for p (as kernel_view made it), from the operands' stored majorness:
// wgmma transposes 16-bit operands itself, so packing keeps the majorness.
Instance instance_of(const GemmProblem& p) {
  const bool skinny = roles_of(p).skinny;
  const bool a_k = p.op_a == Op::N, b_k = p.op_b == Op::T;  // op(A) rows, op(B)^T rows along K
  return skinny ? Instance{true, a_k, b_k} : Instance{false, b_k, a_k};
}

const char* unsupported(const GemmProblem& p) {
  const GemmProblem q = kernel_view(p);
  const dp::Mode mode = dp::mode_of(q.m, q.n, q.op_a == Op::N);
  if (mode == dp::Mode::None)
    return "needs m <= 256 with op(A) = A (decode), or n <= 64 (skinny)";
  const int64_t weights = dp::roles_of(mode, q.m, q.n).weights;
  if (weights > INT32_MAX - 256) return "needs the weight's rows < 2^31 - 256";
  return nullptr;
}

LaunchConfig config(const GemmProblem& q) {
  const GemmProblem p = kernel_view(q);
  const Instance in = instance_of(p);
  const dp::Plan pl = plan_of(p, true, in.x_k_major);
  LaunchConfig c;
  dispatch_decode(p.precision, pl.tok, in, [&](auto tag, auto tk, auto wk, auto xk, auto sk) {
    using T = typename decltype(tag)::type;
    constexpr int kTok = decltype(tk)::value;
    c.kernel = reinterpret_cast<const void*>(
        decode_kernel<T, kTok, decltype(wk)::value, decltype(xk)::value, decltype(sk)::value>);
    c.smem_bytes = dp::smem_bytes(kTok, decltype(xk)::value);
    c.block = dim3(dp::threads(kTok, decltype(xk)::value));
    return cudaSuccess;
  });
  c.grid = dim3(static_cast<unsigned>(pl.blocks()));
  return c;
}

cudaError_t launch_view(const GemmProblem& p) {
  const Instance in = instance_of(p);
  return with_prepared_operands(p, /*tf32_register_a=*/false, [&](const PreparedOperands& ops) {
    // ops.a = op(A) (m x k), ops.b = op(B)^T (n x k): the kernel's X and W (decode: op(A) = A,
    // K-major), or its W and X (skinny).
    const TmaOperand& w = in.skinny ? ops.a : ops.b;
    const TmaOperand& x = in.skinny ? ops.b : ops.a;
    dp::Plan pl = plan_of(p, true, in.x_k_major);
    void* buf = nullptr;
    const size_t bytes = dp::scratch_bytes(pl);
    if (bytes > 0 && workspace_alloc_split(&buf, bytes, p.stream) != cudaSuccess) {
      buf = nullptr;
      pl = plan_of(p, false, in.x_k_major);  // no scratch: one CTA per strip over the whole depth
    }
    Args a{static_cast<int>(p.k), pl.kb_per_split, pl.splits, {nullptr, nullptr, 0}};
    if (buf != nullptr) {
      a.ws.partials = static_cast<float*>(buf);
      a.ws.counters = reinterpret_cast<unsigned long long*>(
          a.ws.partials + static_cast<size_t>(pl.blocks()) * pl.strip * pl.tok);
      a.ws.tag = next_split_tag();
    }
    const Instance got{in.skinny, w.k_major, x.k_major};
    cudaError_t e = dispatch_decode(p.precision, pl.tok, got, [&](auto tag, auto tk, auto wk, auto xk, auto sk) {
      using T = typename decltype(tag)::type;
      constexpr int kTok = decltype(tk)::value;
      constexpr bool kWK = decltype(wk)::value, kXK = decltype(xk)::value;
      using S = Shape<T, kTok, kWK, kXK>;
      CUtensorMap map_w, map_x;
      cudaError_t r = make_tensor_map(&map_w, w, p.precision, S::kStrip);
      if (r == cudaSuccess) r = make_tensor_map(&map_x, x, p.precision, kTok);
      auto* kern = decode_kernel<T, kTok, kWK, kXK, decltype(sk)::value>;
      if (r == cudaSuccess) r = prepare_function(reinterpret_cast<const void*>(kern), S::kSmem);
      if (r != cudaSuccess) return r;
      return launch_kernel(kern, dim3(static_cast<unsigned>(pl.blocks())), S::kThreads, S::kSmem,
                           p.stream, map_w, map_x, make_epilogue(p), a);
    });
    const cudaError_t ef = workspace_free(buf, p.stream);
    return e != cudaSuccess ? e : ef;
  });
}

cudaError_t launch(const GemmProblem& q) {
  GemmProblem p = kernel_view(q);
  if (!transposes_tokens(vectors_as_k_major(q))) return launch_view(p);
  const int eb = input_bytes(p.precision);
  void* bt = nullptr;
  cudaError_t e = workspace_alloc(&bt, static_cast<size_t>(p.n * p.ldb * eb), p.stream);
  if (e != cudaSuccess) return launch_view(vectors_as_k_major(q));  // read B as it is stored
  e = copy_matrix(q.B, q.ldb, bt, p.ldb, p.k, p.n, eb, /*transpose=*/true, p.stream);
  p.B = bt;
  if (e == cudaSuccess) e = launch_view(p);
  const cudaError_t ef = workspace_free(bt, p.stream);
  return e != cudaSuccess ? e : ef;
}

// Plan variants for gemm-tune: every depth split the planner could take (1, 2, 4, ... 64).
int variants(const GemmProblem& q, PlanChoice* out, int max) {
  const GemmProblem p = kernel_view(q);
  const dp::Roles r = roles_of(p);
  const bool xk = instance_of(p).x_k_major;
  int n = 0;
  int last = 0;
  for (int s = 1; s <= dp::kMaxSplits && n < max; s *= 2) {
    const int got = dp::plan(r.tokens, r.weights, p.k, current_device_desc(), true, s, xk).splits;
    if (got == last) continue;
    out[n++] = PlanChoice{0, got};
    last = got;
  }
  return n;
}

// Ahead of gemv/mma (250), wgmma/split_k (220) and wgmma/03 (200) where it was measured faster.
int auto_priority(const GemmProblem& q) {
  const GemmProblem p = kernel_view(q);
  return dp::auto_takes(p.m, p.n, p.k, p.batch, p.op_a == Op::N) ? 260 : 0;
}

}  // namespace

extern const KernelDesc kWgmmaDecode = {
    .name = "wgmma/decode",
    .step = 5,
    .family = "wgmma",
    .seed = "beyond the seeds",
    .summary = "m <= 256 (or n <= 64), 16-bit: the few rows (columns) of C on wgmma's N side "
               "(m64n8..256k16), a TMA producer warp and a deep ring per 64/128-wide strip of the "
               "weight, depth splits summed in order",
    .dtypes = kBF16 | kFP16,
    .min_cc = 90,
    .auto_priority = 260,
    .unsupported = unsupported,
    .launch = launch,
    .config = config,
    .auto_priority_for = auto_priority,
    .features = kLargeOperands,
    .variants = variants,
};

}  // namespace gemmlab
