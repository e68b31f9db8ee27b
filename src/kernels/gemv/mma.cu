// gemv/mma: 16-bit problems with at most 32 rows of C (LLM decode), on tensor cores.
//
// Bottleneck attacked: gemv/small_m reads B at 36-45% of HBM bandwidth for bf16 (ncu, H100,
// 1 x 4096 x 4096): each 16-byte load of B costs eight bf16 -> fp32 conversions and eight FMAs
// per row of C, op(A) comes from shared memory as float, and a block issues its loads once and
// waits; with 128 registers only 16 warps fit on an SM. wgmma/03 computes 128-row tiles to keep
// M <= 8 of them.
// What changed: the FMAs go to mma.sync (m16n8k16, fp32 accumulation) with the operands swapped:
// 16 columns of C are the mma's rows and 8 rows of C (tokens) its columns, so every lane of the
// tensor core works on real data at M = 8. A sum over k may visit k in any order that A and B
// share, so each lane's 16-byte load of B (8 consecutive k of one row of B) is split into the
// k-pairs two mmas want, and the lane loads op(A)'s matching 8 (or 4) values itself, through L1:
// no shared memory, no conversion instruction, no FMA. With n-contiguous B (op(B) = B) a lane
// loads 8 columns at 4 depths and one byte permute per register pairs them along k.
// The 8 warps of a block cut its depth into equal ranges and are summed in warp order; blocks cut
// the depth further only where the column strips leave SMs idle (gemv/plan.h), summed in split
// order by the last block (split_k.cuh): deterministic, beta * C applied once, C never read when
// beta = 0.
// Seed: beyond the seeds (issue: decode shapes).
// Measured (H100, cuBLAS in the same run, docs/results/h100-decode.md): bf16 1 x 4096 x 4096 NT
// 95% of cuBLAS (wgmma/03 77%), 8 x 14336 x 4096 NN 106%; DRAM near 2.2 TB/s (docs/history.md).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/common/gemm_common.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/gemv/finish.cuh"
#include "kernels/gemv/plan.h"
#include "kernels/mma_sync/mma.cuh"
#include "runtime/device_props.h"
#include "runtime/workspace.h"

namespace gemmlab {
namespace {

using gemv_mma_plan::kThreads;
using gemv_mma_plan::kWarps;

struct Args {
  int k;                 // depth
  int block_k, warp_k;   // depth per block (split) and per warp
  int splits;            // blocks per column strip
  SplitWorkspace ws;
};

// op(A) as a strided 16-bit matrix: element (r, kk) at p[r * rs + kk * ks]; vec: 16-byte (k-
// contiguous kernel) or 8-byte (n-contiguous kernel) loads along k are aligned and contiguous.
struct OperandA {
  const uint16_t* p;
  int64_t rs, ks;
  bool vec;
};

// 16 bytes of B, streamed past L1 (each byte of B is read once).
__device__ __forceinline__ uint4 ld_stream16(const uint16_t* p) {
  uint4 r;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
  return r;
}

// kN 16-bit elements p[0], p[s], ... packed in pairs (element 2i in the low half of word i), of
// which the first `valid` are read and the rest are zero.
template <int kN>
__device__ __forceinline__ void load_elems(uint32_t (&w)[kN / 2], const uint16_t* p, int64_t s,
                                           int valid) {
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) {
    const uint32_t lo = 2 * i < valid ? p[2 * i * s] : 0u;
    const uint32_t hi = 2 * i + 1 < valid ? p[(2 * i + 1) * s] : 0u;
    w[i] = lo | hi << 16;
  }
}

// 8 consecutive elements row[kk..kk+7] of k-contiguous B, zero at and past `end` or when !ok;
// one streamed 16-byte load where whole and kVec.
template <bool kVec>
__device__ __forceinline__ uint4 load8(const uint16_t* row, int kk, int end, bool ok) {
  if (!ok || kk >= end) return make_uint4(0, 0, 0, 0);
  if (kVec && kk + 8 <= end) return ld_stream16(row + kk);
  uint32_t w[4];
  load_elems<8>(w, row + kk, 1, end - kk);
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Row r of op(A) at depths kk..kk+kN-1 (zero past `end` or past m).
template <int kN>
__device__ __forceinline__ void load_a(uint32_t (&w)[kN / 2], const OperandA& a, int r, int m,
                                       int kk, int end) {
  if (r >= m || kk >= end) {
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) w[i] = 0;
    return;
  }
  const uint16_t* p = a.p + r * a.rs + kk * a.ks;
  if (a.vec && kk + kN <= end) {
    if constexpr (kN == 8) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
      w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    } else {
      const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
      w[0] = v.x, w[1] = v.y;
    }
    return;
  }
  load_elems<kN>(w, p, a.ks, end - kk);
}

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// buf (rows x cols, shared) = the sum of the warps' v (the value each thread holds for element
// idx of buf), added in warp order.
template <int kN>
__device__ __forceinline__ void sum_warps(float* buf, const float (&v)[kN], const int (&idx)[kN]) {
  const int warp = threadIdx.x / 32;
  for (int w = 0; w < kWarps; ++w) {
    if (warp == w)
#pragma unroll
      for (int i = 0; i < kN; ++i) buf[idx[i]] = w == 0 ? v[i] : buf[idx[i]] + v[i];
    __syncthreads();
  }
}

