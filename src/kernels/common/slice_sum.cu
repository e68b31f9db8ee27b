// The slice sum's kernels (slice_sum.h): three loops for three ranges of the slice count, each
// adding the slices of an element in slice order. Measurements: docs/history.md, wgmma/split_k.
#include "kernels/common/slice_sum.h"

#include <algorithm>

#include "kernels/common/launch.cuh"
#include "runtime/device_props.h"

namespace gemmlab {
namespace {

// D = epilogue(sum over s of parts[s * m * n + i]), element by element, in a fixed order (the
// same bits every run). Few slices (S < 32): a thread per element sums them in slice order.
__global__ void sum_slices(const float* parts, int slices, Epilogue ep) {
  wait_for_prior_grids();
  const int64_t total = static_cast<int64_t>(ep.m) * ep.n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = __ldcs(parts + i);
    for (int s = 1; s < slices; ++s) v += __ldcs(parts + s * total + i);
    ep.store(static_cast<int>(i / ep.n), static_cast<int>(i % ep.n), v);
  }
}

// Mid slice counts (8 <= S < 32, m n a multiple of 4): the loop above issued one 4-byte load per
// slice and element, in turn. Here a thread takes 4 consecutive elements (16-byte loads) and has
// 8 slices' loads in flight before it adds them, in slice order: the same sums, bit for bit.
constexpr int kSumAhead = 8;
__global__ void sum_slices4(const float4* parts, int slices, Epilogue ep) {
  wait_for_prior_grids();
  const int64_t quads = static_cast<int64_t>(ep.m) * ep.n / 4;
  for (int64_t q = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; q < quads;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float4 v = __ldcs(parts + q);
    for (int s = 1; s < slices; s += kSumAhead) {
      float4 x[kSumAhead];
#pragma unroll
      for (int j = 0; j < kSumAhead; ++j)
        if (s + j < slices) x[j] = __ldcs(parts + (s + j) * quads + q);
#pragma unroll
      for (int j = 0; j < kSumAhead; ++j)
        if (s + j < slices) v.x += x[j].x, v.y += x[j].y, v.z += x[j].z, v.w += x[j].w;
    }
    int r = static_cast<int>(4 * q / ep.n), c = static_cast<int>(4 * q % ep.n);
    const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      ep.store(r, c, e[j]);
      if (++c == ep.n) c = 0, ++r;
    }
  }
}

// Many slices (S >= 32): one thread summing them all in turn is a chain of S L2 round trips.
// Here a block of 256 threads takes 32 consecutive elements at a time; warp g sums slices
// [g S / 8, (g + 1) S / 8) of each in slice order, 8 loads in flight, and the 8 group sums are
// added in group order. (With few slices the loop above keeps more elements per block, which
// measured faster: docs/history.md, wgmma/split_k.)
constexpr int kSumGroups = 8;
__global__ void __launch_bounds__(32 * kSumGroups)
    sum_slice_groups(const float* parts, int slices, Epilogue ep) {
  wait_for_prior_grids();
  __shared__ float group_sum[kSumGroups][32];
  const int64_t total = static_cast<int64_t>(ep.m) * ep.n;
  const int e = threadIdx.x % 32, g = threadIdx.x / 32;
  const int s0 = g * slices / kSumGroups, s1 = (g + 1) * slices / kSumGroups;
  for (int64_t base = blockIdx.x * int64_t{32}; base < total; base += gridDim.x * int64_t{32}) {
    const int64_t i = base + e;
    float v = 0.f;
    if (i < total) {
      for (int s = s0; s < s1; s += 8) {
        float x[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) x[j] = s + j < s1 ? __ldcs(parts + (s + j) * total + i) : 0.f;
#pragma unroll
        for (int j = 0; j < 8; ++j)
          if (s + j < s1) v += x[j];
      }
    }
    group_sum[g][e] = v;
    __syncthreads();
    if (g == 0 && i < total) {
#pragma unroll
      for (int k = 1; k < kSumGroups; ++k) v += group_sum[k][e];
      ep.store(static_cast<int>(i / ep.n), static_cast<int>(i % ep.n), v);
    }
    __syncthreads();  // group_sum is rewritten for the next 32 elements
  }
}

}  // namespace

cudaError_t launch_slice_sum(const float* parts, int slices, const Epilogue& ep,
                             cudaStream_t stream) {
  const int64_t total = static_cast<int64_t>(ep.m) * ep.n;
  if (total == 0) return cudaSuccess;
  const int sms = device_sm_count();
  if (slices >= 32) {
    const int blocks = static_cast<int>(std::min<int64_t>((total + 31) / 32, 32 * sms));
    return launch_kernel_dependent(sum_slice_groups, dim3(blocks), dim3(32 * kSumGroups), 0,
                                   stream, parts, slices, ep);
  }
  if (slices >= kSumAhead && total % 4 == 0) {
    const int blocks = static_cast<int>(std::min<int64_t>((total / 4 + 127) / 128, 8 * sms));
    return launch_kernel_dependent(sum_slices4, dim3(blocks), dim3(128), 0, stream,
                                   reinterpret_cast<const float4*>(parts), slices, ep);
  }
  const int blocks = static_cast<int>(std::min<int64_t>((total + 255) / 256, 4 * sms));
  return launch_kernel_dependent(sum_slices, dim3(blocks), dim3(256), 0, stream, parts, slices,
                                 ep);
}

}  // namespace gemmlab
