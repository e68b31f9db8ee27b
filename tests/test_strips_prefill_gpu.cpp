// wgmma/small's tiles for prefill-sized token counts (257..320 and 193..208 rows of C, and 320 of
// its columns where op(A) = A^T: plan.h, kTileRowsOnly, max_tile_tokens), on the GPU, checked
// against fp64 element by element.
#include <cstdint>

#include <gtest/gtest.h>

#include "ex_problem_util.h"
#include "gpu_util.h"
#include "kernel_check.h"
#include "kernels/wgmma/plan.h"
#include "registry/registry.h"
#include "runtime/device_props.h"
#include "runtime/plan_choice.h"

namespace gemmlab::test {
namespace {

// A forced wgmma/small tile of `tok` tokens on spec: its own instance runs (not a fallback), and
// every element matches fp64.
void expect_tile_correct(const KernelDesc& kd, const ExSpec& spec, int tok) {
  namespace dp = wgmma_decode_plan;
  ExProblem d(spec);
  ASSERT_EQ(d.error(), "");
  const LaunchConfig c = kd.config(d.problem());
  EXPECT_TRUE(c.block.x == static_cast<unsigned>(dp::threads(tok)) &&
              c.smem_bytes == static_cast<size_t>(dp::smem_bytes(tok)))
      << describe(spec) << " threads " << c.block.x << " smem " << c.smem_bytes;
  expect_correct(spec, "wgmma/small");
}

// wgmma/small's tiles for prefill-sized token counts, each forced (tile, depth splits 1 and 3):
// 128 x 320 (an m64n256 and an m64n64 wgmma per k-step, a producer warpgroup and setmaxnreg) and
// 128 x 208 (m64n208). Per tile: all its tokens and a partial tile, the weight K-major (NT) and
// MN-major (NN), K off the 64-deep stage, misaligned rows (packed), a plain fp32 D from the
// registers (in place with beta), a bf16 D with a bias and GELU (the staged drain; 208: its last
// 16 tokens element by element), and a batch of 2 (one launch); with splits, the same bits under
// graph replay and on two streams.
TEST(LargeShapes, WgmmaSmallPrefillTiles) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/small needs sm_90a";
  const KernelDesc* kd = find_kernel("wgmma/small");
  ASSERT_NE(kd, nullptr);
  struct Tile {
    int index, tok, partial;
  };
  for (const Tile tile : {Tile{15, 320, 300}, Tile{16, 208, 193}})
    for (int splits : {1, 3}) {
      SCOPED_TRACE(testing::Message() << tile.tok << " tokens, " << splits << " splits");
      const ForcePlan force(PlanChoice{tile.index, splits});
      const uint64_t seed = 330 + 10 * tile.index + splits;
      ExSpec full;
      full.precision = Precision::BF16, full.m = tile.tok, full.n = 1000, full.k = 1000;
      full.op_b = Op::T, full.seed = seed;
      ExSpec odd = full;
      odd.precision = Precision::FP16, odd.m = tile.partial, odd.op_b = Op::N, odd.k = 777;
      odd.pad_a = 3, odd.pad_b = 5, odd.in_place = true, odd.beta = 0.5f, odd.seed = seed + 100;
      ExSpec fused = full;
      fused.m = tile.tok - 8, fused.n = 520, fused.bias = true, fused.bias_type = DType::BF16;
      fused.act = Activation::GeluTanh, fused.d_type = DType::BF16, fused.pad_d = 8;
      fused.seed = seed + 200;
      ExSpec batched = full;
      batched.m = tile.partial, batched.n = 200, batched.k = 640, batched.batch = 2;
      batched.seed = seed + 300;
      for (const ExSpec& spec : {full, odd, fused, batched}) expect_tile_correct(*kd, spec, tile.tok);
      // Its split partials and scratch under graph capture and replay and on two streams at once:
      // the same bits as the eager call.
      if (splits > 1)
        for (const ExSpec& spec : {full, fused}) expect_same_bits_in_graphs_and_streams(spec, "wgmma/small");
    }
}

// The 128 x 320 tile with C's columns as the tokens (op(A) = A^T: the weight op(A) MN-major; the
// tokens op(B)^T K-major in TT, five MN-major 64-wide chunks in TN: stage_tile.cuh's second
// wgmma reads the fifth), forced with depth splits 1 and 3: all 320 columns and a partial tile,
// K off the stage, misaligned rows (packed), in place with beta, a bf16 D with a bias (one per
// column: per token here) and GELU, and a batch of 2; with splits, the same bits under graph
// replay and on two streams.
TEST(LargeShapes, WgmmaSmallWideColumnTiles) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/small needs sm_90a";
  const KernelDesc* kd = find_kernel("wgmma/small");
  ASSERT_NE(kd, nullptr);
  for (Op op_b : {Op::N, Op::T})
    for (int splits : {1, 3}) {
      SCOPED_TRACE(testing::Message() << "op(B) " << (op_b == Op::N ? "B" : "B^T") << ", "
                                      << splits << " splits");
      const ForcePlan force(PlanChoice{15, splits});
      const uint64_t seed = 500 + 10 * (op_b == Op::T) + splits;
      ExSpec full;
      full.precision = Precision::BF16, full.m = 1000, full.n = 320, full.k = 1000;
      full.op_a = Op::T, full.op_b = op_b, full.seed = seed;
      ExSpec odd = full;
      odd.precision = Precision::FP16, odd.m = 333, odd.n = 300, odd.k = 777;
      odd.pad_a = 3, odd.pad_b = 5, odd.in_place = true, odd.beta = 0.5f, odd.seed = seed + 100;
      ExSpec fused = full;
      fused.m = 520, fused.n = 650, fused.bias = true, fused.bias_type = DType::BF16;
      fused.act = Activation::GeluTanh, fused.d_type = DType::BF16, fused.pad_d = 8;
      fused.seed = seed + 200;
      ExSpec batched = full;
      batched.m = 200, batched.n = 300, batched.k = 640, batched.batch = 2;
      batched.seed = seed + 300;
      for (const ExSpec& spec : {full, odd, fused, batched}) expect_tile_correct(*kd, spec, 320);
      if (splits > 1)
        for (const ExSpec& spec : {full, fused})
          expect_same_bits_in_graphs_and_streams(spec, "wgmma/small");
    }
}

