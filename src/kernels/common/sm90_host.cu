// Host side of the sm_90a kernels (see sm90_host.h), and the packing kernels it launches.
#include "kernels/common/sm90_host.h"

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

// ---- stream-ordered workspace: a private memory pool that keeps its memory between calls, so a
// packing pass costs no allocation once the pool has grown ----
cudaError_t workspace_alloc(void** ptr, size_t bytes, cudaStream_t stream) {
  static std::mutex mu;
  static cudaMemPool_t pools[128] = {};
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  if (dev < 0 || dev >= 128) return cudaErrorInvalidDevice;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!pools[dev]) {
      cudaMemPoolProps props = {};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = dev;
      if ((e = cudaMemPoolCreate(&pools[dev], &props)) != cudaSuccess) return e;
      uint64_t keep = UINT64_MAX;
      cudaMemPoolSetAttribute(pools[dev], cudaMemPoolAttrReleaseThreshold, &keep);
    }
  }
  return cudaMallocFromPoolAsync(ptr, bytes, pools[dev], stream);
}

int64_t elem_bytes(Precision p) { return (p == Precision::BF16 || p == Precision::FP16) ? 2 : 4; }

// ---- packing kernels (any element of 2 or 4 bytes; bits are copied, not converted) ----

// dst rows (rows x cols, pitch ld_dst, a multiple of 8) <- src rows (pitch ld_src, any alignment).
// Each thread reads 8 consecutive elements with scalar loads (coalesced across the warp) and
// writes them with 16-byte stores.
template <typename T>
__global__ void pack_copy_kernel(const T* __restrict__ src, int64_t ld_src, T* __restrict__ dst,
                                 int64_t ld_dst, int rows, int cols) {
  const int chunks = (cols + 7) / 8;
  const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<int64_t>(rows) * chunks) return;
  const int r = static_cast<int>(idx / chunks);
  const int c0 = static_cast<int>(idx % chunks) * 8;
  const T* s = src + r * ld_src + c0;
  alignas(16) T v[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = (c0 + i < cols) ? s[i] : T{};
  uint4* d = reinterpret_cast<uint4*>(dst + r * ld_dst + c0);
  const uint4* w = reinterpret_cast<const uint4*>(v);
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(v) / 16); ++i) d[i] = w[i];
}

// dst (cols x rows, pitch ld_dst) <- transpose of src (rows x cols, pitch ld_src), through a
// 32 x 32 shared tile (padded by one element against bank conflicts) so reads and writes are
// both coalesced.
template <typename T>
__global__ void pack_transpose_kernel(const T* __restrict__ src, int64_t ld_src,
                                      T* __restrict__ dst, int64_t ld_dst, int rows, int cols,
                                      int col_tiles) {
  __shared__ T tile[32][33];
  const int r0 = (blockIdx.x / col_tiles) * 32, c0 = (blockIdx.x % col_tiles) * 32;
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * ld_src + c];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int c = c0 + i, r = r0 + threadIdx.x;  // dst row c, column r
    if (r < rows && c < cols) dst[c * ld_dst + r] = tile[threadIdx.x][i];
  }
}

template <typename T>
cudaError_t launch_pack(const void* src, int64_t ld_src, void* dst, int64_t ld_dst, int rows,
                        int cols, bool transpose, cudaStream_t s) {
  if (transpose) {
    const int col_tiles = (cols + 31) / 32;
    const int64_t blocks = static_cast<int64_t>((rows + 31) / 32) * col_tiles;
    if (blocks > INT_MAX) return cudaErrorInvalidValue;
    pack_transpose_kernel<T><<<static_cast<unsigned>(blocks), dim3(32, 8), 0, s>>>(
        static_cast<const T*>(src), ld_src, static_cast<T*>(dst), ld_dst, rows, cols, col_tiles);
  } else {
    const int64_t threads = static_cast<int64_t>(rows) * ((cols + 7) / 8);
    pack_copy_kernel<T><<<static_cast<unsigned>((threads + 255) / 256), 256, 0, s>>>(
        static_cast<const T*>(src), ld_src, static_cast<T*>(dst), ld_dst, rows, cols);
  }
  return cudaGetLastError();
}

struct Plan {
  TmaOperand in_place;   // the operand as stored
  bool pack = false;
  bool transpose = false;
  int64_t stored_rows = 0, stored_cols = 0;
  TmaOperand packed;     // ptr filled in once the workspace exists
  int64_t bytes = 0;
};

