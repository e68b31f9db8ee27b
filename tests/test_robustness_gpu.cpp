// Issue 14, "trustworthy in production": the library under the conditions of a real application.
// - CUDA graphs: one gemm call captured (global mode) and replayed, on every path that uses
//   scratch (split-k, strips, stream-k, transposed and realigned copies, operand packing) and on a
//   plain one; two instantiations replayed at once; the capture as the very first call of a
//   process (a death test re-runs the binary, so CUDA and gemmlab start fresh).
// - A stale error in CUDA's last-error slot (a failed cudaMalloc) is neither reported nor cleared.
// - The same problem on two streams at once gives the bits of a one-stream run.
// - Scratch controls: no scratch at all (auto falls back, a named kernel that needs it says so and
//   leaves C alone), release_scratch returns the pool's memory, a packed copy stays small.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpu_util.h"
#include "problem_util.h"
#include "registry/registry.h"
#include "runtime/workspace.h"

namespace gemmlab::test {
namespace {

constexpr const char* kWgmma03 = "wgmma/03_tma_wgmma_ws_persistent";

struct Path {
  const char* what;
  ProblemSpec spec;
  bool failed_as_first_capture;  // reproduced before the fix: a process's first call, captured
};

// Every path of the production kernels that uses scratch, and a plain one (auto picks simt for
// fp32 and, on sm_90, wgmma for bf16; gemv/small_m or gemv/mma for a few rows of C,
// wgmma/split_k for a deep K on few tiles, wgmma/decode for few rows or columns of C, wgmma/small
// for a C too small for 128 x 256 tiles).
std::vector<Path> paths() {
  using P = Precision;
  return {{"fp32 split-k", spec(P::FP32, 1024, 1024, 1024), true},
          {"fp32 thin strips + split-k", spec(P::FP32, 1025, 1025, 1025), true},
          {"fp32 deep split-k", spec(P::FP32, 256, 256, 65536), true},
          {"fp32 deep split-k, one tile, grouped sums", spec(P::FP32, 128, 128, 8192), false},
          {"fp32 stream-k tail", spec(P::FP32, 3000, 3000, 3000), false},
          {"fp32 B copied transposed", spec(P::FP32, 2048, 2048, 2048, Op::N, Op::T), false},
          {"fp32 realigned B", spec(P::FP32, 4097, 4097, 4097), false},
          {"bf16 wgmma stream-k", spec(P::BF16, 1024, 1024, 4096), true},
          {"bf16 operand packing", spec(P::BF16, 4097, 4097, 4097), true},
          {"bf16 plain", spec(P::BF16, 4096, 4096, 4096), false},
          {"fp32 gemv depth split", spec(P::FP32, 4, 4096, 4096), false},
          {"bf16 gemv, weights n x k", spec(P::BF16, 1, 4096, 4096, Op::N, Op::T), false},
          {"fp32 gemv, 16 rows", spec(P::FP32, 16, 4096, 4096), false},
          {"fp32 thin C, row-major A in depth splits (simt/sgemm 256 x 32)",
           spec(P::FP32, 4096, 32, 4096), false},
          {"fp32 thin C in depth splits (simt/sgemm 256 x 64)", spec(P::FP32, 2048, 64, 4096),
           false},
          {"bf16 depth slices (wgmma/split_k)", spec(P::BF16, 256, 256, 32768), false},
          {"bf16 decode rows in depth splits (wgmma/decode)",
           spec(P::BF16, 1, 4096, 14336, Op::N, Op::T), false},
          {"bf16 skinny C, B copied transposed (wgmma/decode)", spec(P::BF16, 8192, 8, 8192), false},
          {"bf16 small tiles in depth splits (wgmma/small)", spec(P::BF16, 128, 128, 8192), false},
          {"bf16 small tiles, MN-major tokens (wgmma/small)",
           spec(P::BF16, 700, 260, 3001, Op::T, Op::N), false}};
}

// ---- CUDA graphs ----

struct Graph {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (g) cudaGraphDestroy(g);
  }
};

// Captures d.run(kernel) into C buffer c on stream s (global mode) and instantiates it. Empty on
// success, else why not.
std::string capture(const DeviceProblem& d, const char* kernel, float* c, cudaStream_t s,
                    Graph* out) {
  if (cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal); e != cudaSuccess)
    return std::string("cudaStreamBeginCapture: ") + cudaGetErrorString(e);
  const Status st = d.run(kernel, c, s);
  const std::string msg = last_error_message();
  const cudaError_t end = cudaStreamEndCapture(s, &out->g);
  if (st != Status::Success) return std::string("captured gemm: ") + status_name(st) + ": " + msg;
  if (end != cudaSuccess) return std::string("cudaStreamEndCapture: ") + cudaGetErrorString(end);
  const cudaError_t e = cudaGraphInstantiate(&out->exec, out->g, 0);
  return e == cudaSuccess ? "" : std::string("cudaGraphInstantiate: ") + cudaGetErrorString(e);
}

