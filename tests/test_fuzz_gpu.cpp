// Random problems against the fp64 reference, element by element. Seedable and repeatable:
//   GEMMLAB_FUZZ_SEED (default 1) and GEMMLAB_FUZZ_COUNT (default 2000) choose the run; the log
//   records both, and every failure prints the seed, the problem's index and the whole problem.
// Each problem: a precision, m, n, k in 1..3000 biased to edges (1, 2, tile sizes +-1, primes),
// any transposes, rows padded by 0..17 elements, sometimes misaligned base pointers, alpha and
// beta from {0, 1, -1.5, 0.25} (beta == 0: C poisoned with NaN), and "auto" or a registered
// kernel that can run it. Checked per element against elementwise_tolerance (reference.h), with
// C's padding columns untouched.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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
  std::printf("[  FUZZ    ] seed=%llu problems=%llu\n", (unsigned long long)seed,
              (unsigned long long)count);
  const int cc = current_cc();
  Rng rng(seed);
  int failures = 0, by_precision[4] = {}, autos = 0;
  for (uint64_t i = 0; i < count && failures < 10; ++i) {
    const ProblemSpec s = draw_problem(rng, i);
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
  std::printf("[  FUZZ    ] fp32 %d, tf32 %d, bf16 %d, fp16 %d problems; %d with auto\n",
              by_precision[0], by_precision[1], by_precision[2], by_precision[3], autos);
}

}  // namespace
}  // namespace gemmlab::test