// ---- The fragment math both load paths share ----
// B stored n x k (k contiguous). Lane (g, t) = (lane / 4, lane % 4) holds depths kk..kk+7 of rows
// g and g + 8 of the block's 16 (columns n0 + g, n0 + g + 8 of C: v0, v1) and of op(A)'s rows
// g, g + 8, ... (av); the first four depths feed one mma's k-slots 2t, 2t+1, 2t+8, 2t+9, the last
// four the next one's.
template <typename T, int kTok>
__device__ __forceinline__ void step_kcontig(float (&acc)[kTok][4], const uint4& v0, const uint4& v1,
                                             const uint32_t (&av)[kTok][4]) {
  const uint32_t lo[4] = {v0.x, v1.x, v0.y, v1.y}, hi[4] = {v0.z, v1.z, v0.w, v1.w};
#pragma unroll
  for (int j = 0; j < kTok; ++j) {
    const uint32_t alo[2] = {av[j][0], av[j][1]}, ahi[2] = {av[j][2], av[j][3]};
    MmaTraits<T>::mma(acc[j], lo, alo);
    MmaTraits<T>::mma(acc[j], hi, ahi);
  }
}

// B stored k x n (n contiguous). Lane (g, t) holds columns c..c+7 (c = n0 + 8g) of B at depths
// kk..kk+3 (kk = k0 + 4t; bv[r]: depth kk + r, word i = columns c + 2i, c + 2i + 1) and op(A)'s
// rows g, g + 8, ... at those depths (av). Byte permutes pair B along k: mma i's row g is column
// c + 2i, its row g + 8 column c + 2i + 1, its k-slots 2t, 2t+1, 2t+8, 2t+9 depths kk..kk+3.
template <typename T, int kTok>
__device__ __forceinline__ void step_ncontig(float (&acc)[4][kTok][4], const uint4 (&bv)[4],
                                             const uint32_t (&av)[kTok][2]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t w0 = word(bv[0], i), w1 = word(bv[1], i), w2 = word(bv[2], i), w3 = word(bv[3], i);
    const uint32_t fa[4] = {__byte_perm(w0, w1, 0x5410), __byte_perm(w0, w1, 0x7632),
                            __byte_perm(w2, w3, 0x5410), __byte_perm(w2, w3, 0x7632)};
#pragma unroll
    for (int j = 0; j < kTok; ++j) MmaTraits<T>::mma(acc[i][j], fa, av[j]);
  }
}

// ---- kU steps of a warp, their loads in flight together ----
// k-contiguous B: rows b0, b1 (columns g, g + 8 of the strip), depths [k0, k0 + kU*32) cut at k.
template <typename T, int kTok, int kU, bool kVec>
__device__ __forceinline__ void unit_kcontig(float (&acc)[kTok][4], const OperandA& A,
                                             const uint16_t* b0, const uint16_t* b1, bool ok0,
                                             bool ok1, int m, int k0, int k) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  uint4 bv[kU][2];
  uint32_t av[kU][kTok][4];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const int kk = k0 + u * 32 + 8 * t;
    bv[u][0] = load8<kVec>(b0, kk, k, ok0);
    bv[u][1] = load8<kVec>(b1, kk, k, ok1);
#pragma unroll
    for (int j = 0; j < kTok; ++j) load_a<8>(av[u][j], A, 8 * j + g, m, kk, k);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) step_kcontig<T, kTok>(acc, bv[u][0], bv[u][1], av[u]);
}

// n-contiguous B: the lane's columns c.. (valid of them in range), depths [k0, k0 + kU*16) cut at k.
template <typename T, int kTok, int kU, bool kVec>
__device__ __forceinline__ void unit_ncontig(float (&acc)[4][kTok][4], const OperandA& A,
                                             const uint16_t* B, int64_t ldb, int c, int valid,
                                             int m, int k0, int k) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  uint4 bv[kU][4];
  uint32_t av[kU][kTok][2];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const int kk = k0 + u * 16 + 4 * t;
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const uint16_t* row = B + static_cast<int64_t>(kk + r < k ? kk + r : 0) * ldb + (valid > 0 ? c : 0);
      if (kk + r >= k || valid <= 0) {
        bv[u][r] = make_uint4(0, 0, 0, 0);
      } else if (kVec && valid >= 8) {
        bv[u][r] = ld_stream16(row);
      } else {
        uint32_t x[4];
        load_elems<8>(x, row, 1, valid);
        bv[u][r] = make_uint4(x[0], x[1], x[2], x[3]);
      }
    }
