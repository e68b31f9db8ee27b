// Host side of the sm_90a kernels, shared once: the TMA tensor maps (cuTensorMapEncodeTiled reached
// through the runtime's driver entry point, so gemmlab does not link libcuda), the operand packing
// pass that makes any A and B TMA-readable, its stream-ordered workspace, and the dispatch from a
// problem's precision and operand majorness to a kernel template instance.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "registry/registry.h"

namespace gemmlab {
namespace sm90 {

// One operand as a kernel reads it: stored row-major with leading dimension ld (elements); the
// contiguous dimension is K (k_major) or M/N. mn and k are the logical extents.
// batch > 1 with stride > 0: a batch of such matrices, entry b at ptr + b * stride (elements);
// stride 0 (or batch 1): one matrix, shared by every entry.
struct TmaOperand {
  const void* ptr = nullptr;
  int64_t ld = 0;
  int64_t mn = 0, k = 0;
  bool k_major = true;
  int64_t batch = 1, stride = 0;
  bool batched() const { return batch > 1 && stride > 0; }
};

// The operands a kernel multiplies. Normally a = op(A) (m x k) and b = op(B)^T (n x k). When
// `swapped`, the kernel computes C^T = op(B)^T op(A)^T instead: a = op(B)^T, b = op(A), its tile
// grid runs over n x m, and its epilogue writes each result transposed.
struct PreparedOperands {
  TmaOperand a, b;
  bool swapped = false;
  void* workspace = nullptr;  // packed copies, if any; release_operands frees it (stream-ordered)
};

// The majorness of the kernel's a and b (after packing and any swap).
struct KernelLayout {
  bool a_k_major, b_k_major, swapped;
};

// Makes A and B of `p` readable by TMA: an operand whose base is 16-byte aligned and whose row
// pitch is a multiple of 16 bytes is used in place; any other operand is packed on p.stream into
// a workspace with rows padded to 128 bytes (4097 -> 4160 bf16), and so is a batch whose entries
// are not 16 bytes apart (each entry packed; a broadcast operand once). 16-bit operands keep their
// majorness (wgmma transposes them for free). tf32: wgmma reads a shared-memory operand only
// K-major; a kernel that loads its wgmma A into registers may take that one MN-major (Tf32Mn),
// and every other MN-major tf32 operand is transposed while packing.
enum class Tf32Mn {
  None,       // both operands K-major (wgmma/02)
  RegisterA,  // the kernel's A from registers: NN runs swapped (B takes A's place), TN transposes
              // B (wgmma/03)
  OpB,        // op(B)^T may stay MN-major, op(A) is made K-major: the strips kernel, whose
              // weight W = op(B)^T is its wgmma A, from registers when MN-major
  OpA,        // op(A) may stay MN-major, op(B)^T is made K-major: the strips kernel with the
              // tokens as C's columns (its weight W = op(A))
};
// keep_b_rows: never pack B only to align its rows to 128 bytes (wgmma/03's CTA pairs read them
// in place).
cudaError_t prepare_operands(const GemmProblem& p, Tf32Mn tf32, PreparedOperands* out,
                             bool keep_b_rows = false);
// B's rows (base, pitch, batch stride) are 16-byte aligned, as TMA needs, but not 128-byte
// aligned: the host packs such a B (wgmma_plan::padding_pays) unless told to keep it.
bool b_rows_off_lines(const GemmProblem& p);
// The 2 x 1 clusters of `kern` (threads per CTA, dynamic shared memory) resident at once on the
// current device (its GPCs' SM counts decide), cached per device.
int max_active_pairs(const void* kern, int threads, int smem);
KernelLayout kernel_layout(const GemmProblem& p, Tf32Mn tf32);
// Frees the workspace after the kernel (stream-ordered, so call it right after the launch).
cudaError_t release_operands(const GemmProblem& p, PreparedOperands* ops);

// A 3-D tensor map of `x` (its two dimensions and its batch entries; one entry unless
// x.batched()) with 128-byte swizzle whose box is one stage's slice of one entry: K-major, 128
// bytes of K by `box_rows` rows of M/N; MN-major, 64 elements of M/N by 128 bytes' worth of K rows.
cudaError_t make_tensor_map(CUtensorMap* map, const TmaOperand& x, Precision prec, int box_rows);

// D as a TMA store target (wgmma/03's TMA-store epilogue): a 16-bit D that the epilogue writes
// without reading C (beta = 0), whose base, row pitch, batch stride and row length are multiples
// of 16 bytes. The row length too: a TMA store clips at the tensor's edge only to 16 bytes (H100:
// a 1-column bf16 D got 7 padding elements written). An fp32 D keeps the staged epilogue: through
// TMA stores (32-column boxes) it ran 2% slower (bf16 4096^3 and 8192^3, H100).
// plain_f32: an fp32 D without bias or activation too (wgmma/pingpong, whose stores run under
// the other warpgroup's main loop).
bool tma_storable(const GemmProblem& p, bool plain_f32 = false);
// A 3-D map of D (n columns x m rows x batch entries) whose box is 16 rows x 128 bytes, 128-byte
// swizzle (store_fragment_tma's box: a warp's rows).
cudaError_t make_store_map(CUtensorMap* map, const GemmProblem& p);


// The maps a persistent kernel (wgmma/03, wgmma/pingpong) reads: A and B with boxes of a_rows and
// b_rows rows, the same with boxes of edge_rows (edge tiles), and, where `store`, D's store map.
struct KernelMaps {
  CUtensorMap a, b, a_edge, b_edge, d{};
};
cudaError_t make_kernel_maps(const GemmProblem& p, const PreparedOperands& ops, int a_rows,
                             int b_rows, int edge_rows, bool store, KernelMaps* m);

// A persistent kernel's tile sequence over the whole batch is counted in int: the reason it
// cannot run p in bm x bn tiles, or null.
const char* too_many_tiles(const GemmProblem& p, int bm, int bn);

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}, bool_constant<a_k_major>{}, bool_constant<b_k_major>{}) for the element
// type of the precision. tf32 B is always K-major; tf32 A may be MN-major only in kernels that
// load it into registers (kTf32RegisterA), so only those instantiate that case.
template <bool kTf32RegisterA = false, typename F>
cudaError_t dispatch(Precision prec, bool a_k_major, bool b_k_major, F&& f) {
  using std::bool_constant;
  if (prec == Precision::TF32) {
    if constexpr (kTf32RegisterA)
      if (!a_k_major) return f(TypeTag<float>{}, bool_constant<false>{}, bool_constant<true>{});
    return f(TypeTag<float>{}, bool_constant<true>{}, bool_constant<true>{});
  }
  auto by_major = [&](auto tag) -> cudaError_t {
    if (a_k_major && b_k_major) return f(tag, bool_constant<true>{}, bool_constant<true>{});
    if (a_k_major) return f(tag, bool_constant<true>{}, bool_constant<false>{});
    if (b_k_major) return f(tag, bool_constant<false>{}, bool_constant<true>{});
    return f(tag, bool_constant<false>{}, bool_constant<false>{});
  };
  if (prec == Precision::BF16) return by_major(TypeTag<__nv_bfloat16>{});
  if (prec == Precision::FP16) return by_major(TypeTag<__half>{});
  return cudaErrorInvalidValue;
}

// prepare_operands, then f(ops) (the launch), then release_operands (stream-ordered, after the
// launch): the common shape of every TMA kernel's launch. Returns the first error.
template <typename F>
cudaError_t with_prepared_operands(const GemmProblem& p, Tf32Mn tf32, F&& f,
                                   bool keep_b_rows = false) {
  PreparedOperands ops;
  cudaError_t e = prepare_operands(p, tf32, &ops, keep_b_rows);
  if (e == cudaSuccess) e = f(static_cast<const PreparedOperands&>(ops));
  const cudaError_t r = release_operands(p, &ops);
  return e != cudaSuccess ? e : r;
}

}  // namespace sm90
}  // namespace gemmlab
