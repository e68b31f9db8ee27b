// The extended call, gemm(GemmDesc): D = act(alpha op(A) op(B) + beta C + bias) per batch entry,
// D of any dtype. Every result is checked element by element against the fp64 reference
// (reference_gemm_ex_gpu) with epilogue_bound (reference.h): the fp32 accumulation error relative
// to each element's scale, carried through the activation, plus D's rounding; D is poisoned with
// NaN bytes before each run, C too wherever beta == 0, and every element of D's buffer outside the
// entries must come back untouched.
//   AutoEpilogue: a deterministic sample of precision x d_type x act x bias x shape x ops x beta x
//     c_type through "auto";
//   KernelEpilogue: every registered kernel on a few epilogues (they share one Epilogue);
//   GemmEx.*: in place, broadcasts, misaligned batches, entries side by side, batch 0, k = 0,
//     alpha = 0, determinism, the issue's throughput shapes.
// D past 2^31 elements: test_gemm_ex_large_gpu.cpp; batches in one launch (packing, simt/sgemm,
// graphs and streams): test_gemm_ex_batches_gpu.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ex_problem_util.h"
#include "gpu_util.h"
#include "runtime/reserve_sms.h"
#include "reference/reference.h"
#include "registry/registry.h"

namespace gemmlab::test {
namespace {

constexpr const char* kWgmma03 = "wgmma/03_tma_wgmma_ws_persistent";

const Activation kActs[] = {Activation::None, Activation::ReLU, Activation::GeluTanh,
                            Activation::GeluErf, Activation::SiLU};
const DType kDTypes[] = {DType::F32, DType::BF16, DType::F16};

// The input dtype of a 16-bit precision (what a bias may be besides fp32).
DType input_dtype(Precision p) { return p == Precision::BF16 ? DType::BF16 : DType::F16; }
bool is_16bit(Precision p) { return p == Precision::BF16 || p == Precision::FP16; }

// ---- AutoEpilogue: the cross product, sampled ----

struct AutoCase {
  ExSpec spec;
  std::string name;
};

void PrintTo(const AutoCase& c, std::ostream* os) { *os << c.name; }

uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Every precision x d_type x act x bias (none, fp32, the input dtype for bf16/fp16): 150 cases;
// each draws (from a hash of its index, so the list is fixed) a shape, the transposes, beta in
// {0, 0.5} with C's dtype, padded D rows, a batch of 2, a misaligned base, a null C for beta 0.
std::vector<AutoCase> auto_cases() {
  struct Shape {
    int64_t m, n, k;
  };
  const Shape shapes[] = {{1, 1, 1}, {17, 33, 65}, {130, 260, 70}, {257, 129, 1025}, {509, 127, 61}};
  std::vector<AutoCase> cases;
  uint64_t index = 0;
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
    for (DType d : kDTypes)
      for (Activation act : kActs)
        for (int bias = 0; bias < (is_16bit(p) ? 3 : 2); ++bias) {
          const uint64_t h = splitmix(index++);
          const auto digit = [h](int at, int base) { return static_cast<int>((h >> at) % base); };
          ExSpec s;
          s.precision = p, s.d_type = d, s.act = act;
          s.bias = bias > 0;
          s.bias_type = bias == 2 ? input_dtype(p) : DType::F32;
          const Shape sh = shapes[digit(0, 5)];
          s.m = sh.m, s.n = sh.n, s.k = sh.k;
          s.op_a = digit(8, 2) ? Op::T : Op::N;
          s.op_b = digit(12, 2) ? Op::T : Op::N;
          s.beta = digit(16, 2) ? 0.5f : 0.f;
          s.c_type = kDTypes[digit(20, 3)];
          s.alpha = digit(24, 2) ? 1.f : -0.75f;
          s.pad_d = digit(28, 2) ? 3 : 0;
          s.pad_a = s.pad_b = s.pad_c = digit(32, 3) == 0 ? 1 : 0;
          s.batch = digit(36, 4) == 0 ? 2 : 1;
          s.offset = digit(40, 4) == 0 ? 1 : 0;
          s.null_c = s.beta == 0.f && digit(44, 2);
          s.seed = index;
          std::ostringstream name;
          name << precision_name(p) << "_d" << dtype_name(d) << "_" << activation_name(act)
               << "_bias" << (s.bias ? dtype_name(s.bias_type) : "none") << "_" << s.m << "x"
               << s.n << "x" << s.k << "_" << op_name(s.op_a, s.op_b)
               << (s.beta != 0.f ? std::string("_beta_c") + dtype_name(s.c_type) : "_beta0")
               << "_b" << s.batch;
          cases.push_back({s, name.str()});
        }
  return cases;
}

class AutoEpilogue : public ::testing::TestWithParam<AutoCase> {};

TEST_P(AutoEpilogue, MatchesFp64) {
  GEMMLAB_REQUIRE_GPU();
  expect_correct(GetParam().spec);
}

INSTANTIATE_TEST_SUITE_P(GemmEx, AutoEpilogue, ::testing::ValuesIn(auto_cases()),
                         [](const ::testing::TestParamInfo<AutoCase>& info) {
                           return info.param.name;
                         });

// ---- KernelEpilogue: every registered kernel ----

struct EpilogueCase {
  const char* name;
  ExSpec spec;  // precision and a 16-bit bias's dtype are set per kernel
};

void PrintTo(const EpilogueCase& c, std::ostream* os) { *os << c.name; }

std::vector<EpilogueCase> epilogue_cases() {
  std::vector<EpilogueCase> v;
  ExSpec s;
  // bf16 D, GELU (tanh), a bias in the input dtype, beta with an f16 C, padded rows.
  s = {}, s.m = 67, s.n = 45, s.k = 33, s.op_b = Op::T, s.d_type = DType::BF16, s.bias = true;
  s.bias_type = DType::BF16, s.act = Activation::GeluTanh, s.beta = 0.5f, s.c_type = DType::F16;
  s.pad_a = 1, s.pad_d = 3, s.seed = 11;
  v.push_back({"bf16_gelu_tanh_bias", s});
  // f16 D, SiLU, beta 0 with C null; m <= 8 (16-bit: gemv/mma under `auto`).
  s = {}, s.m = 5, s.n = 9, s.k = 17, s.op_a = Op::T, s.d_type = DType::F16;
  s.act = Activation::SiLU, s.null_c = true, s.seed = 12;
  v.push_back({"f16_silu_small_m", s});
  // fp32 D, ReLU, fp32 bias, beta -1 with a bf16 C, 3 entries with odd gaps, misaligned base.
  s = {}, s.m = 130, s.n = 66, s.k = 70, s.op_a = Op::T, s.op_b = Op::T, s.bias = true;
  s.act = Activation::ReLU, s.beta = -1.f, s.c_type = DType::BF16, s.batch = 3, s.stride_extra = 5;
  s.offset = 1, s.seed = 13;
  v.push_back({"f32_relu_batch", s});
  // In place (D == C, fp32), GELU (erf), 2 entries, padded rows.
  s = {}, s.m = 33, s.n = 17, s.k = 129, s.act = Activation::GeluErf, s.beta = 0.5f;
  s.in_place = true, s.pad_d = 2, s.batch = 2, s.seed = 14;
  v.push_back({"in_place_gelu_erf", s});
  // fp32 D with an fp32 C of its own (not in place: not the plain path), no activation.
  s = {}, s.m = 45, s.n = 77, s.k = 31, s.op_b = Op::T, s.beta = 0.5f, s.seed = 15;
  v.push_back({"f32_separate_c", s});
  // bf16 D, entries side by side within rows (stride_d = n, ldd = batch * n + 1).
  s = {}, s.m = 20, s.n = 24, s.k = 40, s.d_type = DType::BF16, s.batch = 3, s.stride_d = 24;
  s.ldd = 3 * 24 + 1, s.seed = 16;
  v.push_back({"bf16_side_by_side", s});
  // m = 8 (gemv/mma under `auto`), bf16 D, fp32 bias, GELU (erf), beta with an fp32 C, 2 entries.
  s = {}, s.m = 8, s.n = 300, s.k = 257, s.op_b = Op::T, s.d_type = DType::BF16, s.bias = true;
  s.act = Activation::GeluErf, s.beta = 0.5f, s.batch = 2, s.seed = 17;
  v.push_back({"gemv_bf16_gelu_erf_batch", s});
  // alpha = 24: pre-activations of +-100 and more beside small ones, so GELU (tanh) and SiLU
  // saturate both ways (e^-z past 2^63 and to 0: mul_sigmoid2's clamp) on every kernel; a bf16 D
  // with 16-byte rows and beta 0 (wgmma/03's TMA-store epilogue), and an fp32 one.
  s = {}, s.m = 96, s.n = 136, s.k = 64, s.alpha = 24.f, s.d_type = DType::BF16, s.bias = true;
  s.act = Activation::GeluTanh, s.seed = 18;
  v.push_back({"bf16_gelu_tanh_saturating", s});
  s = {}, s.m = 70, s.n = 72, s.k = 48, s.op_a = Op::T, s.alpha = -24.f, s.bias = true;
  s.act = Activation::SiLU, s.seed = 19;
  v.push_back({"f32_silu_saturating", s});
  return v;
}

class KernelEpilogue : public ::testing::TestWithParam<EpilogueCase> {};

// A kernel that kernel_cannot_run clears must run the epilogue right (Success); one it does not
// must be refused with KernelUnsupported, and is named here.
TEST_P(KernelEpilogue, EveryKernelMatchesFp64) {
  GEMMLAB_REQUIRE_GPU();
  const int cc = current_cc();
  int ran = 0;
  for (const KernelDesc& kd : all_kernels())
    for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16}) {
      if (!(kd.dtypes & dtype_bit(p))) continue;
      ExSpec s = GetParam().spec;
      s.precision = p;
      if (s.bias_type != DType::F32) s.bias_type = is_16bit(p) ? input_dtype(p) : DType::F32;
      SCOPED_TRACE(std::string(kd.name) + ": " + describe(s));
      ExProblem d(s);
      ASSERT_EQ(d.error(), "");
      if (const char* why = kernel_cannot_run(kd, d.problem(), cc)) {
        std::printf("[  NOTE    ] %s %s not run: %s\n", kd.name, precision_name(p), why);
        EXPECT_EQ(gemm(d.desc(), kd.name), Status::KernelUnsupported) << why;
        continue;
      }
      EpilogueReference r;
      ASSERT_EQ(d.reference(&r), "");
      EXPECT_EQ(d.run_and_check(r, kd.name), "");
      ++ran;
    }
  EXPECT_GT(ran, 0);
}

