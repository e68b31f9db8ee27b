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
// Seed: beyond the seeds (issue: decode shapes).
// Measured (H100, cuBLAS in the same run, docs/results/h100-decode.md, 2026-11-24 00:17 UTC): bf16
// 1 x 4096 x 4096 NN 15.9 us (101%, 2.1 TB/s), 16 x 14336 x 4096 NN 110% (2.7 TB/s), 128 x 4096 x
// 14336 NN 100%; M <= 16 geometric mean 1.01x (bf16, fp16); 128 x 4096 x 4096 still 70%.
#include "kernels/common/launch.cuh"
#include "kernels/common/split_k.cuh"
#include "kernels/wgmma/host.h"
#include "kernels/wgmma/plan.h"
#include "kernels/wgmma/sm90.cuh"
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

// kTok tokens; kWK: W (op(B)^T, the kernel's A) is K-major (B stored n x k: op(B) = B^T).
template <typename T, int kTok, bool kWK>
struct Shape {
  static constexpr int kGroups = dp::groups(kTok);
  static constexpr int kStrip = 64 * kGroups;
  static constexpr int kStages = dp::stages(kTok);
  static constexpr int kThreads = dp::threads(kTok);
  static constexpr int kConsumers = 128 * kGroups;
  static constexpr int kSmem = dp::smem_bytes(kTok);
  using Tile = StageTile<T, kStrip, kTok, kWK, true>;
  static_assert(kStages * Tile::kBytes + 1024 + 2 * kStages * 8 <= kSmem, "smem plan");
};

template <typename T, int kTok, bool kWK>
__global__ void __launch_bounds__(dp::threads(kTok), 1)
    decode_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_x,
                  Epilogue ep, Args a) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Shape<T, kTok, kWK>;
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
  // d[4j + q]: column n (fragment row 16w + g, + 8 for q >= 2) of C, token 8j + 2t + (q & 1).
  const int n_lo = n0 + 64 * cw + fragment_row(0), n_hi = n0 + 64 * cw + fragment_row(1);
  const int t = threadIdx.x % 4;
#pragma unroll
  for (int j = 0; j < kTok / 8; ++j) {
    const int tok = 8 * j + 2 * t;
    if (tok < ep.m) {
      ep.store(tok, n_lo, d[4 * j + 0]);
      ep.store(tok, n_hi, d[4 * j + 2]);
    }
    if (tok + 1 < ep.m) {
      ep.store(tok + 1, n_lo, d[4 * j + 1]);
      ep.store(tok + 1, n_hi, d[4 * j + 3]);
    }
  }
#endif
}

using KernelFn = void (*)(CUtensorMap, CUtensorMap, Epilogue, Args);

// Calls f(TypeTag<T>, integral_constant<tok>, bool_constant<w_k_major>).
template <typename F>
cudaError_t dispatch_decode(Precision prec, int tok, bool w_k_major, F&& f) {
  auto by_major = [&](auto tag, auto tk) -> cudaError_t {
    if (w_k_major) return f(tag, tk, std::true_type{});
    return f(tag, tk, std::false_type{});
  };
  auto by_tok = [&](auto tag) -> cudaError_t {
    switch (tok) {
      case 8: return by_major(tag, std::integral_constant<int, 8>{});
      case 16: return by_major(tag, std::integral_constant<int, 16>{});
      case 32: return by_major(tag, std::integral_constant<int, 32>{});
      case 64: return by_major(tag, std::integral_constant<int, 64>{});
      case 128: return by_major(tag, std::integral_constant<int, 128>{});
      default: return by_major(tag, std::integral_constant<int, 256>{});
    }
  };
  if (prec == Precision::BF16) return by_tok(TypeTag<__nv_bfloat16>{});
  if (prec == Precision::FP16) return by_tok(TypeTag<__half>{});
  return cudaErrorInvalidValue;
}

dp::Plan plan_of(const GemmProblem& p, bool scratch) {
  return dp::plan(p.m, p.n, p.k, current_device_desc(), scratch, forced_plan().splits);
}

const char* unsupported(const GemmProblem& p) {
  if (p.m > dp::kMaxM) return "needs m <= 256 (a decode kernel)";
  if (p.op_a != Op::N) return "needs op(A) = A (rows of A along K)";
  if (p.n > INT32_MAX - 256) return "needs n < 2^31 - 256";
  return nullptr;
}

