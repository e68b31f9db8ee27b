// tf32 on the strips kernel (wgmma/decode and wgmma/small): the tokens are K-major (tf32 wgmma
// reads its B only so): C's rows (op(A) = A, or A^T transposed while packed), or on wgmma/small
// C's columns where op(A) = A^T and n < m (SmallTokensAsColumns). With the tokens as rows the weight W = op(B)^T is K-major (NT) or MN-major
// (NN: W goes through registers, whose row order, register_a_row, is not wgmma's fragment order,
// so every store, bias and split partial must follow it). Checked against fp64 element by
// element: every token width, edge strips, depths that are neither a multiple of the 32-deep
// stage nor of a split, k = 1, misaligned rows (packed), every plan variant (tiles, depth splits),
// the epilogue (bias, activations, a 16-bit D, beta) in both W layouts, a strided batch; and the
// transposes the kernels do not take are refused with a reason, on the CPU.
#include <cstdint>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "ex_problem_util.h"
#include "gpu_util.h"
#include "kernel_check.h"
#include "reference/reference.h"
#include "registry/registry.h"

namespace gemmlab::test {
namespace {

constexpr const char* kDecode = "wgmma/decode";
constexpr const char* kSmall = "wgmma/small";

const char* refusal(const char* kernel, Precision prec, int64_t m, int64_t n, Op a, Op b) {
  const KernelDesc* d = find_kernel(kernel);
  if (d == nullptr || d->unsupported == nullptr) return nullptr;
  GemmProblem p;
  p.precision = prec, p.m = m, p.n = n, p.k = 512, p.op_a = a, p.op_b = b;
  p.lda = a == Op::N ? p.k : m, p.ldb = b == Op::N ? n : p.k, p.ldc = p.ldd = n;
  return d->unsupported(p);
}

// On the CPU: wgmma/decode's skinny mode (the columns of C as tokens) is 16-bit only, refused
// with a reason for tf32; wgmma/small takes tf32 with op(A) = A^T (A transposed while packed);
// the forms they take are not refused.
TEST(StripsTf32, RefusesMnMajorTokensWithAReason) {
  for (Op b : {Op::N, Op::T}) {
    EXPECT_EQ(refusal(kSmall, Precision::TF32, 300, 300, Op::T, b), nullptr);
    const char* r = nullptr;
    EXPECT_EQ(refusal(kSmall, Precision::TF32, 300, 300, Op::N, b), nullptr);
    EXPECT_EQ(refusal(kSmall, Precision::BF16, 300, 300, Op::T, b), nullptr);
    EXPECT_EQ(refusal(kDecode, Precision::TF32, 16, 4096, Op::N, b), nullptr);
    r = refusal(kDecode, Precision::TF32, 4096, 16, Op::T, b);  // skinny
    ASSERT_NE(r, nullptr);
    EXPECT_NE(std::string(r).find("tf32"), std::string::npos) << r;
    EXPECT_EQ(refusal(kDecode, Precision::BF16, 4096, 16, Op::T, b), nullptr);
  }
  // 129..256 rows with the weight through registers (op(B) = B) would take 256 tokens, whose
  // instance spills: refused by wgmma/decode (wgmma/small's tiles of <= 192 take them).
  EXPECT_EQ(refusal(kDecode, Precision::TF32, 128, 4096, Op::N, Op::N), nullptr);
  EXPECT_EQ(refusal(kDecode, Precision::TF32, 256, 4096, Op::N, Op::T), nullptr);
  ASSERT_NE(refusal(kDecode, Precision::TF32, 129, 4096, Op::N, Op::N), nullptr);
  EXPECT_NE(std::string(refusal(kDecode, Precision::TF32, 256, 4096, Op::N, Op::N)).find("spill"),
            std::string::npos);
}

// wgmma/decode, tf32: every token width (8 .. 256, 8 .. 128 with W in registers; 100 and 200
// leave warps of padding tokens), one and two consumer warpgroups, edge strips, k = 1 and depths
// off the 32-deep stage, both W layouts, 16-byte and misaligned rows; then every depth split it
// offers, both W layouts.
TEST(StripsTf32, DecodeEveryTokenWidthBothWeightLayouts) {
  GEMMLAB_REQUIRE_SM90();
  for (Shape shape : {Shape{1, 4000, 4103}, Shape{7, 1000, 2001}, Shape{16, 1024, 4096},
                      Shape{33, 300, 257}, Shape{100, 1000, 3001}, Shape{200, 129, 1},
                      Shape{256, 520, 2000}})
    for (Op b : {Op::N, Op::T})
      for (int pad : {0, 3})
        if (b == Op::T || shape.m <= 128)
          check_kernel({Precision::TF32, shape, Op::N, b, pad, pad == 0}, kDecode);
  check_variants_of_cases({{Precision::TF32, Shape{5, 1000, 3001}, Op::N, Op::T, 0, true},
                           {Precision::TF32, Shape{100, 700, 5000}, Op::N, Op::N, 3, false},
                           {Precision::TF32, Shape{130, 700, 5000}, Op::N, Op::T, 3, false}},
                          kDecode, 3, "depth splits");
}

// wgmma/small, tf32: every (tile, splits) plan variant, W MN-major (NN, misaligned rows packed)
// and K-major (NT), K off the 32-deep stage.
TEST(StripsTf32, SmallEveryPlanVariantBothWeightLayouts) {
  GEMMLAB_REQUIRE_SM90();
  check_variants_of_cases({{Precision::TF32, Shape{300, 500, 1000}, Op::N, Op::N, 3, false},
                           {Precision::TF32, Shape{129, 77, 5000}, Op::N, Op::T, 0, true}},
                          kSmall, 4, "plans");
}

// wgmma/small, tf32 with op(A) = A^T (TN, TT): A transposed while packed, then the K-major
// tokens' kernel; misaligned rows, edge strips, K off the stage, every plan variant on one.
TEST(StripsTf32, SmallTransposedTokens) {
  GEMMLAB_REQUIRE_SM90();
  for (Shape shape : {Shape{1000, 1000, 1000}, Shape{127, 8191, 129}, Shape{333, 777, 555},
                      Shape{50, 2000, 2000}})
    for (Op b : {Op::N, Op::T})
      for (int pad : {0, 3}) check_kernel({Precision::TF32, shape, Op::T, b, pad, pad == 0}, kSmall);
  check_variants_of_cases({{Precision::TF32, Shape{300, 500, 1000}, Op::T, Op::N, 3, false}},
                          kSmall, 4, "plans");
}

// wgmma/small, tf32 with op(A) = A^T and at most a quarter as many columns as rows (250 of 1000:
// the edge): the tokens are C's columns
// (op(B)^T, transposed while packed where op(B) = B; read in place where op(B) = B^T), the weight
// op(A) = A^T is MN-major and goes through registers, and the store is C's (weight row, token):
// one column, token widths from 8 to 192, edge strips, k = 1 and K off the stage, misaligned
// rows, every plan variant; then the epilogue and a batch whose tokens (B) are broadcast.
TEST(StripsTf32, SmallTokensAsColumns) {
  GEMMLAB_REQUIRE_SM90();
  for (Shape shape : {Shape{2048, 32, 2048}, Shape{1000, 250, 1000}, Shape{4097, 100, 300},
                      Shape{333, 7, 1001}, Shape{200, 1, 64}, Shape{300, 10, 1},
                      Shape{800, 190, 129}})
    for (Op b : {Op::N, Op::T})
      for (int pad : {0, 3}) check_kernel({Precision::TF32, shape, Op::T, b, pad, pad == 0}, kSmall);
  check_variants_of_cases({{Precision::TF32, Shape{700, 130, 1000}, Op::T, Op::N, 3, false},
                           {Precision::TF32, Shape{1000, 64, 3000}, Op::T, Op::T, 0, true}},
                          kSmall, 4, "plans");
  const Activation acts[] = {Activation::GeluTanh, Activation::ReLU, Activation::SiLU};
  const DType dts[] = {DType::BF16, DType::F16, DType::F32};
  int i = 0;
  for (Shape sh : {Shape{500, 24, 1000}, Shape{600, 128, 700}, Shape{1029, 200, 333}})
    for (Op b : {Op::N, Op::T}) {
      ExSpec s;
      s.precision = Precision::TF32, s.m = sh.m, s.n = sh.n, s.k = sh.k;
      s.op_a = Op::T, s.op_b = b;
      s.bias = true, s.act = acts[i % 3], s.d_type = dts[i % 3], s.alpha = i % 2 ? 0.5f : 1.f;
      if (i % 2 == 1) s.beta = 0.75f, s.c_type = DType::BF16;
      s.pad_a = s.pad_b = i % 2 ? 3 : 0;
      s.seed = 500 + i++;
      expect_correct(s, kSmall);
    }
  ExSpec s;  // three entries against one B (stride 0: the broadcast tokens), gaps between entries
  s.precision = Precision::TF32, s.m = 300, s.n = 40, s.k = 500, s.batch = 3, s.stride_b = 0;
  s.op_a = Op::T, s.stride_extra = 5, s.bias = true, s.act = Activation::GeluTanh;
  s.d_type = DType::BF16, s.seed = 600;
  expect_correct(s, kSmall);
}

// wgmma/split_k's tf32 slices with op(A) = A run on the strips kernel: every slice count it
// offers gemm-tune, a shorter last slice, both W layouts, beta != 0 (the slice sum's epilogue).
TEST(StripsTf32, SplitKSlicesOnTheStripsKernel) {
  GEMMLAB_REQUIRE_SM90();
  check_variants_of_cases({{Precision::TF32, Shape{100, 132, 9000}, Op::N, Op::N, 0, true},
                           {Precision::TF32, Shape{257, 64, 8200}, Op::N, Op::T, 0, false}},
                          "wgmma/split_k", 3, "slice counts");
}

// The epilogue through both kernels and both W layouts: bias (fp32, tf32's input dtype),
// activations, bf16 / fp16 / fp32 D, beta != 0 with C in another dtype, alpha; narrow tiles
// (element stores) and staged ones (>= 64 tokens); a strided batch with a broadcast weight.
TEST(StripsTf32, EpilogueBothWeightLayouts) {
  GEMMLAB_REQUIRE_SM90();
  struct Sh {
    const char* kernel;
    int64_t m, n, k;
  };
  const Sh shapes[] = {{kDecode, 5, 1000, 3001}, {kDecode, 64, 520, 700}, {kSmall, 300, 500, 1000},
                       {kSmall, 130, 77, 5000}};
  const Activation acts[] = {Activation::GeluTanh, Activation::ReLU, Activation::SiLU,
                             Activation::GeluErf, Activation::None};
  const DType dts[] = {DType::BF16, DType::F16, DType::F32};
  int i = 0;
  for (const Sh& sh : shapes)
    for (Op b : {Op::N, Op::T}) {
      ExSpec s;
      s.precision = Precision::TF32, s.m = sh.m, s.n = sh.n, s.k = sh.k, s.op_b = b;
      s.bias = true, s.act = acts[i % 5], s.d_type = dts[i % 3], s.alpha = i % 2 ? 0.5f : 1.f;
      if (i % 3 == 2) s.beta = 0.75f, s.c_type = DType::BF16;
      s.pad_a = s.pad_b = i % 2 ? 3 : 0;
      s.seed = 300 + i++;
      expect_correct(s, sh.kernel);
    }
  ExSpec s;  // a batch of 3 entries against one weight (stride 0), misaligned entry gaps
  s.precision = Precision::TF32, s.m = 96, s.n = 200, s.k = 300, s.batch = 3, s.stride_b = 0;
  s.stride_extra = 5, s.bias = true, s.act = Activation::GeluTanh, s.d_type = DType::BF16;
  s.seed = 400;
  expect_correct(s, kSmall);
}

}  // namespace
}  // namespace gemmlab::test
