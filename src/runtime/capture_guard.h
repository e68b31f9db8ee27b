// One-time set-up calls (a memory pool's creation, a kernel's shared-memory opt-in) are not stream
// operations, but CUDA refuses some of them while any stream is captured in global mode
// ("operation not permitted when stream is capturing"), which invalidates the caller's capture.
// Inside a CaptureGuard this thread's capture mode is relaxed, so they go through; the mode is
// restored when the guard ends.
#pragma once

#include <cuda_runtime_api.h>

namespace gemmlab {

class CaptureGuard {
 public:
  CaptureGuard() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~CaptureGuard() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  CaptureGuard(const CaptureGuard&) = delete;
  CaptureGuard& operator=(const CaptureGuard&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

}  // namespace gemmlab
