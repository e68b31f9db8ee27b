// Helpers shared by the GPU tests: device presence and RAII device buffers.
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace gemmlab::test {

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

}  // namespace gemmlab::test
