// wgmma/03's TMA-store epilogue (kEpiTma: beta = 0, 16-byte rows, a 16-bit D or an fp32 one with
// a bias or an activation): when it is taken (sm90::tma_storable, on the CPU), and on the GPU that
// it writes exactly D's entries right in every D dtype, with edges that cut TMA boxes, padded rows whose padding must stay untouched,
// batches with gaps between entries, bias and activations, stream-k tiles, and every transpose;
// and that its results keep their bits under CUDA graph capture and replay and on two streams.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ex_problem_util.h"
#include "gpu_util.h"
#include "kernels/wgmma/host.h"
#include "reference/reference.h"
#include "runtime/plan_choice.h"

namespace gemmlab::test {
namespace {

constexpr const char* kWgmma03 = "wgmma/03_tma_wgmma_ws_persistent";

GemmProblem storable_problem() {
  GemmProblem p;
  p.m = 100, p.n = 64, p.k = 32, p.ldd = 64, p.d_type = DType::BF16, p.beta = 0.f;
  p.D = reinterpret_cast<void*>(uintptr_t{1} << 20);
  return p;
}

TEST(TmaStore, StorableWhereTmaCanWriteDAndCIsNotRead) {
  EXPECT_TRUE(sm90::tma_storable(storable_problem()));
  GemmProblem p = storable_problem();
  p.beta = 0.5f;  // C is read: the staged epilogue
  EXPECT_FALSE(sm90::tma_storable(p));
  p = storable_problem(), p.ldd = 68;  // a 136-byte pitch: not a multiple of 16
  EXPECT_FALSE(sm90::tma_storable(p));
  p = storable_problem(), p.n = 60, p.ldd = 64;  // rows of 120 bytes: TMA would write 8 more
  EXPECT_FALSE(sm90::tma_storable(p));
  p = storable_problem(), p.d_type = DType::F32;  // a plain fp32 D: the staged store
  EXPECT_FALSE(sm90::tma_storable(p));
  p.act = Activation::ReLU;  // an fp32 D with an activation (or a bias): TMA stores
  EXPECT_TRUE(sm90::tma_storable(p));
  p.act = Activation::None, p.bias = p.D;
  EXPECT_TRUE(sm90::tma_storable(p));
  p = storable_problem(), p.d_type = DType::F16, p.bias = p.D;  // bias, activation: any
  p.act = Activation::GeluErf;
  EXPECT_TRUE(sm90::tma_storable(p));
  p = storable_problem(), p.D = reinterpret_cast<void*>((uintptr_t{1} << 20) + 2);
  EXPECT_FALSE(sm90::tma_storable(p));
  p = storable_problem(), p.batch = 3, p.stride_d = 100 * 64 + 4;  // entries 8 bytes off
  EXPECT_FALSE(sm90::tma_storable(p));
  p.stride_d = 100 * 64 + 8;
  EXPECT_TRUE(sm90::tma_storable(p));
  p.stride_d = 0;  // one D for every entry: not a TMA tensor
  EXPECT_FALSE(sm90::tma_storable(p));
  // wgmma/pingpong stores a plain fp32 D through TMA too (under the other warpgroup's main loop).
  p = storable_problem(), p.d_type = DType::F32;
  EXPECT_TRUE(sm90::tma_storable(p, /*plain_f32=*/true));
  p.beta = 1.f;
  EXPECT_FALSE(sm90::tma_storable(p, true));
}

constexpr const char* kPingpong = "wgmma/pingpong";

void expect_tma_store_correct(const ExSpec& s, const char* kernel = kWgmma03) {
  SCOPED_TRACE(describe(s));
  ExProblem d(s);
  ASSERT_EQ(d.error(), "");
  ASSERT_TRUE(sm90::tma_storable(d.problem(), std::string(kernel) == kPingpong))
      << "the case must take the TMA-store epilogue";
  expect_correct(s, kernel);
}
void expect_wgmma03_correct(const ExSpec& s) { expect_tma_store_correct(s); }

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Every D dtype x shapes whose edges cut the 64-row x 128-byte boxes (and m64n8 edge tiles: n =
// 264 leaves 8 columns in the last tile), padded D rows (16-byte aligned pitch), 2 entries with a
// gap, bias in fp32 or the input dtype, every activation, all four transposes (an fp32 D always
// with a bias or an activation: a plain one takes the staged store).
TEST(TmaStore, Wgmma03EveryDTypeEdgesPaddingBatches) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/03 needs sm_90a";
  struct Shape {
    int64_t m, n, k;
  };
  const Shape shapes[] = {{1, 8, 1}, {129, 264, 70}, {64, 520, 33}, {300, 16, 128}, {520, 200, 64}};
  const Activation acts[] = {Activation::None, Activation::GeluTanh, Activation::ReLU,
                             Activation::SiLU, Activation::GeluErf};
  const Op ops[][2] = {{Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}, {Op::T, Op::T}};
  int i = 0;
  for (Precision prec : {Precision::BF16, Precision::FP16, Precision::TF32})
    for (DType dt : {DType::BF16, DType::F16, DType::F32})
      for (const Shape& sh : shapes) {
        ExSpec s;
        s.precision = prec, s.m = sh.m, s.n = sh.n, s.k = sh.k, s.d_type = dt, s.null_c = true;
        // tf32 keeps wgmma's row order (the TMA-store instance) only with A and B K-major.
        s.op_a = prec == Precision::TF32 ? Op::N : ops[i % 4][0];
        s.op_b = prec == Precision::TF32 ? Op::T : ops[i % 4][1];
        s.ldd = sh.n + 8 * (1 + i % 2);  // a 16-byte pitch, and padding that must stay untouched
        s.act = acts[i % 5], s.alpha = i % 3 == 0 ? 0.5f : 1.f;
        s.bias = i % 2 == 0 || (dt == DType::F32 && s.act == Activation::None);
        s.bias_type = (i % 4 == 0 && prec != Precision::TF32)
                          ? (prec == Precision::BF16 ? DType::BF16 : DType::F16)
                          : DType::F32;
        if (i % 3 == 1) s.batch = 2, s.stride_d = sh.m * s.ldd + 8;  // a gap of 8 elements
        s.seed = 100 + i++;
        expect_wgmma03_correct(s);
      }
}

// Tiles shared by several CTAs (stream-k: a small deep grid, and one row of decode tiles) end in
// the TMA store of the CTA that sums them; a batch crosses entries inside the runs.
TEST(TmaStore, Wgmma03StreamKTiles) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/03 needs sm_90a";
  ExSpec s;
  s.precision = Precision::BF16, s.m = 1024, s.n = 1024, s.k = 4096, s.d_type = DType::BF16;
  s.null_c = true, s.bias = true, s.act = Activation::GeluTanh, s.seed = 200;
  expect_wgmma03_correct(s);
  s.m = 64, s.n = 4096, s.k = 4096, s.op_b = Op::T, s.d_type = DType::F16, s.seed = 201;
  expect_wgmma03_correct(s);
  s.m = 256, s.n = 384, s.k = 4096, s.op_b = Op::N, s.d_type = DType::BF16, s.batch = 3;
  s.act = Activation::None, s.bias = false, s.seed = 202;
  expect_wgmma03_correct(s);
}

// The bits of D under graph capture and replay, and from two problems with the same data run at
// once on two streams, equal the eager run's: a plain grid and a stream-k one (its scratch comes
// from the stream-ordered pool, captured as memory nodes).
TEST(TmaStore, Wgmma03GraphReplayAndTwoStreamsKeepTheBits) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/03 needs sm_90a";
  ExSpec plain;
  plain.precision = Precision::BF16, plain.m = 1000, plain.n = 1024, plain.k = 512;
  plain.d_type = DType::BF16, plain.null_c = true, plain.bias = true, plain.bias_type = DType::BF16;
  plain.act = Activation::GeluTanh, plain.seed = 300;
  ExSpec streamk = plain;
  streamk.m = 1024, streamk.k = 4096, streamk.d_type = DType::F16, streamk.seed = 301;
  streamk.precision = Precision::FP16, streamk.bias_type = DType::F16;
  for (const ExSpec& spec : {plain, streamk}) {
    ASSERT_TRUE(sm90::tma_storable(ExProblem(spec).problem()));
    expect_same_bits_in_graphs_and_streams(spec, kWgmma03);
  }
}