INSTANTIATE_TEST_SUITE_P(GemmEx, KernelEpilogue, ::testing::ValuesIn(epilogue_cases()),
                         [](const ::testing::TestParamInfo<EpilogueCase>& info) {
                           return std::string(info.param.name);
                         });

// ---- layouts and edge cases, through auto ----

// D == C with beta != 0: every D dtype (C then has it too), 2 entries, padded rows.
TEST(GemmEx, InPlace) {
  GEMMLAB_REQUIRE_GPU();
  for (Precision p : {Precision::FP32, Precision::BF16})
    for (DType d : kDTypes) {
      ExSpec s;
      s.precision = p, s.m = 150, s.n = 70, s.k = 90, s.d_type = d, s.in_place = true;
      s.beta = 0.5f, s.bias = true, s.act = Activation::GeluErf, s.batch = 2, s.pad_d = 3;
      expect_correct(s);
    }
}

// One A (stride_a = 0) or one B (stride_b = 0) for the whole batch; and one C for every entry.
TEST(GemmEx, Broadcast) {
  GEMMLAB_REQUIRE_GPU();
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
    for (int which : {0, 1, 2}) {
      ExSpec s;
      s.precision = p, s.m = 140, s.n = 270, s.k = 100, s.batch = 4, s.d_type = DType::BF16;
      s.op_a = which == 1 ? Op::T : Op::N, s.op_b = which == 0 ? Op::T : Op::N;
      if (which == 0) s.stride_a = 0;
      if (which == 1) s.stride_b = 0;
      if (which == 2) s.stride_c = 0, s.beta = -0.5f, s.c_type = DType::F32, s.bias = true;
      s.act = Activation::SiLU, s.seed = 20 + which;
      expect_correct(s);
    }
}

