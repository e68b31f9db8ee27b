// A read-only streaming kernel, timed with CUDA events: what HBM delivers to a kernel that only
// reads, on this device and driver (the spec figure, 2 x memory clock x bus width, is an upper
// bound no kernel reaches). gemm-bench prints it in the header and measures memory-bound rows
// against it (report.cpp).
#include "gemm-bench/bandwidth.h"

#include <algorithm>
#include <vector>

#include <cuda_runtime_api.h>

namespace gemmbench {
namespace {

// Each thread reads 16-byte words in a grid-stride loop, 4 in flight, and folds them; the fold
// is stored only where it matches an impossible key, so the loads are not optimized away and
// nothing is written.
// kStream: evict-first loads (the probe, which must not be served by L2); else normal loads,
// which take L2's lines from whatever held them (the flush).
template <bool kStream>
__device__ __forceinline__ uint4 ld(const uint4* p) {
  return kStream ? __ldcs(p) : __ldcg(p);
}

template <bool kStream>
__global__ void read_kernel(const uint4* __restrict__ p, size_t words, unsigned key,
                            unsigned* out) {
  unsigned acc = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < words; i += 4 * stride) {
    const uint4 a = ld<kStream>(p + i), b = ld<kStream>(p + i + stride),
                c = ld<kStream>(p + i + 2 * stride), d = ld<kStream>(p + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^
           d.z ^ d.w;
  }
  for (; i < words; i += stride) {
    const uint4 a = ld<kStream>(p + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == key) *out = acc;
}

constexpr unsigned kKey = 0x9e3779b9u;  // a fold no buffer of this tool produces

}  // namespace

cudaError_t enqueue_l2_flush(const L2Flush& f, unsigned pass) {
  if (f.writes) return cudaMemsetAsync(f.buf, pass & 0xff, f.bytes);
  // buf holds zeros or memset bytes: its fold is never the key, so nothing is written.
  read_kernel<false><<<static_cast<unsigned>(f.sms) * 8, 256>>>(
      static_cast<const uint4*>(f.buf), f.bytes / 16, kKey, static_cast<unsigned*>(f.buf));
  return cudaPeekAtLastError();
}

double measure_read_bandwidth_gbs(size_t bytes) {
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  bytes = std::min(bytes, free_b / 4) & ~size_t{15};
  if (bytes < (size_t{64} << 20)) return 0;
  void* buf = nullptr;
  unsigned* out = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  double gbs = 0;
  int sms = 0, dev = 0;
  if (cudaMalloc(&buf, bytes) == cudaSuccess && cudaMalloc(&out, sizeof(unsigned)) == cudaSuccess &&
      cudaMemset(buf, 1, bytes) == cudaSuccess && cudaEventCreate(&start) == cudaSuccess &&
      cudaEventCreate(&stop) == cudaSuccess && cudaGetDevice(&dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess) {
    const size_t words = bytes / 16;
    const unsigned blocks = static_cast<unsigned>(sms) * 8;  // 8 blocks of 256 per SM
    std::vector<float> ms;
    for (int run = 0; run < 12; ++run) {
      cudaEventRecord(start);
      read_kernel<true><<<blocks, 256>>>(static_cast<const uint4*>(buf), words, kKey, out);
      cudaEventRecord(stop);
      if (cudaEventSynchronize(stop) != cudaSuccess) break;
      float t = 0;
      cudaEventElapsedTime(&t, start, stop);
      if (run >= 2) ms.push_back(t);  // two warm-ups
    }
    if (ms.size() == 10 && cudaGetLastError() == cudaSuccess) {
      std::sort(ms.begin(), ms.end());
      const double median = 0.5 * (ms[4] + ms[5]);
      if (median > 0) gbs = static_cast<double>(bytes) / (median * 1e-3) / 1e9;
    }
  }
  cudaGetLastError();  // this probe's own error, if any
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  if (out) cudaFree(out);
  if (buf) cudaFree(buf);
  return gbs;
}

}  // namespace gemmbench
