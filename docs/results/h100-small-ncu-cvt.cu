// Throughput of cvt.rn.bf16x2.f32 (F2FP.BF16.F32.PACK_AB) against FMUL, FFMA and MUFU.EX2 on one GPU:
// results per clock per SM, from clock64 over a loop of 16 independent chains per thread.
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
constexpr int kChains = 16, kIters = 4096;
template <int kOp>
__global__ void k(float* out, long long* cycles, float s) {
  float v[kChains]; unsigned u[kChains];
  for (int i = 0; i < kChains; ++i) { v[i] = threadIdx.x * 1e-3f + i; u[i] = i; }
  __syncthreads();
  long long t0 = clock64();
  for (int it = 0; it < kIters; ++it) {
#pragma unroll
    for (int i = 0; i < kChains; ++i) {
      if constexpr (kOp == 0) { unsigned r; asm volatile("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(v[i]), "f"(s)); v[i] = __uint_as_float(r); }
      if constexpr (kOp == 1) { v[i] = v[i] * s; }
      if constexpr (kOp == 2) { v[i] = fmaf(v[i], s, 1.f); }
      if constexpr (kOp == 3) { float e; asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(v[i])); v[i] = e; }
    }
  }
  __syncthreads();
  long long t1 = clock64();
  float acc = 0; for (int i = 0; i < kChains; ++i) acc += v[i] + (float)u[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int threads = 1024; float* out; long long* cyc;
  cudaMalloc(&out, sms * threads * 4); cudaMalloc(&cyc, sms * 8);
  const char* names[] = {"cvt.rn.bf16x2.f32 (2 results)", "FMUL", "FFMA", "MUFU.EX2"};
  for (int op = 0; op < 4; ++op) {
    for (int rep = 0; rep < 2; ++rep) {
      if (op == 0) k<0><<<sms, threads>>>(out, cyc, 1.0001f);
      if (op == 1) k<1><<<sms, threads>>>(out, cyc, 1.0001f);
      if (op == 2) k<2><<<sms, threads>>>(out, cyc, 1.0001f);
      if (op == 3) k<3><<<sms, threads>>>(out, cyc, 1.0001f);
    }
    cudaDeviceSynchronize();
    long long c; cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost);
    double ops = double(threads) * kIters * kChains;
    printf("%-32s %8.1f instructions per clock per SM (one CTA of %d threads per SM, %lld cycles)\n", names[op], ops / c, threads, c);
  }
  printf("status: %s\n", cudaGetErrorString(cudaGetLastError()));
}
