#pragma once
#include <algorithm>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace gemmlab {
// C = beta * C (C = 0 when beta == 0, without reading C). Enqueued on `stream`.
cudaError_t scale_c(float* C, int64_t ldc, int64_t m, int64_t n, float beta, cudaStream_t stream);
}  // namespace gemmlab
