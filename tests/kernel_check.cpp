// kernel_check.h: the every-kernel check the GPU tests share.
#include "kernel_check.h"

#include <cstdio>

#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "gpu_util.h"
#include "runtime/device_props.h"
#include "runtime/reserve_sms.h"
#include "reference/reference.h"
#include "registry/registry.h"
#include "registry/tuning.h"

namespace gemmlab::test {

std::string case_name(const Case& c) {
  std::ostringstream s;
  s << precision_name(c.precision) << "_" << c.shape.m << "x" << c.shape.n << "x" << c.shape.k << "_"
    << (c.op_a == Op::N ? "N" : "T") << (c.op_b == Op::N ? "N" : "T") << "_pad" << c.pad
    << (c.beta_zero ? "_beta0" : "_beta");
  return s.str();
}

void PrintTo(const Case& c, std::ostream* os) { *os << case_name(c); }

void check_case(const Case& c, const char* only, int* ran_out) {
  *ran_out = 0;
  int dev = 0, major = 0, minor = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  const int cc = major * 10 + minor;

  GemmProblem p;
  p.precision = c.precision;
  p.op_a = c.op_a, p.op_b = c.op_b;
  p.m = c.shape.m, p.n = c.shape.n, p.k = c.shape.k;
  const uint64_t seed = std::hash<std::string>{}(case_name(c));
  p.alpha = 0.5f + static_cast<float>(seed % 1000) / 1000.f;  // in [0.5, 1.5)
  p.beta = c.beta_zero ? 0.f : -0.75f + static_cast<float>((seed >> 10) % 1000) / 2000.f;
  int64_t ar, ac, br, bc;
  stored_shape_a(p, &ar, &ac);
  stored_shape_b(p, &br, &bc);
  p.lda = ac + c.pad, p.ldb = bc + c.pad, p.ldc = p.n + c.pad;
  const int64_t a_elems = stored_elems(ar, ac, p.lda), b_elems = stored_elems(br, bc, p.ldb);
  const int64_t c_elems = p.m * p.ldc;  // whole rows, so the padding columns can be checked

  const int eb = input_bytes(c.precision);
  const int64_t offset = c.pad > 0 ? 1 : 0;  // misaligned base pointers too
  DeviceMem a((a_elems + offset) * eb), b((b_elems + offset) * eb),
      cbuf((c_elems + offset) * sizeof(float));
  ASSERT_TRUE(a.ptr && b.ptr && cbuf.ptr) << "cudaMalloc failed";
  void* a_ptr = a.as<char>() + offset * eb;
  void* b_ptr = b.as<char>() + offset * eb;
  float* c_ptr = cbuf.as<float>() + offset;
  ASSERT_EQ(fill_random_device(a_ptr, a_elems, c.precision, seed + 1), cudaSuccess);
  ASSERT_EQ(fill_random_device(b_ptr, b_elems, c.precision, seed + 2), cudaSuccess);
  // C before the call: NaN (beta = 0 must not read it) or random values; copied to restore it.
  std::vector<float> c_before(c_elems);
  if (c.beta_zero)
    ASSERT_EQ(fill_nan_device(c_ptr, c_elems), cudaSuccess);
  else
    ASSERT_EQ(fill_random_device_f32(c_ptr, c_elems, seed + 3), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(c_before.data(), c_ptr, c_elems * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  p.A = a_ptr, p.B = b_ptr, p.C = c_ptr;

  std::vector<double> ref(p.m * p.n), scale(p.m * p.n);
  ASSERT_EQ(reference_gemm_gpu_abs(p, ref.data(), scale.data()), "");

  std::vector<float> out(c_elems);
  for (const KernelDesc& kd : all_kernels()) {
    if (!(kd.dtypes & dtype_bit(c.precision))) continue;
    if (only && std::string(kd.name) != only) continue;
    SCOPED_TRACE(std::string("kernel ") + kd.name);
    if (cc < kd.min_cc) {
      // Only a device older than the kernel's target may skip it; say so visibly.
      std::printf("[  NOTE    ] %s not run: needs sm_%d, device is sm_%d\n", kd.name, kd.min_cc, cc);
      continue;
    }
    // A kernel whose stated constraint excludes the problem (gemv/small_m: m <= 16) must say so:
    // the call has to return KernelUnsupported, and the kernel is not counted as run.
    if (const char* why = kernel_cannot_run(kd, p, cc)) {
      EXPECT_EQ(gemm(p.op_a, p.op_b, p.m, p.n, p.k, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, c_f32(p),
                     p.ldc, p.precision, kd.name),
                Status::KernelUnsupported)
          << why;
      continue;
    }
    ASSERT_EQ(cudaMemcpy(c_ptr, c_before.data(), c_elems * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    const Status s = gemm(p.op_a, p.op_b, p.m, p.n, p.k, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta,
                          c_f32(p), p.ldc, p.precision, kd.name);
    ASSERT_EQ(s, Status::Success) << last_error_message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << cudaGetErrorString(cudaGetLastError());
    ASSERT_EQ(cudaMemcpy(out.data(), c_ptr, c_elems * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    const double err = relative_error(out.data(), p.ldc, ref.data(), p.m, p.n);
    EXPECT_LE(err, error_bound(c.precision)) << "relative error " << err;
    int64_t first = -1;
    const int64_t bad = count_elementwise_failures(out.data(), p.ldc, ref.data(), scale.data(), p.m,
                                                   p.n, elementwise_tolerance(c.precision, p.k), &first);
    EXPECT_EQ(bad, 0) << "elements past the per-element bound; first C(" << first / p.n << ", "
                      << first % p.n << ")";
    // Padding columns of C (n <= j < ldc) must be left as they were.
    int64_t touched = 0;
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = p.n; j < p.ldc; ++j)
        touched += std::memcmp(&out[i * p.ldc + j], &c_before[i * p.ldc + j], sizeof(float)) != 0;
    EXPECT_EQ(touched, 0) << "kernel wrote into the padding columns of C";
    ++*ran_out;
  }
}

// Runs the one kernel `name` on case c against fp64; it must have run.
void check_kernel(const Case& c, const char* name) {
  SCOPED_TRACE(case_name(c));
  int ran = 0;
  check_case(c, name, &ran);
  EXPECT_EQ(ran, 1);
}

int check_every_variant(const Case& c, const char* name) {
  const KernelDesc* kd = find_kernel(name);
  if (kd == nullptr || kd->variants == nullptr) {
    ADD_FAILURE() << name << " offers no plan variants";
    return 0;
  }
  GemmProblem p;  // laid out as check_case lays c out: the variants depend on the alignment too
  p.precision = c.precision, p.op_a = c.op_a, p.op_b = c.op_b;
  p.m = c.shape.m, p.n = c.shape.n, p.k = c.shape.k;
  int64_t ar, ac, br, bc;
  stored_shape_a(p, &ar, &ac);
  stored_shape_b(p, &br, &bc);
  p.lda = ac + c.pad, p.ldb = bc + c.pad, p.ldc = p.n + c.pad;
  const uintptr_t base = (uintptr_t{1} << 20) + (c.pad > 0 ? input_bytes(c.precision) : 0);
  p.A = p.B = reinterpret_cast<const void*>(base);
  p.C = reinterpret_cast<float*>(base);
  PlanChoice choices[64];
  const int n = kd->variants(p, choices, 64);
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(plan_choice_label(choices[i], kd->tile_names));
    const ForcePlan force(choices[i]);
    check_kernel(c, name);
  }
  return n;
}

// The grid kernel `name` would launch for an m x n x k NN problem with tight leading dimensions
// (pointers only matter for their alignment), or 0 where the device is not an H100 SXM (132 SMs),
// the only one whose grids the tests pin down.
unsigned h100_grid(const char* name, Precision prec, int64_t m, int64_t n, int64_t k) {
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess || sms != 132)
    return 0;
  const KernelDesc* kd = find_kernel(name);
  if (kd == nullptr) return 0;
  GemmProblem p;
  p.precision = prec, p.m = m, p.n = n, p.k = k;
  p.A = p.B = p.C = reinterpret_cast<float*>(uintptr_t{1} << 20);
  p.lda = k, p.ldb = p.ldc = n;
  return kd->config(p).grid.x;
}

void check_variants_of_cases(std::initializer_list<Case> cases, const char* name, int min_each,
                             const char* what) {
  int runs = 0;
  for (const Case& c : cases) {
    const int n = check_every_variant(c, name);
    EXPECT_GE(n, min_each) << what << " to choose among";
    runs += n;
  }
  std::printf("[  NOTE    ] %s: %d forced %s checked against fp64\n", name, runs, what);
}

}  // namespace gemmlab::test
