// gemv/small_m: problems with at most 16 rows of C (LLM decode, M = 1..16), FP32/TF32/BF16/FP16.
//
// Bottleneck attacked: a GEMM with a handful of rows is a GEMV against B: it reads every byte of
// B once and does 2M flops per element, so its floor is B's bytes over HBM bandwidth. A tiled
// GEMM kernel wastes that: wgmma/02 computes a 128-row tile to keep one row, and at M = 1 a
// 4096 x 4096 grid has 16-32 tiles for 132 SMs. Here every block streams a column tile of B over
// a depth slice with 16-byte loads, several loads in flight per thread, op(A)'s slice staged once
// in shared memory as float; 4-8 blocks per SM keep HBM busy.
// What changed from a tiled GEMM: no tiles of A, no tensor cores (at M <= 8 the FMA pipe is not
// the limit), the depth split across blocks (the planner, gemv/plan.h, picks the slices) with
// partials summed in slice order by the last block of each column tile (split_k.cuh):
// deterministic, beta * C applied once, never read when beta = 0.
// Two layouts of B: k-contiguous (op(B) = B^T, the weight layout of y = x W^T: a warp reads 4
// rows of B along k and reduces across lanes) and n-contiguous (op(B) = B: lanes read along a row
// of B, the 8 warps take interleaved rows and are summed in a fixed order). TF32 inputs are
// multiplied in full fp32 (more accurate than tf32, as fast: this kernel is memory bound).
// A skinny C (n <= 16 < m) runs swapped, C^T = op(B)^T op(A)^T: op(A) streamed, op(B)^T staged.
// Seed: beyond the seeds (issue: decode shapes).
// n-contiguous B runs one wave of blocks (the depth slices fitted to what the SMs hold) with 16
// rows of B in flight per warp.
// Measured (H100 SXM, docs/results/h100-decode.md, cuBLAS in the same run): fp32 NN M = 1 84-99%
// (2026-11-24 22:25 UTC); fp32 NT M = 1..8 at
// 4096 x 4096 0.9-5.5 TFLOP/s (103-118%), fp32 NN M = 2..4 1.5-2.8 (160-166%); bf16 NT M = 1
// 1.2 (77%): 16-bit decode is not yet at cuBLAS, and wgmma/03's one-row stream-k now beats this
// kernel there on Hopper (docs/history.md). Swapped: fp32 8192 x 1..8 x 8192 118-246% of cuBLAS
// (h100-suite-skinny.md).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/common/gemm_common.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/gemv/finish.cuh"
#include "kernels/gemv/plan.h"
#include "kernels/wgmma/strips.h"
#include "runtime/device_props.h"
#include "runtime/workspace.h"

