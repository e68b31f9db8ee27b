// Keeps the GPU busy for a while (see gpu_delay.cu).
#pragma once

#include <cuda_runtime_api.h>

namespace gemmbench {

// Enqueue a kernel that spins for `microseconds` on `stream`.
cudaError_t enqueue_gpu_delay(double microseconds, cudaStream_t stream = nullptr);

}  // namespace gemmbench
