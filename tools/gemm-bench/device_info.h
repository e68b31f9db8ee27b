// What gemm-bench reports about the GPU, and the chip's peak rate per precision.
#pragma once

#include <string>

#include "gemmlab/gemmlab.h"

namespace gemmbench {

struct DeviceInfo {
  bool present = false;
  std::string error;  // why not present
  std::string name;
  int cc = 0;  // e.g. 90
  int sms = 0;
  int clock_mhz = 0;         // peak SM clock the driver reports
  int mem_clock_mhz = 0;
  int mem_bus_bits = 0;
  double mem_bandwidth_gbs = 0;  // 2 * memory clock * bus width (DDR): the spec's upper bound
  double read_bandwidth_gbs = 0;  // measured by a read-only kernel (bandwidth.h); 0: not measured
  long long l2_bytes = 0;
  long long smem_per_sm = 0;
  int max_threads_per_sm = 0;
  long long global_mem_bytes = 0;
  int driver_version = 0, runtime_version = 0;
};

DeviceInfo query_device();

// Dense flops per clock per SM for a precision on a compute capability (fp32: 2 x FFMA lanes;
// tensor precisions: the dense tensor-core rate with fp32 accumulation). 0 when unknown.
double flops_per_clock_per_sm(int cc, gemmlab::Precision p);

// Peak TFLOP/s = SMs x clock x flops/clock/SM (0 when unknown).
double peak_tflops(const DeviceInfo& d, gemmlab::Precision p);

}  // namespace gemmbench