namespace gemmlab {
namespace {

using gemv_plan::kThreads;
// k-contiguous B: passes (of 4 rows) whose loads fly together; fewer with 4-8 rows of C, whose
// accumulators take the registers
template <int kRows>
constexpr int kUnrollK = kRows >= 16 ? 1 : kRows >= 4 ? 2 : 4;
// n-contiguous B: rows per warp whose loads fly together; 16 where the accumulators leave the
// registers (kRows * V <= 32), else 8
template <int kRows, int V>
constexpr int kUnrollN = kRows * V <= 32 ? 16 : 8;

struct Args {
  int k, k_span, k_chunk, splits;  // depth, per block (split), per shared chunk; slices
  int cols;                        // columns of C per block
  float* parts;                    // split partials (splits > 1)
  unsigned long long* counters;
  unsigned long long tag;
  bool swapped;                    // computing C^T (gemv_finish): a skinny C, n <= 16
};

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

// V elements of B in their storage type: 16 bytes (one load) when V > 1, else one element.
template <typename T, int V>
struct Raw {
  static_assert(V == 1 || V * sizeof(T) == 16, "one 16-byte vector or one element");
  using Word = typename std::conditional<V == 1, T, uint4>::type;
  Word w;
  __device__ __forceinline__ void load(const T* p) {
    if constexpr (V == 1) w = p[0];
    else w = __ldg(reinterpret_cast<const uint4*>(p));
  }
  // The first `valid` elements (V == 1: all or none), the rest zero.
  __device__ __forceinline__ void load_partial(const T* p, int valid) {
    if constexpr (V == 1) {
      w = valid > 0 ? p[0] : T(0.f);
    } else {
      T e[V];
#pragma unroll
      for (int i = 0; i < V; ++i) e[i] = i < valid ? p[i] : T(0.f);
      w = *reinterpret_cast<const uint4*>(e);
    }
  }
  __device__ __forceinline__ void zero() {
    if constexpr (V == 1) w = T(0.f);
    else w = make_uint4(0, 0, 0, 0);
  }
  __device__ __forceinline__ float at(int i) const {
    if constexpr (V == 1) return to_float(w);
    else return to_float(reinterpret_cast<const T*>(&w)[i]);
  }
};

// op(A) rows [0, kRows) (zero past m) over depth [k0, k0 + len) into As[r * len + kk], as float.
// Each thread loads its elements (at most kRows * len / kThreads) before storing any, so the loads
// overlap instead of waiting one after another.
template <typename T, int kRows>
__device__ __forceinline__ void stage_a(float* As, const T* A, int lda, bool a_trans, int m, int k0,
                                        int len) {
  constexpr int kBatch = 8;
  for (int i0 = threadIdx.x; i0 < kRows * len; i0 += kBatch * kThreads) {
    float v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int i = i0 + b * kThreads;
      const int r = i / len, kk = k0 + i % len;
      v[b] = i < kRows * len && r < m
                 ? to_float(a_trans ? A[static_cast<int64_t>(kk) * lda + r]
                                    : A[static_cast<int64_t>(r) * lda + kk])
                 : 0.f;
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (i0 + b * kThreads < kRows * len) As[i0 + b * kThreads] = v[b];
  }
}

// V floats of row r of op(A) at depth kk of the block's slice (16-byte aligned when V % 4 == 0).
template <int V>
__device__ __forceinline__ void read_a(const float* As, int len, int r, int kk, float (&av)[V]) {
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int q = 0; q < V / 4; ++q) {
      const float4 x = reinterpret_cast<const float4*>(As + r * len + kk)[q];
      av[4 * q] = x.x, av[4 * q + 1] = x.y, av[4 * q + 2] = x.z, av[4 * q + 3] = x.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) av[i] = As[r * len + kk + i];
  }
}

// B stored n x k (k contiguous): warp w owns columns col0 + 4w .. +3; each lane reads V elements
// of each of those rows of B per pass, and the lanes are summed at the end.
template <typename T, int kRows, int V>
__global__ void __launch_bounds__(kThreads, gemv_plan::kBlocksPerSm) gemv_kcontig(const T* A, int lda, bool a_trans,
                                                         const T* B, int ldb, Epilogue ep, Args a) {
  extern __shared__ float4 smem4[];
  float* As = reinterpret_cast<float*>(smem4);
  __shared__ float buf[kRows * 32];
  const int tile = blockIdx.x / a.splits, split = blockIdx.x % a.splits;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int col0 = tile * 32, c0 = col0 + warp * 4;
  const int kb = split * a.k_span, ke = min(a.k, kb + a.k_span);
  float acc[kRows][4] = {};
  for (int k0 = kb; k0 < ke; k0 += a.k_chunk) {
    const int len = min(a.k_chunk, ke - k0);
    // kUnroll passes of 4 rows at a time: all their loads are issued before the first FMA, so each
    // lane has kUnroll * 4 loads (16 bytes each when V > 1) in flight. The first group's loads
    // are issued before op(A)'s slice is staged, so the two overlap.
    constexpr int kUnroll = kUnrollK<kRows>;
    Raw<T, V> b[kUnroll][4];
    const auto load_group = [&](int kk0) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int kk = kk0 + u * 32 * V;
          const int c = min(c0 + j, ep.n - 1);  // past the end: a valid row, result dropped
          if (kk < len) b[u][j].load(B + static_cast<int64_t>(c) * ldb + k0 + kk);
          else b[u][j].zero();
        }
    };
    load_group(lane * V);
    __syncthreads();  // the previous chunk's reads of As are done
    stage_a<T, kRows>(As, A, lda, a_trans, ep.m, k0, len);
    __syncthreads();
    for (int kk0 = lane * V; kk0 < len; kk0 += kUnroll * 32 * V) {
      if (kk0 != lane * V) load_group(kk0);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int kk = kk0 + u * 32 * V;
        if (kk >= len) break;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          float av[V];
          read_a<V>(As, len, r, kk, av);
#pragma unroll
          for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int i = 0; i < V; ++i) acc[r][j] = fmaf(av[i], b[u][j].at(i), acc[r][j]);
        }
      }
    }
  }
  // Sum over the lanes (a fixed butterfly: deterministic), then lane 0 writes the warp's 4 columns.
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int o = 16; o > 0; o /= 2) acc[r][j] += __shfl_xor_sync(0xffffffffu, acc[r][j], o);
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int j = 0; j < 4; ++j) buf[r * 32 + warp * 4 + j] = acc[r][j];
  __syncthreads();
  gemv_finish<kThreads>(buf, kRows, a.cols, ep, SplitWorkspace{a.parts, a.counters, a.tag},
                        a.splits, tile, split, col0, a.splits, a.swapped);
}