// 5 entries whose rows and strides are all misaligned: lda = k + 1, odd padding of B, C and D,
// odd gaps between entries, base pointers one element off.
TEST(GemmEx, MisalignedBatch) {
  GEMMLAB_REQUIRE_GPU();
  for (Precision p : {Precision::BF16, Precision::FP32})
    for (DType d : {DType::F32, DType::BF16}) {
      ExSpec s;
      s.precision = p, s.m = 77, s.n = 93, s.k = 130, s.batch = 5, s.d_type = d;
      s.pad_a = 1, s.pad_b = 3, s.pad_c = 1, s.pad_d = 5, s.stride_extra = 3, s.offset = 1;
      s.beta = 0.5f, s.c_type = DType::BF16, s.bias = true, s.act = Activation::GeluTanh;
      s.seed = 30;
      expect_correct(s);
      s.op_a = Op::T, s.op_b = Op::T, s.seed = 31;
      expect_correct(s);
    }
}

// Entries side by side within rows: stride_d = n, ldd = batch * n (a [m, batch * n] tensor).
TEST(GemmEx, EntriesSideBySide) {
  GEMMLAB_REQUIRE_GPU();
  for (Precision p : {Precision::BF16, Precision::FP32})
    for (DType d : {DType::F32, DType::BF16}) {
      ExSpec s;
      s.precision = p, s.m = 200, s.n = 136, s.k = 64, s.batch = 4, s.d_type = d;
      s.stride_d = s.n, s.ldd = s.batch * s.n, s.bias = true, s.act = Activation::ReLU;
      s.seed = 40;
      expect_correct(s);
    }
}

