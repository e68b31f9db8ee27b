// wgmma/split_k: a few output tiles over a deep K (the deep-k suite: 128..1024-sized C, K up to
// 131072), on Hopper tensor cores.
//
// Bottleneck attacked: wgmma/03 gives a tile at most 5-8 stream-k contributors, because the last
// one sums the others' partials alone (a chain of L2 round trips, docs/history.md); a
// 128 x 128 x 131072 bf16 problem (one tile) then runs on 4 of 132 SMs, at 10% of cuBLAS.
// What changed: the depth is cut into S slices (S * tiles ~ the SMs, each slice at least 4
// k-blocks) run as ONE batched launch (wgmma/small's strips kernel; tf32 with op(A) = A^T:
// wgmma/03) whose entries are the slices: A and B move by the
// slice's depth from entry to entry (the entries overlap in memory, which reading allows), D is
// float scratch, one m x n partial per slice. A second kernel (kernels/common/slice_sum.h, shared
// with simt/sgemm's sliced splits) sums the S partials of each element in slice order and applies
// the whole epilogue (alpha, beta * C, bias, activation, D's dtype):
// every SM sums, and the result is deterministic (the same slices in the same order every run).
// It is launched as a programmatic dependent of the slices' kernel (its launch hides behind
// their tail; it waits for them before reading), and keeps many slices' loads in flight.
// The last slice may be shorter: a second launch of one entry. Without scratch (or under a
// NoDepthSplit) the problem runs on wgmma/03 as it is.
// Seed: beyond the seeds (issue: deep K).
// The slice count is a plan variant gemm-tune measures (one wave's worth, then halves); on the
// strips kernel the planner takes 4096 / sqrt(m n) of them, or a divisor of the k-blocks a little
// below, so that no shorter last slice needs a launch of its own (plan.h).
// Measured (H100, deep-k suite, cuBLAS in the same run, 2026-11-25 03:50 UTC A/B): bf16 0.98x
// of cuBLAS (0.91x with the sum launched after the slices and one load per slice in turn), worst
// 256 x 256 x 8192 90% (78%); fp16 0.98x, tf32 1.26x; wgmma/03 alone ran 1024 x 1024 x 131072
// bf16 at 33%. docs/history.md.
#include <algorithm>

#include "kernels/common/gemm_common.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/common/slice_sum.h"
#include "kernels/wgmma/plan.h"
#include "kernels/wgmma/strips.h"
#include "runtime/device_props.h"
#include "runtime/plan_choice.h"
#include "runtime/workspace.h"