// B stored k x n (n contiguous): lane l owns columns col0 + V l .. + V - 1; warp w takes the rows
// k0 + w, k0 + w + 8, ...; the 8 warps' sums are added in warp order through shared memory.
template <typename T, int kRows, int V>
__global__ void __launch_bounds__(kThreads, gemv_plan::kBlocksPerSm) gemv_ncontig(const T* A, int lda, bool a_trans,
                                                         const T* B, int ldb, Epilogue ep, Args a) {
  extern __shared__ float4 smem4[];
  float* As = reinterpret_cast<float*>(smem4);
  __shared__ float buf[kRows * 32 * V];
  const int tile = blockIdx.x / a.splits, split = blockIdx.x % a.splits;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int col0 = tile * 32 * V, c = col0 + lane * V;
  const bool whole = c + V <= ep.n;  // all V columns in range: one vector load
  const int kb = split * a.k_span, ke = min(a.k, kb + a.k_span);
  float acc[kRows][V] = {};
  for (int k0 = kb; k0 < ke; k0 += a.k_chunk) {
    const int len = min(a.k_chunk, ke - k0);
    // kUnroll rows of B per warp at a time, all loaded before the first FMA; the first group's
    // loads overlap the staging of op(A)'s slice.
    constexpr int kUnroll = kUnrollN<kRows, V>;
    Raw<T, V> b[kUnroll];
    const auto load_group = [&](int kk0) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int kk = kk0 + u * 8;
        const T* row = B + static_cast<int64_t>(k0 + min(kk, len - 1)) * ldb + c;
        if (kk >= len) b[u].zero();
        else if (V > 1 && whole) b[u].load(row);
        else b[u].load_partial(row, ep.n - c);
      }
    };
    load_group(warp);
    __syncthreads();  // the previous chunk's reads of As are done
    stage_a<T, kRows>(As, A, lda, a_trans, ep.m, k0, len);
    __syncthreads();
    for (int kk0 = warp; kk0 < len; kk0 += kUnroll * 8) {
      if (kk0 != warp) load_group(kk0);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int kk = kk0 + u * 8;
        if (kk >= len) break;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const float av = As[r * len + kk];
#pragma unroll
          for (int i = 0; i < V; ++i) acc[r][i] = fmaf(av, b[u].at(i), acc[r][i]);
        }
      }
    }
  }
  for (int w = 0; w < 8; ++w) {  // buf = warp 0 + warp 1 + ... in that order
    if (warp == w)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
#pragma unroll
        for (int i = 0; i < V; ++i) {
          float* d = &buf[r * 32 * V + lane * V + i];
          *d = w == 0 ? acc[r][i] : *d + acc[r][i];
        }
    __syncthreads();
  }
  gemv_finish<kThreads>(buf, kRows, a.cols, ep, SplitWorkspace{a.parts, a.counters, a.tag},
                        a.splits, tile, split, col0, a.splits, a.swapped);
}

using KernelFn = void (*)(const void*, int, bool, const void*, int, Epilogue, Args);

