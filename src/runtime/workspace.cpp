#include "runtime/workspace.h"

#include <atomic>
#include <cstdint>
#include <mutex>

#include "runtime/capture_guard.h"

namespace gemmlab {
namespace {

constexpr uint64_t kDefaultRetainBytes = 1ull << 30;  // freed workspace the pool keeps mapped
constexpr int kMaxDevices = 128;

std::atomic<uint64_t> g_call_limit{UINT64_MAX};

struct Pools {
  std::mutex mutex;
  cudaMemPool_t pool[kMaxDevices] = {};
  uint64_t retain[kMaxDevices] = {};  // 0: default
};
Pools& pools() {
  static Pools p;
  return p;
}

cudaError_t resolve_device(int* dev) {
  if (*dev < 0)
    if (cudaError_t e = cudaGetDevice(dev); e != cudaSuccess) return e;
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) return e;
  return *dev < count && *dev < kMaxDevices ? cudaSuccess : cudaErrorInvalidDevice;
}

// The pool of `dev`, created on first use. Creating it is not a stream operation, so it may run
// while the caller's stream is being captured (CaptureGuard lets it through in global mode).
cudaError_t pool_of(int dev, cudaMemPool_t* out) {
  Pools& ps = pools();
  std::lock_guard<std::mutex> lock(ps.mutex);
  if (!ps.pool[dev]) {
    CaptureGuard relaxed;
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t p = nullptr;
    if (cudaError_t e = cudaMemPoolCreate(&p, &props); e != cudaSuccess) return e;
    uint64_t retain = ps.retain[dev] ? ps.retain[dev] : kDefaultRetainBytes;
    if (cudaError_t e = cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &retain);
        e != cudaSuccess) {
      cudaMemPoolDestroy(p);
      return e;
    }
    ps.pool[dev] = p;
  }
  *out = ps.pool[dev];
  return cudaSuccess;
}

thread_local bool t_no_depth_split = false;

}  // namespace

NoDepthSplit::NoDepthSplit() : scope_(t_no_depth_split, true) {}

cudaError_t workspace_alloc_split(void** ptr, size_t bytes, cudaStream_t stream) {
  if (t_no_depth_split) return cudaErrorMemoryAllocation;
  return workspace_alloc(ptr, bytes, stream);
}

bool workspace_allowed(size_t bytes) {
  return static_cast<uint64_t>(bytes) <= g_call_limit.load(std::memory_order_relaxed);
}

cudaError_t workspace_alloc(void** ptr, size_t bytes, cudaStream_t stream) {
  *ptr = nullptr;
  if (!workspace_allowed(bytes)) return cudaErrorMemoryAllocation;
  int dev = -1;
  if (cudaError_t e = resolve_device(&dev); e != cudaSuccess) return e;
  cudaMemPool_t pool = nullptr;
  if (cudaError_t e = pool_of(dev, &pool); e != cudaSuccess) return e;
  return cudaMallocFromPoolAsync(ptr, bytes, pool, stream);
}

cudaError_t workspace_free(void* ptr, cudaStream_t stream) {
  return ptr ? cudaFreeAsync(ptr, stream) : cudaSuccess;
}

cudaError_t workspace_release(int device) {
  if (cudaError_t e = resolve_device(&device); e != cudaSuccess) return e;
  Pools& ps = pools();
  std::lock_guard<std::mutex> lock(ps.mutex);
  return ps.pool[device] ? cudaMemPoolTrimTo(ps.pool[device], 0) : cudaSuccess;
}

cudaError_t workspace_set_retained(uint64_t bytes, int device) {
  if (cudaError_t e = resolve_device(&device); e != cudaSuccess) return e;
  Pools& ps = pools();
  std::lock_guard<std::mutex> lock(ps.mutex);
  ps.retain[device] = bytes ? bytes : 1;  // 1 byte: keep (practically) nothing
  if (!ps.pool[device]) return cudaSuccess;
  uint64_t retain = bytes;
  cudaError_t e = cudaMemPoolSetAttribute(ps.pool[device], cudaMemPoolAttrReleaseThreshold, &retain);
  if (e == cudaSuccess) e = cudaMemPoolTrimTo(ps.pool[device], bytes);
  return e;
}

uint64_t workspace_set_limit(uint64_t bytes) {
  return g_call_limit.exchange(bytes, std::memory_order_relaxed);
}

cudaError_t workspace_stats(int device, uint64_t* reserved, uint64_t* used_high) {
  cudaMemPool_t pool = nullptr;
  cudaError_t e = resolve_device(&device);
  if (e == cudaSuccess) e = pool_of(device, &pool);
  if (e == cudaSuccess) e = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, reserved);
  if (e == cudaSuccess) e = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, used_high);
  return e;
}

cudaError_t workspace_reset_used_high(int device) {
  cudaMemPool_t pool = nullptr;
  cudaError_t e = resolve_device(&device);
  if (e == cudaSuccess) e = pool_of(device, &pool);
  uint64_t zero = 0;
  if (e == cudaSuccess) e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero);
  return e;
}

}  // namespace gemmlab
