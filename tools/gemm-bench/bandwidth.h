// The device's HBM read bandwidth, measured (bandwidth.cu): the yardstick of memory-bound rows.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace gemmbench {

// GB/s of a read-only kernel streaming `bytes` of device memory (16-byte loads, one pass, the
// median of several runs, L2 much smaller than the buffer); 0 when it cannot be measured (no
// memory, a launch error: the error is cleared).
double measure_read_bandwidth_gbs(size_t bytes = size_t{1} << 30);

// Evicts what the timed call could find in L2 by streaming `bytes` (at least twice L2) through it
// on the default stream: with writes (a memset) the lines it leaves are dirty, and the next
// kernel pays their write-back to HBM as it reads (a memory-bound kernel loses up to half its
// bandwidth to that); a read-only sweep leaves clean lines, as the previous layer's weight reads
// do in inference. Set up once per run (the SM count sizes the sweep's grid); returns the
// launch's error.
struct L2Flush {
  void* buf = nullptr;
  size_t bytes = 0;
  int sms = 1;
  bool writes = false;
};
cudaError_t enqueue_l2_flush(const L2Flush& f, unsigned pass);

}  // namespace gemmbench