// Replays g `times` times on s, C poisoned (or reset) before each, and checks each result against
// r (and, if `eager` is not empty, bit for bit against it). Empty on success.
std::string replay_and_check(const DeviceProblem& d, const Reference& r, const Graph& g,
                             cudaStream_t s, int times, const std::vector<float>& eager) {
  for (int i = 0; i < times; ++i) {
    const std::string rep = "replay " + std::to_string(i) + ": ";
    if (cudaError_t e = d.reset_c(nullptr, s); e != cudaSuccess) return rep + cudaGetErrorString(e);
    if (cudaError_t e = cudaGraphLaunch(g.exec, s); e != cudaSuccess)
      return rep + "cudaGraphLaunch: " + cudaGetErrorString(e);
    const std::vector<float> out = d.read_c();
    if (const std::string why = check_result(d, r, out); !why.empty()) return rep + why;
    if (!eager.empty() && bits_differ(out, eager) != 0) return rep + "bits differ from an eager run";
  }
  return "";
}

TEST(Graphs, CaptureAndReplayEveryPath) {
  GEMMLAB_REQUIRE_GPU();
  for (const Path& path : paths()) {
    SCOPED_TRACE(std::string(path.what) + ": " + describe(path.spec));
    DeviceProblem d(path.spec);
    ASSERT_EQ(d.error(), "");
    const Reference r = d.reference();
    ASSERT_EQ(run_and_check(d, r, "auto"), "");  // eager, for the bits
    const std::vector<float> eager = d.read_c();
    Stream s;
    ASSERT_NE(s.s, nullptr);
    Graph g;
    ASSERT_EQ(capture(d, "auto", nullptr, s.s, &g), "");
    EXPECT_EQ(replay_and_check(d, r, g, s.s, 3, eager), "");
  }
}

// Two instantiations (two captures: a graph with memory nodes has one live instantiation),
// replayed at the same time on two streams into two C buffers: both give the eager run's bits.
TEST(Graphs, TwoInstantiationsReplayConcurrently) {
  GEMMLAB_REQUIRE_GPU();
  for (const Path& path : paths()) {
    SCOPED_TRACE(std::string(path.what) + ": " + describe(path.spec));
    DeviceProblem d(path.spec);
    ASSERT_EQ(d.error(), "");
    ASSERT_EQ(run_and_check(d, d.reference(), "auto"), "");
    const std::vector<float> eager = d.read_c();
    DeviceMem c2(d.c_elems() * sizeof(float));
    ASSERT_NE(c2.ptr, nullptr);
    Stream s1, s2;
    Graph g1, g2;
    ASSERT_EQ(capture(d, "auto", nullptr, s1.s, &g1), "");
    ASSERT_EQ(capture(d, "auto", c2.as<float>(), s2.s, &g2), "");
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(d.reset_c(nullptr, s1.s), cudaSuccess);
      ASSERT_EQ(d.reset_c(c2.as<float>(), s2.s), cudaSuccess);
      ASSERT_EQ(cudaGraphLaunch(g1.exec, s1.s), cudaSuccess);
      ASSERT_EQ(cudaGraphLaunch(g2.exec, s2.s), cudaSuccess);
      EXPECT_EQ(bits_differ(d.read_c(), eager), 0) << "replay " << i << ", stream 1";
      EXPECT_EQ(bits_differ(d.read_c(c2.as<float>()), eager), 0) << "replay " << i << ", stream 2";
    }
  }
}