Plan plan_operand(const void* ptr, int64_t ld, bool k_major, int64_t mn, int64_t k, Precision prec) {
  Plan pl;
  const int64_t eb = elem_bytes(prec);
  pl.in_place = {ptr, ld, mn, k, k_major};
  pl.stored_rows = k_major ? mn : k;
  pl.stored_cols = k_major ? k : mn;
  const bool aligned = reinterpret_cast<uintptr_t>(ptr) % 16 == 0 && (ld * eb) % 16 == 0;
  const bool must_be_k_major = prec == Precision::TF32;
  if (aligned && (k_major || !must_be_k_major)) return pl;
  pl.pack = true;
  pl.transpose = !k_major && must_be_k_major;
  const bool out_k_major = k_major || pl.transpose;
  const int64_t out_rows = out_k_major ? mn : k, out_cols = out_k_major ? k : mn;
  const int64_t out_ld = (out_cols + 7) / 8 * 8;  // 16-byte rows for both 2- and 4-byte elements
  pl.packed = {nullptr, out_ld, mn, k, out_k_major};
  pl.bytes = (out_rows * out_ld * eb + 255) / 256 * 256;
  return pl;
}

cudaError_t run_pack(const Plan& pl, Precision prec, cudaStream_t s) {
  if (elem_bytes(prec) == 2)
    return launch_pack<uint16_t>(pl.in_place.ptr, pl.in_place.ld, const_cast<void*>(pl.packed.ptr),
                                 pl.packed.ld, static_cast<int>(pl.stored_rows),
                                 static_cast<int>(pl.stored_cols), pl.transpose, s);
  return launch_pack<uint32_t>(pl.in_place.ptr, pl.in_place.ld, const_cast<void*>(pl.packed.ptr),
                               pl.packed.ld, static_cast<int>(pl.stored_rows),
                               static_cast<int>(pl.stored_cols), pl.transpose, s);
}

Plan plan_a(const GemmProblem& p) {
  return plan_operand(p.A, p.lda, p.op_a == Op::N, p.m, p.k, p.precision);
}
Plan plan_b(const GemmProblem& p) {
  return plan_operand(p.B, p.ldb, p.op_b == Op::T, p.n, p.k, p.precision);
}

}  // namespace

bool needs_packing(const GemmProblem& p) { return plan_a(p).pack || plan_b(p).pack; }

cudaError_t prepare_operands(const GemmProblem& p, PreparedOperands* out) {
  Plan a = plan_a(p), b = plan_b(p);
  out->a = a.in_place;
  out->b = b.in_place;
  out->workspace = nullptr;
  if (!a.pack && !b.pack) return cudaSuccess;
  void* ws = nullptr;
  cudaError_t e = workspace_alloc(&ws, static_cast<size_t>(a.bytes + b.bytes), p.stream);
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
  return cudaSuccess;
}

cudaError_t release_operands(const GemmProblem& p, PreparedOperands* ops) {
  if (!ops->workspace) return cudaSuccess;
  const cudaError_t e = cudaFreeAsync(ops->workspace, p.stream);
  ops->workspace = nullptr;
  return e;
}

cudaError_t make_tensor_map(CUtensorMap* map, const TmaOperand& x, Precision prec, int box_rows) {
  const EncodeTiledFn encode = encode_fn();
  if (!encode) return cudaErrorNotSupported;
  const int64_t eb = elem_bytes(prec);
  const CUtensorMapDataType type = prec == Precision::BF16   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : prec == Precision::FP16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                             : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const cuuint32_t k_box = static_cast<cuuint32_t>(128 / eb);  // one 128-byte swizzle row of K
  cuuint64_t dims[2], strides[1] = {static_cast<cuuint64_t>(x.ld * eb)};
  cuuint32_t box[2], elem_strides[2] = {1, 1};
  if (x.k_major) {
    dims[0] = x.k, dims[1] = x.mn;
    box[0] = k_box, box[1] = static_cast<cuuint32_t>(box_rows);
  } else {
    dims[0] = x.mn, dims[1] = x.k;
    box[0] = 64, box[1] = k_box;
  }
  const CUresult r = encode(map, type, 2, const_cast<void*>(x.ptr), dims, strides, box,
                            elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

int num_sms() {
  static int cached[128] = {};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 128) return 1;
  if (!cached[dev]) {
    int n = 0;
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    cached[dev] = n > 0 ? n : 1;
  }
  return cached[dev];
}

}  // namespace sm90
}  // namespace gemmlab
