// Host side of the sm_90a kernels (see sm90_host.h): tensor maps, and the operand packing plan (the copies themselves: aligned_rows.h).
#include "kernels/wgmma/host.h"

#include "kernels/wgmma/plan.h"

#include "runtime/aligned_rows.h"
#include "runtime/device_props.h"
#include "runtime/workspace.h"

#include <atomic>
#include <climits>
#include <mutex>

namespace gemmlab {
namespace sm90 {
namespace {

// ---- tensor-map encoding through the driver entry point ----
using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                   const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                   const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiledFn encode_fn() {
  static const EncodeTiledFn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return static_cast<EncodeTiledFn>(nullptr);
    return reinterpret_cast<EncodeTiledFn>(p);
  }();
  return fn;
}


// ---- packing (aligned_rows.h's copy_matrix: bits are copied, not converted) ----

struct Plan {
  TmaOperand in_place;   // the operand as stored
  bool pack = false;
  bool transpose = false;
  int64_t stored_rows = 0, stored_cols = 0;
  TmaOperand packed;     // ptr filled in once the workspace exists
  int64_t bytes = 0;
};

// force_k_major: the operand must end up K-major (tf32 B, or any tf32 operand without the
// register-A path), transposing it while packing if it is stored MN-major. pad_rows: pack an
// operand whose rows are 16-byte but not 128-byte aligned (wgmma_plan::padding_pays); pad_k_major:
// a K-major one too, else only an MN-major one.
// batch/stride: the operand's batch entries (stride 0: one matrix for all of them).
// What TMA needs of an operand's rows (base, pitch and batch stride 16-byte aligned) and whether
// they are whole 128-byte lines (base and pitch).
struct RowAlignment {
  bool tma, lines;
};
RowAlignment row_alignment(const void* ptr, int64_t ld, int64_t eb, int64_t batch, int64_t stride) {
  return {batch_rows_aligned(ptr, ld, stride, batch, eb, 16), rows_aligned(ptr, ld, eb, 128)};
}

Plan plan_operand(const void* ptr, int64_t ld, bool k_major, int64_t mn, int64_t k, Precision prec,
                  bool force_k_major, bool pad_rows, bool pad_k_major, int64_t batch,
                  int64_t stride) {
  Plan pl;
  const int64_t eb = input_bytes(prec);
  pl.in_place = {ptr, ld, mn, k, k_major, batch, stride};
  pl.stored_rows = k_major ? mn : k;
  pl.stored_cols = k_major ? k : mn;
  const bool batched = pl.in_place.batched();
  // Batch entries must be 16 bytes apart. They may overlap (wgmma/split_k's depth slices of one
  // matrix, ks elements apart): the tensor map's batch stride is then smaller than its row
  // stride, which TMA addresses like any other stride (the split-k tests check the results).
  const RowAlignment ra = row_alignment(ptr, ld, eb, batched ? batch : 1, stride);
  const bool aligned = ra.tma, lines = ra.lines;
  if (aligned && (k_major || !force_k_major) && ((k_major && !pad_k_major) || lines || !pad_rows))
    return pl;
  pl.pack = true;
  pl.transpose = !k_major && force_k_major;
  const bool out_k_major = k_major || pl.transpose;
  const int64_t out_rows = out_k_major ? mn : k, out_cols = out_k_major ? k : mn;
  // Rows padded to 128 bytes, so every 128-byte TMA box row is one aligned cache line; but where
  // that would more than double the copy (short rows: k = 1 in bf16 grows 64x), only to TMA's
  // minimum pitch of 16 bytes.
  const int64_t per_line = 128 / eb, per16 = 16 / eb;
  const int64_t ld128 = (out_cols + per_line - 1) / per_line * per_line;
  const int64_t ld16 = (out_cols + per16 - 1) / per16 * per16;
  const int64_t out_ld = ld128 <= 2 * ld16 ? ld128 : ld16;
  const int64_t entry_bytes = (out_rows * out_ld * eb + 255) / 256 * 256;
  pl.packed = {nullptr, out_ld, mn, k, out_k_major, batch, batched ? entry_bytes / eb : 0};
  pl.bytes = entry_bytes * (batched ? batch : 1);
  return pl;
}

cudaError_t run_pack(const Plan& pl, Precision prec, cudaStream_t s) {
  const int64_t eb = input_bytes(prec);
  const bool batched = pl.in_place.batched();
  return copy_matrix(pl.in_place.ptr, pl.in_place.ld, const_cast<void*>(pl.packed.ptr),
                     pl.packed.ld, pl.stored_rows, pl.stored_cols, static_cast<int>(eb),
                     pl.transpose, s, batched ? pl.in_place.batch : 1,
                     batched ? pl.in_place.stride : 0, batched ? pl.packed.stride : 0);
}

// How A and B are laid out for the kernel. tf32 wgmma reads only K-major operands from shared
// memory, but its A may come from registers (Tf32Mn::RegisterA): then an MN-major A is fine, and a
// problem whose B is MN-major and A K-major (NN) is computed swapped, C^T = op(B)^T op(A)^T, so
// that B takes A's place. Only TN (both MN-major) still transposes B. Under Tf32Mn::OpB the
// kernel's wgmma A is op(B)^T: it stays as stored, op(A) is made K-major; under OpA the other way.
struct Layout {
  bool swap = false;
  bool force_a = false, force_b = false;  // must end up K-major
};

Layout layout_of(const GemmProblem& p, Tf32Mn tf32) {
  Layout l;
  if (p.precision != Precision::TF32) return l;
  const bool a_k = p.op_a == Op::N, b_k = p.op_b == Op::T;
  if (tf32 == Tf32Mn::None) {
    l.force_a = l.force_b = true;
  } else if (tf32 == Tf32Mn::OpB) {
    l.force_a = true;
  } else if (tf32 == Tf32Mn::OpA) {
    l.force_b = true;
  } else if (!b_k) {
    if (a_k) l.swap = true;
    else l.force_b = true;
  }
  return l;
}

Plan plan_a(const GemmProblem& p, const Layout& l) {
  return plan_operand(p.A, p.lda, p.op_a == Op::N, p.m, p.k, p.precision, l.force_a,
                      wgmma_plan::padding_pays(p.precision, p.m, p.n, p.k, p.k * p.m, false),
                      false, p.batch, p.stride_a);
}
Plan plan_b(const GemmProblem& p, const Layout& l, bool keep_b_rows) {
  return plan_operand(p.B, p.ldb, p.op_b == Op::T, p.n, p.k, p.precision, l.force_b,
                      !keep_b_rows && wgmma_plan::padding_pays(p.precision, p.m, p.n, p.k,
                                                               p.k * p.n, p.op_b == Op::T),
                      true, p.batch, p.stride_b);
}

}  // namespace

bool b_rows_off_lines(const GemmProblem& p) {
  const RowAlignment ra = row_alignment(p.B, p.ldb, input_bytes(p.precision),
                                        p.stride_b > 0 ? p.batch : 1, p.stride_b);
  return ra.tma && !ra.lines;
}

int max_active_pairs(const void* kern, int threads, int smem) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices] = {};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices)
    return device_sm_count() / 2;
  if (const int c = cache[dev].load(std::memory_order_relaxed); c > 0) return c;
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 2, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
  cfg.gridDim = dim3(static_cast<unsigned>(device_sm_count() / 2 * 2));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = static_cast<size_t>(smem), cfg.attrs = &attr, cfg.numAttrs = 1;
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n < 1) {
    (void)cudaGetLastError();
    n = device_sm_count() / 2;
  }
  cache[dev].store(n, std::memory_order_relaxed);
  return n;
}