// The child process of the death test below: its first gemmlab call is captured, then replayed
// and checked. Exits 0 only if all is right; else prints why and exits 1.
[[noreturn]] void capture_first_call_and_exit(const Path& path) {
  DeviceProblem d(path.spec);
  Stream s;
  Graph g;
  std::string why = d.error();
  if (why.empty()) why = capture(d, "auto", nullptr, s.s, &g);
  if (why.empty()) why = replay_and_check(d, d.reference(), g, s.s, 3, {});
  if (!why.empty()) std::fprintf(stderr, "%s: %s\n", path.what, why.c_str());
  std::fflush(stderr);
  std::_Exit(why.empty() ? 0 : 1);
}

// Before the fix, capturing the first call of a process that needs scratch failed with
// "operation not permitted when stream is capturing" (pool creation, function attributes).
TEST(GraphsDeathTest, FirstCallOfTheProcessIsCaptured) {
  GEMMLAB_REQUIRE_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child re-executes the binary
  for (const Path& path : paths())
    if (path.failed_as_first_capture)
      EXPECT_EXIT(capture_first_call_and_exit(path), ::testing::ExitedWithCode(0), "")
          << path.what;
}

// ---- a stale error in CUDA's last-error slot ----

struct Named {
  const char* kernel;
  ProblemSpec spec;
  int cc;  // the device must be exactly this one (0: any)
};

std::vector<Named> stale_error_cases() {
  using P = Precision;
  return {{"auto", spec(P::FP32, 1024, 1024, 1024), 0},
          {"auto", spec(P::BF16, 1024, 1024, 4096), 0},
          {kFp32ProductionKernel, spec(P::FP32, 1024, 1024, 1024), 0},
          {kFp32ProductionKernel, spec(P::FP32, 1025, 1025, 1025), 0},
          {"mma_sync/02_cp_async_pipelined", spec(P::BF16, 515, 257, 129), 0},
          {kWgmma03, spec(P::BF16, 1024, 1024, 4096), 90},
          {kWgmma03, spec(P::BF16, 1000, 1000, 999), 90}};
}

