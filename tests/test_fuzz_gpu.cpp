// Random problems against the fp64 reference, element by element. Seedable and repeatable:
//   GEMMLAB_FUZZ_SEED (default 1) and GEMMLAB_FUZZ_COUNT (default 2000) choose the run; the log
//   records both, and every failure prints the seed, the problem's index and the whole problem.
// Each problem: a precision, m, n, k in 1..3000 biased to edges (1, 2, tile sizes +-1, primes),
// any transposes, rows padded by 0..17 elements, sometimes misaligned base pointers, alpha and
// beta from {0, 1, -1.5, 0.25} (beta == 0: C poisoned with NaN), and "auto" or a registered
// kernel that can run it. Checked per element against elementwise_tolerance (reference.h), with
// C's padding columns untouched.
// GEMMLAB_FUZZ_EPILOGUE (percent, default 25) of the problems go through the extended call instead,
// gemm(GemmDesc), with a random epilogue: D's dtype, C's (or D == C), a bias, the activation,
// 1-3 batch entries with gaps, broadcasts or entries side by side; checked against
// reference_gemm_ex_gpu with epilogue_bound, D's other elements untouched. Whether a problem gets
// one, and which, comes from its own generator: GEMMLAB_FUZZ_EPILOGUE=0 replays the plain run.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ex_problem_util.h"
#include "gpu_util.h"
#include "problem_util.h"
#include "registry/registry.h"

namespace gemmlab::test {
namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  int64_t below(int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(gen_); }
  template <typename T>
  T pick(const std::vector<T>& v) { return v[below(static_cast<int64_t>(v.size()))]; }

 private:
  std::mt19937_64 gen_;
};

// A dimension in 1..3000: tile edges (t - 1, t, t + 1 for the tile sizes), primes, small, any.
int64_t draw_dim(Rng& rng) {
  static const std::vector<int64_t> edges = [] {
    std::vector<int64_t> v = {1, 2};
    for (int64_t t : {8, 16, 32, 64, 128, 256}) v.insert(v.end(), {t - 1, t, t + 1});
    return v;
  }();
  static const std::vector<int64_t> primes = {3,   5,   7,   11,  13,   17,   31,   61,   67,  127,
                                              131, 251, 257, 509, 521, 1021, 1031, 2039, 2053, 2999};
  const int64_t r = rng.below(10);
  if (r < 4) return rng.pick(edges);
  if (r < 6) return rng.pick(primes);
  if (r < 9) return 1 + rng.below(300);
  return 1 + rng.below(3000);
}

ProblemSpec draw_problem(Rng& rng, uint64_t index) {
  static const std::vector<float> scalars = {0.f, 1.f, -1.5f, 0.25f};
  ProblemSpec s;
  s.precision = static_cast<Precision>(rng.below(4));
  s.m = draw_dim(rng), s.n = draw_dim(rng), s.k = draw_dim(rng);
  s.op_a = rng.below(2) ? Op::T : Op::N;
  s.op_b = rng.below(2) ? Op::T : Op::N;
  for (int64_t* pad : {&s.pad_a, &s.pad_b, &s.pad_c}) *pad = rng.below(2) ? rng.below(18) : 0;
  s.offset = rng.below(5) == 0 ? 1 + rng.below(3) : 0;
  s.alpha = rng.pick(scalars);
  s.beta = rng.pick(scalars);
  s.seed = index + 1;
  return s;
}

// The extended-call version of s: a random epilogue and batch layout (ex_problem_util.h).
ExSpec draw_epilogue(Rng& rng, const ProblemSpec& s) {
  static const std::vector<DType> dtypes = {DType::F32, DType::BF16, DType::F16};
  ExSpec e;
  e.precision = s.precision, e.m = s.m, e.n = s.n, e.k = s.k, e.op_a = s.op_a, e.op_b = s.op_b;
  e.alpha = s.alpha, e.beta = s.beta, e.pad_a = s.pad_a, e.pad_b = s.pad_b, e.pad_c = s.pad_c;
  e.offset = s.offset, e.seed = s.seed;
  e.d_type = rng.pick(dtypes);
  e.c_type = rng.pick(dtypes);
  e.in_place = e.beta != 0.f && rng.below(6) == 0;
  e.null_c = e.beta == 0.f && rng.below(2) == 0;
  e.null_ab = e.alpha == 0.f && rng.below(2) == 0;
  e.bias = rng.below(2) == 0;
  const bool half = s.precision == Precision::BF16 || s.precision == Precision::FP16;
  e.bias_type = half && rng.below(2) ? (s.precision == Precision::BF16 ? DType::BF16 : DType::F16)
                                     : DType::F32;
  e.act = static_cast<Activation>(rng.below(5));
  e.pad_d = rng.below(2) ? rng.below(18) : 0;
  e.batch = 1 + rng.below(3);
  e.stride_extra = rng.below(2) ? rng.below(8) : 0;
  if (e.batch > 1) {
    if (rng.below(5) == 0) e.stride_a = 0;  // one A (or B, or C) for the whole batch
    if (rng.below(5) == 0) e.stride_b = 0;
    if (!e.in_place && rng.below(5) == 0) e.stride_c = 0;
    if (!e.in_place && rng.below(6) == 0)  // entries side by side within D's rows
      e.stride_d = e.n + rng.below(3), e.ldd = e.batch * e.stride_d + rng.below(3);
  }
  return e;
}

