// gemm-bench's fp64 checks on the CPU: rounding to D's dtype as the GPU does, loading 16-bit
// values, the epilogue's reference (bias, activation, D's rounding), the error norm and its
// per-dtype bounds, and the regions a large or batched result is checked on. The reports:
// test_bench.cpp.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "gemm-bench/check.h"
#include "reference/reference.h"

namespace gemmbench {
namespace {

TEST(BenchCheck, RoundsLikeTheGpu) {
  using gemmlab::DType;
  const double u7 = std::ldexp(1.0, -7), u8 = std::ldexp(1.0, -8);
  EXPECT_EQ(round_to_dtype(1.0 + u8, DType::BF16), 1.0) << "tie to even";
  EXPECT_EQ(round_to_dtype(1.0 + 3 * u8, DType::BF16), 1.0 + 2 * u7) << "tie to even";
  EXPECT_EQ(round_to_dtype(1.0 + 1.1 * u8, DType::BF16), 1.0 + u7);
  EXPECT_EQ(round_to_dtype(-3.0, DType::BF16), -3.0);
  EXPECT_TRUE(std::isinf(round_to_dtype(1e39, DType::BF16)));
  EXPECT_EQ(round_to_dtype(65519.0, DType::F16), 65504.0);
  EXPECT_TRUE(std::isinf(round_to_dtype(65520.0, DType::F16)));
  EXPECT_TRUE(std::isinf(round_to_dtype(-70000.0, DType::F16)));
  EXPECT_LT(round_to_dtype(-70000.0, DType::F16), 0.0);
  EXPECT_EQ(round_to_dtype(std::ldexp(1.0, -25), DType::F16), 0.0) << "subnormal tie to even";
  EXPECT_EQ(round_to_dtype(3 * std::ldexp(1.0, -25), DType::F16), std::ldexp(1.0, -23));
  EXPECT_EQ(round_to_dtype(1.0 + std::ldexp(1.0, -12), DType::F16), 1.0);
  EXPECT_EQ(round_to_dtype(0.1, DType::F32), static_cast<double>(0.1f));
  EXPECT_DOUBLE_EQ(unit_roundoff(DType::BF16), u8);
  EXPECT_DOUBLE_EQ(unit_roundoff(DType::F16), std::ldexp(1.0, -11));

  const uint16_t f16[] = {0x3C00, 0xC000, 0x0001, 0x7C00, 0x7E00, 0x7BFF};
  EXPECT_EQ(load_dtype(f16, DType::F16, 0), 1.0);
  EXPECT_EQ(load_dtype(f16, DType::F16, 1), -2.0);
  EXPECT_EQ(load_dtype(f16, DType::F16, 2), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(load_dtype(f16, DType::F16, 3)));
  EXPECT_TRUE(std::isnan(load_dtype(f16, DType::F16, 4)));
  EXPECT_EQ(load_dtype(f16, DType::F16, 5), 65504.0);
  const uint16_t bf16[] = {0x3F80, 0xC040, 0xFFFF};
  EXPECT_EQ(load_dtype(bf16, DType::BF16, 0), 1.0);
  EXPECT_EQ(load_dtype(bf16, DType::BF16, 1), -3.0);
  EXPECT_TRUE(std::isnan(load_dtype(bf16, DType::BF16, 2))) << "the NaN fill before a checked run";
  const float f32[] = {0.5f, -7.25f};
  EXPECT_EQ(load_dtype(f32, DType::F32, 1), -7.25);
}

TEST(BenchCheck, EpilogueReference) {
  using gemmlab::Activation;
  using gemmlab::DType;
  EXPECT_NEAR(gemmlab::activation_ref(Activation::GeluTanh, 1.0), 0.8411919906, 1e-9);
  EXPECT_NEAR(gemmlab::activation_ref(Activation::GeluErf, 1.0), 0.8413447461, 1e-9);
  EXPECT_NEAR(gemmlab::activation_ref(Activation::SiLU, 1.0), 0.7310585786, 1e-9);
  EXPECT_EQ(gemmlab::activation_ref(Activation::ReLU, -2.0), 0.0);
  EXPECT_EQ(gemmlab::activation_ref(Activation::None, -2.0), -2.0);
  // 2 x 3 product, bias per column (of D), then the activation, then D's rounding.
  const double product[] = {1.0, -4.0, 0.5, 2.0, 3.0, -0.25};
  const double bias[] = {0.5, 1.0, -1.0};
  double e[6];
  apply_epilogue_ref(product, 2, 3, bias, Activation::ReLU, DType::F32, e);
  EXPECT_EQ(std::vector<double>(e, e + 6), (std::vector<double>{1.5, 0.0, 0.0, 2.5, 4.0, 0.0}));
  apply_epilogue_ref(product, 2, 3, nullptr, Activation::None, DType::F32, e);
  EXPECT_EQ(std::vector<double>(e, e + 6), std::vector<double>(product, product + 6));
  const double odd[] = {1.0 + 1.1 * std::ldexp(1.0, -8)};
  apply_epilogue_ref(odd, 1, 1, nullptr, Activation::None, DType::BF16, e);
  EXPECT_EQ(e[0], 1.0 + std::ldexp(1.0, -7));

  ErrorSum sum;
  const float out[] = {1.0f, 2.0f};
  const double want[] = {1.0, 2.5};
  sum.add(out, DType::F32, want, 2);
  EXPECT_NEAR(sum.relative(), 0.5 / std::sqrt(7.25), 1e-12);
  const float nan[] = {std::nanf("")};
  sum.add(nan, DType::F32, want, 1);
  EXPECT_TRUE(std::isinf(sum.relative()));
  ErrorSum zero;
  const double zeros[] = {0.0, 0.0};
  zero.add(out, DType::F32, zeros, 2);
  EXPECT_NEAR(zero.relative(), std::sqrt(5.0), 1e-12) << "absolute norm where the reference is 0";

  using gemmlab::Precision;
  EXPECT_EQ(check_bound(Precision::BF16, DType::F32, Activation::None, false), gemmlab::error_bound(Precision::BF16));
  EXPECT_GT(check_bound(Precision::BF16, DType::BF16, Activation::None, false),
            check_bound(Precision::BF16, DType::F16, Activation::None, false));
  EXPECT_LT(check_bound(Precision::BF16, DType::BF16, Activation::None, false), unit_roundoff(DType::BF16) / 2)
      << "a truncating D would fail";
  EXPECT_GT(check_bound(Precision::BF16, DType::BF16, Activation::GeluTanh, true),
            check_bound(Precision::BF16, DType::BF16, Activation::GeluTanh, false));
}

TEST(BenchCheck, Regions) {
  auto covered = [](const std::vector<CheckRegion>& r, int64_t entry) {
    int64_t rows = 0;
    for (const CheckRegion& g : r) rows += g.entry == entry ? g.rows : 0;
    return rows;
  };
  std::vector<CheckRegion> all = check_regions(64, 512, 512);
  EXPECT_EQ(all.size(), 64u) << "small batches: every entry, whole";
  EXPECT_EQ(covered(all, 63), 512);
  std::vector<CheckRegion> one = check_regions(1, 8192, 8192);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].rows, 8192);
  std::vector<CheckRegion> many = check_regions(1000, 1024, 1024);
  ASSERT_EQ(many.size(), 3u) << "big batches: first, middle and last entry";
  EXPECT_EQ(many[0].entry, 0);
  EXPECT_EQ(many[2].entry, 999);
  EXPECT_EQ(many[2].rows, 1024);
  // D past 2^31 elements: row blocks, the last one reaching the end (past 2^31 elements).
  std::vector<CheckRegion> big = check_regions(1, 46341, 46341);
  ASSERT_EQ(big.size(), 3u);
  EXPECT_EQ(big[0].row0, 0);
  EXPECT_EQ(big[2].row0 + big[2].rows, 46341);
  EXPECT_GT((big[2].row0 + big[2].rows) * 46341, int64_t{1} << 31);
  for (size_t i = 1; i < big.size(); ++i) EXPECT_GE(big[i].row0, big[i - 1].row0 + big[i - 1].rows);
  EXPECT_TRUE(check_regions(0, 4, 4).empty());
}

}  // namespace
}  // namespace gemmbench
