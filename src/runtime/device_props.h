// Per-device facts the API and the launch planners share, read once per device and cached. Every
// value is the current device's (cudaGetDevice), so a process that uses several GPUs gets each
// one's own.
#pragma once

#include <cuda_runtime_api.h>

#include "registry/registry.h"

namespace gemmlab {

// The current device's ordinal, or a CUDA error.
cudaError_t current_device(int* dev);

// Compute capability of the current device as major * 10 + minor (0 if it cannot be asked).
int device_cc();

// Multiprocessor count of the current device (1 if it cannot be asked).
int device_sm_count();

// The current device's name ("NVIDIA H100 80GB HBM3"; "" if it cannot be asked) and its whole
// multiprocessor count (no ReserveSms taken off; 0 if it cannot be asked): what the tuning
// table (registry/tuning.h) is keyed by.
const char* device_name();
int device_full_sm_count();

// Shared memory one multiprocessor can give its blocks, in bytes (0 if it cannot be asked).
int device_smem_per_sm();

// The planners' view of the current device.
inline DeviceDesc current_device_desc() { return {device_sm_count(), device_smem_per_sm()}; }

// The shared-memory carveout (percent of device_smem_per_sm(), for
// cudaFuncAttributePreferredSharedMemoryCarveout) that just fits `blocks` resident blocks of
// `smem_per_block` dynamic bytes each, so the rest of the SM's unified L1/shared storage stays L1.
// 100 (all shared) if the device cannot be asked.
int carveout_for(int blocks, int smem_per_block);

// Raises kernel f's dynamic shared-memory limit to smem_bytes where that is above what it allows
// already (48 KB by default; the limit never goes down), and sets its preferred carveout once
// (carveout >= 0), on the current device: these attributes are per device, so a process that
// calls on device 1 after device 0 needs them set there too. Safe inside a stream capture and
// from several threads.
cudaError_t prepare_function(const void* f, int smem_bytes, int carveout = -1);

}  // namespace gemmlab
