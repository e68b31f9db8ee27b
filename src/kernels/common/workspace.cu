#include "kernels/common/workspace.h"

#include <cstdint>
#include <mutex>

namespace gemmlab {
namespace {

constexpr uint64_t kRetainBytes = 1ull << 30;  // freed workspace the pool keeps mapped
constexpr int kMaxDevices = 128;

cudaError_t workspace_pool(cudaMemPool_t* pool) {
  static std::mutex mutex;
  static cudaMemPool_t pools[kMaxDevices] = {};
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  if (dev < 0 || dev >= kMaxDevices) return cudaErrorInvalidDevice;
  std::lock_guard<std::mutex> lock(mutex);
  if (!pools[dev]) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t p = nullptr;
    if (cudaError_t e = cudaMemPoolCreate(&p, &props); e != cudaSuccess) return e;
    uint64_t retain = kRetainBytes;
    if (cudaError_t e = cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &retain);
        e != cudaSuccess)
      return e;
    pools[dev] = p;
  }
  *pool = pools[dev];
  return cudaSuccess;
}

}  // namespace

cudaError_t workspace_alloc(void** ptr, size_t bytes, cudaStream_t stream) {
  cudaMemPool_t pool = nullptr;
  if (cudaError_t e = workspace_pool(&pool); e != cudaSuccess) return e;
  return cudaMallocFromPoolAsync(ptr, bytes, pool, stream);
}

cudaError_t workspace_free(void* ptr, cudaStream_t stream) {
  return ptr ? cudaFreeAsync(ptr, stream) : cudaSuccess;
}

}  // namespace gemmlab