namespace gemmlab {

extern const KernelDesc kWgmmaWarpSpecializedPersistent;
extern const KernelDesc kWgmmaSmall;

namespace {

using wgmma_plan::Slices;

// The slices of p; a forced plan's `splits` is the slice count asked for (gemm-tune's variants).
Slices plan_slices(const GemmProblem& p) {
  return wgmma_plan::plan_slices(p.m, p.n, p.k, p.precision, current_device_desc(),
                                 forced_plan().splits, p.op_a == Op::N, p.op_b == Op::T);
}

// The batched problem of the full slices (entry s: depth [s * ks, (s + 1) * ks)), or the last,
// shorter slice (first = full, one entry), into parts.
GemmProblem slice_problem(const GemmProblem& p, const Slices& sl, float* parts, bool last) {
  GemmProblem q = p;
  const int64_t eb = input_bytes(p.precision);
  const int64_t a_step = p.op_a == Op::N ? sl.ks : sl.ks * p.lda;  // elements per slice
  const int64_t b_step = p.op_b == Op::N ? sl.ks * p.ldb : sl.ks;
  const int64_t mn = p.m * p.n;
  q.k = last ? sl.rest : sl.ks;
  q.batch = last ? 1 : sl.full;
  q.stride_a = a_step, q.stride_b = b_step;
  if (last) {
    q.A = static_cast<const char*>(p.A) + sl.full * a_step * eb;
    q.B = static_cast<const char*>(p.B) + sl.full * b_step * eb;
  }
  q.D = parts + (last ? sl.full * mn : 0);
  q.d_type = DType::F32, q.ldd = p.n, q.stride_d = mn;
  q.C = nullptr, q.c_type = DType::F32, q.ldc = p.n, q.stride_c = 0, q.beta = 0.f;
  q.alpha = 1.f, q.bias = nullptr, q.act = Activation::None;
  return q;
}

const KernelDesc& inner() { return kWgmmaWarpSpecializedPersistent; }
// The kernel of the slices (wgmma_plan::slices_on_strips): wgmma/small's strips kernel, its tile
// picked by its cost model for the batch of slices (a C of 128 x 128 no longer pads wgmma/03's
// 128 x 256 tile to twice its size; measured: docs/history.md, wgmma/split_k), but for tf32 TT
// over a deep A (transposed while packed it measured slower than wgmma/03's register A) and tf32
// over a C of 512 x 512 or more: wgmma/03.
const KernelDesc& slice_kernel(const GemmProblem& p) {
  return wgmma_plan::slices_on_strips(p.m, p.n, p.k, p.precision, p.op_a == Op::N,
                                      p.op_b == Op::T)
             ? kWgmmaSmall
             : inner();
}

const char* unsupported(const GemmProblem& p) {
  if (p.batch != 1) return "needs batch == 1 (the slices are its batch)";
  const int eb = input_bytes(p.precision);
  // (A tf32 A^T sliced on the strips kernel is transposed while packed: any rows will do.)
  const bool a_copied = p.precision == Precision::TF32 && p.op_a == Op::T &&
                        wgmma_plan::slices_on_strips(p.m, p.n, p.k, p.precision, false,
                                                     p.op_b == Op::T);
  if ((!a_copied && !rows_aligned(p.A, p.lda, eb, 16)) || !rows_aligned(p.B, p.ldb, eb, 16))
    return "needs 16-byte aligned rows of A and B";
  return inner().unsupported ? inner().unsupported(p) : nullptr;
}

cudaError_t launch(const GemmProblem& p) {
  const Slices sl = plan_slices(p);
  const int slices = sl.count();
  void* buf = nullptr;
  const size_t bytes = static_cast<size_t>(slices) * p.m * p.n * sizeof(float);
  if (slices < 2 || workspace_alloc_split(&buf, bytes, p.stream) != cudaSuccess)
    return inner().launch(p);  // no split: wgmma/03 on the whole problem
  float* parts = static_cast<float*>(buf);
  cudaError_t e;
  {
    // The slices' tiles fill the SMs once (S * tiles <= SMs), each CTA one tile from depth 0 of
    // its slice, so the tiles of a slice stream the same panels of A and B through L2 together.
    // wgmma/03 must not re-cut them stream-k (runs that start mid-tile lose that reuse: bf16
    // 1024 x 1024 x 131072 ran at 33% of cuBLAS): no depth split inside.
    NoDepthSplit whole_tiles;
    const ForcePlan unsplit(PlanChoice{0, 1});  // wgmma/small: no depth split inside a slice
    const KernelDesc& kd = slice_kernel(p);
    e = kd.launch(slice_problem(p, sl, parts, false));  // full >= 1 when split
    if (e == cudaSuccess && sl.rest > 0) e = kd.launch(slice_problem(p, sl, parts, true));
  }
  if (e == cudaSuccess) {
    // Launched as a dependent of the slices' kernel: its launch overlaps their tail.
    e = launch_slice_sum(parts, slices, make_epilogue(p), p.stream);
  }
  const cudaError_t ef = workspace_free(buf, p.stream);
  return e != cudaSuccess ? e : ef;
}

LaunchConfig config(const GemmProblem& p) {
  const Slices sl = plan_slices(p);
  if (sl.count() < 2) return inner().config(p);
  float* parts = reinterpret_cast<float*>(uintptr_t{1} << 20);  // only its alignment matters
  const ForcePlan unsplit(PlanChoice{0, 1});
  return slice_kernel(p).config(slice_problem(p, sl, parts, false));
}

// Plan variants for gemm-tune: one wave's worth of slices, then half, a quarter, ... of it, down
// to 2 (fewer slices: fewer partials to write and sum, less of the GPU streaming A and B).
int variants(const GemmProblem& p, PlanChoice* out, int max) {
  const DeviceDesc dev = current_device_desc();
  int n = 0, last = 0;
  const bool ak = p.op_a == Op::N, bk = p.op_b == Op::T;
  for (int want = wgmma_plan::plan_slices(p.m, p.n, p.k, p.precision, dev, dev.sms, ak, bk).count();
       want >= 2 && n < max; want /= 2) {
    const int c = wgmma_plan::plan_slices(p.m, p.n, p.k, p.precision, dev, want, ak, bk).count();
    if (c == last || c < 2) continue;
    out[n++] = PlanChoice{0, c};
    last = c;
  }
  return n;
}

// `auto`: deep problems with few tiles, where wgmma/03's stream-k is capped (wgmma/plan.h).
int auto_priority(const GemmProblem& p) {
  if (!wgmma_plan::split_k_pays(p.m, p.n, p.k, p.batch, current_device_desc())) return 0;
  return unsupported(p) == nullptr ? 220 : 0;
}

}  // namespace

bool split_k_takes(const GemmProblem& p) {
  return wgmma_plan::slices_lead(p.m, p.n, p.k, p.precision, p.op_a == Op::N, p.op_b == Op::T) &&
         auto_priority(p) > 0;
}

extern const KernelDesc kWgmmaSplitK = {
    .name = "wgmma/split_k",
    .step = 4,
    .family = "wgmma",
    .seed = "beyond the seeds",
    .summary = "deep K, few tiles: the depth cut into slices run as one batched wgmma/03 launch "
               "into float scratch, then summed in slice order with the epilogue by every SM",
    .dtypes = kBF16 | kFP16 | kTF32,
    .min_cc = 90,
    .auto_priority = 220,
    .unsupported = unsupported,
    .launch = launch,
    .config = config,
    .auto_priority_for = auto_priority,
    .features = kLargeOperands,
    .variants = variants,
};

}  // namespace gemmlab