KernelLayout kernel_layout(const GemmProblem& p, Tf32Mn tf32) {
  const Layout l = layout_of(p, tf32);
  const bool a_k = p.op_a == Op::N || l.force_a, b_k = p.op_b == Op::T || l.force_b;
  return l.swap ? KernelLayout{b_k, a_k, true} : KernelLayout{a_k, b_k, false};
}

cudaError_t prepare_operands(const GemmProblem& p, Tf32Mn tf32, PreparedOperands* out,
                             bool keep_b_rows) {
  const Layout l = layout_of(p, tf32);
  Plan a = plan_a(p, l), b = plan_b(p, l, keep_b_rows);
  out->a = a.in_place;
  out->b = b.in_place;
  out->swapped = false;
  out->workspace = nullptr;
  cudaError_t e = cudaSuccess;
  if (a.pack || b.pack) {
    void* ws = nullptr;
    e = workspace_alloc(&ws, static_cast<size_t>(a.bytes + b.bytes), p.stream);
    if (e != cudaSuccess) return e;
    out->workspace = ws;
    char* next = static_cast<char*>(ws);
    for (Plan* pl : {&a, &b}) {
      if (!pl->pack) continue;
      pl->packed.ptr = next;
      next += pl->bytes;
      if ((e = run_pack(*pl, p.precision, p.stream)) != cudaSuccess) return e;
    }
    if (a.pack) out->a = a.packed;
    if (b.pack) out->b = b.packed;
  }
  if (l.swap) {
    const TmaOperand t = out->a;
    out->a = out->b;
    out->b = t;
    out->swapped = true;
  }
  return e;
}

cudaError_t release_operands(const GemmProblem& p, PreparedOperands* ops) {
  if (!ops->workspace) return cudaSuccess;
  const cudaError_t e = workspace_free(ops->workspace, p.stream);
  ops->workspace = nullptr;
  return e;
}

