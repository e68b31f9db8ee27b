// Stream-ordered scratch memory for what some kernels need inside their launch (packing and
// realigning copies, split-k partials), so its cost is part of the kernel's time. One
// gemmlab-owned memory pool per device, created on first use, keeps up to a retained amount
// (default 1 GiB) of freed memory mapped, so repeated calls do not pay for mapping memory again;
// the caller's default pool is left alone. Inside a stream capture the allocation becomes a
// graph allocation node (the graph owns it while it runs).
#pragma once
#include "runtime/scoped_value.h"

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace gemmlab {

// Allocate `bytes` on `stream` from gemmlab's pool for the current device; release with
// workspace_free on the same stream after the consumer has been enqueued. Fails (with
// cudaErrorMemoryAllocation, nothing enqueued) when `bytes` is over the per-call limit.
cudaError_t workspace_alloc(void** ptr, size_t bytes, cudaStream_t stream);
cudaError_t workspace_free(void* ptr, cudaStream_t stream);

// Whether a path that needs `bytes` of scratch may try it at all (the per-call limit).
bool workspace_allowed(size_t bytes);

// workspace_alloc for the partial sums of a depth split (split-k, stream-k): always
// cudaErrorMemoryAllocation while a NoDepthSplit lives on this thread, so the kernel takes its
// plan without a split.
cudaError_t workspace_alloc_split(void** ptr, size_t bytes, cudaStream_t stream);

// While one lives, gemm() calls on this thread split no dot product over K: each element of D is
// one pass over the whole depth in the kernel's order, whatever the grid. gemmlab_dist relies on
// it: a chunk of rows then gets the same bits as the same rows of one larger call of that kernel.
class NoDepthSplit {
 public:
  NoDepthSplit();

 private:
  ScopedValue<bool> scope_;
};

// The public scratch controls (gemmlab.h): per device pool trimming and retention, per-call cap.
cudaError_t workspace_release(int device);
cudaError_t workspace_set_retained(uint64_t bytes, int device);
uint64_t workspace_set_limit(uint64_t bytes);

// Test hooks: the pool of `device` (-1: current), created if it does not exist yet. Its reserved
// (mapped) bytes and the high-water mark of bytes in use since the last reset.
cudaError_t workspace_stats(int device, uint64_t* reserved, uint64_t* used_high);
cudaError_t workspace_reset_used_high(int device);

}  // namespace gemmlab
