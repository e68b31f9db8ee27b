// The CPU fp64 reference against a plain triple loop written independently, on odd shapes,
// transposes, padded leading dimensions, alpha/beta and each storage type.
#include <cmath>
#include <limits>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include "reference/reference.h"

namespace gemmlab::test {
namespace {

double elem(const GemmProblem& p, const void* x, int64_t i) {
  if (p.precision == Precision::BF16) return __bfloat162float(static_cast<const __nv_bfloat16*>(x)[i]);
  if (p.precision == Precision::FP16) return __half2float(static_cast<const __half*>(x)[i]);
  return static_cast<const float*>(x)[i];
}

struct RefCase {
  Precision prec;
  int64_t m, n, k;
  Op a, b;
  int pad;
  float beta;
};

class ReferenceCase : public ::testing::TestWithParam<RefCase> {};

TEST_P(ReferenceCase, MatchesTripleLoop) {
  const RefCase rc = GetParam();
  GemmProblem p;
  p.precision = rc.prec, p.m = rc.m, p.n = rc.n, p.k = rc.k, p.op_a = rc.a, p.op_b = rc.b;
  p.alpha = 1.5f, p.beta = rc.beta;
  int64_t ar, ac, br, bc;
  stored_shape_a(p, &ar, &ac);
  stored_shape_b(p, &br, &bc);
  p.lda = ac + rc.pad, p.ldb = bc + rc.pad, p.ldc = rc.n + rc.pad;
  std::vector<char> a(stored_elems(ar, ac, p.lda) * input_bytes(rc.prec) + 4);
  std::vector<char> b(stored_elems(br, bc, p.ldb) * input_bytes(rc.prec) + 4);
  std::vector<float> c(rc.m * p.ldc);
  fill_random_host(a.data(), stored_elems(ar, ac, p.lda), rc.prec, 1);
  fill_random_host(b.data(), stored_elems(br, bc, p.ldb), rc.prec, 2);
  fill_random_host(c.data(), c.size(), Precision::FP32, 3);
  if (rc.beta == 0.f)
    for (float& v : c) v = std::nanf("");  // beta = 0 must not read C
  p.A = a.data(), p.B = b.data(), p.C = c.data();

  std::vector<double> out(rc.m * rc.n);
  reference_gemm_cpu(p, out.data(), 3);
  for (int64_t i = 0; i < rc.m; ++i) {
    for (int64_t j = 0; j < rc.n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < rc.k; ++l) {
        const double x = elem(p, p.A, rc.a == Op::N ? i * p.lda + l : l * p.lda + i);
        const double y = elem(p, p.B, rc.b == Op::N ? l * p.ldb + j : j * p.ldb + l);
        s += x * y;
      }
      double want = 1.5 * s;
      if (rc.beta != 0.f) want += double(rc.beta) * c[i * p.ldc + j];
      ASSERT_NEAR(out[i * rc.n + j], want, 1e-12 * (1 + std::fabs(want))) << i << "," << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ReferenceCase,
    ::testing::Values(RefCase{Precision::FP32, 1, 1, 1, Op::N, Op::N, 0, 0.f},
                      RefCase{Precision::FP32, 7, 13, 5, Op::T, Op::N, 2, 0.5f},
                      RefCase{Precision::FP32, 13, 7, 11, Op::N, Op::T, 3, 0.f},
                      RefCase{Precision::TF32, 17, 19, 23, Op::T, Op::T, 1, -1.f},
                      RefCase{Precision::BF16, 31, 5, 9, Op::N, Op::N, 5, 0.25f},
                      RefCase{Precision::FP16, 6, 29, 1, Op::T, Op::T, 0, 0.f},
                      RefCase{Precision::FP32, 5, 3, 0, Op::N, Op::N, 0, 2.f}));

TEST(RelativeError, NaNNeverPasses) {
  const double ref[2] = {1.0, 2.0};
  const float out[2] = {1.f, std::nanf("")};
  EXPECT_TRUE(std::isinf(relative_error(out, 2, ref, 1, 2)));
  const float good[2] = {1.f, 2.f};
  EXPECT_EQ(relative_error(good, 2, ref, 1, 2), 0.0);
  const float off[2] = {1.f, 2.2f};
  EXPECT_NEAR(relative_error(off, 2, ref, 1, 2), 0.2 / std::sqrt(5.0), 1e-6);
}

// The per-element check: within tol * scale passes, just past it fails, NaN and Inf never pass
// (whatever the scale), C's leading dimension is honoured and the first failure is located.
TEST(ElementwiseCheck, BoundNaNAndInf) {
  const double ref[4] = {1.0, -2.0, 0.0, 4.0}, scale[4] = {1.0, 2.0, 0.0, 1e300};
  const float inf = std::numeric_limits<float>::infinity();
  const float ok[6] = {1.f, -2.f, 99.f, 0.f, 4.f, 99.f};  // 2 x 2, ldc 3 (column 2 is padding)
  int64_t first = 7;
  EXPECT_EQ(count_elementwise_failures(ok, 3, ref, scale, 2, 2, 1e-6, &first), 0);
  EXPECT_EQ(first, -1);
  const float near[6] = {1.f + 5e-7f, -2.f, 0.f, 0.f, 4.f, 0.f};
  EXPECT_EQ(count_elementwise_failures(near, 3, ref, scale, 2, 2, 1e-6), 0);
  EXPECT_EQ(count_elementwise_failures(near, 3, ref, scale, 2, 2, 1e-7, &first), 1);
  EXPECT_EQ(first, 0);
  const float bad[6] = {1.f, -2.f, 0.f, 1e-20f, std::nanf(""), 0.f};  // scale 0: exact; NaN
  EXPECT_EQ(count_elementwise_failures(bad, 3, ref, scale, 2, 2, 1e-6, &first), 2);
  EXPECT_EQ(first, 2);
  const float infs[6] = {1.f, -2.f, 0.f, 0.f, inf, 0.f};  // a huge scale does not excuse Inf
  EXPECT_EQ(count_elementwise_failures(infs, 3, ref, scale, 2, 2, 1e-6), 1);
}

TEST(ElementwiseCheck, ToleranceByPrecision) {
  // tf32 rounds its inputs (2^-10 each); the others only accumulate in fp32 (2^-24 per step).
  EXPECT_GT(elementwise_tolerance(Precision::TF32, 1), std::ldexp(1.0, -10));
  EXPECT_LT(elementwise_tolerance(Precision::BF16, 1), 1e-6);
  EXPECT_EQ(elementwise_tolerance(Precision::FP32, 100), elementwise_tolerance(Precision::FP16, 100));
  EXPECT_GT(elementwise_tolerance(Precision::FP32, 4096), 4096 * std::ldexp(1.0, -24));
}

TEST(TestData, HostAndDeviceFillAgreeAndAreNonZero) {
  std::vector<float> v(1000);
  fill_random_host(v.data(), v.size(), Precision::FP32, 42);
  int zeros = 0;
  double sum = 0;
  for (float x : v) {
    zeros += x == 0.f;
    sum += x;
    ASSERT_GE(x, -1.f);
    ASSERT_LT(x, 1.f);
  }
  EXPECT_LT(zeros, 3);
  EXPECT_LT(std::fabs(sum / v.size()), 0.1);
}

}  // namespace
}  // namespace gemmlab::test
