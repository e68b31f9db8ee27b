// The public scratch-memory controls (gemmlab.h): thin wrappers over runtime/workspace.
#include <cuda_runtime_api.h>

#include "api/status.h"
#include "gemmlab/gemmlab.h"
#include "runtime/workspace.h"

namespace gemmlab {
namespace {

// device: -1 (the current one) or a device ordinal; the CUDA error of the pool operation.
Status status_of(const char* what, int device, cudaError_t e) {
  if (e == cudaSuccess) return api::ok();
  if (e == cudaErrorInvalidDevice)
    return api::fail(Status::InvalidValue, "%s: no device %d (-1 = the current device)", what,
                     device);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    cudaGetLastError();  // this query's own error
    return api::fail(Status::NoDevice, "%s: no CUDA device: %s", what, cudaGetErrorString(e));
  }
  return api::fail(Status::CudaError, "%s: %s", what, cudaGetErrorString(e));
}

}  // namespace

Status release_scratch(int device) {
  if (device < -1)
    return api::fail(Status::InvalidValue, "release_scratch: device %d (-1 = the current device)",
                     device);
  return status_of("release_scratch", device, workspace_release(device));
}

Status set_scratch_retained(uint64_t bytes, int device) {
  if (device < -1)
    return api::fail(Status::InvalidValue,
                     "set_scratch_retained: device %d (-1 = the current device)", device);
  return status_of("set_scratch_retained", device, workspace_set_retained(bytes, device));
}

uint64_t set_scratch_limit(uint64_t bytes) { return workspace_set_limit(bytes); }

}  // namespace gemmlab