// The 16-bit sweep of the TMA-store tests: bf16 and fp16 x every D dtype x `shapes`, case i with
// the transposes, activations, alpha, bias (fp32 or the input dtype) and a 2-entry batch with a
// gap (where m n < 10^6) in turn, padded D rows; seeds from seed0. fp32_needs_work: a plain fp32
// D gets a bias (wgmma/03 stores a plain fp32 D through the staged path). check(spec) per case.
struct Extents {
  int64_t m, n, k;
};
template <typename F>
void sweep_16bit(std::initializer_list<Extents> shapes, int seed0, bool fp32_needs_work, F&& check) {
  const Activation acts[] = {Activation::None, Activation::GeluTanh, Activation::ReLU,
                             Activation::SiLU, Activation::GeluErf};
  const Op ops[][2] = {{Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}, {Op::T, Op::T}};
  int i = 0;
  for (Precision prec : {Precision::BF16, Precision::FP16})
    for (DType dt : {DType::BF16, DType::F16, DType::F32})
      for (const Extents& sh : shapes) {
        ExSpec s;
        s.precision = prec, s.m = sh.m, s.n = sh.n, s.k = sh.k, s.d_type = dt, s.null_c = true;
        s.op_a = ops[i % 4][0], s.op_b = ops[i % 4][1];
        s.ldd = sh.n + 8 * (1 + i % 2);
        s.act = acts[i % 5], s.alpha = i % 3 == 0 ? 0.5f : 1.f;
        s.bias = i % 2 == 0 || (fp32_needs_work && dt == DType::F32 && s.act == Activation::None);
        s.bias_type = i % 4 == 0 ? (prec == Precision::BF16 ? DType::BF16 : DType::F16) : DType::F32;
        if (i % 3 == 1 && sh.m * sh.n < 1000000) s.batch = 2, s.stride_d = sh.m * s.ldd + 8;
        s.seed = seed0 + i++;
        check(s);
      }
}

