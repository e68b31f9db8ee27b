#include "runtime/device_props.h"
#include "runtime/reserve_sms.h"

#include <atomic>
#include <mutex>
#include <map>
#include <string>
#include <utility>

#include "runtime/capture_guard.h"

namespace gemmlab {
namespace {

constexpr int kMaxDevices = 128;

// attr of the current device, cached per device; `fallback` when it cannot be asked.
template <cudaDeviceAttr kAttr>
int cached_attribute(int fallback) {
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

cudaError_t current_device(int* dev) { return cudaGetDevice(dev); }

int device_cc() {
  const int major = cached_attribute<cudaDevAttrComputeCapabilityMajor>(0);
  const int minor = cached_attribute<cudaDevAttrComputeCapabilityMinor>(-1);
  return major > 0 ? major * 10 + (minor < 0 ? 0 : minor) : 0;
}

namespace {
thread_local int t_reserved_sms = 0;
thread_local bool t_dynamic_tiles = false;
}  // namespace

// device_sm_count() is the multiprocessor count less what a ReserveSms holds back (reserve_sms.h).
int device_sm_count() {
  const int sms = cached_attribute<cudaDevAttrMultiProcessorCount>(1) - t_reserved_sms;
  return sms < 1 ? 1 : sms;
}

ReserveSms::ReserveSms(int sms) : scope_(t_reserved_sms, sms < 0 ? 0 : sms) {}

DynamicTiles::DynamicTiles() : scope_(t_dynamic_tiles, true) {}
bool dynamic_tiles() { return t_dynamic_tiles; }

int device_full_sm_count() { return cached_attribute<cudaDevAttrMultiProcessorCount>(0); }

// Read once per device, then without a lock (auto asks on every call where a tuning table is
// compiled in). The names live as long as the process.
const char* device_name() {
  static std::atomic<const char*> names[kMaxDevices] = {};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return "";
  if (const char* name = names[dev].load(std::memory_order_acquire)) return name;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return "";
  const char* fresh = (new std::string(prop.name))->c_str();
  const char* expected = nullptr;
  if (!names[dev].compare_exchange_strong(expected, fresh, std::memory_order_acq_rel))
    return expected;  // another thread's copy won (ours leaks: a few bytes, once)
  return fresh;
}

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

cudaError_t prepare_function(const void* f, int smem_bytes, int carveout) {
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  // Per (device, function): the dynamic shared-memory limit set so far (48 KB is every kernel's
  // default), and whether the carveout was set. The limit only ever rises: a kernel launched with
  // several sizes (and gemm-bench's occupancy query, which passes one problem's size) must not
  // lower it under a size another launch needs.
  struct State {
    int limit = 48 * 1024;
    bool carveout = false;
  };
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, State> done;
  std::lock_guard<std::mutex> lock(mutex);
  State& st = done[{dev, f}];
  const bool raise = smem_bytes > st.limit, set_carveout = carveout >= 0 && !st.carveout;
  if (!raise && !set_carveout) return cudaSuccess;
  CaptureGuard relaxed;
  cudaError_t e = cudaSuccess;
  if (raise) {
    e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    if (e == cudaSuccess) st.limit = smem_bytes;
  }
  if (e == cudaSuccess && set_carveout) {
    e = cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout, carveout);
    if (e == cudaSuccess) st.carveout = true;
  }
  return e;
}

}  // namespace gemmlab
