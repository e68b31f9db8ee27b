// The extended call with D past 2^31 elements (GemmExLarge.*): sized to fit the device's memory
// (skipped with the reason where it does not), checked on sampled rows against an fp64 CPU
// computation: the first and last rows and those around 2^30, 2^31 and 2^32 elements, where
// 32-bit offsets would wrap. The rest of the extended call: test_gemm_ex_gpu.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ex_problem_util.h"
#include "gpu_util.h"
#include "reference/reference.h"
#include "registry/registry.h"

namespace gemmlab::test {
namespace {

// The input dtype of a 16-bit precision (what a bias may be besides fp32).
DType input_dtype(Precision p) { return p == Precision::BF16 ? DType::BF16 : DType::F16; }
bool is_16bit(Precision p) { return p == Precision::BF16 || p == Precision::FP16; }

// Rows to check: the first and last ones, those around 2^30, 2^31 and 2^32 elements (where 32-bit
// offsets wrap), and evenly spaced others; 64 in all (fewer for small m).
std::vector<int64_t> sample_rows(int64_t m, int64_t ldd) {
  std::vector<int64_t> rows = {0, 1, m / 2, m - 2, m - 1};
  for (int shift : {30, 31, 32}) {
    const int64_t r = ((int64_t{1} << shift) - 1) / ldd;
    for (int64_t x : {r - 1, r, r + 1}) rows.push_back(x);
  }
  for (int64_t i = 0; rows.size() < 64 && i < 64; ++i) rows.push_back(i * (m / 64) + 7);
  std::vector<int64_t> out;
  for (int64_t r : rows)
    if (r >= 0 && r < m) out.push_back(r);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

DType input_as_dtype(Precision p) {
  return p == Precision::BF16 ? DType::BF16 : p == Precision::FP16 ? DType::F16 : DType::F32;
}

// An m x n x k NN problem (tight rows) through auto, D (d_type, ldd = n) past 2^31 elements, in
// two variants: in place (D == C, random, beta 0.5) without bias or activation, and beta 0 with a
// bias and `act`. Sampled rows of D against an fp64 CPU computation from host copies of A, B, the
// bias and C's sampled rows. Skipped (with the sizes) where the device has not the memory.
void check_large(Precision prec, int64_t m, int64_t n, int64_t k, DType d_type, Activation act) {
  const int64_t ldd = n, in = input_bytes(prec), db = dtype_bytes(d_type);
  const size_t d_bytes = static_cast<size_t>(m * ldd * db);
  const size_t need = d_bytes + static_cast<size_t>((m * k + k * n) * in + n * 4) + (size_t{1} << 30);
  size_t free_b = 0, total_b = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
  if (free_b < need)
    GTEST_SKIP() << "needs " << need / (1 << 20) << " MiB of device memory, " << free_b / (1 << 20)
                 << " MiB free";
  DeviceMem a(m * k * in), b(k * n * in), bias(n * dtype_bytes(input_as_dtype(prec))), d(d_bytes);
  ASSERT_TRUE(a.ptr && b.ptr && bias.ptr && d.ptr) << "cudaMalloc failed";
  ASSERT_EQ(fill_random_device(a.ptr, m * k, prec, 81), cudaSuccess);
  ASSERT_EQ(fill_random_device(b.ptr, k * n, prec, 82), cudaSuccess);
  const DType bias_type = is_16bit(prec) ? input_dtype(prec) : DType::F32;
  ASSERT_EQ(fill_random_device(bias.ptr, n, dtype_storage(bias_type), 83), cudaSuccess);
  std::vector<char> ha(a.bytes), hb(b.bytes), hbias(n * dtype_bytes(bias_type));
  ASSERT_EQ(cudaMemcpy(ha.data(), a.ptr, ha.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(hb.data(), b.ptr, hb.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(hbias.data(), bias.ptr, hbias.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  const std::vector<int64_t> rows = sample_rows(m, ldd);
  const int64_t rs = static_cast<int64_t>(rows.size());
  // The product of the sampled rows in fp64, and its scale.
  const DType it = input_as_dtype(prec);
  std::vector<double> prod(rs * n), scale(rs * n), brow(k), babs(k);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t l = 0; l < k; ++l) brow[l] = load_dtype(hb.data(), it, l * n + j);
    for (int64_t r = 0; r < rs; ++r) {
      double acc = 0, abs_acc = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double x = load_dtype(ha.data(), it, rows[r] * k + l) * brow[l];
        acc += x, abs_acc += std::fabs(x);
      }
      prod[r * n + j] = acc, scale[r * n + j] = abs_acc;
    }
  }
  // Copies the sampled rows of D (or of C before the call) to the host, densely (ld = n).
  const auto gather = [&](std::vector<char>* out) {
    out->resize(rs * n * db);
    for (int64_t r = 0; r < rs; ++r)
      if (cudaMemcpy(out->data() + r * n * db, d.as<char>() + rows[r] * ldd * db, n * db,
                     cudaMemcpyDeviceToHost) != cudaSuccess)
        return false;
    return true;
  };
  for (bool in_place : {true, false}) {
    SCOPED_TRACE(in_place ? "in place, beta 0.5" : "beta 0, bias and activation");
    GemmDesc g;
    g.m = m, g.n = n, g.k = k, g.A = a.ptr, g.lda = k, g.B = b.ptr, g.ldb = n, g.precision = prec;
    g.D = d.ptr, g.ldd = ldd, g.d_type = d_type;
    std::vector<char> c_rows;
    if (in_place) {
      g.C = d.ptr, g.ldc = ldd, g.c_type = d_type, g.beta = 0.5f;
      ASSERT_EQ(fill_random_device(d.ptr, m * ldd, dtype_storage(d_type), 84), cudaSuccess);
      ASSERT_TRUE(gather(&c_rows));
    } else {
      g.bias = bias.ptr, g.bias_type = bias_type, g.act = act;
      ASSERT_EQ(cudaMemset(d.ptr, 0xff, d_bytes), cudaSuccess);
    }
    const char* name = auto_kernel_name(g);
    ASSERT_NE(name, nullptr) << last_error_message();
    std::printf("[  AUTO    ] %s %lldx%lldx%lld, D %s: %s\n", precision_name(prec), (long long)m,
                (long long)n, (long long)k, dtype_name(d_type), name);
    ASSERT_EQ(gemm(g), Status::Success) << last_error_message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<char> out;
    ASSERT_TRUE(gather(&out));
    GemmProblem sub;  // the sampled rows as a dense problem, for the host epilogue
    sub.m = rs, sub.n = n, sub.k = k, sub.alpha = 1.f, sub.beta = g.beta;
    sub.ldc = n, sub.c_type = d_type, sub.bias_type = bias_type, sub.act = g.act;
    EpilogueReference r;
    r.batch = 1, r.m = rs, r.n = n, r.act = g.act;
    r.pre.resize(rs * n), r.value.resize(rs * n), r.scale.resize(rs * n);
    apply_epilogue_host(sub, prod.data(), scale.data(), c_rows.data(),
                        in_place ? nullptr : hbias.data(), 0, &r);
    const EpilogueCheck c =
        check_epilogue_result(out.data(), d_type, n, 0, r, epilogue_tolerance(prec, k));
    EXPECT_EQ(c.message(), "") << "(entry 0, i) is the i-th sampled row; row "
                               << (c.i >= 0 ? rows[c.i] : -1);
  }
}

TEST(GemmExLarge, Fp32DPast2To31Elements) {
  GEMMLAB_REQUIRE_GPU();
  check_large(Precision::FP32, 46341, 46341, 16, DType::F32, Activation::SiLU);
}

TEST(GemmExLarge, Bf16DPast2To31Elements) {
  GEMMLAB_REQUIRE_GPU();
  check_large(Precision::BF16, 65536, 40000, 64, DType::BF16, Activation::GeluTanh);
}

}  // namespace
}  // namespace gemmlab::test
