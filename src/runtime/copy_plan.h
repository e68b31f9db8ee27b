// How copy_matrix's straight copy (runtime/aligned_rows.cu) spreads a matrix's 16-byte chunks
// over warps: a plain function, CPU-tested (tests/test_planners.cpp, CopyPlan).
#pragma once

#include <cstdint>

namespace gemmlab {

struct CopySplit {
  int tpr_log2 = 5;        // lanes per row: 1 << tpr_log2 (<= 32); a warp takes 32 >> it rows
  int64_t row_groups = 0;  // groups of 32 >> tpr_log2 rows
  int64_t segs = 1, seg = 0;  // segments per row, and chunks per segment (a multiple of 32)
  int64_t blocks = 1;         // the grid's x dimension (blocks of `warps` warps)
  // The plain case: a whole warp per row (realign_kernel), where the rows alone fill the GPU.
  bool warp_per_row() const { return tpr_log2 == 5 && segs == 1; }
};

// rows of chunks_per_row chunks in each of `grid_entries` batch entries (the grid's y), blocks of
// `warps` warps. Where the rows are too few to give the GPU 1024 warps (8 per SM), long rows are
// cut into segments of 32 chunks or more (a warp per row left 129 rows of 8191 bf16 on 17 CTAs);
// rows of fewer than 32 chunks share a warp (lanes per row: the power of two that covers a row's
// chunks). 1024 rows and more keep a warp per row, which measured faster there (docs/history.md,
// operand packing).
CopySplit plan_straight_copy(int64_t rows, int64_t chunks_per_row, int warps, int64_t grid_entries);

}  // namespace gemmlab
