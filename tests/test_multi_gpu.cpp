// Several GPUs in one process (issue 14): state that belongs to a device (function attributes,
// properties, scratch pools) must be each device's own. Every kind of call on device 1 first,
// then on device 0; one host thread per device calling at once; an operand of another device is
// WrongDevice with C untouched. Skips (visibly) with fewer than 2 GPUs.
#include <algorithm>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "gpu_util.h"
#include "problem_util.h"

namespace gemmlab::test {
namespace {

// Device 0 current again when a test ends, whatever it switched to.
struct RestoreDevice {
  ~RestoreDevice() { cudaSetDevice(0); }
};

struct Kind {
  const char* kernel;
  Precision precision;
};

const Kind kKinds[] = {{"auto", Precision::FP32},
                       {kFp32ProductionKernel, Precision::FP32},
                       {"auto", Precision::TF32},
                       {"auto", Precision::BF16},
                       {"auto", Precision::FP16},
                       {"mma_sync/02_cp_async_pipelined", Precision::BF16}};

// A scratch path (split-k for fp32, stream-k for 16-bit wgmma) and a misaligned, padded shape
// (realigned or packed operands, edge tiles).
std::vector<ProblemSpec> shapes_for(Precision p) {
  ProblemSpec deep = spec(p, 1024, 1024, p == Precision::FP32 ? 1024 : 4096);
  ProblemSpec odd = spec(p, 1000, 1025, 999, Op::T, Op::N);
  odd.pad_a = odd.pad_b = odd.pad_c = 3, odd.offset = 1, odd.beta = -0.5f;
  return {deep, odd};
}

// Every kind on every shape on the current device, `times` times each; the failures.
std::vector<std::string> run_kinds(int times) {
  std::vector<std::string> failures;
  int dev = -1;
  cudaGetDevice(&dev);
  for (const Kind& kind : kKinds)
    for (const ProblemSpec& s : shapes_for(kind.precision)) {
      const std::string where = "device " + std::to_string(dev) + ", " + kind.kernel + ", " +
                                describe(s) + ": ";
      DeviceProblem d(s);
      if (!d.error().empty()) {
        failures.push_back(where + d.error());
        continue;
      }
      const Reference r = d.reference();
      for (int i = 0; i < times; ++i)
        if (std::string why = run_and_check(d, r, kind.kernel); !why.empty())
          failures.push_back(where + why);
    }
  return failures;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += x + "\n";
  return s;
}

TEST(MultiGpu, EveryKindOnDeviceOneThenZero) {
  GEMMLAB_REQUIRE_TWO_GPUS();
  RestoreDevice restore;
  for (int dev : {1, 0}) {
    ASSERT_EQ(cudaSetDevice(dev), cudaSuccess);
    const std::vector<std::string> failures = run_kinds(1);
    EXPECT_TRUE(failures.empty()) << join(failures);
  }
}

TEST(MultiGpu, OneThreadPerDeviceAtOnce) {
  GEMMLAB_REQUIRE_TWO_GPUS();
  const int n = std::min(device_count(), 8);
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int dev = 0; dev < n; ++dev)
    threads.emplace_back([dev, &mutex, &failures] {
      std::vector<std::string> mine;
      if (cudaError_t e = cudaSetDevice(dev); e != cudaSuccess)
        mine.push_back("cudaSetDevice(" + std::to_string(dev) + "): " + cudaGetErrorString(e));
      else
        mine = run_kinds(3);
      std::lock_guard<std::mutex> lock(mutex);
      failures.insert(failures.end(), mine.begin(), mine.end());
    });
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(failures.empty()) << join(failures);
}

// An operand (A, B or C) on device 1 while device 0 is current: WrongDevice, nothing written.
TEST(MultiGpu, OperandOfAnotherDeviceIsWrongDevice) {
  GEMMLAB_REQUIRE_TWO_GPUS();
  RestoreDevice restore;
  const ProblemSpec s = spec(Precision::FP32, 64, 64, 64);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  DeviceProblem other(s);  // every operand on device 1
  ASSERT_EQ(other.error(), "");
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  DeviceProblem d(s);
  ASSERT_EQ(d.error(), "");
  const GemmProblem here = d.problem(), there = other.problem();
  for (int which = 0; which < 3; ++which) {
    SCOPED_TRACE(std::string("operand on device 1: ") + "ABC"[which]);
    GemmProblem p = here;
    if (which == 0) p.A = there.A;
    if (which == 1) p.B = there.B;
    if (which == 2) p.C = there.C;
    for (const char* kernel : {"auto", kFp32ProductionKernel}) {
      EXPECT_EQ(gemm(p.op_a, p.op_b, p.m, p.n, p.k, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, c_f32(p),
                     p.ldc, p.precision, kernel),
                Status::WrongDevice)
          << kernel << ": " << last_error_message();
    }
    EXPECT_EQ(bits_differ(d.read_c(), d.c_before()), 0) << "C on device 0 was written";
    ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
    EXPECT_EQ(bits_differ(other.read_c(), other.c_before()), 0) << "C on device 1 was written";
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  }
}

}  // namespace
}  // namespace gemmlab::test