// batch = 0: nothing happens (D stays NaN bytes).
TEST(GemmEx, BatchZeroIsANoOp) {
  GEMMLAB_REQUIRE_GPU();
  ExSpec s;
  s.precision = Precision::BF16, s.m = 64, s.n = 64, s.k = 64, s.batch = 0, s.beta = 0.5f;
  s.d_type = DType::BF16, s.bias = true, s.act = Activation::GeluErf;
  expect_correct(s);
}

// k = 0: D = act(beta C + bias) with A and B null, every D dtype and activation, 3 entries.
TEST(GemmEx, DepthZero) {
  GEMMLAB_REQUIRE_GPU();
  for (DType d : kDTypes)
    for (Activation act : kActs) {
      ExSpec s;
      s.precision = Precision::BF16, s.m = 33, s.n = 65, s.k = 0, s.null_ab = true;
      s.d_type = d, s.act = act, s.beta = 0.5f, s.c_type = DType::BF16, s.bias = true;
      s.batch = 3, s.pad_d = 1, s.seed = 50;
      expect_correct(s);
      s.beta = 0.f, s.null_c = true, s.bias_type = DType::BF16;  // D = act(bias)
      expect_correct(s);
    }
}

// alpha = 0: A and B are not read (null); D = act(beta C + bias), or act(0) = 0.
TEST(GemmEx, AlphaZero) {
  GEMMLAB_REQUIRE_GPU();
  for (DType d : kDTypes) {
    ExSpec s;
    s.precision = Precision::FP16, s.m = 40, s.n = 50, s.k = 60, s.alpha = 0.f, s.null_ab = true;
    s.d_type = d, s.beta = -1.f, s.c_type = DType::F16, s.bias = true, s.act = Activation::SiLU;
    s.batch = 2, s.seed = 60;
    expect_correct(s);
    s.beta = 0.f, s.bias = false, s.act = Activation::GeluTanh;  // D = 0 without reading C
    expect_correct(s);
  }
}

