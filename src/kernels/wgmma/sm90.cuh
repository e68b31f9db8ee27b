// The Hopper (sm_90a) device blocks of the wgmma family: PTX wrappers (ptx.cuh), the wgmma
// instructions (wgmma_ops.cuh), the shared-memory stage tile with its TMA loads and wgmma issue
// (stage_tile.cuh), the consumers' main loops (mainloop.cuh), and the accumulator stores
// (epilogue.cuh). Everything compiles for any target; the instructions exist only where
// GEMMLAB_SM90A is defined (compute_90a). Kernels guard their bodies with the same condition and
// have min_cc = 90.
#pragma once

#include "kernels/wgmma/epilogue.cuh"
#include "kernels/wgmma/mainloop.cuh"
#include "kernels/wgmma/ptx.cuh"
#include "kernels/wgmma/wgmma_ops.cuh"
#include "kernels/wgmma/stage_tile.cuh"
