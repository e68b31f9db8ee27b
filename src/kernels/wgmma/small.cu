// wgmma/small: 16-bit and tf32 GEMMs whose C is too small for wgmma/03's 128 x 256 tiles to fill
// the SMs: small squares, deep K over a small C, decode rows from 128 to 256, on Hopper tensor
// cores.
//
// Bottleneck attacked: few, large tiles. bf16 1024^3 on wgmma/02 is 64 CTAs of 128 x 128 on 132
// SMs (14.5 us by ncu; cuBLAS's 128 CTAs of 128 x 64: 8.3 us); 128^3 is one CTA (7.1 us against
// cuBLAS's 32 CTAs, 4.0 us); 128 x 128 x 8192 on wgmma/split_k is 32 slices of a 128 x 256 tile
// whose other half is padding, and a second kernel to sum them (11.6 + 5.8 us; cuBLAS 64 x 32
// tiles split-K, 6.6 + 4.5) (H100, 2026-11-24, docs/history.md: wgmma/small).
// What changed: the strips kernel (strips.cu, wgmma/decode's) over a grid of tiles: 64 x tok
// (tok = 8, 16, 32, 64: one consumer warpgroup, two CTAs per SM) or 128 x tok (64, 128, 192, 256:
// 192 fills one wave where 256 leaves SMs idle and 128 needs two, bf16 1536^3; and 64 x 8..64
// with a deep ring of 12-16 stages in one CTA per SM, for decode rows that fill the SMs once; and
// 64 x 128 on one warpgroup with an 8-stage ring: one m64n128 wgmma per k-step reads its stage
// where 128 x 64 takes two of n64, each reading its own rows and the same tokens, so a quarter
// fewer shared-memory bytes per flop for the same CTA count; and 192 x 96 on three warpgroups,
// 1536^3 in 128 CTAs where 128 x 192 makes 96, for a 16-bit plain fp32 D only; and 128 x 320
// for 257..320 tokens as C's rows, 16-bit: two wgmmas per k-step, a producer warpgroup and
// setmaxnreg for its 160 accumulators, so the weight is streamed once (also over C's columns
// where op(A) = A^T, the tokens K-major or in five MN-major chunks); and 128 x 208 for
// 193..208 tokens, its last 16 written element by element), the
// tokens being C's rows (op(A) = A) or columns, split in depth where the tiles leave SMs idle;
// the splits of a tile sum their partials in a fixed order inside the kernel (no second launch,
// deterministic); a strided batch is one launch (an entry per grid row, 3-D tensor maps). tf32
// takes the tokens K-major: C's rows (op(A) = A, or A^T transposed while packed), or, where
// op(A) = A^T and 4 n <= m, C's columns (op(B)^T, transposed while packed where op(B) = B), and an
// MN-major weight through registers, in tiles of at most 192 tokens (plan.h: roles_of,
// max_tokens). The tile and the splits come from a cost model (wgmma/plan.h: wgmma_small_plan);
// every (tile, splits) pair is a plan variant that gemm-tune measures.
// Seed: beyond the seeds (issue: small squares and deep K).
// Measured (H100, cuBLAS in the same run, 2026-11-25 04:39 UTC, docs/results/h100-suite-small):
// small suite bf16 0.99x (1536^3 94%), tf32 1.13x; 128 x 320 (2026-11-26 23:33 UTC): bf16
// 320 x 14336 x 4096 NT 448 -> 582 TFLOP/s (74% -> 96%); 128 x 208: 200 x 13824 x 5120 NT 85% ->
// 100%; tf32 C's columns as tokens: 2048 x 32 x 2048 TT 32% -> 103%,
// 4096 x 128 x 4096 TN 33% -> 90% (docs/history.md, wgmma/small and cliffs). H200 (2026-11-28
// 16:05 UTC, docs/results/h200-tail-boxes.txt): the last token tile's smaller box, bf16
// 144 x 4096 x 4096 NT 31.7 -> 18.0 us (cuBLAS 17.1); one-wave split counts (21:01 UTC,
// h200-wave-fill-splits.txt): bf16 96 x 2560 x 10240 NN 156 -> 227 TFLOP/s (cuBLAS 246).
// 128 x 320 over C's columns (H100, 2026-12-08 01:15 UTC, h100-suite-medium): bf16 TN
// 1600 x 3200 x 3200 76% -> 100% of cuBLAS, 1280 x 4096 x 2048 80% -> 99%.
#include <algorithm>

#include "kernels/common/gemm_common.cuh"
#include "kernels/wgmma/plan.h"
#include "kernels/wgmma/strips.h"
#include "runtime/device_props.h"
#include "runtime/plan_choice.h"

