// Per-device facts the launch planners share, read once per device and cached.
#pragma once

namespace gemmlab {

// Multiprocessor count of the current device (1 if it cannot be asked).
int device_sm_count();

// Shared memory one multiprocessor can give its blocks, in bytes (0 if it cannot be asked).
int device_smem_per_sm();

// The shared-memory carveout (percent of device_smem_per_sm(), for
// cudaFuncAttributePreferredSharedMemoryCarveout) that just fits `blocks` resident blocks of
// `smem_per_block` dynamic bytes each, so the rest of the SM's unified L1/shared storage stays L1.
// 100 (all shared) if the device cannot be asked.
int carveout_for(int blocks, int smem_per_block);

}  // namespace gemmlab
