#include "dist/reduce.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/common/gemm_common.cuh"

namespace gemmlab {
namespace dist {
namespace {

__device__ void store(void* p, DType t, int64_t i, float v) {
  if (t == DType::BF16) static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
  else if (t == DType::F16) static_cast<__half*>(p)[i] = __float2half_rn(v);
  else static_cast<float*>(p)[i] = v;
}

// One thread per element: the sum over ranks in rank order, then the GEMM kernels' own epilogue
// (Epilogue::value: alpha * sum, fma with beta * C, + bias, act).
__global__ void sum_epilogue_kernel(SumEpilogue s, Epilogue e) {
  const int64_t count = s.rows * s.n;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    float sum = 0.f;
    for (int r = 0; r < s.ranks; ++r) sum += load_as_float(s.parts, s.part_type, r * count + i);
    const int row = static_cast<int>(i / s.n), col = static_cast<int>(i % s.n);
    store(s.D, s.d_type, row * s.ldd + col, e.value(row, col, sum));
  }
}

}  // namespace

cudaError_t sum_epilogue(const SumEpilogue& e, cudaStream_t stream) {
  const int64_t count = e.rows * e.n;
  if (count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  Epilogue epi{};
  epi.D = e.D, epi.C = e.C, epi.bias = e.bias, epi.ldd = e.ldd, epi.ldc = e.ldc;
  epi.alpha = e.alpha, epi.beta = e.beta;
  epi.m = static_cast<int>(e.rows), epi.n = static_cast<int>(e.n);
  epi.d_type = e.d_type, epi.c_type = e.c_type, epi.bias_type = e.bias_type, epi.act = e.act;
  SumEpilogue sum = e;
  void* args[] = {&sum, &epi};
  // cudaLaunchKernel returns this launch's own error (never an earlier one of the caller's).
  return cudaLaunchKernel(reinterpret_cast<const void*>(sum_epilogue_kernel),
                          dim3(static_cast<unsigned>(blocks < 65536 ? blocks : 65536)),
                          dim3(kThreads), args, 0, stream);
}

}  // namespace dist
}  // namespace gemmlab
