// C = beta * C for the degenerate problems (k == 0 or alpha == 0) where no product is formed.
// beta == 0 writes zeros without reading C.
#include "runtime/scale_c.h"
#include "kernels/common/launch.cuh"

namespace gemmlab {
namespace {
__global__ void scale_c_kernel(float* C, int ldc, int m, int n, float beta) {
  const int64_t total = static_cast<int64_t>(m) * n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float* dst = C + (i / n) * ldc + (i % n);
    *dst = beta == 0.f ? 0.f : beta * *dst;
  }
}
}  // namespace

cudaError_t scale_c(float* C, int64_t ldc, int64_t m, int64_t n, float beta, cudaStream_t stream) {
  const int64_t total = m * n;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((total + threads - 1) / threads, 65536));
  return launch_kernel(scale_c_kernel, blocks, threads, 0, stream, C, static_cast<int>(ldc),
                       static_cast<int>(m), static_cast<int>(n), beta);
}

}  // namespace gemmlab
