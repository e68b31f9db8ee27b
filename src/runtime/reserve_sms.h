// SMs held back from gemmlab's own kernels on this thread (runtime/device_props.cpp).
#pragma once

#include "runtime/scoped_value.h"

namespace gemmlab {

// While one lives, device_sm_count() (runtime/device_props.h) on this thread reports `sms` fewer
// multiprocessors (at least 1), so persistent grids and split planners leave that many SMs to
// work running beside the GEMM (gemmlab_dist: NCCL's kernels). Nests: the innermost value holds.
class ReserveSms {
 public:
  explicit ReserveSms(int sms);

 private:
  ScopedValue<int> scope_;
};

// While one lives, gemmlab's persistent kernels that support it (wgmma/03 without stream-k) take
// their tiles from a counter in memory, one at a time, instead of each CTA walking a fixed list
// (tile, tile + grid, ...). Work beside the GEMM (gemmlab_dist: NCCL's kernels) may hold SMs when
// the GEMM starts; CTAs that start late then take fewer tiles instead of finishing late with a
// full list. Each tile is still one CTA's sum in one order: the bits do not change. Costs a
// 4-byte stream-ordered allocation and memset per launch.
class DynamicTiles {
 public:
  DynamicTiles();

 private:
  ScopedValue<bool> scope_;
};

// Whether a DynamicTiles lives on this thread.
bool dynamic_tiles();

}  // namespace gemmlab
