// Every gemmlab kernel launch goes through launch_kernel: it returns the error of this launch
// alone (cudaLaunchKernelEx), never one that the caller's earlier work left in CUDA's last-error
// slot, and it does not clear that slot. (A <<<>>> launch followed by cudaGetLastError() would
// report a stale error as this call's failure after the kernel had been enqueued, and a caller
// retrying with beta != 0 would then apply the update twice.)
#pragma once

#include <cuda_runtime.h>

namespace gemmlab {

// cudaLaunchKernelEx with n launch attributes (attrs may be null when n is 0).
template <typename... KArgs, typename... Args>
cudaError_t launch_kernel_ex(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem,
                             cudaStream_t stream, cudaLaunchAttribute* attrs, unsigned n,
                             Args&&... args) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return cudaErrorInvalidConfiguration;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid, cfg.blockDim = block, cfg.dynamicSmemBytes = smem, cfg.stream = stream;
  cfg.attrs = attrs, cfg.numAttrs = n;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

template <typename... KArgs, typename... Args>
cudaError_t launch_kernel(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem,
                          cudaStream_t stream, Args&&... args) {
  return launch_kernel_ex(kernel, grid, block, smem, stream, nullptr, 0,
                          std::forward<Args>(args)...);
}

// The same launch as a programmatic dependent of the stream's kernel before it (Hopper and
// later; elsewhere an ordinary launch): its CTAs may be scheduled while that kernel drains, so
// the launch's latency hides behind its tail. The kernel must execute griddepcontrol.wait
// (wait_for_prior_grids) before it reads anything the kernel before it wrote.
template <typename... KArgs, typename... Args>
cudaError_t launch_kernel_dependent(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem,
                                    cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  return launch_kernel_ex(kernel, grid, block, smem, stream, &attr, 1,
                          std::forward<Args>(args)...);
}

// In a kernel launched by launch_kernel_dependent: wait until the grids it depends on have
// completed and their writes are visible (a no-op for an ordinary launch).
__device__ __forceinline__ void wait_for_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

}  // namespace gemmlab