template <typename T, int kRows, int V>
KernelFn instance(bool k_contig) {
  return k_contig ? reinterpret_cast<KernelFn>(gemv_kcontig<T, kRows, V>)
                  : reinterpret_cast<KernelFn>(gemv_ncontig<T, kRows, V>);
}

template <typename T>
KernelFn pick_typed(const gemv_plan::Plan& pl) {
  constexpr int kV = 16 / static_cast<int>(sizeof(T));
  const auto by_rows = [&](auto vec) -> KernelFn {
    constexpr int V = decltype(vec)::value;
    switch (pl.rows) {
      case 1: return instance<T, 1, V>(pl.k_contig);
      case 2: return instance<T, 2, V>(pl.k_contig);
      case 4: return instance<T, 4, V>(pl.k_contig);
      case 8: return instance<T, 8, V>(pl.k_contig);
      default: return instance<T, 16, V>(pl.k_contig);
    }
  };
  return pl.vec ? by_rows(std::integral_constant<int, kV>{})
                : by_rows(std::integral_constant<int, 1>{});
}

KernelFn pick(const gemv_plan::Plan& pl, Precision p) {
  if (p == Precision::BF16) return pick_typed<__nv_bfloat16>(pl);
  if (p == Precision::FP16) return pick_typed<__half>(pl);
  return pick_typed<float>(pl);
}

gemv_plan::Plan plan_of(const GemmProblem& p, bool scratch) {
  const int eb = input_bytes(p.precision);
  const bool k_contig = p.op_b == Op::T;
  return gemv_plan::plan(static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k),
                         k_contig, rows_aligned(p.B, p.ldb, eb, 16), eb, current_device_desc(),
                         scratch);
}

using gemv_plan::kernel_view;
using gemv_plan::runs_swapped;

const char* unsupported(const GemmProblem& p) {
  if (p.m > gemv_plan::kMaxM && p.n > gemv_plan::kMaxM)
    return "needs m <= 16 or n <= 16 (a GEMV-class kernel)";
  // Operand offsets are 64-bit; the leading dimensions travel as int.
  if (p.lda > INT32_MAX || p.ldb > INT32_MAX) return "needs lda, ldb < 2^31";
  return nullptr;
}

LaunchConfig config(const GemmProblem& problem) {
  const GemmProblem p = kernel_view(problem);
  const gemv_plan::Plan pl = plan_of(p, true);
  return {reinterpret_cast<const void*>(pick(pl, p.precision)), dim3(pl.blocks()),
          dim3(kThreads), static_cast<size_t>(pl.rows) * pl.k_slice * sizeof(float)};
}

cudaError_t launch(const GemmProblem& problem) {
  const GemmProblem p = kernel_view(problem);
  gemv_plan::Plan pl = plan_of(p, true);
  void* buf = nullptr;
  const size_t bytes = gemv_plan::scratch_bytes(pl);
  if (bytes > 0 && workspace_alloc_split(&buf, bytes, p.stream) != cudaSuccess) {
    buf = nullptr;
    pl = plan_of(p, false);  // no scratch: one block per column tile over the whole depth
  }
  Args a{static_cast<int>(p.k), pl.splits > 1 ? pl.k_slice : static_cast<int>(p.k), pl.k_slice,
         pl.splits, pl.cols, nullptr, nullptr, 0, runs_swapped(problem)};
  if (buf != nullptr) {
    a.parts = static_cast<float*>(buf);
    a.counters = reinterpret_cast<unsigned long long*>(
        a.parts + static_cast<size_t>(pl.blocks()) * pl.rows * pl.cols);
    a.tag = next_split_tag();
  }
  const KernelFn f = pick(pl, p.precision);
  const size_t smem = static_cast<size_t>(pl.rows) * pl.k_slice * sizeof(float);
  const cudaError_t e = launch_kernel(f, dim3(pl.blocks()), kThreads, smem, p.stream, p.A,
                                      static_cast<int>(p.lda), p.op_a == Op::T, p.B,
                                      static_cast<int>(p.ldb), make_epilogue(p), a);  // p: C's extents swapped
  const cudaError_t ef = workspace_free(buf, p.stream);
  return e != cudaSuccess ? e : ef;
}

