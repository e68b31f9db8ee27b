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
#include "runtime/device_props.h"
#include "runtime/reserve_sms.h"
#include "reference/reference.h"
#include "registry/registry.h"
#include "registry/tuning.h"

namespace gemmlab::test {
namespace {

struct Shape {
  int64_t m, n, k;
};

struct Case {
  Precision precision;
  Shape shape;
  Op op_a, op_b;
  int pad;          // extra elements per row of A, B and C (3 breaks 16-byte row alignment);
                    // with pad > 0 the matrices also start one element past a 256-byte boundary
  bool beta_zero;   // beta = 0 with C poisoned by NaN, else beta != 0 with random C
};

std::string case_name(const Case& c) {
  std::ostringstream s;
  s << precision_name(c.precision) << "_" << c.shape.m << "x" << c.shape.n << "x" << c.shape.k << "_"
    << (c.op_a == Op::N ? "N" : "T") << (c.op_b == Op::N ? "N" : "T") << "_pad" << c.pad
    << (c.beta_zero ? "_beta0" : "_beta");
  return s.str();
}

std::vector<Case> all_cases() {
  const Shape shapes[] = {{1, 1, 1},       {7, 13, 5},      {64, 64, 64},   {1000, 1025, 999},
                          {1025, 1025, 1025}, {4097, 31, 2049}, {257, 129, 1}, {31, 4097, 67},
                          {128, 256, 4096}, {8, 4097, 1031}};
  std::vector<Case> cases;
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
    for (const Shape& s : shapes)
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (int pad : {0, 3})
            for (bool beta_zero : {true, false}) cases.push_back({p, s, a, b, pad, beta_zero});
  return cases;
}

// gtest prints parameters by this name (readable ctest lines).
void PrintTo(const Case& c, std::ostream* os) { *os << case_name(c); }

// Runs every registered kernel supporting c.precision (or only the one named `only`) on case c and
// checks each against the fp64 reference; *ran_out counts the kernels run.
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

// Runs the one kernel `name` on case c against fp64; it must have run.
void check_kernel(const Case& c, const char* name) {
  SCOPED_TRACE(case_name(c));
  int ran = 0;
  check_case(c, name, &ran);
  EXPECT_EQ(ran, 1);
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

// simt/sgemm copies B^T transposed (and runs NT as NN, TT as TN) only when the copy is cheap next to
// the GEMM, so the small shapes above never take that path; 2048^3 does.
TEST(LargeShapes, SgemmTransposedBCopy) {
  GEMMLAB_REQUIRE_GPU();
  for (Op a : {Op::N, Op::T})
    for (int pad : {0, 3})
      check_kernel({Precision::FP32, {2048, 2048, 2048}, a, Op::T, pad, pad == 0},
                   kFp32ProductionKernel);
}

// simt/sgemm gives the last wave of 128 x 256 tiles a stream-k tail when that wave would leave many
// SMs idle: 2500 x 2500 x 1024 has 200 tiles, 1.5 waves on 132 SMs. Checked against fp64 in the
// layouts that reach the 128 x 256 tile (NN, NT through the transposed copy, TN) and with
// misaligned rows (realigned first); on an H100 SXM the launch must be the tail alone (one block
// per SM instead of one per tile).
TEST(LargeShapes, SgemmStreamKTail) {
  GEMMLAB_REQUIRE_GPU();
  const char* kName = kFp32ProductionKernel;
  if (const unsigned grid = h100_grid(kName, Precision::FP32, 2500, 2500, 1024))
    EXPECT_EQ(grid, 132u);
  for (auto [a, b] : {std::pair{Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}})
    for (int pad : {0, 3})
      check_kernel({Precision::FP32, {2500, 2500, 1024}, a, b, pad, pad != 0}, kName);
}

// simt/sgemm's decode tiles (M <= 32: 32 x 256, M <= 64: 64 x 256, sgemm_plan.h) split in depth
// until they fill the GPU: rows 17, 32 (one full tile), 33, 64 and 50 (a partial tile whose last
// warps hold no row), an edge column tile (n = 4000), depths that are not a multiple of the
// 16-deep k-tile nor of the split, every op, 16-byte and misaligned rows; on an H100 SXM the
// 32 x 4096 x 14336 launch fills the SMs (16 tiles x 16 splits).
TEST(LargeShapes, SgemmDecodeTiles) {
  GEMMLAB_REQUIRE_GPU();
  const char* kName = kFp32ProductionKernel;
  if (const unsigned grid = h100_grid(kName, Precision::FP32, 32, 4096, 14336))
    EXPECT_GE(grid, 132u);
  for (Shape shape : {Shape{17, 4096, 4103}, Shape{32, 4000, 4096}, Shape{33, 1000, 20001},
                      Shape{50, 4096, 4096}, Shape{64, 300, 257}})
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (int pad : {0, 3}) check_kernel({Precision::FP32, shape, a, b, pad, pad == 0}, kName);
}

// wgmma/decode (16-bit, M <= 256, swapped: tokens on wgmma's N side): every token width (8 ..
// 256; 100 and 200 leave warps of padding tokens), one and two consumer warpgroups, an edge strip
// (n = 4000, 129), depths that are neither a multiple of the 64-deep stage nor of the split, k = 1,
// both layouts of B, 16-byte and misaligned rows (packed). Every depth split it offers as a
// variant is checked too. On an H100 SXM, 1 x 4096 x 4096 runs 64 whole strips (plan.cpp).
TEST(LargeShapes, WgmmaDecodeTokensStripsAndSplits) {
  GEMMLAB_REQUIRE_GPU();
  const char* kName = "wgmma/decode";
  if (const unsigned grid = h100_grid(kName, Precision::BF16, 1, 4096, 4096)) EXPECT_EQ(grid, 64u);
  for (Precision prec : {Precision::BF16, Precision::FP16})
    for (Shape shape : {Shape{1, 4000, 4103}, Shape{7, 1000, 20001}, Shape{16, 4096, 4096},
                        Shape{33, 300, 257}, Shape{100, 1000, 3001}, Shape{200, 129, 1},
                        Shape{256, 520, 2000}})
      for (Op b : {Op::N, Op::T})
        for (int pad : {0, 3}) check_kernel({prec, shape, Op::N, b, pad, pad == 0}, kName);
  const KernelDesc* kd = find_kernel(kName);
  ASSERT_NE(kd, nullptr);
  ASSERT_NE(kd->variants, nullptr);
  int runs = 0;
  for (Shape shape : {Shape{5, 1000, 3001}, Shape{130, 700, 5000}}) {
    GemmProblem p;
    p.precision = Precision::BF16, p.m = shape.m, p.n = shape.n, p.k = shape.k;
    p.op_a = Op::N, p.op_b = Op::T;
    p.A = p.B = p.C = reinterpret_cast<float*>(uintptr_t{1} << 20);
    p.lda = p.ldb = shape.k, p.ldc = shape.n;
    PlanChoice choices[16];
    const int n = kd->variants(p, choices, 16);
    EXPECT_GT(n, 2) << "depth splits to choose among";
    for (int i = 0; i < n; ++i) {
      SCOPED_TRACE(plan_choice_label(choices[i], kd->tile_names));
      const ForcePlan force(choices[i]);
      check_kernel({Precision::BF16, shape, Op::N, Op::T, 0, true}, kName);
      ++runs;
    }
  }
  std::printf("[  NOTE    ] wgmma/decode: %d forced plans checked against fp64\n", runs);
}

// wgmma/decode's skinny mode (n <= 64 columns of C as the tokens, op(A) the weight): every
// transpose (B stored k x n is read MN-major in 64-wide chunks; a k x 1 vector as K-major), K not
// a multiple of 64, misaligned rows (packed), every forced depth split of one shape.
TEST(LargeShapes, WgmmaDecodeSkinnyColumns) {
  GEMMLAB_REQUIRE_GPU();
  const char* kName = "wgmma/decode";
  // NN: B's k x 16 rows are read MN-major as 64 tokens, in 128-row strips of A.
  if (const unsigned grid = h100_grid(kName, Precision::BF16, 8192, 16, 8192)) EXPECT_EQ(grid, 64u);
  for (Precision prec : {Precision::BF16, Precision::FP16})
    for (Shape shape : {Shape{5000, 1, 3001}, Shape{4097, 2, 1031}, Shape{3000, 7, 2049},
                        Shape{2048, 16, 4096}, Shape{1000, 33, 257}, Shape{4100, 64, 1000},
                        Shape{300, 64, 1}})
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (int pad : {0, 3}) check_kernel({prec, shape, a, b, pad, pad == 0}, kName);
  const KernelDesc* kd = find_kernel(kName);
  ASSERT_NE(kd, nullptr);
  GemmProblem p;
  p.precision = Precision::BF16, p.m = 3000, p.n = 16, p.k = 5000;
  p.A = p.B = p.C = reinterpret_cast<float*>(uintptr_t{1} << 20);
  p.lda = p.k, p.ldb = p.ldc = p.n;
  PlanChoice choices[16];
  const int n = kd->variants(p, choices, 16);
  EXPECT_GT(n, 2) << "depth splits to choose among";
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(plan_choice_label(choices[i], kd->tile_names));
    const ForcePlan force(choices[i]);
    check_kernel({Precision::BF16, Shape{3000, 16, 5000}, Op::N, Op::N, 0, false}, kName);
  }
}

// wgmma/small: every (tile, splits) plan variant it offers gemm-tune computes the same product,
// each checked against fp64 under its ForcePlan: tokens as C's rows (NN, misaligned rows packed)
// and as its columns (TN: MN-major tokens; TT), K not a multiple of 64.
TEST(LargeShapes, WgmmaSmallEveryPlanVariant) {
  GEMMLAB_REQUIRE_GPU();
  const char* kName = "wgmma/small";
  if (const unsigned grid = h100_grid(kName, Precision::BF16, 1024, 1024, 1024)) EXPECT_EQ(grid, 128u);
  const KernelDesc* kd = find_kernel(kName);
  ASSERT_NE(kd, nullptr);
  ASSERT_NE(kd->variants, nullptr);
  int runs = 0;
  const Case cases[] = {{Precision::BF16, Shape{300, 500, 1000}, Op::N, Op::N, 3, false},
                        {Precision::FP16, Shape{129, 77, 5000}, Op::T, Op::N, 0, true},
                        {Precision::BF16, Shape{700, 260, 3001}, Op::T, Op::T, 0, false}};
  for (const Case& c : cases) {
    GemmProblem p;
    p.precision = c.precision, p.m = c.shape.m, p.n = c.shape.n, p.k = c.shape.k;
    p.op_a = c.op_a, p.op_b = c.op_b;
    p.A = p.B = p.C = reinterpret_cast<float*>(uintptr_t{1} << 20);
    p.lda = p.ldb = p.ldc = 8192;
    PlanChoice choices[64];
    const int n = kd->variants(p, choices, 64);
    EXPECT_GT(n, 3) << "tiles and splits to choose among";
    for (int i = 0; i < n; ++i) {
      SCOPED_TRACE(plan_choice_label(choices[i], kd->tile_names));
      const ForcePlan force(choices[i]);
      check_kernel(c, kName);
      ++runs;
    }
  }
  std::printf("[  NOTE    ] wgmma/small: %d forced plans checked against fp64\n", runs);
}

// Every plan variant simt/sgemm offers gemm-tune (every tile it can take, forced depth splits:
// KernelDesc::variants) computes the same product: each checked against fp64 under its
// ForcePlan, on a decode shape, a small square and a skinny one, with misaligned rows.
TEST(LargeShapes, SgemmEveryPlanVariant) {
  GEMMLAB_REQUIRE_GPU();
  const KernelDesc* kd = find_kernel(kFp32ProductionKernel);
  ASSERT_NE(kd, nullptr);
  ASSERT_NE(kd->variants, nullptr);
  int runs = 0;
  for (Shape shape : {Shape{24, 1000, 3001}, Shape{300, 300, 300}, Shape{2000, 8, 2000}})
    for (int pad : {0, 3}) {
      const Case c{Precision::FP32, shape, Op::N, Op::T, pad, pad == 0};
      GemmProblem p;  // the variants depend on the shape, the ops and the rows' alignment
      p.precision = c.precision, p.m = shape.m, p.n = shape.n, p.k = shape.k;
      p.op_a = c.op_a, p.op_b = c.op_b;
      p.A = p.B = p.C = reinterpret_cast<float*>((uintptr_t{1} << 20) + (pad ? 4 : 0));
      p.lda = shape.k + pad, p.ldb = shape.k + pad, p.ldc = shape.n + pad;
      PlanChoice choices[64];
      const int n = kd->variants(p, choices, 64);
      EXPECT_GT(n, 1) << "a plan to choose among";
      for (int i = 0; i < n; ++i) {
        SCOPED_TRACE(plan_choice_label(choices[i], kd->tile_names));
        const ForcePlan force(choices[i]);
        check_kernel(c, kFp32ProductionKernel);
        ++runs;
      }
    }
  std::printf("[  NOTE    ] simt/sgemm: %d forced plans checked against fp64\n", runs);
}

// The Hopper kernels pad the rows of a 16-bit MN-major operand to 128 bytes when its rows are
// only 16-byte aligned and the GEMM is large enough (wgmma/host.cu, worth_padding): 3000^3 takes
// that path for B in NN and for A in TN. The small shapes above never do.
TEST(LargeShapes, Wgmma03PaddedRows) {
  GEMMLAB_REQUIRE_SM90();  // wgmma/03
  for (Precision prec : {Precision::BF16, Precision::FP16})
    for (Op a : {Op::N, Op::T})
      check_kernel({prec, {3000, 3000, 3000}, a, Op::N, 0, a == Op::N},
                   "wgmma/03_tma_wgmma_ws_persistent");
}

// wgmma/03 runs small deep grids stream-k (a tile's k-blocks spread over several CTAs, their
// partials summed in order): 1024 x 1024 x 4096 has 32 tiles for 132 SMs, 1000 x 1000 x 4000 the
// same with partial edge tiles. Checked against fp64 in 16-bit, both A layouts, tight and
// misaligned (packed) rows; on an H100 SXM the launch must use 128 CTAs instead of 32.
TEST(LargeShapes, Wgmma03StreamK) {
  GEMMLAB_REQUIRE_SM90();  // wgmma/03
  const char* kName = "wgmma/03_tma_wgmma_ws_persistent";
  if (const unsigned grid = h100_grid(kName, Precision::BF16, 1024, 1024, 4096))
    EXPECT_EQ(grid, 128u);
  for (Shape shape : {Shape{1024, 1024, 4096}, Shape{1000, 1000, 4000}})
    for (Precision prec : {Precision::BF16, Precision::FP16})
      for (Op a : {Op::N, Op::T})
        for (int pad : {0, 3}) check_kernel({prec, shape, a, Op::N, pad, pad == 0}, kName);
}

// One row of tiles (decode, m <= 128) runs stream-k over the SMs (planner: DecodeRowsStreamB),
// and only the threads whose accumulator rows lie inside C publish and sum partials: m = 1, 8, 9
// (a warp's rows cut in the middle), 70 (the second warpgroup's rows partly inside) and 128; an
// edge column tile (n = 4000), both B layouts, misaligned rows; on an H100 SXM 64 CTAs.
TEST(LargeShapes, Wgmma03DecodeStreamK) {
  GEMMLAB_REQUIRE_SM90();  // wgmma/03
  const char* kName = "wgmma/03_tma_wgmma_ws_persistent";
  if (const unsigned grid = h100_grid(kName, Precision::BF16, 8, 4096, 4096))
    EXPECT_EQ(grid, 64u);
  for (int64_t m : {1, 8, 9, 70, 128})
    for (Precision prec : {Precision::BF16, Precision::FP16})
      for (Op b : {Op::N, Op::T})
        for (int pad : {0, 3})
          check_kernel({prec, Shape{m, pad ? 4000 : 4096, 4096}, Op::N, b, pad, pad == 0}, kName);
}

// gemv/small_m (m <= 16, or n <= 16 swapped: C^T = op(B)^T op(A)^T): both layouts of B (n x k for
// op T, k x n for op N), depths that are not a multiple of its passes or slices, long depths split
// over blocks, 16-byte and misaligned rows, every dtype; the swapped shapes write C's columns (a
// 1-column C, 16 columns, 3 columns of 5000 rows); checked against fp64 like every kernel.
TEST(LargeShapes, GemvSmallM) {
  GEMMLAB_REQUIRE_GPU();
  const Shape shapes[] = {{1, 4096, 4096}, {3, 4097, 1000}, {8, 33, 20000}, {5, 1, 3},
                          {2, 300, 257},   {16, 1000, 4100}, {9, 130, 4099}, {4096, 1, 4096},
                          {1000, 16, 4100}, {5000, 3, 257},  {33, 9, 20000}};
  for (Precision prec : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
    for (const Shape& shape : shapes)
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (int pad : {0, 3}) check_kernel({prec, shape, a, b, pad, pad == 0}, "gemv/small_m");
}

// gemv/mma (16-bit, m <= 32): one, two and four tiles of 8 rows of C, both layouts of B, depths
// that are not a multiple of a warp's step (32 along k-contiguous B, 16 along n-contiguous B) nor
// of 8, columns past the last strip, depths split over blocks (n = 33, 1000), transposed op(A),
// 16-byte aligned and misaligned rows.
TEST(LargeShapes, GemvMma) {
  GEMMLAB_REQUIRE_GPU();
  const Shape shapes[] = {{1, 4096, 4096}, {3, 4097, 1000}, {8, 33, 20000}, {16, 1000, 4100},
                          {17, 300, 257},  {32, 64, 40},    {5, 1, 3},      {2, 300, 257},
                          {9, 130, 4099}};
  for (Precision prec : {Precision::BF16, Precision::FP16})
    for (const Shape& shape : shapes)
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (int pad : {0, 3}) check_kernel({prec, shape, a, b, pad, pad == 0}, "gemv/mma");
}

// wgmma/split_k (sm_90): depths cut into slices run as one batched wgmma/03 launch, plus a shorter
// last slice (k not a multiple of the slice), both layouts of A and B, a single tile and several,
// and a depth too short to split (run by wgmma/03 alone); every dtype it takes.
TEST(LargeShapes, WgmmaSplitK) {
  GEMMLAB_REQUIRE_SM90();
  // (Every leading dimension a multiple of 8: 16-byte rows in all four layouts.)
  const Shape shapes[] = {{128, 128, 20000}, {304, 200, 9000}, {8, 64, 16384}, {64, 64, 64},
                          {136, 264, 8256}};
  for (Precision prec : {Precision::BF16, Precision::FP16, Precision::TF32})
    for (const Shape& shape : shapes)
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (bool beta_zero : {true, false})
            check_kernel({prec, shape, a, b, 0, beta_zero}, "wgmma/split_k");
}

// simt/sgemm with more than 16 depth splits (deep k on a few tiles): splits summed in order by
// each tile's last block; a depth that is not a multiple of the splits or of a k-tile.
TEST(LargeShapes, SgemmDeepSplits) {
  GEMMLAB_REQUIRE_GPU();
  const Shape shapes[] = {{128, 128, 131072}, {100, 130, 50001}, {256, 256, 65536}};
  for (const Shape& shape : shapes)
    for (Op b : {Op::N, Op::T})
      for (int pad : {0, 3}) check_kernel({Precision::FP32, shape, Op::N, b, pad, pad == 0}, "simt/sgemm");
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

// `auto` on sm_90, 16-bit: wgmma/03 steps back for grids of 128 x 256 tiles that would keep at
// most half the SMs busy and are too shallow for its stream-k (wgmma/02 measured faster there),
// and leads everywhere else except decode rows (m <= 64, or <= 128 against a weight of <= 8192
// columns), which take wgmma/decode.
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
  };
  const TuningOff planners_only;  // the priorities' own choice (the table's: AutoKernel.UsesTheTuningTable)
  const Want wants[] = {{1024, 1024, 1024, Precision::BF16, "wgmma/small"},
                        {1024, 1024, 1024, Precision::FP16, "wgmma/small"},
                        {1024, 1024, 1024, Precision::TF32, "wgmma/03_tma_wgmma_ws_persistent"},
                        {4096, 4096, 64, Precision::BF16, "wgmma/03_tma_wgmma_ws_persistent"},
                        {1024, 1024, 4096, Precision::BF16, "wgmma/small"},
                        {1024, 1024, 131072, Precision::BF16, "wgmma/split_k"},
                        {1025, 1025, 1025, Precision::FP32, "simt/sgemm"},
                        {16, 4096, 4096, Precision::BF16, "wgmma/decode"},
                        {100, 4096, 4096, Precision::FP16, "wgmma/small"},
                        {8192, 16, 8192, Precision::BF16, "wgmma/decode"}};
  for (const Want& w : wants) {
    SCOPED_TRACE(std::to_string(w.m) + "x" + std::to_string(w.n) + " " + precision_name(w.prec));
    const int eb = input_bytes(w.prec);
    DeviceMem a(w.m * w.k * eb), b(w.k * w.n * eb), c(w.m * w.n * sizeof(float));
    const char* name = auto_kernel_name(Op::N, Op::N, w.m, w.n, w.k, a.ptr, w.k, b.ptr, w.n,
                                        c.as<float>(), w.n, w.prec);
    ASSERT_NE(name, nullptr) << last_error_message();
    EXPECT_STREQ(name, w.kernel);
  }
}

// On a GPU the compiled-in tuning table has entries for (same name, same SM count), `auto` runs
// each entry's kernel on a problem of its shape class (the class's largest extents); on any other
// GPU the entries are not its own, and `auto` makes the planners' choice there (as under TuningOff).
TEST(AutoKernel, UsesTheTuningTable) {
  GEMMLAB_REQUIRE_GPU();
  size_t count = 0;
  const TuningEntry* table = tuning_table(&count);
  const std::string device = device_name();
  int own = 0, others = 0;
  for (size_t i = 0; i < count; ++i) {
    const TuningEntry& e = table[i];
    const bool mine = device == e.device && device_full_sm_count() == e.sms;
    const int64_t m = int64_t{1} << e.m_class, n = int64_t{1} << e.n_class, k = int64_t{1} << e.k_class;
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
    if (mine) {
      EXPECT_EQ(chosen, e.kernel);
      ++own;
    } else {
      const TuningOff planners_only;
      EXPECT_EQ(chosen, pick()) << "another GPU's entry (" << e.device << ") steered auto";
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
