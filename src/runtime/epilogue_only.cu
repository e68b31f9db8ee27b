// D = act(beta * C + bias) where no product is formed (epilogue_only.h).
#include "runtime/epilogue_only.h"

#include <algorithm>

#include "kernels/common/gemm_common.cuh"
#include "kernels/common/launch.cuh"

namespace gemmlab {
namespace {
// Grid-stride over the m x n elements of entry blockIdx.y (and further entries, stride gridDim.y).
__global__ void epilogue_only_kernel(Epilogue ep, int64_t batch, int64_t stride_c,
                                     int64_t stride_d) {
  const int64_t total = static_cast<int64_t>(ep.m) * ep.n;
  for (int64_t b = blockIdx.y; b < batch; b += gridDim.y) {
    const Epilogue e = ep.entry(b, stride_c, stride_d);
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
      e.store(static_cast<int>(i / ep.n), static_cast<int>(i % ep.n), 0.f);
  }
}
}  // namespace

cudaError_t epilogue_only(const GemmProblem& p) {
  Epilogue ep = make_epilogue(p);
  ep.alpha = 0.f;  // no product: alpha * 0 must not turn an infinite alpha into NaN
  const int64_t total = p.m * p.n;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((total + threads - 1) / threads, 65536));
  const unsigned entries = static_cast<unsigned>(std::min<int64_t>(p.batch, 65535));
  return launch_kernel(epilogue_only_kernel, dim3(blocks, entries), dim3(threads), 0, p.stream, ep,
                       p.batch, p.stride_c, p.stride_d);
}

}  // namespace gemmlab
