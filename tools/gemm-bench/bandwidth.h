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
// do in inference. Returns the launch's error.
cudaError_t enqueue_l2_flush(void* buf, size_t bytes, bool writes, unsigned pass);

}  // namespace gemmbench
