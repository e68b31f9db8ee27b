// Argument validation of the extended call, gemm(GemmDesc): every bad input returns its status
// with a message naming the problem, on any machine (validate_host runs before any CUDA call, so
// the fake pointers below are never touched and nothing is enqueued). A valid problem gets past
// host validation and stops at the device checks: NoDevice without a GPU, NotDevicePointer (the
// fake pointers) with one.
#include <cstdint>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "gemmlab/gemmlab.h"

namespace gemmlab::test {
namespace {

void* fake(uintptr_t v) { return reinterpret_cast<void*>(v); }

// A valid 4 x 4 x 4 fp32 problem with fake device pointers, beta = 0, no C.
GemmDesc good() {
  GemmDesc g;
  g.m = g.n = g.k = 4;
  g.A = fake(0x1000), g.lda = 4;
  g.B = fake(0x2000), g.ldb = 4;
  g.D = fake(0x3000), g.ldd = 4;
  g.ldc = 4;
  return g;
}

// The status a problem that passes host validation gets here.
bool passed_host_checks(Status s) { return s == Status::NoDevice || s == Status::NotDevicePointer; }

// The message names the problem.
void expect_message(const char* needle) {
  const std::string msg = last_error_message();
  EXPECT_FALSE(msg.empty());
  EXPECT_NE(msg.find(needle), std::string::npos) << "message was: " << msg;
}

TEST(ValidationEx, GoodProblemReachesTheDeviceChecks) {
  const Status s = gemm(good());
  EXPECT_TRUE(passed_host_checks(s)) << status_name(s) << ": " << last_error_message();
}

TEST(ValidationEx, UnknownActivation) {
  GemmDesc g = good();
  g.act = static_cast<Activation>(99);
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("unknown activation 99");
  g.act = static_cast<Activation>(-1);
  EXPECT_EQ(gemm(g), Status::InvalidValue);
}

TEST(ValidationEx, UnknownDTypes) {
  GemmDesc g = good();
  g.d_type = static_cast<DType>(1);  // between F32 and BF16: no such dtype
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("d_type");
  g = good();
  g.c_type = static_cast<DType>(7);  // checked even with beta == 0
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("c_type");
  g = good();
  g.bias_type = static_cast<DType>(-3);
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("bias_type");
}

// The bias is fp32 or the input dtype: bf16 with bf16 inputs, f16 with fp16 inputs.
TEST(ValidationEx, BiasDType) {
  GemmDesc g = good();
  g.bias = fake(0x4000);
  g.precision = Precision::FP16, g.bias_type = DType::BF16;
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("bf16 bias with fp16 inputs");
  g.precision = Precision::FP32, g.bias_type = DType::F16;
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("f16 bias with fp32 inputs");
  g.precision = Precision::TF32, g.bias_type = DType::BF16;
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  // The allowed pairs pass.
  for (auto [p, t] : {std::pair{Precision::BF16, DType::BF16}, {Precision::FP16, DType::F16},
                      {Precision::FP16, DType::F32}, {Precision::TF32, DType::F32}}) {
    g.precision = p, g.bias_type = t;
    const Status s = gemm(g);
    EXPECT_TRUE(passed_host_checks(s)) << precision_name(p) << " " << dtype_name(t) << ": "
                                       << status_name(s) << ": " << last_error_message();
  }
  // A bias off its element size.
  g.precision = Precision::BF16, g.bias_type = DType::BF16, g.bias = fake(0x4001);
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("bias");
}

TEST(ValidationEx, NegativeBatchAndStrides) {
  GemmDesc g = good();
  g.batch = -1;
  EXPECT_EQ(gemm(g), Status::InvalidSize);
  expect_message("batch=-1");
  for (int64_t GemmDesc::*stride :
       {&GemmDesc::stride_a, &GemmDesc::stride_b, &GemmDesc::stride_c, &GemmDesc::stride_d}) {
    g = good();
    g.batch = 2, g.stride_a = g.stride_b = g.stride_c = 16, g.stride_d = 16;
    g.*stride = -16;
    EXPECT_EQ(gemm(g), Status::InvalidValue);
    expect_message("strides must be >= 0");
  }
}

// D's entries must not overlap: one after the other, or side by side within rows.
TEST(ValidationEx, OverlappingEntriesOfD) {
  GemmDesc g = good();
  g.batch = 2, g.stride_a = g.stride_b = 16;
  g.stride_d = 1;
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("batch entries of D overlap");
  g.stride_d = 0;  // one D for two entries
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("stride_d=0");
  g.stride_d = 15;  // (m - 1) * ldd + n = 16
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  g.stride_d = 16;
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
  // Side by side: stride_d = n with ldd = batch * n fits; ldd one short does not.
  g.stride_d = 4, g.ldd = 8;
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
  g.ldd = 7;
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  // stride_d = 0 is fine for a single entry, and batch 0 is a no-op whatever the strides.
  g = good();
  g.stride_d = 0;
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
}

// D == C with beta != 0 must describe one matrix: same dtype, leading dimension and stride.
TEST(ValidationEx, InPlaceNeedsTheSameLayout) {
  GemmDesc g = good();
  g.C = g.D, g.beta = 0.5f;
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
  g.c_type = DType::BF16;
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("D == C");
  g.c_type = DType::F32, g.ldc = 5;
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("ldc == ldd");
  g.ldc = 4, g.batch = 2, g.stride_a = g.stride_b = 16, g.stride_d = 16, g.stride_c = 32;
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("stride_c == stride_d");
  // beta == 0 never reads C: its dtype and layout do not matter then.
  g = good();
  g.C = g.D, g.c_type = DType::F16, g.ldc = 9;
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
}

// C read while D is written must be the same matrix or apart: one element of overlap is refused.
TEST(ValidationEx, PartlyOverlappingCAndD) {
  GemmDesc g = good();
  g.beta = 0.5f;
  g.C = static_cast<char*>(g.D) + 15 * 4;  // C's first element is D's last
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("C and D overlap");
  g.C = static_cast<char*>(g.D) + 16 * 4;  // right after D: fine
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
  g.beta = 0.f, g.C = static_cast<char*>(g.D) + 4;  // not read: no constraint
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
}

TEST(ValidationEx, NullPointers) {
  GemmDesc g = good();
  g.D = nullptr;
  EXPECT_EQ(gemm(g), Status::NullPointer);
  expect_message("D is null");
  g = good();
  g.beta = 0.5f;  // C is read
  EXPECT_EQ(gemm(g), Status::NullPointer);
  expect_message("C is null");
  g.beta = 0.f;  // C is not read: null is fine
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
  // k == 0 or alpha == 0: A and B are not read.
  g.A = g.B = nullptr, g.k = 0, g.lda = 1;
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
  g.k = 4, g.lda = 4, g.alpha = 0.f;
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
  g.alpha = 1.f;
  EXPECT_EQ(gemm(g), Status::NullPointer);
  expect_message("A is null");
}

// batch == 0 (like m or n == 0) is a no-op: Success with null pointers and no device.
TEST(ValidationEx, EmptyBatchIsANoOp) {
  GemmDesc g = good();
  g.batch = 0, g.A = g.B = nullptr, g.D = nullptr, g.beta = 0.5f;
  EXPECT_EQ(gemm(g), Status::Success) << last_error_message();
}

TEST(ValidationEx, LeadingDimensionAndAlignmentOfD) {
  GemmDesc g = good();
  g.ldd = 3;
  EXPECT_EQ(gemm(g), Status::InvalidLeadingDim);
  expect_message("ldd=3");
  g = good();
  g.d_type = DType::BF16, g.D = fake(0x3002);  // 2-byte elements: fine
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
  g.D = fake(0x3001);
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("D (");
  g = good();
  g.D = fake(0x3002);  // f32 D off its 4 bytes
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  g = good();
  g.beta = 1.f, g.C = fake(0x5002), g.c_type = DType::F16, g.ldc = 4;
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
  g.c_type = DType::F32;
  EXPECT_EQ(gemm(g), Status::InvalidValue);
  expect_message("C (");
}

// A D past 2^31 elements is not SizeTooLarge in the extended call (64-bit offsets).
TEST(ValidationEx, LargeDIsAccepted) {
  GemmDesc g = good();
  g.m = g.n = 46341, g.k = 16, g.lda = 16, g.ldb = g.ldd = 46341;
  EXPECT_TRUE(passed_host_checks(gemm(g))) << last_error_message();
  g.m = int64_t{1} << 31;
  EXPECT_EQ(gemm(g), Status::SizeTooLarge);
}

TEST(ValidationEx, AutoKernelNameRejectsBadInput) {
  GemmDesc g = good();
  g.act = static_cast<Activation>(99);
  EXPECT_EQ(auto_kernel_name(g), nullptr);
  expect_message("unknown activation");
}

TEST(NamesEx, ActivationRoundTrip) {
  const Activation all[] = {Activation::None, Activation::ReLU, Activation::GeluTanh,
                            Activation::GeluErf, Activation::SiLU};
  const char* names[] = {"none", "relu", "gelu_tanh", "gelu_erf", "silu"};
  for (int i = 0; i < 5; ++i) {
    EXPECT_STREQ(activation_name(all[i]), names[i]);
    Activation a = Activation::None;
    ASSERT_TRUE(parse_activation(names[i], &a)) << names[i];
    EXPECT_EQ(a, all[i]);
  }
  Activation a;
  EXPECT_FALSE(parse_activation("gelu", &a));
  EXPECT_FALSE(parse_activation("ReLU", &a));
  EXPECT_FALSE(parse_activation(nullptr, &a));
  EXPECT_FALSE(parse_activation("relu", nullptr));
  EXPECT_STREQ(activation_name(static_cast<Activation>(99)), "unknown");
}

TEST(NamesEx, DTypeRoundTrip) {
  for (DType t : {DType::F32, DType::BF16, DType::F16}) {
    DType u = DType::F32;
    ASSERT_TRUE(parse_dtype(dtype_name(t), &u)) << dtype_name(t);
    EXPECT_EQ(u, t);
  }
  EXPECT_STREQ(dtype_name(DType::F32), "f32");
  EXPECT_STREQ(dtype_name(DType::BF16), "bf16");
  EXPECT_STREQ(dtype_name(DType::F16), "f16");
  DType u = DType::F32;
  ASSERT_TRUE(parse_dtype("fp16", &u));  // the aliases
  EXPECT_EQ(u, DType::F16);
  ASSERT_TRUE(parse_dtype("fp32", &u));
  EXPECT_EQ(u, DType::F32);
  EXPECT_FALSE(parse_dtype("f64", &u));
  EXPECT_FALSE(parse_dtype("", &u));
  EXPECT_FALSE(parse_dtype(nullptr, &u));
  EXPECT_STREQ(dtype_name(static_cast<DType>(1)), "unknown");
}

}  // namespace
}  // namespace gemmlab::test