#pragma unroll
    for (int j = 0; j < kTok; ++j) load_a<4>(av[u][j], A, 8 * j + g, m, kk, k);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) step_ncontig<T, kTok>(acc, bv[u], av[u]);
}

// The block's sums into buf ([token][column]) in warp order, then the epilogue, or this split's
// partial (the strip's last block sums them in split order).
template <int kTok, int kCols, int kN>
__device__ __forceinline__ void finish_block(float* buf, const float (&v)[kN], const int (&idx)[kN],
                                             const Epilogue& ep, const Args& a, int tile,
                                             int split) {
  sum_warps<kN>(buf, v, idx);
  gemv_finish<kThreads>(buf, 8 * kTok, kCols, ep, a.ws, a.splits, tile, split, tile * kCols,
                        a.splits);
}

// Block b is column strip b / splits, depth split b % splits; warp w covers depths
// [kb, ke) = split * block_k + w * warp_k + [0, warp_k), cut at k.
struct Range {
  int tile, split, kb, ke;
};
__device__ __forceinline__ Range range(const Args& a) {
  const int tile = blockIdx.x / a.splits, split = blockIdx.x % a.splits;
  const int kb = split * a.block_k + (threadIdx.x / 32) * a.warp_k;
  return {tile, split, kb, min(a.k, kb + a.warp_k)};
}

template <typename T, int kTok, bool kVec>
__global__ void __launch_bounds__(kThreads) gemv_mma_kcontig(OperandA A, const uint16_t* B,
                                                             int64_t ldb, Epilogue ep, Args a) {
  constexpr int kU = kTok <= 2 ? 4 : 2;
  __shared__ float buf[8 * kTok * 16];
  const Range w = range(a);
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4, n0 = w.tile * 16;
  const bool ok0 = n0 + g < ep.n, ok1 = n0 + g + 8 < ep.n;
  const uint16_t* b0 = B + static_cast<int64_t>(ok0 ? n0 + g : 0) * ldb;
  const uint16_t* b1 = B + static_cast<int64_t>(ok1 ? n0 + g + 8 : 0) * ldb;
  float acc[kTok][4] = {};
  for (int k0 = w.kb; k0 < w.ke; k0 += kU * 32)
    unit_kcontig<T, kTok, kU, kVec>(acc, A, b0, b1, ok0, ok1, ep.m, k0, w.ke);
  // acc[j] = (column g, tokens 8j + 2t, +1), (column g + 8, same tokens).
  float v[4 * kTok];
  int idx[4 * kTok];
#pragma unroll
  for (int j = 0; j < kTok; ++j)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      v[4 * j + q] = acc[j][q];
      idx[4 * j + q] = (8 * j + 2 * t + (q & 1)) * 16 + g + (q & 2) * 4;
    }
  finish_block<kTok, 16>(buf, v, idx, ep, a, w.tile, w.split);
}

template <typename T, int kTok, bool kVec>
__global__ void __launch_bounds__(kThreads) gemv_mma_ncontig(OperandA A, const uint16_t* B,
                                                             int64_t ldb, Epilogue ep, Args a) {
  constexpr int kU = kTok <= 2 ? 2 : 1;
  __shared__ float buf[8 * kTok * 64];
  const Range w = range(a);
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int c = w.tile * 64 + 8 * g, valid = ep.n - c;
  float acc[4][kTok][4] = {};
  for (int k0 = w.kb; k0 < w.ke; k0 += kU * 16)
    unit_ncontig<T, kTok, kU, kVec>(acc, A, B, ldb, c, valid, ep.m, k0, w.ke);
  // acc[i][j] = (column c + 2i, tokens 8j + 2t, +1), (column c + 2i + 1, same tokens).
  float v[16 * kTok];
  int idx[16 * kTok];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < kTok; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        v[(i * kTok + j) * 4 + q] = acc[i][j][q];
        idx[(i * kTok + j) * 4 + q] = (8 * j + 2 * t + (q & 1)) * 64 + 8 * g + 2 * i + (q >> 1);
      }
  finish_block<kTok, 64>(buf, v, idx, ep, a, w.tile, w.split);
}

using KernelFn = void (*)(OperandA, const uint16_t*, int64_t, Epilogue, Args);