// For each case the device can run: a failed cudaMalloc (which leaves cudaErrorMemoryAllocation
// in the last-error slot), then the call; check(d, r, status, error left in the slot).
template <typename Check>
void with_stale_error(Check&& check) {
  for (const Named& c : stale_error_cases()) {
    SCOPED_TRACE(std::string(c.kernel) + " " + describe(c.spec));
    if (c.cc != 0 && current_cc() != c.cc) {
      std::printf("[  NOTE    ] %s not run: needs sm_%d\n", c.kernel, c.cc);
      continue;
    }
    DeviceProblem d(c.spec);
    ASSERT_EQ(d.error(), "");
    const Reference r = d.reference();
    ASSERT_EQ(d.reset_c(), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    void* huge = nullptr;
    ASSERT_NE(cudaMalloc(&huge, 1ull << 50), cudaSuccess);  // leaves the error behind
    const Status st = d.run(c.kernel);
    const cudaError_t left = cudaGetLastError();  // (and clears it)
    check(d, r, st, left);
  }
}

// Before the fix such a call returned CudaError "out of memory" after enqueueing its kernel.
TEST(StaleError, CallsSucceedAfterAFailedMalloc) {
  GEMMLAB_REQUIRE_GPU();
  with_stale_error([](const DeviceProblem& d, const Reference& r, Status st, cudaError_t) {
    EXPECT_EQ(st, Status::Success) << last_error_message();
    EXPECT_EQ(check_result(d, r, d.read_c()), "");
  });
}

// ---- determinism under concurrency ----

TEST(Concurrency, TwoStreamsGiveTheBitsOfOne) {
  GEMMLAB_REQUIRE_GPU();
  for (Path path : paths()) {
    path.spec.beta = 0.5f;  // C read as well
    SCOPED_TRACE(std::string(path.what) + ": " + describe(path.spec));
    DeviceProblem d(path.spec);
    ASSERT_EQ(d.error(), "");
    ASSERT_EQ(run_and_check(d, d.reference(), "auto"), "");
    const std::vector<float> one = d.read_c();
    DeviceMem c2(d.c_elems() * sizeof(float));
    ASSERT_NE(c2.ptr, nullptr);
    Stream s1, s2;
    ASSERT_EQ(d.reset_c(nullptr, s1.s), cudaSuccess);
    ASSERT_EQ(d.reset_c(c2.as<float>(), s2.s), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(d.run("auto", nullptr, s1.s), Status::Success) << last_error_message();
    ASSERT_EQ(d.run("auto", c2.as<float>(), s2.s), Status::Success) << last_error_message();
    EXPECT_EQ(bits_differ(d.read_c(), one), 0) << "stream 1";
    EXPECT_EQ(bits_differ(d.read_c(c2.as<float>()), one), 0) << "stream 2";
  }
}

// ---- scratch controls ----

// set_scratch_limit for the scope of a test, restored after it.
class ScratchLimit {
 public:
  explicit ScratchLimit(uint64_t bytes) : previous_(set_scratch_limit(bytes)) {}
  ~ScratchLimit() { set_scratch_limit(previous_); }
  ScratchLimit(const ScratchLimit&) = delete;
  ScratchLimit& operator=(const ScratchLimit&) = delete;

 private:
  uint64_t previous_;
};

TEST(Scratch, NoScratchAutoStillRuns) {
  GEMMLAB_REQUIRE_GPU();
  ScratchLimit none(0);
  for (const Path& path : paths()) {
    SCOPED_TRACE(std::string(path.what) + ": " + describe(path.spec));
    DeviceProblem d(path.spec);
    ASSERT_EQ(d.error(), "");
    EXPECT_EQ(run_and_check(d, d.reference(), "auto"), "");
  }
}

// wgmma/03 reads its operands by TMA: a bf16 A whose rows are not 16-byte aligned (lda = k + 1)
// must be packed, so without scratch the named kernel cannot run at all.
TEST(Scratch, NamedKernelThatNeedsScratchSaysSo) {
  GEMMLAB_REQUIRE_SM90();
  ProblemSpec s = spec(Precision::BF16, 256, 256, 256);
  s.pad_a = 1;
  DeviceProblem d(s);
  ASSERT_EQ(d.error(), "");
  {
    ScratchLimit none(0);
    EXPECT_EQ(d.run(kWgmma03), Status::ScratchUnavailable) << last_error_message();
    EXPECT_NE(std::string(last_error_message()).find(kWgmma03), std::string::npos)
        << last_error_message();
    EXPECT_EQ(bits_differ(d.read_c(), d.c_before()), 0) << "C was written";
  }
  // With scratch again, the same call runs: the limit was the reason.
  EXPECT_EQ(run_and_check(d, d.reference(), kWgmma03), "");
}

// The pool's reserved and high-water bytes on the current device.
void pool_stats(uint64_t* reserved, uint64_t* used_high) {
  ASSERT_EQ(workspace_stats(-1, reserved, used_high), cudaSuccess);
}

// fp32 4097^3: the production kernel copies B to 16-byte-aligned rows (~67 MB of scratch, kept
// mapped after the call); release_scratch gives it back.
TEST(Scratch, ReleaseScratchReturnsThePoolsMemory) {
  GEMMLAB_REQUIRE_GPU();
  DeviceProblem d(spec(Precision::FP32, 4097, 4097, 4097));
  ASSERT_EQ(d.error(), "");
  ASSERT_EQ(d.run(kFp32ProductionKernel), Status::Success) << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  uint64_t reserved = 0, high = 0;
  ASSERT_NO_FATAL_FAILURE(pool_stats(&reserved, &high));
  const uint64_t b_bytes = 4097ull * 4097 * 4;
  ASSERT_GE(reserved, b_bytes) << "the call should have kept its copy of B mapped";
  ASSERT_EQ(release_scratch(), Status::Success) << last_error_message();
  ASSERT_NO_FATAL_FAILURE(pool_stats(&reserved, &high));
  EXPECT_LE(reserved, 2ull << 20) << "bytes still reserved after release_scratch";
}

// bf16 bits to float.
float bf16_value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// C = a b^T for k = 1 (a: m values, b: n values, both bf16 from fill_random_device with seeds
// sa, sb): each product of two bf16 values is exact in fp32, so rows 0, m / 2 and m - 1 of C must
// equal it exactly.
void expect_outer_product_rows(const float* c, int64_t m, int64_t n, uint64_t sa, uint64_t sb) {
  std::vector<uint16_t> a(m), b(n);
  fill_random_host(a.data(), m, Precision::BF16, sa);
  fill_random_host(b.data(), n, Precision::BF16, sb);
  std::vector<float> row(n);
  for (int64_t i : {int64_t{0}, m / 2, m - 1}) {
    ASSERT_EQ(cudaMemcpy(row.data(), c + i * n, n * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    int64_t bad = 0;
    for (int64_t j = 0; j < n; ++j) bad += !(row[j] == bf16_value(a[i]) * bf16_value(b[j]));
    EXPECT_EQ(bad, 0) << "wrong elements in row " << i;
  }
}

// A packed copy of an operand costs at most about twice the operand: bf16, k = 1, A m x 1 with
// lda = 1 (2-byte rows that TMA cannot read) must not be padded to 128-byte rows (64x).
TEST(Scratch, PackedThinOperandStaysSmall) {
  GEMMLAB_REQUIRE_GPU();
  const int64_t m = 1 << 20, n = 256, k = 1;
  const Precision prec = Precision::BF16;
  DeviceMem a(m * k * 2), b(k * n * 2), c(m * n * sizeof(float));
  ASSERT_TRUE(a.ptr && b.ptr && c.ptr);
  ASSERT_EQ(fill_random_device(a.ptr, m * k, prec, 71), cudaSuccess);
  ASSERT_EQ(fill_random_device(b.ptr, k * n, prec, 72), cudaSuccess);
  // At most twice the operands, but a copy for 16-byte / TMA loads needs 16 bytes per row at least
  // (k = 1 in bf16: 8x the row), so not less than that; before the fix rows grew to 128 bytes (64x).
  const uint64_t limit = std::max<uint64_t>(2 * (m * k + k * n) * 2, 16 * (m + k)) + (1 << 20);
  GemmProblem p;
  p.precision = prec, p.m = m, p.n = n, p.k = k, p.A = a.ptr, p.lda = k, p.B = b.ptr, p.ldb = n;
  p.C = c.as<float>(), p.ldc = n;
  std::vector<const char*> kernels = {"auto"};
  for (const KernelDesc& kd : all_kernels())
    if (kernel_cannot_run(kd, p, current_cc()) == nullptr) kernels.push_back(kd.name);
  for (const char* kernel : kernels) {
    SCOPED_TRACE(kernel);
    ASSERT_EQ(fill_nan_device(c.as<float>(), m * n), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(workspace_reset_used_high(-1), cudaSuccess);
    ASSERT_EQ(gemm(Op::N, Op::N, m, n, k, 1.f, a.ptr, k, b.ptr, n, 0.f, c.as<float>(), n, prec,
                   kernel),
              Status::Success)
        << last_error_message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    uint64_t reserved = 0, high = 0;
    ASSERT_NO_FATAL_FAILURE(pool_stats(&reserved, &high));
    EXPECT_LE(high, limit) << "scratch of one call, bytes (operands: " << (m * k + k * n) * 2
                           << ")";
    expect_outer_product_rows(c.as<float>(), m, n, 71, 72);
  }
}

}  // namespace
}  // namespace gemmlab::test
