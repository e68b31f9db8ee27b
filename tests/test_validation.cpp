// Argument validation: every rejected case returns its status with a message, on any machine
// (these checks come before any CUDA call). The device-pointer checks need a GPU.
#include <cmath>
#include <cstdlib>

#include <unistd.h>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gemmlab/gemmlab.h"
#include "gpu_util.h"

namespace gemmlab::test {
namespace {

// A fake non-null "device" pointer: host validation never dereferences it.
const void* fake(uintptr_t v = 0x1000) { return reinterpret_cast<const void*>(v); }
float* fake_c() { return reinterpret_cast<float*>(0x2000); }

Status call(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
            Op a = Op::N, Op b = Op::N, const void* A = fake(), const void* B = fake(),
            float* C = fake_c(), const char* kernel = "auto", float alpha = 1.f) {
  return gemm(a, b, m, n, k, alpha, A, lda, B, ldb, 0.f, C, ldc, Precision::FP32, kernel);
}

void expect_message(const char* needle) {
  EXPECT_NE(std::string(last_error_message()).find(needle), std::string::npos)
      << "message was: " << last_error_message();
}

TEST(Validation, NegativeSizes) {
  EXPECT_EQ(call(-1, 4, 4, 4, 4, 4), Status::InvalidSize);
  expect_message("m=-1");
  EXPECT_EQ(call(4, -1, 4, 4, 4, 4), Status::InvalidSize);
  EXPECT_EQ(call(4, 4, -7, 4, 4, 4), Status::InvalidSize);
  expect_message("k=-7");
}

TEST(Validation, LeadingDimensionsNoTranspose) {
  // A m x k needs lda >= k; B k x n needs ldb >= n; C needs ldc >= n.
  EXPECT_EQ(call(8, 6, 5, 4, 6, 6), Status::InvalidLeadingDim);
  expect_message("lda=4");
  EXPECT_EQ(call(8, 6, 5, 5, 5, 6), Status::InvalidLeadingDim);
  expect_message("ldb=5");
  EXPECT_EQ(call(8, 6, 5, 5, 6, 5), Status::InvalidLeadingDim);
  expect_message("ldc=5");
}

TEST(Validation, LeadingDimensionsTransposed) {
  // A^T: A stored k x m needs lda >= m; B^T: B stored n x k needs ldb >= k.
  EXPECT_EQ(call(8, 6, 5, 7, 6, 6, Op::T, Op::N), Status::InvalidLeadingDim);
  expect_message("k x m");
  EXPECT_EQ(call(8, 6, 5, 8, 4, 6, Op::T, Op::T), Status::InvalidLeadingDim);
  expect_message("n x k");
  // The same sizes are valid once the ld matches the stored row.
  EXPECT_NE(call(8, 6, 5, 8, 5, 6, Op::T, Op::T), Status::InvalidLeadingDim);
}

TEST(Validation, LeadingDimensionAtLeastOne) {
  EXPECT_EQ(call(4, 4, 0, 0, 4, 4), Status::InvalidLeadingDim);
}

TEST(Validation, NullPointers) {
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, nullptr), Status::NullPointer);
  expect_message("A is null");
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, fake(), nullptr), Status::NullPointer);
  expect_message("B is null");
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, fake(), fake(), nullptr), Status::NullPointer);
  expect_message("C is null");
}

TEST(Validation, PointersOffTheirElementSize) {
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, fake(0x1002)), Status::InvalidValue);
  expect_message("A (");
  expect_message("not aligned to its 4-byte elements");
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, fake(), fake(0x1001)), Status::InvalidValue);
  expect_message("B (");
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, fake(), fake(), reinterpret_cast<float*>(0x2002)),
            Status::InvalidValue);
  expect_message("C (");
  // 16-bit inputs need 2-byte alignment only (C stays float).
  EXPECT_NE(gemm(Op::N, Op::N, 4, 4, 4, 1.f, fake(0x1002), 4, fake(0x1006), 4, 0.f, fake_c(), 4,
                 Precision::BF16),
            Status::InvalidValue);
  EXPECT_EQ(gemm(Op::N, Op::N, 4, 4, 4, 1.f, fake(0x1001), 4, fake(), 4, 0.f, fake_c(), 4,
                 Precision::FP16),
            Status::InvalidValue);
}

