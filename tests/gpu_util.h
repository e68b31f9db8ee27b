// Helpers shared by the GPU tests: device presence, the production kernel's name, RAII device
// buffers and streams.
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace gemmlab::test {

// The production FP32 (CUDA-core) kernel: the one name every test uses for it.
inline constexpr const char* kFp32ProductionKernel = "simt/sgemm";

// Empty if a usable CUDA device is present, else why not ("no CUDA device: ...").
inline std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA device: ") + cudaGetErrorString(e);
  }
  if (count == 0) return "no CUDA device: cudaGetDeviceCount returned 0";
  return "";
}

#define GEMMLAB_REQUIRE_GPU()                                                        \
  do {                                                                               \
    const std::string why_ = ::gemmlab::test::gpu_unavailable_reason();              \
    if (!why_.empty()) GTEST_SKIP() << "GPU test skipped: " << why_;                 \
  } while (0)

// Number of CUDA devices (0 where they cannot be counted).
inline int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

#define GEMMLAB_REQUIRE_TWO_GPUS()                                                        \
  do {                                                                                    \
    GEMMLAB_REQUIRE_GPU();                                                                \
    if (::gemmlab::test::device_count() < 2)                                              \
      GTEST_SKIP() << "GPU test skipped: needs 2 GPUs, found "                            \
                   << ::gemmlab::test::device_count();                                    \
  } while (0)

// Compute capability of the current device as major * 10 + minor (0 if it cannot be asked).
inline int current_cc() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
    return 0;
  return major * 10 + minor;
}

#define GEMMLAB_REQUIRE_SM90()                                                               \
  do {                                                                                       \
    GEMMLAB_REQUIRE_GPU();                                                                   \
    if (::gemmlab::test::current_cc() != 90)                                                 \
      GTEST_SKIP() << "GPU test skipped: needs sm_90, device is sm_"                         \
                   << ::gemmlab::test::current_cc();                                         \
  } while (0)

struct DeviceMem {
  void* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceMem(size_t n) : bytes(n) {
    if (cudaMalloc(&ptr, n ? n : 1) != cudaSuccess) ptr = nullptr;
  }
  ~DeviceMem() { cudaFree(ptr); }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
  template <typename T>
  T* as() const { return static_cast<T*>(ptr); }
};

// A non-blocking stream (never synchronizes with the legacy default stream).
struct Stream {
  cudaStream_t s = nullptr;
  Stream() {
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) s = nullptr;
  }
  ~Stream() {
    if (s) cudaStreamDestroy(s);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

}  // namespace gemmlab::test
