// What a read of a decode weight can reach on this GPU, timed as gemm-bench times a GEMM: L2
// flushed by a 256 MB read sweep, then a spin kernel (so the host's launch overhead hides behind
// it), CUDA events around the timed launch, median of 30 after 3 warm-ups.
//  - empty: a kernel that does nothing (what the timing charges any launch);
//  - ld: a float4 grid-stride read (sum per thread, one conditional store), 4 blocks/SM x 512;
//  - ld x U: the same with U independent float4 loads in flight per thread and step;
//  - bulk: TMA bulk copies (cp.async.bulk global -> shared, an mbarrier per stage), one CTA per
//    SM, S stages of C bytes in flight, each CTA a contiguous 1/132 of the buffer (what a
//    streaming GEMV/GEMM producer does at best: nothing consumes the stages).
// Build: nvcc -O3 -arch=sm_90a -std=c++17 h100-read-ceiling.cu -o read-ceiling
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

__global__ void empty_kernel() {}

__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void sweep(const float4* p, size_t n, float* out) {
  float s = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const float4 v = __ldg(p + i);
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 12345.f) out[blockIdx.x] = s;
}

template <int U>
__global__ void ld_unrolled(const float4* p, size_t n, float* out) {
  float s = 0.f;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldg(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) s += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; i < n; i += stride) {
    const float4 v = __ldg(p + i);
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 12345.f) out[blockIdx.x] = s;
}

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// One thread per CTA streams bytes [b0, b1) of p into a ring of kS stages of C bytes.
__global__ void bulk_read(const char* p, size_t bytes, int chunk, int stages) {
  extern __shared__ __align__(128) char ring[];
  __shared__ __align__(8) uint64_t full[32];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&full[s])));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const size_t per = (bytes / gridDim.x + chunk - 1) / chunk * chunk;
  const size_t b0 = per * blockIdx.x, b1 = (b0 + per < bytes ? b0 + per : bytes);
  int i = 0;
  for (size_t off = b0; off < b1; off += chunk, ++i) {
    const int s = i % stages;
    if (i >= stages) {  // wait for the copy that last used this stage
      const uint32_t parity = ((i / stages) - 1) & 1;
      asm volatile(
          "{ .reg .pred P; W: mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1; @!P bra W; }" ::"r"(
              smem_u32(&full[s])),
          "r"(parity)
          : "memory");
    }
    const uint32_t n = static_cast<uint32_t>(b1 - off < (size_t)chunk ? b1 - off : (size_t)chunk);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(&full[s])), "r"(n)
                 : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            smem_u32(ring + (size_t)s * chunk)),
        "l"(p + off), "r"(n), "r"(smem_u32(&full[s]))
        : "memory");
  }
  // drain: wait for the last use of every stage
  for (int j = max(0, i - stages); j < i; ++j) {
    const int s = j % stages;
    const uint32_t parity = (j / stages) & 1;
    asm volatile(
        "{ .reg .pred P; W2: mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1; @!P bra W2; }" ::"r"(
            smem_u32(&full[s])),
        "r"(parity)
        : "memory");
  }
}

int main() {
  char* buf;
  float* out;
  float4* fl;
  const size_t maxb = 256ull << 20, flb = 256ull << 20;
  cudaMalloc(&buf, maxb);
  cudaMalloc(&fl, flb);
  cudaMalloc(&out, 1 << 20);
  cudaMemset(buf, 1, maxb);
  cudaMemset(fl, 0, flb);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  int sms, clk;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  cudaFuncSetAttribute(bulk_read, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
  const long long spin_cycles = (long long)clk / 20;  // clk in kHz: ~50 us
  auto time = [&](auto launch) {
    std::vector<float> t;
    for (int r = 0; r < 33; ++r) {
      sweep<<<sms * 8, 256>>>(fl, flb / 16, out);
      spin<<<1, 32>>>(spin_cycles);
      cudaEventRecord(a);
      launch();
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms;
      cudaEventElapsedTime(&ms, a, b);
      if (r >= 3) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2] * 1e3;  // us
  };
  printf("%s, %d SMs; timing: L2 flushed, spin kernel, CUDA events, median of 30\n", prop.name, sms);
  const double e = time([&] { empty_kernel<<<sms, 128>>>(); });
  printf("empty kernel                         %8.2f us\n", e);
  for (size_t bytes : {size_t(4096) * 4096 * 2, size_t(8192) * 8192 * 2, size_t(4096) * 14336 * 2,
                       size_t(256) << 20}) {
    const double mb = bytes / 1048576.0;
    auto report = [&](const char* what, double us) {
      printf("%7.1f MB  %-26s %8.2f us  %7.0f GB/s  (less the empty kernel: %7.0f GB/s)\n", mb, what,
             us, bytes / (us * 1e-6) / 1e9, bytes / ((us - e) * 1e-6) / 1e9);
    };
    const size_t n4 = bytes / 16;
    report("ld 4 blocks/SM x 512", time([&] { sweep<<<sms * 4, 512>>>((const float4*)buf, n4, out); }));
    report("ld x4, 2 blocks/SM x 512",
           time([&] { ld_unrolled<4><<<sms * 2, 512>>>((const float4*)buf, n4, out); }));
    report("ld x8, 2 blocks/SM x 512",
           time([&] { ld_unrolled<8><<<sms * 2, 512>>>((const float4*)buf, n4, out); }));
    report("ld x4, 4 blocks/SM x 512",
           time([&] { ld_unrolled<4><<<sms * 4, 512>>>((const float4*)buf, n4, out); }));
    for (auto cs : {std::pair<int, int>{16384, 8}, {16384, 12}, {32768, 6}, {8192, 16}}) {
      char what[64];
      snprintf(what, sizeof what, "bulk %2d x %2d KB, 1 CTA/SM", cs.second, cs.first / 1024);
      report(what, time([&] {
               bulk_read<<<sms, 32, cs.first * cs.second>>>(buf, bytes, cs.first, cs.second);
             }));
    }
    char what[64];
    snprintf(what, sizeof what, "bulk  6 x 16 KB, 2 CTA/SM");
    report(what, time([&] { bulk_read<<<2 * sms, 32, 16384 * 6>>>(buf, bytes, 16384, 6); }));
  }
  const cudaError_t err = cudaDeviceSynchronize();
  printf("status: %s\n", cudaGetErrorString(err));
  return err == cudaSuccess ? 0 : 1;
}