TEST(Validation, NullAAndBAllowedWhenNoProductIsFormed) {
  // k == 0 or alpha == 0: A and B are never read, so null is fine (C = beta * C). These pass host
  // validation and then need a device; without one they stop at NoDevice, not NullPointer.
  EXPECT_NE(call(4, 4, 0, 1, 4, 4, Op::N, Op::N, nullptr, nullptr), Status::NullPointer);
  EXPECT_NE(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, nullptr, nullptr, fake_c(), "auto", 0.f),
            Status::NullPointer);
}

TEST(Validation, EmptyOutputIsANoOp) {
  // m == 0 or n == 0: nothing to do, even with null pointers and no GPU.
  EXPECT_EQ(call(0, 4, 4, 4, 4, 4, Op::N, Op::N, nullptr, nullptr, nullptr), Status::Success);
  EXPECT_EQ(call(4, 0, 4, 4, 1, 1, Op::N, Op::N, nullptr, nullptr, nullptr), Status::Success);
}

TEST(Validation, PastAddressableSizes) {
  // A dimension past 2^31 - 1 is refused; a matrix past 2^31 elements is not (64-bit offsets):
  // 70000 x 70000 C (4.9e9 elements) passes the host checks and reaches the device ones.
  EXPECT_EQ(call(int64_t(1) << 31, 1, 1, 1, 1, 1), Status::SizeTooLarge);
  expect_message("below 2^31");
  // Offsets are 64-bit: a 70000 x 70000 C (4.9e9 elements) and a small A whose huge leading
  // dimension spans past 2^31 elements pass host validation (SizeTooLarge only past 2^62 bytes;
  // a kernel that indexes A in 32 bits says so itself). Here they stop at the device checks.
  for (Status s : {call(70000, 70000, 1, 1, 70000, 70000), call(4, 4, 4, int64_t(1) << 30, 4, 4)})
    EXPECT_TRUE(s == Status::NoDevice || s == Status::NotDevicePointer) << status_name(s);
  EXPECT_EQ(call(4, 4, 4, int64_t(1) << 61, 4, 4), Status::SizeTooLarge);
  expect_message("A spans more than 2^62 bytes");
  EXPECT_EQ(call(4, 4, 4, 4, 4, int64_t(1) << 61), Status::SizeTooLarge);
  expect_message("C spans");
}

TEST(Validation, UnknownKernel) {
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, fake(), fake(), fake_c(), "simt/99_nope"),
            Status::UnknownKernel);
  expect_message("simt/99_nope");
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, fake(), fake(), fake_c(), nullptr),
            Status::InvalidValue);
}

TEST(Validation, BadEnums) {
  EXPECT_EQ(gemm(static_cast<Op>(7), Op::N, 4, 4, 4, 1.f, fake(), 4, fake(), 4, 0.f, fake_c(), 4,
                 Precision::FP32),
            Status::InvalidValue);
  EXPECT_EQ(gemm(Op::N, Op::N, 4, 4, 4, 1.f, fake(), 4, fake(), 4, 0.f, fake_c(), 4,
                 static_cast<Precision>(9)),
            Status::InvalidValue);
}

TEST(Validation, NoDeviceIsReportedNotCrashed) {
  if (gpu_unavailable_reason().empty()) {
    // A GPU is present: check the GPU-less path in a child process that sees no device.
    char self[4096] = {};
    ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
    const std::string cmd = std::string("CUDA_VISIBLE_DEVICES= '") + self +
                            "' --gtest_filter=Validation.NoDeviceIsReportedNotCrashed >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << "the no-device check failed in a child process";
    return;
  }
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4), Status::NoDevice);
  expect_message("no CUDA device");
}

TEST(Names, Precision) {
  Precision p;
  for (Precision q : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16}) {
    ASSERT_TRUE(parse_precision(precision_name(q), &p));
    EXPECT_EQ(p, q);
  }
  EXPECT_FALSE(parse_precision("fp8", &p));
  EXPECT_FALSE(parse_precision(nullptr, &p));
  EXPECT_STREQ(status_name(Status::InvalidLeadingDim), "InvalidLeadingDim");
}

// ---- the checks that need a device ----

