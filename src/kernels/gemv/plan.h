// The planner of gemv/small_m, the kernel for problems with a few rows of C (LLM decode: M = 1..16
// against a large weight matrix). Such a problem moves B once and does only 2M flops per element
// of B, so it is bound by reading B: the plan cuts B into column tiles and depth slices so that
// every SM has several blocks and enough bytes in flight, while the partial sums of the slices
// (summed in order by the last block of each column tile) stay a few percent of B's bytes.
// Plain functions, unit-tested on the CPU (tests/test_planners.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/tile_schedule.h"
#include "registry/registry.h"

namespace gemmlab {
namespace gemv_plan {

constexpr int kMaxM = 16;       // rows of C the kernel handles
constexpr int kThreads = 256;   // 8 warps
constexpr int kBlocksPerSm = 2; // the kernels' __launch_bounds__ minimum: what an SM holds
constexpr int kSmemFloats = 8192;  // the block's slice of op(A), as float: 32 KB at most
constexpr int kBlockSmemBytes = 48 * 1024;  // static + dynamic shared memory without an opt-in
constexpr int kMaxStripSplits = 16;  // depth splits a column strip is planned for (see plan())

struct Plan {
  bool k_contig;   // B stored n x k (op(B) = B^T, the weight layout of y = x W^T)
  bool vec;        // 16-byte loads of B
  int rows;        // m rounded up to 1, 2, 4, 8 or 16 (the kernel instance)
  int vec_elems;   // elements of B per load: 16 bytes' worth, or 1
  int cols;        // columns of C per block
  int k_step;      // depth one pass of the block covers (k_slice is a multiple of it)
  int k_slice;     // depth per block (splits > 1), or per chunk of the one block's whole depth
  int col_tiles, splits;  // the grid: col_tiles * splits blocks
  int blocks() const { return col_tiles * splits; }
};

// b_aligned: B's pointer and rows are 16-byte aligned. scratch: whether the depth may be split
// (the partial sums need scratch); without it one block covers the whole depth.
Plan plan(int m, int n, int k, bool k_contig, bool b_aligned, int elem_bytes, const DeviceDesc& dev,
          bool scratch = true);

// Scratch of a plan: partials (col_tiles * splits * rows * cols floats), then one counter per
// column tile; 0 when splits == 1.
size_t scratch_bytes(const Plan& p);

// The block's static shared memory (its rows x cols result buffer, and a margin for the split
// flag), an upper bound.
int static_smem_bytes(const Plan& p);

// gemv/small_m: a skinny C (n <= kMaxM < m: a matrix times a few vectors) runs swapped,
// C^T = op(B)^T op(A)^T: op(A) streamed as the kernel's B, op(B)^T staged as its few rows of A;
// the stores go back to C's (row, column). kernel_view: the problem as the kernel sees it (only
// the operands, their leading dimensions and ops trade places; C, D and bias stay C's).
bool runs_swapped(const GemmProblem& p);
GemmProblem kernel_view(const GemmProblem& p);

}  // namespace gemv_plan

// The planner of gemv/mma, the tensor-core GEMV for 16-bit inputs with at most 32 rows of C. A
// warp multiplies a 16-column strip of C (k-contiguous B) or a 64-column strip (n-contiguous B)
// by op(A)'s rows with mma.sync: the columns of C are the mma's 16 rows, the rows of C (tokens)
// its 8 columns, so no lane computes padding rows of B. A block is one strip; its 8 warps cut its
// depth into equal ranges. Blocks cut the depth further (splits) only where the strips leave SMs
// without a block (measured: splitting strips that already cover the SMs, to fill waves better,
// or a stream-k cut into one run per block slot, were slower: docs/history.md).
namespace gemv_mma_plan {

constexpr int kMaxM = 32;
constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kMinChunks = 4;    // a split warp's range is at least this many steps deep
constexpr int kMaxSplits = 128;  // the split counters count to 255

struct Plan {
  bool k_contig;   // B stored n x k (op(B) = B^T)
  int tok_tiles;   // rows of C in tiles of 8: 1, 2 or 4 (m <= 8, 16, 32)
  int cols;        // columns of C per strip: 16 (k-contiguous) or 64 (n-contiguous)
  int k_chunk;     // depth of one step of a warp: 32 (k-contiguous) or 16 (n-contiguous)
  int warp_k;      // depth of one warp's range (a multiple of k_chunk)
  int block_k;     // kWarps * warp_k
  int col_tiles, splits;  // the grid: col_tiles * splits blocks
  int blocks() const { return col_tiles * splits; }
  int rows() const { return 8 * tok_tiles; }
};

int tok_tiles(int m);  // 8-row tiles of C: 1, 2 or 4

// Where the strips are fewer than the SMs, the fewest splits that give every SM two blocks, as
// far as the depth allows. scratch: whether the depth may be split (the partials need scratch).
Plan plan(int m, int n, int k, bool k_contig, const DeviceDesc& dev, bool scratch = true);

// Scratch of a plan: partials (blocks * rows * cols floats), then one counter per strip; 0 when
// splits == 1.
size_t scratch_bytes(const Plan& p);

}  // namespace gemv_mma_plan
}  // namespace gemmlab
