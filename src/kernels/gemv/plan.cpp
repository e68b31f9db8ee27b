#include "kernels/gemv/plan.h"

#include <algorithm>

namespace gemmlab {
namespace gemv_plan {

Plan plan(int m, int n, int k, bool k_contig, bool b_aligned, int elem_bytes, const DeviceDesc& dev,
          bool scratch) {
  Plan p{};
  p.k_contig = k_contig;
  p.rows = m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : m <= 8 ? 8 : 16;
  const int v = 16 / elem_bytes;
  // 16-byte loads along the contiguous direction: along k (k % v == 0 keeps every row's vectors
  // inside it), or along n (the last partial vector of a row is loaded element by element).
  p.vec = b_aligned && (!k_contig || k % v == 0);
  p.vec_elems = p.vec ? v : 1;
  // k-contiguous B: a warp reads 32 loads along k of 4 columns, 8 warps side by side. n-contiguous:
  // a warp reads 32 loads along n of one row, the 8 warps take interleaved rows.
  p.cols = k_contig ? 32 : 32 * p.vec_elems;
  p.k_step = k_contig ? 32 * p.vec_elems : 8;
  p.col_tiles = ceil_div(n, p.cols);
  // Slices: enough blocks for ~4 per SM, each at least 4 passes deep, and partial sums (written
  // and read: 8 bytes per row and column per slice) at most ~6% of B's bytes.
  // The slice of op(A) (dynamic shared memory) and the block's static result buffer share the
  // 48 KB a block gets without opting in (16 rows of 16-bit n-contiguous B: a 16 KB buffer).
  const int slice_floats = std::min(kSmemFloats, (kBlockSmemBytes - static_smem_bytes(p)) / 4);
  const int max_slice = std::max(p.k_step, slice_floats / p.rows / p.k_step * p.k_step);
  const int passes = ceil_div(k, p.k_step);
  int splits = ceil_div(4 * dev.sms, p.col_tiles);
  splits = std::min(splits, std::max(1, passes / 4));
  const int traffic_cap = static_cast<int>(0.06 * k * elem_bytes / (8.0 * p.rows));
  splits = std::min(splits, std::max(1, traffic_cap));
  // n-contiguous B: one wave of the kBlocksPerSm blocks an SM holds, each slice as deep as that
  // allows (~4 per SM left a third, nearly empty wave; measured: docs/history.md, gemv/small_m).
  if (!k_contig) splits = std::max(1, std::min(splits, kBlocksPerSm * dev.sms / p.col_tiles));
  // At most kMaxStripSplits of them a column strip: its splits meet on one counter (a CAS loop)
  // and its last block sums them, and ~200 of them (a narrow C: one or two strips) cost more
  // than the SMs they bring (fp32 1 x 128 x 8192 NN 16% -> 60% of cuBLAS, 4 x 512 x 16384 NN 66%
  // -> 88%; H100, docs/history.md, gemv/small_m).
  splits = std::min(splits, kMaxStripSplits);
  // The slice: a whole number of passes, no larger than the block's shared copy of op(A). Without
  // scratch one block per column tile walks the whole depth, a slice at a time.
  p.k_slice = std::min(ceil_div(passes, std::max(1, splits)) * p.k_step, max_slice);
  p.splits = scratch ? ceil_div(k, p.k_slice) : 1;
  return p;
}

int static_smem_bytes(const Plan& p) {
  return p.rows * p.cols * static_cast<int>(sizeof(float)) + 256;
}

size_t scratch_bytes(const Plan& p) {
  if (p.splits <= 1) return 0;
  return static_cast<size_t>(p.blocks()) * p.rows * p.cols * sizeof(float) +
         static_cast<size_t>(p.col_tiles) * sizeof(unsigned long long);
}

bool runs_swapped(const GemmProblem& p) { return p.m > kMaxM && p.n <= kMaxM; }

GemmProblem kernel_view(const GemmProblem& p) {
  if (!runs_swapped(p)) return p;
  GemmProblem q = p;
  q.m = p.n, q.n = p.m;
  q.A = p.B, q.lda = p.ldb, q.op_a = p.op_b == Op::N ? Op::T : Op::N;
  q.B = p.A, q.ldb = p.lda, q.op_b = p.op_a == Op::N ? Op::T : Op::N;
  return q;
}

}  // namespace gemv_plan

namespace gemv_mma_plan {

int tok_tiles(int m) { return m <= 8 ? 1 : m <= 16 ? 2 : 4; }

Plan plan(int m, int n, int k, bool k_contig, const DeviceDesc& dev, bool scratch) {
  Plan p{};
  p.k_contig = k_contig;
  p.tok_tiles = tok_tiles(m);
  p.cols = k_contig ? 16 : 64;
  p.k_chunk = k_contig ? 32 : 16;
  p.col_tiles = ceil_div(n, p.cols);
  const int chunks = ceil_div(k, p.k_chunk);
  int splits = 1;
  if (scratch && p.col_tiles < dev.sms)
    splits = std::min({ceil_div(2 * dev.sms, p.col_tiles),
                       std::max(1, chunks / (kWarps * kMinChunks)), kMaxSplits});
  p.warp_k = ceil_div(chunks, splits * kWarps) * p.k_chunk;
  p.block_k = kWarps * p.warp_k;
  p.splits = ceil_div(k, p.block_k);  // no empty split
  return p;
}

size_t scratch_bytes(const Plan& p) {
  if (p.splits <= 1) return 0;
  return static_cast<size_t>(p.blocks()) * p.rows() * p.cols * sizeof(float) +
         static_cast<size_t>(p.col_tiles) * sizeof(unsigned long long);
}

}  // namespace gemv_mma_plan
}  // namespace gemmlab
