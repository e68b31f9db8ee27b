#include "kernels/common/device_props.h"

#include <atomic>

#include <cuda_runtime_api.h>

namespace gemmlab {

int device_sm_count() {
  constexpr int kMaxDevices = 128;
  static std::atomic<int> cached[kMaxDevices] = {};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return 1;
  int n = cached[dev].load(std::memory_order_relaxed);
  if (n == 0) {
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n <= 0)
      return 1;
    cached[dev].store(n, std::memory_order_relaxed);
  }
  return n;
}

}  // namespace gemmlab
