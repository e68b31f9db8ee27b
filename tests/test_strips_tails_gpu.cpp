// The strips kernel's tail boxes (stage_tile.cuh: load_b_rows): a last token tile with many rows
// past the end loads only the tokens that exist, and the rest of its stages keeps stale shared
// memory, which must only feed results the epilogue drops. On the GPU, each plan variant of
// wgmma/small and wgmma/decode runs right after the same variant has streamed NaN operands
// through every SM's stages, and is checked against fp64 element by element.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "ex_problem_util.h"
#include "gpu_util.h"
#include "registry/registry.h"
#include "runtime/plan_choice.h"

namespace gemmlab::test {
namespace {

// Every variant `kernel` offers for spec: first a problem as large as the GPU (every SM gets
// CTAs of the variant's instance) on NaN operands, in place over a finite C, whose D must come
// out NaN (the NaN went through shared memory), then spec, against fp64. Returns the variants
// run.
int check_after_nan(const ExSpec& spec, const char* kernel) {
  SCOPED_TRACE(describe(spec) + " on " + kernel);
  const KernelDesc* kd = find_kernel(kernel);
  if (kd == nullptr || kd->variants == nullptr) {
    ADD_FAILURE() << kernel << " offers no plan variants";
    return 0;
  }
  ExProblem d(spec);
  if (d.error() != "") {
    ADD_FAILURE() << d.error();
    return 0;
  }
  EpilogueReference r;
  if (const std::string why = d.reference(&r); why != "") {
    ADD_FAILURE() << why;
    return 0;
  }
  // The poison: the spec's op pair, dtype and token count (the same tile instance), wide and deep
  // enough that every SM runs some of its CTAs.
  ExSpec big = spec;
  big.n = spec.m <= 64 || spec.n > 64 ? 8192 : spec.n, big.k = 2048, big.beta = 0.5f;
  big.in_place = true, big.bias = false, big.act = Activation::None, big.batch = 1;
  big.d_type = DType::F32, big.pad_a = big.pad_b = big.pad_c = big.pad_d = 0;
  if (spec.n <= 64 && spec.m > 64) big.m = 16384;  // skinny: the weight is op(A)
  ExProblem poison(big);
  if (poison.error() != "" || poison.poison_inputs() != cudaSuccess) {
    ADD_FAILURE() << "cannot build the NaN problem " << describe(big);
    return 0;
  }
  PlanChoice choices[64];
  const int n = kd->variants(d.problem(), choices, 64);
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(plan_choice_label(choices[i], kd->tile_names));
    const ForcePlan force(choices[i]);
    // (the poison has its own plan under the same forced tile; D starts as the finite C)
    if (const Status st = poison.run(kernel); st != Status::Success) {
      ADD_FAILURE() << "the NaN problem: " << status_name(st) << ": " << last_error_message();
      return n;
    }
    const std::vector<char> nan_d = poison.read_d();
    if (nan_d.empty()) {
      ADD_FAILURE() << "cannot read the NaN problem's D back";
      return n;
    }
    float first;
    std::memcpy(&first, nan_d.data(), sizeof first);
    EXPECT_TRUE(std::isnan(first)) << "the NaN operands gave " << first;
    EXPECT_EQ(d.run_and_check(r, kernel), "");
  }
  return n;
}

// Last token tiles of 16 of 128 tokens (64 x 128d), 16 of 64, 72 of 128, 8 of 192, 36 of 64 and
// 100 of 128 (28 rows past the end, just over the rule's 24), ...: the smaller boxes (plan.h,
// tail_box_pays), and the whole boxes where few rows are past the end;
// last weight strips of 6 (1030 rows) and 8 (520) rows (TMA's fill, beside stale stages); the
// weight K-major (NT) and MN-major (NN); tf32 through registers (NN) and K-major (NT); columns as
// tokens (skinny: TN MN-major, TT K-major), K not a multiple of the stage; a batch.
TEST(LargeShapes, StripsTailBoxesAfterNaN) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "the strips kernel needs sm_90a";
  ExSpec nt;
  nt.precision = Precision::BF16, nt.m = 144, nt.n = 1030, nt.k = 1000, nt.op_b = Op::T;
  nt.seed = 71;
  ExSpec nn = nt;
  nn.precision = Precision::FP16, nn.m = 200, nn.n = 520, nn.k = 777, nn.op_b = Op::N;
  nn.beta = 0.5f, nn.seed = 72;
  ExSpec tf = nt;
  tf.precision = Precision::TF32, tf.m = 100, tf.n = 300, tf.k = 500, tf.op_b = Op::N;
  tf.seed = 73;
  ExSpec tf_nt = tf;
  tf_nt.op_b = Op::T, tf_nt.seed = 74;
  ExSpec skinny_mn = nt;
  skinny_mn.m = 3010, skinny_mn.n = 40, skinny_mn.op_a = Op::T, skinny_mn.op_b = Op::N;
  skinny_mn.seed = 75;
  ExSpec skinny_k = skinny_mn;
  skinny_k.op_b = Op::T, skinny_k.d_type = DType::BF16, skinny_k.seed = 76;
  ExSpec batched = nt;
  batched.m = 300, batched.n = 200, batched.k = 640, batched.batch = 2, batched.seed = 77;
  ExSpec hundred = nn;
  hundred.precision = Precision::BF16, hundred.m = 100, hundred.seed = 83;
  int runs = 0;
  for (const ExSpec& s : {nt, nn, tf, tf_nt, skinny_mn, skinny_k, batched, hundred})
    runs += check_after_nan(s, "wgmma/small");
  // wgmma/decode: 1 and 3 tokens of an 8-token tile, 20 of 32 (last strips of 6, 8, 4 rows);
  // skinny with 5 columns (3010 weight rows).
  ExSpec one = nt;
  one.m = 1, one.seed = 78;
  ExSpec three = nn;
  three.m = 3, three.seed = 79;
  ExSpec twenty = nt;
  twenty.m = 20, twenty.n = 4100, twenty.k = 3001, twenty.seed = 80;
  ExSpec five = skinny_k;
  five.n = 5, five.seed = 81;
  for (const ExSpec& s : {one, three, twenty, five}) runs += check_after_nan(s, "wgmma/decode");
  EXPECT_GE(runs, 100) << "plan variants run";
  std::printf("[  NOTE    ] strips tail boxes: %d forced variants checked after NaN runs\n", runs);
}

// A tail instance (64 x 128d over 144 tokens: 112 box rows past the end), unsplit and in 2 depth
// splits (partials summed in the kernel): the eager call's bits under CUDA graph capture and
// replay and on two streams at once.
TEST(LargeShapes, StripsTailBoxesSameBitsInGraphsAndStreams) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "the strips kernel needs sm_90a";
  ExSpec s;
  s.precision = Precision::BF16, s.m = 144, s.n = 1030, s.k = 4096, s.op_b = Op::T, s.seed = 82;
  for (int splits : {1, 2}) {
    SCOPED_TRACE(testing::Message() << "64x128d, " << splits << " splits");
    const ForcePlan force(PlanChoice{13, splits});  // kTileNames: 13th, 1-based
    expect_same_bits_in_graphs_and_streams(s, "wgmma/small");
  }
}

}  // namespace
}  // namespace gemmlab::test
