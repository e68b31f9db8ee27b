// Every registered kernel, on every dtype it supports, on the shape list: odd sizes, primes, K = 1,
// tall-skinny, all four transposes, tight and padded leading dimensions, beta = 0 with a NaN C and
// beta != 0 with a random C. Each result is checked against the fp64 cuBLAS DGEMM reference with a
// relative Frobenius bound per dtype; the padding columns of C must come back untouched.
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "gpu_util.h"
#include "kernel_check.h"
#include "runtime/device_props.h"
#include "runtime/reserve_sms.h"
#include "reference/reference.h"
#include "registry/registry.h"
#include "registry/tuning.h"

namespace gemmlab::test {
namespace {

std::vector<Case> all_cases() {
  const Shape shapes[] = {{1, 1, 1},       {7, 13, 5},      {64, 64, 64},   {1000, 1025, 999},
                          {1025, 1025, 1025}, {4097, 31, 2049}, {257, 129, 1}, {31, 4097, 67},
                          {128, 256, 4096}, {8, 4097, 1031}, {100, 250, 77}};
  std::vector<Case> cases;
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
    for (const Shape& s : shapes)
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (int pad : {0, 3})
            for (bool beta_zero : {true, false}) cases.push_back({p, s, a, b, pad, beta_zero});
  return cases;
}

class KernelCase : public ::testing::TestWithParam<Case> {};

TEST_P(KernelCase, MatchesFp64Reference) {
  GEMMLAB_REQUIRE_GPU();
  int ran = 0;
  check_case(GetParam(), nullptr, &ran);
  if (HasFatalFailure()) return;
  // Every precision has at least one kernel (FP32: the simt ladder; others once tensor-core
  // kernels are registered). Say which precisions have none, rather than pass silently.
  if (ran == 0)
    GTEST_SKIP() << "no registered kernel supports " << precision_name(GetParam().precision);
}

// A kernel launched with several shared-memory sizes (gemv/small_m sizes its copy of op(A) by the
// problem): asking for a small size first, as gemm-bench's occupancy query does, must not lower
// the limit that a larger problem then needs (it did: "invalid argument" at 1 x 8192 x 8192).
TEST(DeviceProps, PrepareFunctionNeverLowersTheLimit) {
  GEMMLAB_REQUIRE_GPU();
  const KernelDesc* kd = find_kernel("gemv/small_m");
  ASSERT_NE(kd, nullptr);
  GemmProblem small;
  small.precision = Precision::FP32, small.m = 1, small.n = 64, small.k = 64;
  small.A = small.B = small.C = reinterpret_cast<float*>(uintptr_t{1} << 20);
  small.lda = 64, small.ldb = small.ldc = 64;
  const LaunchConfig c = kd->config(small);
  ASSERT_EQ(prepare_function(c.kernel, static_cast<int>(c.smem_bytes)), cudaSuccess);
  check_kernel({Precision::FP32, {1, 8192, 8192}, Op::N, Op::N, 0, true}, "gemv/small_m");
}

// DynamicTiles (gemmlab_dist's GEMM pieces): wgmma/03 takes each tile after its first from a
// counter. Correct against fp64 on grids of more tiles than SMs, every dtype and transpose (tf32
// TN hung here until the consumers' warps met at a barrier before each tile: its epilogue stores
// straight from registers, with no barrier to hold a warpgroup's warps together), and the bits of
// the fixed lists: the same tile is still one CTA's sum in one order.
TEST(Determinism, DynamicTilesKeepTheBits) {
  GEMMLAB_REQUIRE_GPU();
  const KernelDesc* kd = find_kernel("wgmma/03_tma_wgmma_ws_persistent");
  ASSERT_NE(kd, nullptr);
  int dev = 0, major = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (major < 9) GTEST_SKIP() << "wgmma/03 needs sm_90a";
  {
    DynamicTiles dynamic;
    for (Precision prec : {Precision::TF32, Precision::BF16, Precision::FP16})
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          check_kernel({prec, {3000, 3001, 200}, a, b, 0, prec != Precision::TF32}, kd->name);
    check_kernel({Precision::BF16, {2049, 4100, 96}, Op::N, Op::T, 3, false}, kd->name);
  }
  const int64_t m = 2048, n = 4096, k = 256;  // 256 tiles of 128 x 256
  DeviceMem a(m * k * 2), b(k * n * 2), c(m * n * 4);
  ASSERT_TRUE(a.ptr && b.ptr && c.ptr) << "cudaMalloc failed";
  ASSERT_EQ(fill_random_device(a.ptr, m * k, Precision::BF16, 31), cudaSuccess);
  ASSERT_EQ(fill_random_device(b.ptr, k * n, Precision::BF16, 32), cudaSuccess);
  std::vector<float> fixed(m * n), dynamic(m * n);
  for (std::vector<float>* out : {&fixed, &dynamic}) {
    ASSERT_EQ(cudaMemset(c.ptr, 0xff, m * n * 4), cudaSuccess);
    {
      std::unique_ptr<DynamicTiles> on(out == &dynamic ? new DynamicTiles : nullptr);
      ASSERT_EQ(gemm(Op::N, Op::N, m, n, k, 1.0f, a.ptr, k, b.ptr, n, 0.0f, c.as<float>(), n,
                     Precision::BF16, kd->name),
                Status::Success)
          << last_error_message();
    }
    ASSERT_EQ(cudaMemcpy(out->data(), c.ptr, m * n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  }
  int64_t differ = 0;
  for (int64_t i = 0; i < m * n; ++i) differ += std::memcmp(&fixed[i], &dynamic[i], 4) != 0;
  EXPECT_EQ(differ, 0) << "elements whose bits differ between fixed and dynamic tiles";
}

INSTANTIATE_TEST_SUITE_P(AllKernels, KernelCase, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return case_name(info.param);
                         });

// Every kernel gives bit-identical results when run twice on the same inputs, including the
// split-k paths (small grids, deep k), whose partial sums are added in a fixed order.
TEST(Determinism, SameInputsSameBits) {
  GEMMLAB_REQUIRE_GPU();
  int dev = 0, major = 0, minor = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  const int cc = major * 10 + minor;
  const Shape shapes[] = {{1025, 1025, 1025}, {1000, 1025, 999}, {257, 129, 4096}};
  int compared = 0;
  for (Precision prec : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
    for (const Shape& sh : shapes) {
      const int64_t m = sh.m, n = sh.n, k = sh.k;
      const int eb = input_bytes(prec);
      DeviceMem a(m * k * eb), b(k * n * eb), cbuf(m * n * sizeof(float));
      ASSERT_TRUE(a.ptr && b.ptr && cbuf.ptr) << "cudaMalloc failed";
      ASSERT_EQ(fill_random_device(a.ptr, m * k, prec, 21), cudaSuccess);
      ASSERT_EQ(fill_random_device(b.ptr, k * n, prec, 22), cudaSuccess);
      std::vector<float> c0(m * n), first(m * n), second(m * n);
      ASSERT_EQ(fill_random_device_f32(cbuf.as<float>(), m * n, 23), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(c0.data(), cbuf.ptr, m * n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      for (const KernelDesc& kd : all_kernels()) {
        if (!(kd.dtypes & dtype_bit(prec)) || cc < kd.min_cc) continue;
        GemmProblem q;
        q.precision = prec, q.m = m, q.n = n, q.k = k;
        q.A = a.ptr, q.B = b.ptr, q.C = q.D = cbuf.ptr, q.lda = k, q.ldb = q.ldc = q.ldd = n;
        // e.g. gemv/small_m past m = 16, wgmma/split_k on rows that are not 16-byte aligned
        if (kernel_cannot_run(kd, q, cc) != nullptr) continue;
        SCOPED_TRACE(std::string(kd.name) + " " + precision_name(prec) + " " +
                     std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
        for (std::vector<float>* out : {&first, &second}) {
          ASSERT_EQ(cudaMemcpy(cbuf.ptr, c0.data(), m * n * 4, cudaMemcpyHostToDevice), cudaSuccess);
          ASSERT_EQ(gemm(Op::N, Op::N, m, n, k, 1.0f, a.ptr, k, b.ptr, n, 0.5f, cbuf.as<float>(), n,
                         prec, kd.name),
                    Status::Success)
              << last_error_message();
          ASSERT_EQ(cudaMemcpy(out->data(), cbuf.ptr, m * n * 4, cudaMemcpyDeviceToHost),
                    cudaSuccess);
        }
        int64_t differ = 0;
        for (int64_t i = 0; i < m * n; ++i)
          differ += std::memcmp(&first[i], &second[i], sizeof(float)) != 0;
        EXPECT_EQ(differ, 0) << "elements that changed between two identical runs";
        ++compared;
      }
    }
  ASSERT_GT(compared, 0);
}

// `auto` picks a kernel for each precision and gets the right answer.
TEST(AutoKernel, PicksAKernelPerPrecision) {
  GEMMLAB_REQUIRE_GPU();
  for (Precision prec : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16}) {
    SCOPED_TRACE(precision_name(prec));
    const int64_t m = 515, n = 257, k = 129;
    GemmProblem p;
    p.precision = prec, p.m = m, p.n = n, p.k = k, p.lda = k, p.ldb = n, p.ldc = n;
    p.alpha = 1.25f, p.beta = 0.f;
    const int eb = input_bytes(prec);
    DeviceMem a(m * k * eb), b(k * n * eb), cbuf(m * n * sizeof(float));
    ASSERT_EQ(fill_random_device(a.ptr, m * k, prec, 11), cudaSuccess);
    ASSERT_EQ(fill_random_device(b.ptr, k * n, prec, 12), cudaSuccess);
    ASSERT_EQ(fill_nan_device(cbuf.as<float>(), m * n), cudaSuccess);
    p.A = a.ptr, p.B = b.ptr, p.C = cbuf.as<float>();
    const char* name = auto_kernel_name(p.op_a, p.op_b, m, n, k, p.A, p.lda, p.B, p.ldb, c_f32(p),
                                        p.ldc, prec);
    ASSERT_NE(name, nullptr) << last_error_message();
    std::printf("[  AUTO    ] %s -> %s\n", precision_name(prec), name);
    ASSERT_EQ(gemm(p.op_a, p.op_b, m, n, k, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, c_f32(p), p.ldc, prec),
              Status::Success)
        << last_error_message();
    std::vector<double> ref(m * n);
    ASSERT_EQ(reference_gemm_gpu(p, ref.data()), "");
    std::vector<float> out(m * n);
    ASSERT_EQ(cudaMemcpy(out.data(), cbuf.ptr, out.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_LE(relative_error(out.data(), n, ref.data(), m, n), error_bound(prec));
  }
}

// `auto` on sm_90, 16-bit and tf32: wgmma/03 steps back for grids of 128 x 256 tiles that would
// keep at most half the SMs busy (wgmma/small's tiles), and leads everywhere else except decode
// rows (m <= 64, or <= 128 against a weight of <= 8192 columns) and skinny C of at most 8 columns,
// which take wgmma/decode (from 16 columns wgmma/small takes them: wgmma_small_plan::takes_skinny).
TEST(AutoKernel, SmallGrids16BitTakeWgmmaSmall) {
  GEMMLAB_REQUIRE_GPU();
  int major = 0, sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  if (major != 9 || sms < 64) GTEST_SKIP() << "GPU test skipped: needs sm_90 with >= 64 SMs";
  struct Want {
    int64_t m, n, k;
    Precision prec;
    const char* kernel;
    Op a = Op::N, b = Op::N;
  };
  const TuningOff planners_only;  // the priorities' own choice (the table's: AutoKernel.UsesTheTuningTable)
  const Want wants[] = {{1024, 1024, 1024, Precision::BF16, "wgmma/small"},
                        {1024, 1024, 1024, Precision::FP16, "wgmma/small"},
                        {1024, 1024, 1024, Precision::TF32, "wgmma/small"},
                        {2048, 2048, 2048, Precision::TF32, "wgmma/03_tma_wgmma_ws_persistent"},
                        {4096, 4096, 64, Precision::BF16, "wgmma/03_tma_wgmma_ws_persistent"},
                        {1024, 1024, 4096, Precision::BF16, "wgmma/small"},
                        {1024, 1024, 131072, Precision::BF16, "wgmma/split_k"},
                        {1025, 1025, 1025, Precision::FP32, "simt/sgemm"},
                        {16, 4096, 4096, Precision::BF16, "wgmma/decode"},
                        {100, 4096, 4096, Precision::FP16, "wgmma/small"},
                        {64, 5120, 5120, Precision::BF16, "wgmma/small"},  // from 33 rows
                        {33, 4096, 4096, Precision::FP16, "wgmma/small", Op::N, Op::T},
                        {64, 4096, 4096, Precision::TF32, "wgmma/decode"},
                        {8192, 16, 8192, Precision::BF16, "wgmma/small"},
                        {2048, 8, 2048, Precision::BF16, "wgmma/decode"},
                        // Deep K over a small C: slices in every op pair (wgmma_plan::slices_lead)
                        {128, 128, 8192, Precision::BF16, "wgmma/split_k", Op::T, Op::N},
                        {64, 64, 65536, Precision::FP16, "wgmma/split_k"},
                        {256, 256, 16384, Precision::TF32, "wgmma/split_k", Op::T, Op::T},
                        {256, 256, 8192, Precision::TF32, "wgmma/split_k", Op::T, Op::N},
                        // ... also over tf32 rows gemv/small_m would take (m <= 16)
                        {16, 512, 16384, Precision::TF32, "wgmma/split_k"},
                        {4, 128, 8192, Precision::TF32, "wgmma/split_k", Op::N, Op::T},
                        // ... and tf32 A^T rows off 16 bytes (transposed while packed)
                        {70, 128, 16384, Precision::TF32, "wgmma/split_k", Op::T, Op::N},
                        // tf32 rows of A^T from 3 on: wgmma/small, not gemv/small_m
                        {16, 4096, 4096, Precision::TF32, "wgmma/small", Op::T, Op::N},
                        {8, 8192, 8192, Precision::TF32, "wgmma/small", Op::T, Op::T},
                        // 200-byte rows: no split_k
                        {100, 100, 10000, Precision::BF16, "wgmma/small", Op::T, Op::N}};
  for (const Want& w : wants) {
    SCOPED_TRACE(std::to_string(w.m) + "x" + std::to_string(w.n) + " " + precision_name(w.prec));
    const int eb = input_bytes(w.prec);
    DeviceMem a(w.m * w.k * eb), b(w.k * w.n * eb), c(w.m * w.n * sizeof(float));
    const char* name = auto_kernel_name(w.a, w.b, w.m, w.n, w.k, a.ptr, w.a == Op::N ? w.k : w.m,
                                        b.ptr, w.b == Op::N ? w.n : w.k, c.as<float>(), w.n, w.prec);
    ASSERT_NE(name, nullptr) << last_error_message();
    EXPECT_STREQ(name, w.kernel);
  }
}

// On a GPU the compiled-in tuning table has entries for (same name, same SM count), `auto` runs
// each entry's kernel on the problem it was measured on (the planners' pick where the entry says
// so); another GPU's entries never steer it: there the GPU's own entry for the problem decides,
// else the planners (as under TuningOff).
TEST(AutoKernel, UsesTheTuningTable) {
  GEMMLAB_REQUIRE_GPU();
  size_t count = 0;
  const TuningEntry* table = tuning_table(&count);
  const std::string device = device_name();
  int own = 0, others = 0;
  for (size_t i = 0; i < count; ++i) {
    const TuningEntry& e = table[i];
    const bool mine = device == e.device && device_full_sm_count() == e.sms;
    // The problem it was measured on (a class-wide entry: the class's largest extents).
    const int64_t m = e.m > 0 ? e.m : int64_t{1} << e.m_class;
    const int64_t n = e.n > 0 ? e.n : int64_t{1} << e.n_class;
    const int64_t k = e.k > 0 ? e.k : int64_t{1} << e.k_class;
    SCOPED_TRACE(testing::Message() << precision_name(e.precision) << " " << m << "x" << n << "x" << k);
    const int64_t lda = e.op_a == Op::N ? k : m, ldb = e.op_b == Op::N ? n : k;
    const void* a = reinterpret_cast<const void*>(uintptr_t{1} << 20);  // never dereferenced
    auto pick = [&] {
      const char* name = auto_kernel_name(e.op_a, e.op_b, m, n, k, a, lda, a, ldb,
                                          static_cast<const float*>(a), n, e.precision);
      return std::string(name ? name : "");
    };
    const std::string chosen = pick();
    ASSERT_NE(chosen, "") << last_error_message();
    if (mine && std::string(e.kernel) == kPlannersEntry) {  // measured, and left to the planners
      const TuningOff planners_only;
      EXPECT_EQ(chosen, pick()) << "a planners' entry: auto runs what the planners pick";
      ++own;
    } else if (mine) {
      EXPECT_EQ(chosen, e.kernel);
      ++own;
    } else {  // another GPU's entry: this GPU's own entry for the problem, else the planners, decide
      GemmProblem p;
      p.precision = e.precision, p.op_a = e.op_a, p.op_b = e.op_b, p.m = m, p.n = n, p.k = k;
      const TuningEntry* ours = find_tuning(table, count, device, device_full_sm_count(), p);
      std::string planners;
      {
        const TuningOff planners_only;
        planners = pick();
      }
      // An own entry's kernel may decline a problem it was not measured on: then the planners.
      const bool steered_by_ours = ours != nullptr && chosen == ours->kernel;
      EXPECT_TRUE(chosen == planners || steered_by_ours)
          << "another GPU's entry (" << e.device << ", " << e.kernel << ") steered auto to " << chosen
          << "; planners: " << planners << ", this GPU's entry: " << (ours ? ours->kernel : "none");
      ++others;
    }
  }
  std::printf("[  AUTO    ] %s: %d tuning-table entries of its own taken by auto, %d of other GPUs "
              "left alone\n", device.c_str(), own, others);
}

// simt/sgemm asks for just the shared memory its resident blocks need (the rest stays L1): the
// carveout must never be too small for them, or occupancy would silently halve.
TEST(DeviceProps, CarveoutFitsTheBlocks) {
  GEMMLAB_REQUIRE_GPU();
  const int per_sm = device_smem_per_sm();
  ASSERT_GT(per_sm, 0);
  for (int blocks : {1, 2})
    for (int bytes : {16 * 1024, 70144, 100 * 1024, 200 * 1024}) {
      const long long need = static_cast<long long>(blocks) * (bytes + 1024);
      const int pct = carveout_for(blocks, bytes);
      EXPECT_LE(pct, 100);
      if (need <= per_sm)
        EXPECT_GE(static_cast<long long>(pct) * per_sm, 100 * need) << blocks << " x " << bytes;
      else
        EXPECT_EQ(pct, 100) << blocks << " x " << bytes;
    }
}

}  // namespace
}  // namespace gemmlab::test