LaunchConfig config(const GemmProblem& p) {
  const dp::Plan pl = plan_of(p, true);
  LaunchConfig c;
  dispatch_decode(p.precision, pl.tok, p.op_b == Op::T, [&](auto tag, auto tk, auto wk) {
    using T = typename decltype(tag)::type;
    constexpr int kTok = decltype(tk)::value;
    c.kernel = reinterpret_cast<const void*>(decode_kernel<T, kTok, decltype(wk)::value>);
    c.smem_bytes = dp::smem_bytes(kTok);
    c.block = dim3(dp::threads(kTok));
    return cudaSuccess;
  });
  c.grid = dim3(static_cast<unsigned>(pl.blocks()));
  return c;
}

cudaError_t launch(const GemmProblem& p) {
  return with_prepared_operands(p, /*tf32_register_a=*/false, [&](const PreparedOperands& ops) {
    // ops.a = op(A) (m x k, K-major: op(A) = A), ops.b = op(B)^T (n x k): the kernel's X and W.
    dp::Plan pl = plan_of(p, true);
    void* buf = nullptr;
    const size_t bytes = dp::scratch_bytes(pl);
    if (bytes > 0 && workspace_alloc_split(&buf, bytes, p.stream) != cudaSuccess) {
      buf = nullptr;
      pl = plan_of(p, false);  // no scratch: one CTA per strip over the whole depth
    }
    Args a{static_cast<int>(p.k), pl.kb_per_split, pl.splits, {nullptr, nullptr, 0}};
    if (buf != nullptr) {
      a.ws.partials = static_cast<float*>(buf);
      a.ws.counters = reinterpret_cast<unsigned long long*>(
          a.ws.partials + static_cast<size_t>(pl.blocks()) * pl.strip * pl.tok);
      a.ws.tag = next_split_tag();
    }
    cudaError_t e = dispatch_decode(p.precision, pl.tok, ops.b.k_major, [&](auto tag, auto tk, auto wk) {
      using T = typename decltype(tag)::type;
      constexpr int kTok = decltype(tk)::value;
      using S = Shape<T, kTok, decltype(wk)::value>;
      CUtensorMap map_w, map_x;
      cudaError_t r = make_tensor_map(&map_w, ops.b, p.precision, S::kStrip);
      if (r == cudaSuccess) r = make_tensor_map(&map_x, ops.a, p.precision, kTok);
      auto* kern = decode_kernel<T, kTok, decltype(wk)::value>;
      if (r == cudaSuccess) r = prepare_function(reinterpret_cast<const void*>(kern), S::kSmem);
      if (r != cudaSuccess) return r;
      return launch_kernel(kern, dim3(static_cast<unsigned>(pl.blocks())), S::kThreads, S::kSmem,
                           p.stream, map_w, map_x, make_epilogue(p), a);
    });
    const cudaError_t ef = workspace_free(buf, p.stream);
    return e != cudaSuccess ? e : ef;
  });
}

// Plan variants for gemm-tune: every depth split the planner could take (1, 2, 4, ... 64).
int variants(const GemmProblem& p, PlanChoice* out, int max) {
  int n = 0;
  int last = 0;
  for (int s = 1; s <= dp::kMaxSplits && n < max; s *= 2) {
    const int got = dp::plan(p.m, p.n, p.k, current_device_desc(), true, s).splits;
    if (got == last) continue;
    out[n++] = PlanChoice{0, got};
    last = got;
  }
  return n;
}

// Ahead of gemv/mma (250), wgmma/split_k (220) and wgmma/03 (200) where it was measured faster.
int auto_priority(const GemmProblem& p) {
  return dp::auto_takes(p.m, p.n, p.k, p.batch) ? 260 : 0;
}

}  // namespace

extern const KernelDesc kWgmmaDecode = {
    .name = "wgmma/decode",
    .step = 5,
    .family = "wgmma",
    .seed = "beyond the seeds",
    .summary = "m <= 256, 16-bit: swapped (tokens on wgmma's N side, m64n8..256k16), a TMA producer "
               "warp and a deep ring per 64/128-column strip, depth splits summed in order",
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
