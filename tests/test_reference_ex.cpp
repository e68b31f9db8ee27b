// The host side of the extended call's reference (reference.h): the activations in double, the
// slope bound the error propagation relies on, the epilogue (beta C in any dtype, bias, act) and
// the element-wise check of a D of any dtype with its per-dtype bound. No GPU needed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include "reference/reference.h"

namespace gemmlab::test {
namespace {

const Activation kActs[] = {Activation::None, Activation::ReLU, Activation::GeluTanh,
                            Activation::GeluErf, Activation::SiLU};

TEST(ReferenceEx, ActivationValues) {
  // Values from the formulas in gemmlab.h (PyTorch gives the same to 1e-7).
  EXPECT_EQ(activation_ref(Activation::None, -1.5), -1.5);
  EXPECT_EQ(activation_ref(Activation::ReLU, -1.5), 0.0);
  EXPECT_EQ(activation_ref(Activation::ReLU, 2.25), 2.25);
  EXPECT_NEAR(activation_ref(Activation::GeluErf, 1.0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(activation_ref(Activation::GeluErf, -1.0), -0.15865525393145707, 1e-15);
  EXPECT_NEAR(activation_ref(Activation::GeluTanh, 1.0), 0.8411919906082768, 1e-15);
  EXPECT_NEAR(activation_ref(Activation::GeluTanh, -2.0), -0.04540230591222, 1e-13);
  EXPECT_NEAR(activation_ref(Activation::SiLU, 1.0), 0.7310585786300049, 1e-15);
  EXPECT_NEAR(activation_ref(Activation::SiLU, -3.0), -0.14227761953270035, 1e-15);
  for (Activation a : kActs) {
    EXPECT_EQ(activation_ref(a, 0.0), 0.0) << activation_name(a);
    // Far from 0 every activation is x (positive side) or ~0 (negative side).
    EXPECT_NEAR(activation_ref(a, 30.0), 30.0, 1e-9) << activation_name(a);
    if (a != Activation::None) {
      EXPECT_NEAR(activation_ref(a, -30.0), 0.0, 1e-9) << activation_name(a);
    }
  }
}

// activation_slope bounds |act'| everywhere (the propagation of the input's error relies on it),
// and is tight: GELU's slope reaches 1.128, SiLU's 1.0998.
TEST(ReferenceEx, SlopeBoundsTheDerivative) {
  for (Activation a : kActs) {
    double steepest = 0;
    for (double x = -12; x <= 12; x += 1e-3) {
      const double h = 1e-6;
      steepest = std::max(steepest, std::fabs(activation_ref(a, x + h) - activation_ref(a, x - h)) / (2 * h));
    }
    EXPECT_LE(steepest, activation_slope(a) + 1e-6) << activation_name(a);  // + difference rounding
    EXPECT_GE(steepest, activation_slope(a) - 0.04) << activation_name(a);
  }
}

TEST(ReferenceEx, UnitRoundoffAndStorage) {
  EXPECT_EQ(dtype_unit_roundoff(DType::F32), 0.0);
  EXPECT_EQ(dtype_unit_roundoff(DType::BF16), std::ldexp(1.0, -8));
  EXPECT_EQ(dtype_unit_roundoff(DType::F16), std::ldexp(1.0, -11));
  // The fill of a dtype's storage precision reads back through load_dtype as the same values.
  for (DType t : {DType::F32, DType::BF16, DType::F16}) {
    std::vector<char> buf(64 * 4);
    fill_random_host(buf.data(), 64, dtype_storage(t), 5);
    std::vector<float> f(64);
    fill_random_host(f.data(), 64, Precision::FP32, 5);
    for (int i = 0; i < 64; ++i) {
      const double v = load_dtype(buf.data(), t, i);
      // The fill rounds the same fp32 value to the dtype: within its unit roundoff.
      EXPECT_LE(std::fabs(v - f[i]), dtype_unit_roundoff(t) * std::fabs(f[i]) + 1e-30) << i;
    }
  }
}

// apply_epilogue_host against the formula written out: a 2 x 3 entry with a bf16 C (ldc 4), an f16
// bias, GELU (erf); beta == 0 does not read C (NaN there); no product: 0 with scale 0.
TEST(ReferenceEx, ApplyEpilogueHost) {
  GemmProblem p;
  p.m = 2, p.n = 3, p.beta = -0.5f, p.ldc = 4, p.c_type = DType::BF16;
  p.bias_type = DType::F16, p.act = Activation::GeluErf;
  const double product[6] = {1.0, -2.0, 0.5, 0.0, 3.0, -0.25};
  const double pscale[6] = {1.5, 2.0, 0.5, 1.0, 3.0, 0.75};
  const float cvals[8] = {0.5f, 1.f, -2.f, 99.f, 0.25f, -0.75f, 1.5f, 99.f};
  std::vector<__nv_bfloat16> c(8);
  for (int i = 0; i < 8; ++i) c[i] = __float2bfloat16(cvals[i]);
  const float bvals[3] = {0.125f, -1.f, 2.f};
  std::vector<__half> bias(3);
  for (int i = 0; i < 3; ++i) bias[i] = __float2half(bvals[i]);
  EpilogueReference r;
  r.batch = 2, r.m = 2, r.n = 3, r.act = p.act;
  r.pre.assign(12, 0), r.value.assign(12, 0), r.scale.assign(12, 0);
  apply_epilogue_host(p, product, pscale, c.data(), bias.data(), 1, &r);  // entry 1
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      const double cij = cvals[i * 4 + j];
      const double pre = product[i * 3 + j] - 0.5 * cij + bvals[j];
      const int at = 6 + i * 3 + j;
      EXPECT_DOUBLE_EQ(r.pre[at], pre) << i << "," << j;
      EXPECT_DOUBLE_EQ(r.value[at], 0.5 * pre * (1 + std::erf(pre / std::sqrt(2.0))));
      EXPECT_DOUBLE_EQ(r.scale[at], pscale[i * 3 + j] + 0.5 * std::fabs(cij) + std::fabs(bvals[j]));
      EXPECT_EQ(r.pre[i * 3 + j], 0.0);  // entry 0 untouched
    }
  // beta == 0: C (NaN) is never read; no product, no bias: pre = 0, act(0) = 0, scale 0.
  std::vector<float> nan_c(8, std::nanf(""));
  p.beta = 0.f, p.c_type = DType::F32, p.act = Activation::SiLU;
  apply_epilogue_host(p, nullptr, nullptr, nan_c.data(), nullptr, 0, &r);
  for (int e = 0; e < 6; ++e) {
    EXPECT_EQ(r.pre[e], 0.0);
    EXPECT_EQ(r.value[e], 0.0);
    EXPECT_EQ(r.scale[e], 0.0);
  }
}

// The bound: fp32 D is the propagated accumulation error alone; bf16 / f16 add half an ulp of
// the value; the non-piecewise-linear activations add a few ulps of |x|.
TEST(ReferenceEx, BoundPerDType) {
  const double tol = 1e-6, scale = 4.0, v = 3.0;
  EXPECT_DOUBLE_EQ(epilogue_bound(DType::F32, Activation::None, tol, v, v, scale), tol * scale + 1e-30);
  EXPECT_DOUBLE_EQ(epilogue_bound(DType::F32, Activation::ReLU, tol, v, v, scale), tol * scale + 1e-30);
  EXPECT_GT(epilogue_bound(DType::F32, Activation::GeluErf, tol, v, v, scale), 1.13 * tol * scale);
  EXPECT_GT(epilogue_bound(DType::BF16, Activation::None, tol, v, v, scale), std::ldexp(v, -8));
  EXPECT_LT(epilogue_bound(DType::BF16, Activation::None, tol, v, v, scale), std::ldexp(v, -7));
  EXPECT_GT(epilogue_bound(DType::F16, Activation::None, tol, v, v, scale), std::ldexp(v, -11));
  EXPECT_LT(epilogue_bound(DType::F16, Activation::None, tol, v, v, scale), std::ldexp(v, -10));
  // f16's subnormal spacing: a tiny value rounds with an absolute error up to 2^-25.
  EXPECT_GE(epilogue_bound(DType::F16, Activation::None, 0, 1e-9, 1e-9, 0), std::ldexp(1.0, -25));
  EXPECT_LT(epilogue_bound(DType::F32, Activation::None, 0, 0, 0, 0), 1e-29);
  EXPECT_EQ(epilogue_tolerance(Precision::BF16, 64),
            elementwise_tolerance(Precision::BF16, 64) + std::ldexp(1.0, -23));
}

// check_epilogue_result on 2 entries of 2 x 3 in bf16 and f16 (ldd 4, stride_d 9): D rounded from
// the reference passes; one ulp further off, NaN or Inf fails, and the first such element is
// reported with its entry, row, column, value and reference.
TEST(ReferenceEx, CheckAnyDType) {
  EpilogueReference r;
  r.batch = 2, r.m = 2, r.n = 3, r.act = Activation::GeluTanh;
  for (int e = 0; e < 12; ++e) {
    r.pre.push_back(0.37 * e - 2.0);
    r.value.push_back(activation_ref(r.act, r.pre.back()));
    r.scale.push_back(1.0 + e);
  }
  const double tol = 1e-6;
  const int64_t ldd = 4, stride = 9, elems = stride + 2 * ldd;
  for (DType t : {DType::BF16, DType::F16, DType::F32}) {
    SCOPED_TRACE(dtype_name(t));
    std::vector<char> d(elems * 4);
    const auto put = [&](int64_t at, double v) {
      if (t == DType::BF16) reinterpret_cast<__nv_bfloat16*>(d.data())[at] = __double2bfloat16(v);
      else if (t == DType::F16) reinterpret_cast<__half*>(d.data())[at] = __double2half(v);
      else reinterpret_cast<float*>(d.data())[at] = static_cast<float>(v);
    };
    for (int64_t e = 0; e < elems; ++e) put(e, std::nan(""));  // padding: never looked at
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j) put(b * stride + i * ldd + j, r.value[(b * 2 + i) * 3 + j]);
    EpilogueCheck c = check_epilogue_result(d.data(), t, ldd, stride, r, tol);
    EXPECT_EQ(c.bad, 0) << c.message();
    EXPECT_EQ(c.message(), "");
    // Entry 1, element (1, 2): 4 times its bound off (still past it once rounded to the dtype).
    const double want = r.value[11];
    put(stride + ldd + 2, want + 4 * epilogue_bound(t, r.act, tol, r.pre[11], want, r.scale[11]));
    c = check_epilogue_result(d.data(), t, ldd, stride, r, tol);
    EXPECT_EQ(c.bad, 1);
    EXPECT_EQ(c.entry, 1);
    EXPECT_EQ(c.i, 1);
    EXPECT_EQ(c.j, 2);
    EXPECT_DOUBLE_EQ(c.want, want);
    EXPECT_NE(c.message().find("entry 1 D(1, 2)"), std::string::npos) << c.message();
    put(1, std::nan(""));  // entry 0, (0, 1): NaN never passes, and comes first
    put(ldd, std::numeric_limits<double>::infinity());
    c = check_epilogue_result(d.data(), t, ldd, stride, r, tol);
    EXPECT_EQ(c.bad, 3);
    EXPECT_EQ(c.entry, 0);
    EXPECT_EQ(c.i, 0);
    EXPECT_EQ(c.j, 1);
  }
}

}  // namespace
}  // namespace gemmlab::test
