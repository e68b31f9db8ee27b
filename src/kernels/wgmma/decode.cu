// wgmma/decode: 16-bit and tf32 GEMMs with few rows of C (LLM decode, M = 1..256), on Hopper tensor
// cores.
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
// 14336 NN 100%; M <= 16 geometric mean 1.01x (bf16, fp16). Skinny (18:27 UTC, h100-suite-skinny):
// 8192 x 1..64 x 8192 bf16 1.01x of cuBLAS (was 0.73x on wgmma/split_k and gemv/small_m). tf32
// (decode rows only; an MN-major weight through registers, up to 128 rows): decode suite 1.05x
// with wgmma/small (21:33 UTC; 0.89x on gemv/small_m and wgmma/split_k before).
#include "kernels/wgmma/plan.h"
#include "kernels/wgmma/strips.h"
#include "runtime/aligned_rows.h"
#include "runtime/device_props.h"
#include "runtime/plan_choice.h"
#include "runtime/workspace.h"

namespace gemmlab {
namespace {

namespace dp = wgmma_decode_plan;

dp::Roles roles_of(const GemmProblem& p) {
  return dp::roles_of(dp::mode_of(p.m, p.n, p.op_a == Op::N), p.m, p.n);
}

// x_k_major: the tokens' majorness (MN-major tokens take a 64-wide chunk: tok >= 64).
dp::Plan plan_of(const GemmProblem& p, bool scratch, bool x_k_major) {
  const dp::Roles r = roles_of(p);
  return dp::plan(r.tokens, r.weights, dp::planned_k(p.k, p.precision), current_device_desc(),
                  scratch, forced_plan().splits, x_k_major);
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

// Whether the tokens (X) are K-major, in p as kernel_view made it.
bool tokens_k_major(const GemmProblem& p) {
  return roles_of(p).skinny ? p.op_b == Op::T : p.op_a == Op::N;
}

const char* unsupported(const GemmProblem& p) {
  const GemmProblem q = kernel_view(p);
  const dp::Mode mode = dp::mode_of(q.m, q.n, q.op_a == Op::N);
  if (mode == dp::Mode::None)
    return "needs m <= 256 with op(A) = A (decode), or n <= 64 (skinny)";
  if (mode == dp::Mode::Skinny && q.precision == Precision::TF32)
    return "tf32 needs m <= 256 with op(A) = A (the tokens K-major: tf32 wgmma reads B only so)";
  if (dp::tokens(q.m) > dp::max_tokens(q.precision, q.op_b == Op::T))
    return "tf32 with op(B) = B takes m <= 128 (the weight goes through registers, and 256 "
           "tokens would spill: wgmma/small's tiles take it)";
  const int64_t weights = dp::roles_of(mode, q.m, q.n).weights;
  if (weights > INT32_MAX - 256) return "needs the weight's rows < 2^31 - 256";
  return nullptr;
}

LaunchConfig config(const GemmProblem& q) {
  const GemmProblem p = kernel_view(q);
  return strips_config(p, roles_of(p).skinny, plan_of(p, true, tokens_k_major(p)));
}

cudaError_t launch_view(const GemmProblem& p) {
  const bool xk = tokens_k_major(p);
  return launch_strips(p, roles_of(p).skinny, plan_of(p, true, xk), plan_of(p, false, xk));
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
  const bool xk = tokens_k_major(p);
  int n = 0;
  int last = 0;
  for (int s = 1; s <= dp::kMaxSplits && n < max; s *= 2) {
    const int got = dp::plan(r.tokens, r.weights, dp::planned_k(p.k, p.precision),
                             current_device_desc(), true, s, xk).splits;
    if (got == last) continue;
    out[n++] = PlanChoice{0, got};
    last = got;
  }
  return n;
}

// Ahead of gemv/mma (250), wgmma/split_k (220) and wgmma/03 (200) where it was measured faster;
// skinny problems of 16 (33 with K-major tokens) columns or more go to wgmma/small (240) where it
// takes them, and a deep K over a small C to wgmma/split_k's slices (split_k_takes).
int auto_priority(const GemmProblem& q) {
  if (split_k_takes(q)) return 0;
  const GemmProblem p = kernel_view(q);
  if (!dp::auto_takes(p.m, p.n, p.k, p.batch, p.op_a == Op::N, p.precision == Precision::TF32))
    return 0;
  if (roles_of(p).skinny &&
      wgmma_small_plan::takes_skinny(p.m, p.n, p.k, p.batch, current_device_desc(),
                                     p.op_b == Op::T))
    return 0;
  return 260;
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
    .dtypes = kBF16 | kFP16 | kTF32,
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
