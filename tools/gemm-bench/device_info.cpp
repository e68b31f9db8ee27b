#include "gemm-bench/device_info.h"

#include <cuda_runtime_api.h>

namespace gemmbench {

DeviceInfo query_device() {
  DeviceInfo d;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    d.error = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device found";
    return d;
  }
  int dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceProp prop{};
  if ((e = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess) {
    d.error = cudaGetErrorString(e);
    return d;
  }
  auto attr = [dev](cudaDeviceAttr a) {
    int v = 0;
    cudaDeviceGetAttribute(&v, a, dev);
    return v;
  };
  d.present = true;
  d.name = prop.name;
  d.cc = prop.major * 10 + prop.minor;
  d.sms = prop.multiProcessorCount;
  d.clock_mhz = attr(cudaDevAttrClockRate) / 1000;
  d.mem_clock_mhz = attr(cudaDevAttrMemoryClockRate) / 1000;
  d.mem_bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  d.mem_bandwidth_gbs = 2.0 * d.mem_clock_mhz * 1e6 * (d.mem_bus_bits / 8.0) / 1e9;
  d.l2_bytes = prop.l2CacheSize;
  d.smem_per_sm = static_cast<long long>(prop.sharedMemPerMultiprocessor);
  d.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  d.global_mem_bytes = static_cast<long long>(prop.totalGlobalMem);
  cudaDriverGetVersion(&d.driver_version);
  cudaRuntimeGetVersion(&d.runtime_version);
  return d;
}

double flops_per_clock_per_sm(int cc, gemmlab::Precision p) {
  // FFMA lanes per SM: 64 on sm_80 (GA100), 128 on sm_86/89/90 and newer.
  const double fp32 = 2.0 * (cc == 80 ? 64 : (cc >= 86 ? 128 : 64));
  // Dense 16-bit tensor-core flops/clock/SM with fp32 accumulation: GA100 1024 FMA, sm_86/89 512
  // FMA (GeForce parts run fp32 accumulation at half rate; counted here at the full rate of the
  // datasheet's non-GeForce figure), Hopper 2048 FMA, Blackwell 4096 FMA. TF32 runs at half.
  double tc16 = 0;
  if (cc == 80) tc16 = 2048;
  else if (cc == 86 || cc == 87 || cc == 89) tc16 = 1024;
  else if (cc == 90) tc16 = 4096;
  else if (cc >= 100) tc16 = 8192;
  switch (p) {
    case gemmlab::Precision::FP32: return fp32;
    case gemmlab::Precision::TF32: return tc16 / 2;
    case gemmlab::Precision::BF16:
    case gemmlab::Precision::FP16: return tc16;
  }
  return 0;
}

double peak_tflops(const DeviceInfo& d, gemmlab::Precision p) {
  return d.sms * (d.clock_mhz * 1e6) * flops_per_clock_per_sm(d.cc, p) / 1e12;
}

}  // namespace gemmbench
