// The public scratch-memory controls (gemmlab.h): thin wrappers over runtime/workspace.
#include <cstdio>
#include <string>

#include "gemmlab/gemmlab.h"
#include "runtime/workspace.h"

namespace gemmlab {

Status release_scratch(int device) {
  const cudaError_t e = workspace_release(device);
  if (e == cudaErrorInvalidDevice) return Status::InvalidValue;
  return e == cudaSuccess ? Status::Success : Status::CudaError;
}

Status set_scratch_retained(uint64_t bytes, int device) {
  const cudaError_t e = workspace_set_retained(bytes, device);
  if (e == cudaErrorInvalidDevice) return Status::InvalidValue;
  return e == cudaSuccess ? Status::Success : Status::CudaError;
}

uint64_t set_scratch_limit(uint64_t bytes) { return workspace_set_limit(bytes); }

}  // namespace gemmlab
