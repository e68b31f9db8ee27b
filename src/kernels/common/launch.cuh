// Every gemmlab kernel launch goes through launch_kernel: it returns the error of this launch
// alone (cudaLaunchKernelEx), never one that the caller's earlier work left in CUDA's last-error
// slot, and it does not clear that slot. (A <<<>>> launch followed by cudaGetLastError() would
// report a stale error as this call's failure after the kernel had been enqueued, and a caller
// retrying with beta != 0 would then apply the update twice.)
#pragma once

#include <cuda_runtime.h>

namespace gemmlab {

template <typename... KArgs, typename... Args>
cudaError_t launch_kernel(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem,
                          cudaStream_t stream, Args&&... args) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return cudaErrorInvalidConfiguration;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid, cfg.blockDim = block, cfg.dynamicSmemBytes = smem, cfg.stream = stream;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

}  // namespace gemmlab