// `auto`: first choice where it measured ahead of the other kernels (H100, decode shapes, cuBLAS
// in the same run: docs/results/h100-decode.md): fp32 / tf32 up to m = 8 (simt/sgemm: 0.3-7.1
// TFLOP/s there, this kernel 0.8-7.5); 16-bit only for m <= 2 with the weight layout (op(B) = B^T:
// bf16 1x4096x4096 1.17 vs wgmma/03's 0.96, 2x4096x4096 2.12 vs 1.90); elsewhere wgmma/03's
// stream-k over 128-row tiles was as fast or faster (bf16 8x8192x8192: 16.2 vs 7.2).
// 16-bit: only m <= 2 with the weight layout, and below wgmma/03 (200), which measured faster
// there with its one-row stream-k (docs/history.md); above it where wgmma/03 falls back to 60
// (shallow k) and on GPUs without wgmma. tf32 below wgmma/decode (260), which measured faster on
// Hopper (docs/history.md, wgmma/small).
// fp32 swapped (a skinny C) only up to 8 columns: from 16 on, simt/sgemm's thin tiles measured
// faster (docs/history.md, "simt/sgemm"). So also fp32 rows: up to 8 (kAutoMaxRowsFp32); at 16,
// simt/sgemm's 32 x 256 tiles ran faster on every decode shape, and 1.6x faster on a weight the
// table has no class for (16 x 8192 x 28672 NT: docs/history.md, gemv/small_m).
constexpr int kAutoMaxRowsFp32 = 8;
// tf32 swapped only up to 3 columns: from 4 on, wgmma/small measured faster in every layout
// (H100, % of cuBLAS, gemv/small_m against wgmma/small: 8192 x 16 x 768 NN 0.43 / 0.97, TT 0.40
// / 1.03; 8192 x 8 x 4096 TN 0.90 / 1.03; 16384 x 4 x 4096 NT 0.98 / 1.14), at 3 slower (5000 x 3 x
// 5000 TN 1.16 / 0.81, TT 1.25 / 0.96; docs/history.md, cliffs).
constexpr int kAutoMaxSwappedTf32 = 3;
// And none for tf32 on Hopper where wgmma/split_k's slices take a deep K over a small C
// (split_k_takes): there the weight is too small to spread its stream over the SMs (H100, % of
// cuBLAS, gemv/small_m against wgmma/split_k: 16 x 512 x 16384 NN 41 / 118, TN 40 / 92; 4 x 128 x
// 8192 NN 38 / 140; 1 x 512 x 32768 NN 68 / 113); nor for tf32 rows of A^T (TN, TT) from 3 on,
// which wgmma/small runs with the few rows transposed while packed (16 x 4096 x 4096 TN 64 / 93,
// TT 48 / 96; 8 x 8192 x 8192 TT 79 / 99; at 2 rows level: docs/history.md, gemv/small_m).
int auto_priority(const GemmProblem& p) {
  if (p.precision == Precision::FP32)
    return p.m <= kAutoMaxRowsFp32 || (runs_swapped(p) && p.n <= 8) ? 300 : 0;
  if (p.precision == Precision::TF32) {
    if (device_cc() >= 90 && (split_k_takes(p) || (p.op_a == Op::T && p.m > 2 && !runs_swapped(p))))
      return 0;
    return p.m <= gemv_plan::kMaxM || (runs_swapped(p) && p.n <= kAutoMaxSwappedTf32) ? 250 : 0;
  }
  return p.m <= 2 && p.op_b == Op::T ? 150 : 0;
}

}  // namespace

extern const KernelDesc kGemvSmallM = {
    .name = "gemv/small_m",
    .step = 1,
    .family = "gemv",
    .seed = "beyond the seeds",
    .summary = "m <= 16 (or n <= 16, swapped): B streamed once with 16-byte loads (k- or "
               "n-contiguous), op(A) staged in shared memory, depth split over blocks and summed "
               "in order by the last one",
    .dtypes = kFP32 | kTF32 | kBF16 | kFP16,
    .min_cc = 80,
    .auto_priority = 300,
    .unsupported = unsupported,
    .launch = launch,
    .config = config,
    .auto_priority_for = auto_priority,
    .features = kLargeOperands,
};

}  // namespace gemmlab