// The ladder's early steps (auto priority below the tiled kernels') are slow: only small problems.
constexpr int64_t kSlowKernelMaxMacs = int64_t{1} << 25;

// "auto" about a third of the time, else a registered kernel that can run the problem.
const char* draw_kernel(Rng& rng, const GemmProblem& p, int cc) {
  std::vector<const char*> can;
  const bool big = p.m * p.n * p.k > kSlowKernelMaxMacs;
  for (const KernelDesc& kd : all_kernels())
    if (kernel_cannot_run(kd, p, cc) == nullptr && !(big && kd.auto_priority < 50))
      can.push_back(kd.name);
  if (can.empty() || rng.below(3) == 0) return "auto";
  return rng.pick(can);
}

TEST(Fuzz, RandomProblems) {
  GEMMLAB_REQUIRE_GPU();
  const uint64_t seed = env_or("GEMMLAB_FUZZ_SEED", 1);
  const uint64_t count = env_or("GEMMLAB_FUZZ_COUNT", 2000);
  const uint64_t epilogue_pct = env_or("GEMMLAB_FUZZ_EPILOGUE", 25);
  std::printf("[  FUZZ    ] seed=%llu problems=%llu epilogue=%llu%%\n", (unsigned long long)seed,
              (unsigned long long)count, (unsigned long long)epilogue_pct);
  const int cc = current_cc();
  Rng rng(seed);
  int failures = 0, by_precision[4] = {}, autos = 0, extended = 0;
  for (uint64_t i = 0; i < count && failures < 10; ++i) {
    const ProblemSpec s = draw_problem(rng, i);
    Rng ep_rng(seed * 0x9E3779B97F4A7C15ull + i);  // the epilogue's own draws
    if (static_cast<uint64_t>(ep_rng.below(100)) < epilogue_pct) {
      const ExSpec e = draw_epilogue(ep_rng, s);
      ExProblem d(e);
      ASSERT_EQ(d.error(), "") << "seed=" << seed << " problem=" << i;
      const char* kernel = draw_kernel(rng, d.problem(), cc);
      ++by_precision[static_cast<int>(s.precision)];
      autos += std::string(kernel) == "auto";
      ++extended;
      EpilogueReference r;
      std::string why = d.reference(&r);
      if (why.empty()) why = d.run_and_check(r, kernel);
      if (why.empty()) continue;
      ++failures;
      ADD_FAILURE() << "[  FUZZ    ] FAIL seed=" << seed << " problem=" << i << ": " << describe(e)
                    << " kernel " << kernel << ": " << why;
      continue;
    }
    DeviceProblem d(s);
    ASSERT_EQ(d.error(), "") << "seed=" << seed << " problem=" << i;
    const char* kernel = draw_kernel(rng, d.problem(), cc);
    ++by_precision[static_cast<int>(s.precision)];
    autos += std::string(kernel) == "auto";
    const std::string why = run_and_check(d, d.reference(), kernel);
    if (why.empty()) continue;
    ++failures;
    ADD_FAILURE() << "[  FUZZ    ] FAIL seed=" << seed << " problem=" << i << ": " << describe(s)
                  << " lda/ldb/ldc " << d.lda() << "/" << d.ldb() << "/" << d.ldc() << " kernel " << kernel << ": "
                  << why;
  }
  std::printf("[  FUZZ    ] fp32 %d, tf32 %d, bf16 %d, fp16 %d problems; %d with auto; %d through "
              "gemm(GemmDesc)\n",
              by_precision[0], by_precision[1], by_precision[2], by_precision[3], autos, extended);
}

}  // namespace
}  // namespace gemmlab::test