// The same batched bf16 problem twice gives bit-identical D (stream-k at this deep, small grid).
TEST(GemmEx, DeterministicBatchedBf16) {
  GEMMLAB_REQUIRE_GPU();
  for (DType d : {DType::BF16, DType::F32}) {
    ExSpec s;
    s.precision = Precision::BF16, s.m = 256, s.n = 256, s.k = 4096, s.batch = 4, s.d_type = d;
    s.beta = 0.5f, s.bias = true, s.bias_type = DType::BF16, s.act = Activation::GeluTanh;
    SCOPED_TRACE(describe(s));
    ExProblem p(s);
    ASSERT_EQ(p.error(), "");
    ASSERT_EQ(p.run("auto"), Status::Success) << last_error_message();
    const std::vector<char> first = p.read_d();
    ASSERT_EQ(p.run("auto"), Status::Success) << last_error_message();
    const std::vector<char> second = p.read_d();
    ASSERT_FALSE(first.empty());
    EXPECT_TRUE(first == second) << "D changed between two identical runs";
    EpilogueReference r;
    ASSERT_EQ(p.reference(&r), "");
    EXPECT_EQ(p.check(r, first), "");
  }
}

// The throughput shapes of issue 12 as correctness checks: bf16, batch 32 of 128 x 128 x 4096 and
// batch 64 of 512^3, bf16 D with a bias and GELU. On sm_90 auto runs each in one launch over the
// batch: the 32 small entries through wgmma/small (their 32 tiles of 128 x 256 would leave most
// SMs idle), the 64 larger ones (K = 512: the epilogue is a third of a tile) through
// wgmma/pingpong; and a batch of 8 x 1000^3, whose B rows (2000 bytes) are off 128-byte lines,
// through wgmma/03's CTA pairs rather than wgmma/pingpong.
TEST(GemmEx, IssueThroughputShapes) {
  GEMMLAB_REQUIRE_GPU();
  struct Shape {
    int64_t batch, m, n, k;
    const char* kernel;
  };
  for (const Shape& sh :
       {Shape{32, 128, 128, 4096, "wgmma/small"}, Shape{64, 512, 512, 512, "wgmma/pingpong"},
        Shape{8, 1000, 1000, 1000, "wgmma/03_tma_wgmma_ws_persistent"}}) {
    ExSpec s;
    s.precision = Precision::BF16, s.batch = sh.batch, s.m = sh.m, s.n = sh.n, s.k = sh.k;
    s.d_type = DType::BF16, s.bias = true, s.bias_type = DType::BF16, s.act = Activation::GeluTanh;
    s.seed = 70;
    SCOPED_TRACE(describe(s));
    ExProblem p(s);
    ASSERT_EQ(p.error(), "");
    const char* name = auto_kernel_name(p.desc());
    ASSERT_NE(name, nullptr) << last_error_message();
    std::printf("[  AUTO    ] batch %lld x %lldx%lldx%lld -> %s\n", (long long)sh.batch,
                (long long)sh.m, (long long)sh.n, (long long)sh.k, name);
    if (current_cc() == 90) {
      EXPECT_STREQ(name, sh.kernel);
    }
    EpilogueReference r;
    ASSERT_EQ(p.reference(&r), "");
    EXPECT_EQ(p.run_and_check(r, "auto"), "");
  }
}

// Under DynamicTiles (gemmlab_dist's pieces beside NCCL's kernels), `auto` keeps to wgmma/03,
// whose CTAs draw their tiles from a counter, where it would take wgmma/pingpong (fixed lists).
TEST(GemmEx, DynamicTilesKeepAutoOnCounterDrawnTiles) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() != 90) GTEST_SKIP() << "GPU test skipped: the kernel choice is sm_90's";
  ExSpec s;
  s.precision = Precision::BF16, s.batch = 64, s.m = 512, s.n = 512, s.k = 512;
  s.d_type = DType::BF16, s.null_c = true, s.seed = 71;
  ExProblem p(s);
  ASSERT_EQ(p.error(), "");
  const char* plain = auto_kernel_name(p.desc());
  ASSERT_NE(plain, nullptr) << last_error_message();
  EXPECT_STREQ(plain, "wgmma/pingpong");
  const DynamicTiles dynamic;
  const char* name = auto_kernel_name(p.desc());
  ASSERT_NE(name, nullptr) << last_error_message();
  EXPECT_STREQ(name, kWgmma03);
  EpilogueReference r;
  ASSERT_EQ(p.reference(&r), "");
  EXPECT_EQ(p.run_and_check(r, "auto"), "");
}

}  // namespace
}  // namespace gemmlab::test
