// SMs held back from gemmlab's own kernels on this thread (runtime/device_props.cpp).
#pragma once

namespace gemmlab {

// While one lives, device_sm_count() (runtime/device_props.h) on this thread reports `sms` fewer
// multiprocessors (at least 1), so persistent grids and split planners leave that many SMs to
// work running beside the GEMM (gemmlab_dist: NCCL's kernels). Nests: the innermost value holds.
class ReserveSms {
 public:
  explicit ReserveSms(int sms);
  ~ReserveSms();
  ReserveSms(const ReserveSms&) = delete;
  ReserveSms& operator=(const ReserveSms&) = delete;

 private:
  int previous_;
};

}  // namespace gemmlab
