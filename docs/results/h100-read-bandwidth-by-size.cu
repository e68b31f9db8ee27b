// Read bandwidth against read size: a float4 grid-stride read kernel (sum per block, one store),
// L2 flushed by a 256 MB read sweep before each timed run, CUDA events, median of 30.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
__global__ void rd(const float4* p, size_t n, float* out) {
  float s = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldg(p + i); s += v.x + v.y + v.z + v.w;
  }
  if (s == 12345.f) out[blockIdx.x] = s;
}
int main() {
  float4* buf; float* out; float4* fl;
  size_t maxb = 512ull << 20, flb = 256ull << 20;
  cudaMalloc(&buf, maxb); cudaMalloc(&fl, flb); cudaMalloc(&out, 1 << 20);
  cudaMemset(buf, 0, maxb); cudaMemset(fl, 0, flb);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (size_t mb : {8, 16, 32, 64, 128, 256, 512}) {
    size_t n = (mb << 20) / 16;
    for (int bps : {2, 4, 8}) {
      std::vector<float> t;
      for (int r = 0; r < 33; ++r) {
        rd<<<sms * 8, 256>>>(fl, flb / 16, out);
        cudaEventRecord(a);
        rd<<<sms * bps, 512>>>(buf, n, out);
        cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 3) t.push_back(ms);
      }
      std::sort(t.begin(), t.end());
      double ms = t[t.size() / 2];
      printf("%4zu MB  %d blocks/SM x 512  %8.2f us  %7.0f GB/s\n", mb, bps, ms * 1e3, (mb << 20) / (ms * 1e-3) / 1e9);
    }
  }
}
