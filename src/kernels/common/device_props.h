// Per-device facts the launch planners share, read once per device and cached.
#pragma once

namespace gemmlab {

// Multiprocessor count of the current device (1 if it cannot be asked).
int device_sm_count();

}  // namespace gemmlab