// `auto` on medium 16-bit problems whose 128 x 256 tiles outnumber the SMs (two rounds of
// wgmma/03) but whose 128 x 320 tiles fit one wave (wgmma_small_plan::auto_takes, one_wave): on
// 132 SMs it picks wgmma/small there, and the result is checked against fp64: NN, NT, TN and TT,
// a plain fp32 D, a bf16 D with a bias and GELU, fp16 with misaligned rows and K off the stage,
// in place.
TEST(LargeShapes, WgmmaSmallOneWaveMediumShapes) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/small needs sm_90a";
  ExSpec plain;
  plain.precision = Precision::BF16, plain.m = 1536, plain.n = 3072, plain.k = 1536, plain.seed = 401;
  ExSpec fused = plain;
  fused.m = 1280, fused.n = 4096, fused.k = 2048, fused.op_b = Op::T, fused.d_type = DType::BF16;
  fused.bias = true, fused.bias_type = DType::BF16, fused.act = Activation::GeluTanh;
  fused.seed = 402;
  ExSpec odd = plain;
  odd.precision = Precision::FP16, odd.m = 1790, odd.n = 2552, odd.k = 2000, odd.pad_a = 3;
  odd.pad_b = 5, odd.in_place = true, odd.beta = 0.5f, odd.seed = 403;
  // The same over C's columns (op(A) = A^T, cols_wide): TN with a bf16 D, bias and GELU; TT
  // fp16 with misaligned rows, in place.
  ExSpec tn = fused;
  tn.op_a = Op::T, tn.op_b = Op::N, tn.seed = 404;
  ExSpec tt = odd;
  tt.m = 1536, tt.n = 3072, tt.k = 1500, tt.op_a = Op::T, tt.op_b = Op::T, tt.seed = 405;
  for (const ExSpec& spec : {plain, fused, odd, tn, tt}) {
    ExProblem p(spec);
    ASSERT_EQ(p.error(), "");
    const char* name = auto_kernel_name(p.desc());
    ASSERT_NE(name, nullptr) << last_error_message();
    std::printf("[  AUTO    ] %s -> %s\n", describe(spec).c_str(), name);
    if (current_cc() == 90 && device_sm_count() == 132) EXPECT_STREQ(name, "wgmma/small");
    expect_correct(spec);
  }
}

}  // namespace
}  // namespace gemmlab::test
