// The sum of depth slices: S partial m x n products (fp32, slice s at parts + s * m * n, rows
// n apart) added element by element in slice order, with the whole epilogue (alpha, beta * C,
// bias, activation, D's dtype) applied once to the sum. Every SM sums, and the result is
// deterministic: the same slices in the same order give the same bits every run.
// Used by the split-k paths that write their partials as whole slices: wgmma/split_k (the slices
// as one batched launch) and simt/sgemm's split tiles over few tiles (sgemm_plan.h: sliced).
#pragma once

#include <cuda_runtime.h>

#include "kernels/common/gemm_common.cuh"

namespace gemmlab {

// Enqueues the sum on `stream` as a programmatic dependent of the kernel before it (its launch
// overlaps that kernel's tail; it waits for it before reading parts). ep: the problem's own
// epilogue (its D, C, alpha, beta, bias, activation).
cudaError_t launch_slice_sum(const float* parts, int slices, const Epilogue& ep,
                             cudaStream_t stream);

}  // namespace gemmlab
