// Random test data from a counter hash, so the device fill and the host fill agree bit for bit.
#include <cmath>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "reference/reference.h"

namespace gemmlab {
namespace {

__host__ __device__ inline float hash_uniform(uint64_t seed, uint64_t i) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + i * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 33;
  // 24 random bits -> [-1, 1); exactly representable in float.
  return static_cast<float>(static_cast<int32_t>(x >> 40) - (1 << 23)) * (1.0f / (1 << 23));
}

template <typename T>
__host__ __device__ inline T convert(float v);
template <>
__host__ __device__ inline float convert<float>(float v) { return v; }
template <>
__host__ __device__ inline __nv_bfloat16 convert<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__host__ __device__ inline __half convert<__half>(float v) { return __float2half_rn(v); }

template <typename T>
__global__ void fill_kernel(T* ptr, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    ptr[i] = convert<T>(hash_uniform(seed, i));
}

__global__ void nan_kernel(float* ptr, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    ptr[i] = __int_as_float(0x7fc00000);
}

int blocks_for(int64_t count) {
  return static_cast<int>(std::min<int64_t>((count + 255) / 256, 8192));
}

template <typename T>
cudaError_t fill_typed(void* ptr, int64_t count, uint64_t seed, cudaStream_t s) {
  if (count <= 0) return cudaSuccess;
  fill_kernel<T><<<blocks_for(count), 256, 0, s>>>(static_cast<T*>(ptr), count, seed);
  return cudaGetLastError();
}

template <typename T>
void fill_host_typed(void* ptr, int64_t count, uint64_t seed) {
  T* p = static_cast<T*>(ptr);
  for (int64_t i = 0; i < count; ++i) p[i] = convert<T>(hash_uniform(seed, i));
}

}  // namespace

cudaError_t fill_random_device(void* ptr, int64_t count, Precision storage, uint64_t seed,
                               cudaStream_t stream) {
  switch (storage) {
    case Precision::BF16: return fill_typed<__nv_bfloat16>(ptr, count, seed, stream);
    case Precision::FP16: return fill_typed<__half>(ptr, count, seed, stream);
    default: return fill_typed<float>(ptr, count, seed, stream);
  }
}

cudaError_t fill_random_device_f32(float* ptr, int64_t count, uint64_t seed, cudaStream_t stream) {
  return fill_typed<float>(ptr, count, seed, stream);
}

cudaError_t fill_nan_device(float* ptr, int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  nan_kernel<<<blocks_for(count), 256, 0, stream>>>(ptr, count);
  return cudaGetLastError();
}

void fill_random_host(void* ptr, int64_t count, Precision storage, uint64_t seed) {
  switch (storage) {
    case Precision::BF16: fill_host_typed<__nv_bfloat16>(ptr, count, seed); break;
    case Precision::FP16: fill_host_typed<__half>(ptr, count, seed); break;
    default: fill_host_typed<float>(ptr, count, seed); break;
  }
}

}  // namespace gemmlab