// wgmma/03 over grids of several tiles per CTA, in each of its plans: 128 x 256 and 128 x 192
// tiles (plan variants 1, 2), single and in CTA pairs (3, 4: 2 x 1 clusters, B multicast). A
// 16-bit D's boxes go out under the next tile's first k-blocks (deferred_store.cuh) where the next
// tile has as many k-blocks as there are deferred boxes: K = 256 and 200 (4 k-blocks), 192 (3);
// shorter ones (K = 128, 64) store them first. The 128 x 192 tile has three boxes a warp, an odd
// number, so each tile's first box reuses the half of the buffer the last tile's last box went out
// of. 3000 and 2049 rows leave a warpgroup past the end in the last row of tiles (it stores what
// it holds, then skips), 3848 columns an m64n8 edge tile (its main loop runs alone); every D
// dtype, padded D rows, bias, activations, transposes, a batch with a gap (pairs: the second CTA
// past the end at 129, 300 and 1000 rows). And the bits under graph replay and on two streams.
TEST(TmaStore, Wgmma03EveryPlanEveryDTypeEdgesManyTiles) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/03 needs sm_90a";
  for (int plan : {1, 2, 3, 4}) {
    SCOPED_TRACE(plan);
    const ForcePlan force(PlanChoice{plan, 0});
    sweep_16bit({{129, 200, 70}, {300, 392, 33}, {3000, 3000, 128}, {1000, 3848, 64},
                 {3000, 3000, 256}, {2049, 3848, 200}, {1000, 3848, 192}},
                600, /*fp32_needs_work=*/true, [](const ExSpec& s) { expect_wgmma03_correct(s); });
  }
  ExSpec g;
  g.precision = Precision::BF16, g.m = 3000, g.n = 3000, g.k = 256, g.d_type = DType::BF16;
  g.null_c = true, g.bias = true, g.bias_type = DType::BF16, g.act = Activation::GeluTanh;
  g.seed = 650;
  ASSERT_TRUE(sm90::tma_storable(ExProblem(g).problem()));
  for (int plan : {1, 2, 4}) {
    const ForcePlan force(PlanChoice{plan, 0});
    expect_same_bits_in_graphs_and_streams(g, kWgmma03);
  }
}

// wgmma/pingpong: each warpgroup's 128 x 128 tiles in turn, its epilogue under the other's main
// loop. Every D dtype (a plain fp32 D through TMA too), edges that cut its tiles and boxes
// (m64n8 edge tiles, 1-row and 8-row strips), padded D rows, batches with a gap, bias and every
// activation, all four transposes; and grids of many tiles per CTA (3000 x 3000: 576 tiles, so
// each warpgroup takes 2-3 in turn, K of 7-9 k-blocks: more than the 6-stage ring, so a
// warpgroup's tile starts laps after the other's).
TEST(TmaStore, PingpongEveryDTypeEdgesPaddingBatchesManyTiles) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/pingpong needs sm_90a";
  sweep_16bit({{1, 8, 1}, {129, 264, 70}, {64, 520, 33}, {300, 16, 128}, {520, 200, 64},
               {3000, 3000, 448}, {2049, 3000, 576}},
              400, /*fp32_needs_work=*/false,
              [](const ExSpec& s) { expect_tma_store_correct(s, kPingpong); });
}

// wgmma/pingpong's bits under graph capture and replay and on two streams at once equal the eager
// run's (a grid of many tiles per CTA, bf16 D with bias + GELU; a plain fp32 D).
TEST(TmaStore, PingpongGraphReplayAndTwoStreamsKeepTheBits) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "wgmma/pingpong needs sm_90a";
  ExSpec a;
  a.precision = Precision::BF16, a.m = 2000, a.n = 2048, a.k = 512;
  a.d_type = DType::BF16, a.null_c = true, a.bias = true, a.bias_type = DType::BF16;
  a.act = Activation::GeluTanh, a.seed = 500;
  ExSpec b = a;
  b.precision = Precision::FP16, b.d_type = DType::F32, b.bias = false, b.act = Activation::None;
  b.batch = 3, b.m = 1024, b.n = 1024, b.seed = 501;
  for (const ExSpec& spec : {a, b}) {
    ASSERT_TRUE(sm90::tma_storable(ExProblem(spec).problem(), true));
    expect_same_bits_in_graphs_and_streams(spec, kPingpong);
  }
}

}  // namespace
}  // namespace gemmlab::test
