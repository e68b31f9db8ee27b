// The device's HBM read bandwidth, measured (bandwidth.cu): the yardstick of memory-bound rows.
#pragma once

#include <cstddef>

namespace gemmbench {

// GB/s of a read-only kernel streaming `bytes` of device memory (16-byte loads, one pass, the
// median of several runs, L2 much smaller than the buffer); 0 when it cannot be measured (no
// memory, a launch error: the error is cleared).
double measure_read_bandwidth_gbs(size_t bytes = size_t{1} << 30);

}  // namespace gemmbench