cudaError_t make_tensor_map(CUtensorMap* map, const TmaOperand& x, Precision prec, int box_rows) {
  const EncodeTiledFn encode = encode_fn();
  if (!encode) return cudaErrorNotSupported;
  const int64_t eb = input_bytes(prec);
  const CUtensorMapDataType type = prec == Precision::BF16   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : prec == Precision::FP16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                             : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const cuuint32_t k_box = static_cast<cuuint32_t>(128 / eb);  // one 128-byte swizzle row of K
  cuuint64_t dims[3], strides[2];
  cuuint32_t box[3], elem_strides[3] = {1, 1, 1};
  if (x.k_major) {
    dims[0] = x.k, dims[1] = x.mn;
    box[0] = k_box, box[1] = static_cast<cuuint32_t>(box_rows);
  } else {
    dims[0] = x.mn, dims[1] = x.k;
    box[0] = k_box, box[1] = k_box;  // 128 bytes of M/N by one stage of K
  }
  strides[0] = static_cast<cuuint64_t>(x.ld * eb);
  // One entry: the batch dimension has extent 1 (its stride only has to be valid).
  dims[2] = x.batched() ? x.batch : 1;
  strides[1] = x.batched() ? static_cast<cuuint64_t>(x.stride * eb) : strides[0] * dims[1];
  box[2] = 1;
  // L2 promotion: 128-byte fetches, one box row each. 256-byte ones pulled in bytes that another
  // CTA (the next strip of an MN-major weight) or a later stage reads: on the H200 the decode rows
  // ran 3.7% slower with them (wgmma/decode, wgmma/split_k), wgmma/small's and wgmma/03's tiles
  // level; rows that start 16 bytes off a line (3000 bf16) lost 4-8% with them on the H100
  // (docs/history.md, "L2 promotion").
  const CUresult r = encode(map, type, 3, const_cast<void*>(x.ptr), dims, strides, box,
                            elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t make_kernel_maps(const GemmProblem& p, const PreparedOperands& ops, int a_rows,
                             int b_rows, int edge_rows, bool store, KernelMaps* m) {
  cudaError_t e = make_tensor_map(&m->a, ops.a, p.precision, a_rows);
  if (e == cudaSuccess) e = make_tensor_map(&m->b, ops.b, p.precision, b_rows);
  if (e == cudaSuccess) e = make_tensor_map(&m->a_edge, ops.a, p.precision, edge_rows);
  if (e == cudaSuccess) e = make_tensor_map(&m->b_edge, ops.b, p.precision, edge_rows);
  if (e == cudaSuccess && store) e = make_store_map(&m->d, p);
  return e;
}

const char* too_many_tiles(const GemmProblem& p, int bm, int bn) {
  const int64_t tiles = ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn) * p.batch;
  return tiles > INT32_MAX / 2 ? "more than 2^30 tiles in the whole batch" : nullptr;
}

bool tma_storable(const GemmProblem& p, bool plain_f32) {
  const int64_t eb = dtype_bytes(p.d_type);
  // An fp32 D only with a bias or an activation: in wgmma/03 the plain fp32 store measured as
  // fast staged (4096^3) or faster (64 x 512^3), the epilogue with work faster here
  // (docs/history.md).
  const bool f32_plain = p.d_type == DType::F32 && p.bias == nullptr && p.act == Activation::None;
  return (plain_f32 || !f32_plain) && p.beta == 0.f && (p.n * eb) % 16 == 0 &&
         reinterpret_cast<uintptr_t>(p.D) % 16 == 0 && (p.ldd * eb) % 16 == 0 &&
         (p.batch <= 1 || (p.stride_d > 0 && (p.stride_d * eb) % 16 == 0)) &&
         p.n < (int64_t{1} << 32);
}

cudaError_t make_store_map(CUtensorMap* map, const GemmProblem& p) {
  const EncodeTiledFn encode = encode_fn();
  if (!encode) return cudaErrorNotSupported;
  const int64_t eb = dtype_bytes(p.d_type);
  const CUtensorMapDataType type = p.d_type == DType::BF16   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : p.d_type == DType::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                            : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  cuuint64_t dims[3] = {static_cast<cuuint64_t>(p.n), static_cast<cuuint64_t>(p.m),
                        static_cast<cuuint64_t>(p.batch > 1 ? p.batch : 1)};
  cuuint64_t strides[2] = {static_cast<cuuint64_t>(p.ldd * eb), 0};
  strides[1] = p.batch > 1 ? static_cast<cuuint64_t>(p.stride_d * eb) : strides[0] * dims[1];
  cuuint32_t box[3] = {static_cast<cuuint32_t>(128 / eb), 16, 1}, elem_strides[3] = {1, 1, 1};
  const CUresult r = encode(map, type, 3, p.D, dims, strides, box, elem_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace sm90
}  // namespace gemmlab