// vec: B's rows allow 16-byte loads; else elements one by one.
template <typename T, int kTok>
KernelFn instance(bool k_contig, bool vec) {
  if (k_contig) return vec ? gemv_mma_kcontig<T, kTok, true> : gemv_mma_kcontig<T, kTok, false>;
  return vec ? gemv_mma_ncontig<T, kTok, true> : gemv_mma_ncontig<T, kTok, false>;
}

template <typename T>
KernelFn pick_typed(const gemv_mma_plan::Plan& pl, bool vec) {
  switch (pl.tok_tiles) {
    case 1: return instance<T, 1>(pl.k_contig, vec);
    case 2: return instance<T, 2>(pl.k_contig, vec);
    default: return instance<T, 4>(pl.k_contig, vec);
  }
}

KernelFn pick(const gemv_mma_plan::Plan& pl, const GemmProblem& p) {
  const bool vec = rows_aligned(p.B, p.ldb, 2, 16);
  return p.precision == Precision::BF16 ? pick_typed<__nv_bfloat16>(pl, vec)
                                        : pick_typed<__half>(pl, vec);
}

gemv_mma_plan::Plan plan_of(const GemmProblem& p, bool scratch) {
  return gemv_mma_plan::plan(static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k),
                             p.op_b == Op::T, current_device_desc(), scratch);
}

const char* unsupported(const GemmProblem& p) {
  if (p.m > gemv_mma_plan::kMaxM) return "needs m <= 32 (a GEMV-class kernel)";
  return nullptr;
}

LaunchConfig config(const GemmProblem& p) {
  const gemv_mma_plan::Plan pl = plan_of(p, true);
  return {reinterpret_cast<const void*>(pick(pl, p)), dim3(pl.blocks()), dim3(kThreads), 0};
}

cudaError_t launch(const GemmProblem& p) {
  gemv_mma_plan::Plan pl = plan_of(p, true);
  void* buf = nullptr;
  const size_t bytes = gemv_mma_plan::scratch_bytes(pl);
  if (bytes > 0 && workspace_alloc_split(&buf, bytes, p.stream) != cudaSuccess) {
    buf = nullptr;
    pl = plan_of(p, false);  // no scratch: one block per column strip over the whole depth
  }
  Args a{static_cast<int>(p.k), pl.block_k, pl.warp_k, pl.splits, {nullptr, nullptr, 0}};
  if (buf != nullptr) {
    a.ws.partials = static_cast<float*>(buf);
    a.ws.counters = reinterpret_cast<unsigned long long*>(
        a.ws.partials + static_cast<size_t>(pl.blocks()) * pl.rows() * pl.cols);
    a.ws.tag = next_split_tag();
  }
  const bool a_trans = p.op_a == Op::T;
  const OperandA A{static_cast<const uint16_t*>(p.A), a_trans ? 1 : p.lda, a_trans ? p.lda : 1,
                   !a_trans && rows_aligned(p.A, p.lda, 2, pl.k_contig ? 16 : 8)};
  const cudaError_t e =
      launch_kernel(pick(pl, p), dim3(pl.blocks()), kThreads, 0, p.stream, A,
                    static_cast<const uint16_t*>(p.B), static_cast<int64_t>(p.ldb), make_epilogue(p), a);
  const cudaError_t ef = workspace_free(buf, p.stream);
  return e != cudaSuccess ? e : ef;
}

// `auto` (H100, bf16, cuBLAS and wgmma/03 in the same run, docs/history.md: gemv/mma): ahead of
// wgmma/03 (200) for at most 16 rows of C with 16-byte rows of B and k <= 4096 where the strips
// cover the SMs without a depth split (M x 4096 x 4096 NT, M x 14336 x 4096 both layouts);
// wgmma/03's TMA loads read B faster at larger depths and where the depth must be split.
int auto_priority(const GemmProblem& p) {
  if (p.m > 16 || p.k > 4096 || !rows_aligned(p.B, p.ldb, 2, 16)) return 0;
  return plan_of(p, true).splits == 1 ? 250 : 0;
}

}  // namespace

extern const KernelDesc kGemvMma = {
    .name = "gemv/mma",
    .step = 2,
    .family = "gemv",
    .seed = "beyond the seeds",
    .summary = "m <= 32, 16-bit: B streamed once with 16-byte loads straight into mma.sync "
               "fragments (columns of C as the mma's rows), op(A) through L1, depth split over "
               "warps and blocks and summed in order",
    .dtypes = kBF16 | kFP16,
    .min_cc = 80,
    .auto_priority = 250,
    .unsupported = unsupported,
    .launch = launch,
    .config = config,
    .auto_priority_for = auto_priority,
    .features = kLargeOperands,
};

}  // namespace gemmlab
