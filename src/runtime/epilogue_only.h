// The problems that form no product (k == 0 or alpha == 0): D = act(beta * C + bias), every batch
// entry, through the same Epilogue the kernels use. beta == 0 never reads C.
#pragma once

#include <cuda_runtime_api.h>

#include "registry/registry.h"

namespace gemmlab {
// Enqueued on p.stream; p is validated (m, n, batch >= 1).
cudaError_t epilogue_only(const GemmProblem& p);
}  // namespace gemmlab