TEST(ValidationGpu, HostPointersAreRejected) {
  GEMMLAB_REQUIRE_GPU();
  std::vector<float> host(16);
  DeviceMem dev(16 * sizeof(float));
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, host.data(), dev.ptr, dev.as<float>()),
            Status::NotDevicePointer);
  expect_message("A (");
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, dev.ptr, host.data(), dev.as<float>()),
            Status::NotDevicePointer);
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, dev.ptr, dev.ptr, host.data()),
            Status::NotDevicePointer);
  expect_message("host memory");
}

TEST(ValidationGpu, KernelThatCannotRunSaysWhich) {
  GEMMLAB_REQUIRE_GPU();
  DeviceMem a(64), b(64), c(64);
  // The naive kernel is FP32-only: a BF16 request must name the failed constraint.
  const Status s = gemm(Op::N, Op::N, 2, 2, 2, 1.f, a.ptr, 2, b.ptr, 2, 0.f, c.as<float>(), 2,
                        Precision::BF16, "simt/01_naive");
  EXPECT_EQ(s, Status::KernelUnsupported);
  expect_message("precision");
}

TEST(ValidationGpu, DegenerateProblems) {
  GEMMLAB_REQUIRE_GPU();
  const int m = 5, n = 7;
  DeviceMem c(m * n * sizeof(float));
  std::vector<float> host(m * n, 2.f), out(m * n);
  // k == 0: C = beta * C.
  cudaMemcpy(c.ptr, host.data(), host.size() * 4, cudaMemcpyHostToDevice);
  ASSERT_EQ(gemm(Op::N, Op::N, m, n, 0, 1.f, nullptr, 1, nullptr, n, 3.f, c.as<float>(), n,
                 Precision::FP32),
            Status::Success)
      << last_error_message();
  cudaMemcpy(out.data(), c.ptr, out.size() * 4, cudaMemcpyDeviceToHost);
  for (float v : out) EXPECT_EQ(v, 6.f);
  // alpha == 0, beta == 0 over a NaN C: C = 0 without reading it.
  std::vector<float> nan(m * n, std::nanf(""));
  cudaMemcpy(c.ptr, nan.data(), nan.size() * 4, cudaMemcpyHostToDevice);
  ASSERT_EQ(gemm(Op::N, Op::N, m, n, 3, 0.f, nullptr, 3, nullptr, n, 0.f, c.as<float>(), n,
                 Precision::BF16),
            Status::Success)
      << last_error_message();
  cudaMemcpy(out.data(), c.ptr, out.size() * 4, cudaMemcpyDeviceToHost);
  for (float v : out) EXPECT_EQ(v, 0.f);
}

TEST(ValidationGpu, CudaErrorsComeBackAsStatus) {
  GEMMLAB_REQUIRE_GPU();
  // A freed allocation: cudaPointerGetAttributes no longer knows it, so it is not device memory.
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 256), cudaSuccess);
  ASSERT_EQ(cudaFree(p), cudaSuccess);
  EXPECT_EQ(call(4, 4, 4, 4, 4, 4, Op::N, Op::N, p, p, static_cast<float*>(p)),
            Status::NotDevicePointer);
}

}  // namespace
}  // namespace gemmlab::test

namespace gemmlab {
namespace {

// The scratch controls reject a device ordinal below -1 before touching CUDA, with a message; a
// device past the last one is InvalidValue (NoDevice without a GPU); the per-call limit
// round-trips. No GPU needed.
TEST(ScratchApi, BadDevicesAndLimitRoundTrip) {
  EXPECT_EQ(release_scratch(-2), Status::InvalidValue);
  EXPECT_NE(std::string(last_error_message()).find("release_scratch"), std::string::npos);
  EXPECT_EQ(set_scratch_retained(1 << 20, -7), Status::InvalidValue);
  EXPECT_NE(std::string(last_error_message()).find("-7"), std::string::npos);
  const Status far = set_scratch_retained(1 << 20, 1 << 20);
  EXPECT_TRUE(far == Status::InvalidValue || far == Status::NoDevice) << status_name(far);
  EXPECT_NE(std::string(last_error_message()), "");
  const uint64_t before = set_scratch_limit(12345);
  EXPECT_EQ(set_scratch_limit(before), 12345u);
}

}  // namespace
}  // namespace gemmlab