namespace gemmlab {
namespace {

namespace dp = wgmma_decode_plan;
namespace sp = wgmma_small_plan;

// tf32 reads the tokens K-major only: an MN-major token operand is transposed while it is packed
// (launch_strips), so the plans see the tokens as the kernel then reads them.
sp::Roles roles_of(const GemmProblem& p) {
  return sp::roles_of(p.m, p.n, p.op_a == Op::N, p.op_b == Op::T,
                      p.precision == Precision::TF32);
}

// The most tokens per tile: the weight is op(B)^T (op(A) when skinny).
int max_tok(const GemmProblem& p) {
  const sp::Roles r = roles_of(p);
  return sp::max_tile_tokens(p.precision, r.skinny, r.xk,
                             r.skinny ? p.op_a == Op::N : p.op_b == Op::T);
}

int max_groups(const GemmProblem& p) {
  return sp::max_groups(p.precision, roles_of(p).skinny, plain_epilogue(p));
}

dp::Plan plan_of(const GemmProblem& p, bool scratch, PlanChoice c) {
  const sp::Roles r = roles_of(p);
  return sp::plan(r.tokens, r.weights, dp::planned_k(p.k, p.precision), current_device_desc(),
                  scratch, r.xk, c.tile, c.splits, static_cast<int>(p.batch), max_tok(p),
                  max_groups(p), !r.skinny);
}

const char* unsupported(const GemmProblem& p) {
  if (p.m > INT32_MAX - 256 || p.n > INT32_MAX - 256) return "needs m, n < 2^31 - 256";
  if ((p.m / 64 + 1) * (p.n / 8 + 1) > (int64_t{1} << 30)) return "more than 2^30 tiles";
  if (p.batch > 65535) return "needs batch <= 65535 (one grid row per entry)";
  return nullptr;
}

LaunchConfig config(const GemmProblem& p) {
  return strips_config(p, roles_of(p).skinny, plan_of(p, true, forced_plan()));
}

cudaError_t launch(const GemmProblem& p) {
  const PlanChoice c = forced_plan();
  return launch_strips(p, roles_of(p).skinny, plan_of(p, true, c),
                       plan_of(p, false, PlanChoice{c.tile, 1}));
}

// Plan variants for gemm-tune: every tile the tokens' majorness allows, each with 1, 2, 4, ...
// splits and the counts that fill one and two waves (sp::wave_splits), while they fit two waves.
int variants(const GemmProblem& p, PlanChoice* out, int max) {
  const sp::Roles r = roles_of(p);
  const DeviceDesc dev = current_device_desc();
  int n = 0;
  for (int t = 1; t <= sp::kTiles && n < max; ++t) {
    if (!sp::tile_offered(t - 1, r.xk, max_tok(p), max_groups(p), !r.skinny)) continue;
    const auto plan_t = [&](int s) {
      return sp::plan(r.tokens, r.weights, dp::planned_k(p.k, p.precision), dev, true, r.xk, t, s,
                      static_cast<int>(p.batch), max_tok(p), max_groups(p), !r.skinny);
    };
    const dp::Plan one = plan_t(1);
    const int64_t tiles = int64_t{one.tiles()} * one.entries;
    const int slots = dev.sms * one.ctas_per_sm;
    int counts[12], c = 0;
    for (int s = 1; s <= dp::kMaxSplits; s *= 2) counts[c++] = s;
    for (int w = 1; w <= 2; ++w)
      if (const int s = sp::wave_splits(tiles, slots, w, dp::kMaxSplits)) counts[c++] = s;
    std::sort(counts, counts + c);
    int last = 0;
    for (int j = 0; j < c && n < max; ++j) {
      const dp::Plan pl = plan_t(counts[j]);
      if (pl.splits <= last) continue;
      if (pl.blocks() * pl.entries > 2 * pl.ctas_per_sm * dev.sms) break;
      out[n++] = PlanChoice{t, pl.splits};
      last = pl.splits;
    }
  }
  return n;
}

// Ahead of wgmma/split_k (220) and wgmma/03 (200), behind wgmma/decode (260) and gemv/mma (250);
// none where wgmma/split_k's slices lead (deep K over a small C: split_k_takes).
int auto_priority(const GemmProblem& p) {
  if (split_k_takes(p)) return 0;
  const bool tf32 = p.precision == Precision::TF32;
  const sp::Roles r = roles_of(p);
  if (sp::tokens_transposed(r, p.op_a == Op::N, p.op_b == Op::T, tf32) &&
      !sp::transposed_tokens_pay(r.weights, p.k))
    return 0;
  const DeviceDesc dev = current_device_desc();
  const bool wide = !tf32 && max_tok(p) == sp::kMaxTileTok;
  if (sp::auto_takes(p.m, p.n, p.k, p.batch, dev, tf32, !r.skinny, r.skinny && wide)) return 240;
  if (!wide || p.batch != 1 || !sp::two_rounds(p.m, p.n, p.batch, dev)) return 0;
  return sp::rounds_pay(plan_of(p, true, PlanChoice{}), p.m, p.n, p.batch, dev, wide) ? 240 : 0;
}

}  // namespace

extern const KernelDesc kWgmmaSmall = {
    .name = "wgmma/small",
    .step = 6,
    .family = "wgmma",
    .seed = "beyond the seeds",
    .summary = "16-bit, C too small for 128 x 256 tiles: the strips kernel over a grid of "
               "64|128 x 8..256 tiles, depth splits summed in order inside the kernel; tile and "
               "splits from a cost model, every pair a gemm-tune variant",
    .dtypes = kBF16 | kFP16 | kTF32,
    .min_cc = 90,
    .auto_priority = 240,
    .unsupported = unsupported,
    .launch = launch,
    .config = config,
    .auto_priority_for = auto_priority,
    .features = kLargeOperands | kBatched,
    .variants = variants,
    .tile_names = sp::kTileNames,
};

}  // namespace gemmlab
