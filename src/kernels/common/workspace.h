// Stream-ordered scratch memory for what some kernels need inside their launch (packing and
// realigning copies, split-k partials), so its cost is part of the kernel's time. One gemmlab-owned memory pool per device,
// created on first use, keeps up to kRetainBytes of freed memory mapped, so repeated calls do
// not pay for mapping memory again; the caller's default pool is left alone.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace gemmlab {

// Allocate `bytes` on `stream` from gemmlab's pool for the current device; release with
// workspace_free on the same stream after the consumer has been enqueued.
cudaError_t workspace_alloc(void** ptr, size_t bytes, cudaStream_t stream);
cudaError_t workspace_free(void* ptr, cudaStream_t stream);

}  // namespace gemmlab
