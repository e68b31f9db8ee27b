#include "kernels/common/device_props.h"

#include <atomic>

#include <cuda_runtime_api.h>

namespace gemmlab {
namespace {

// attr of the current device, cached per device; `fallback` when it cannot be asked.
template <cudaDeviceAttr kAttr>
int cached_attribute(int fallback) {
  constexpr int kMaxDevices = 128;
  static std::atomic<int> cached[kMaxDevices] = {};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return fallback;
  int v = cached[dev].load(std::memory_order_relaxed);
  if (v == 0) {
    if (cudaDeviceGetAttribute(&v, kAttr, dev) != cudaSuccess || v <= 0) return fallback;
    cached[dev].store(v, std::memory_order_relaxed);
  }
  return v;
}

}  // namespace

int device_sm_count() { return cached_attribute<cudaDevAttrMultiProcessorCount>(1); }

int device_smem_per_sm() {
  return cached_attribute<cudaDevAttrMaxSharedMemoryPerMultiprocessor>(0);
}

int carveout_for(int blocks, int smem_per_block) {
  const int per_sm = device_smem_per_sm();
  if (per_sm <= 0) return 100;
  constexpr int kReservedPerBlock = 1024;  // the runtime's own shared memory per block
  const long long need = static_cast<long long>(blocks) * (smem_per_block + kReservedPerBlock);
  const long long pct = (need * 100 + per_sm - 1) / per_sm;  // rounded up: never too little
  return static_cast<int>(pct > 100 ? 100 : pct);
}

}  // namespace gemmlab
