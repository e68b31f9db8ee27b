// gemm-bench's measuring pieces (measure.h): CUDA-event timing, the cuBLAS reference calls, a
// kernel's resources and occupancy.
#include "gemm-bench/measure.h"

#include <algorithm>
#include <vector>

#include "gemm-bench/gpu_delay.h"
#include "gemm-bench/report.h"
#include "runtime/device_props.h"

namespace gemmbench {

using gemmlab::GemmProblem;
using gemmlab::KernelDesc;
using gemmlab::Op;
using gemmlab::Precision;

namespace {

struct Events {
  cudaEvent_t start, stop;
  Events() {
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

}  // namespace

// Times `launch` with CUDA events: warm-up, then reps timed one by one (the L2 flushed before
// each unless disabled), median/min/max. Slow rows get fewer reps (never fewer than 3). A 200 us
// spin kernel ahead of the start event keeps the GPU busy while the host enqueues the launch, so
// the events time the GPU work of the call, not host overhead or jitter (gpu_delay.cu).
constexpr double kSpinMicroseconds = 200;

std::string time_it(const std::function<cudaError_t()>& launch, const Options& opt,
                    const L2Flush& l2, Row* row) {
  for (int i = 0; i < opt.warmup; ++i)
    if (cudaError_t e = launch(); e != cudaSuccess) return cudaGetErrorString(e);
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return cudaGetErrorString(e);
  Events ev;
  std::vector<float> ms;
  int reps = opt.reps;
  for (int r = 0; r < reps; ++r) {
    if (opt.flush_l2 && l2.buf) enqueue_l2_flush(l2, r);
    if (cudaError_t e = enqueue_gpu_delay(kSpinMicroseconds); e != cudaSuccess)
      return cudaGetErrorString(e);
    cudaEventRecord(ev.start);
    if (cudaError_t e = launch(); e != cudaSuccess) return cudaGetErrorString(e);
    cudaEventRecord(ev.stop);
    if (cudaError_t e = cudaEventSynchronize(ev.stop); e != cudaSuccess) return cudaGetErrorString(e);
    float t = 0;
    cudaEventElapsedTime(&t, ev.start, ev.stop);
    ms.push_back(t);
    if (r == 0 && t * 1e-3 * reps > opt.max_seconds_per_row)
      reps = std::max(3, static_cast<int>(opt.max_seconds_per_row / (t * 1e-3)));
  }
  row->ms_runs = ms;
  std::sort(ms.begin(), ms.end());
  row->reps = static_cast<int>(ms.size());
  row->ms_min = ms.front();
  row->ms_max = ms.back();
  row->ms_median = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  row->tflops = row_flops(*row) / (row->ms_median * 1e-3) / 1e12;
  return "";
}

cudaDataType_t cuda_input_type(Precision p) {
  switch (p) {
    case Precision::BF16: return CUDA_R_16BF;
    case Precision::FP16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}

// cuBLAS for the same problem. Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
// Compute type made explicit: fp32 -> 32F (no TF32), tf32 -> 32F_FAST_TF32, bf16/fp16 -> 32F.
// The output is p.D (fp32; the plain problem of gemm-bench, beta 0).
cublasStatus_t cublas_gemm(cublasHandle_t h, const GemmProblem& p) {
  const cublasComputeType_t ct =
      p.precision == Precision::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const cudaDataType_t t = cuda_input_type(p.precision);
  return cublasGemmEx(h, p.op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T,
                      p.op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T, static_cast<int>(p.n),
                      static_cast<int>(p.m), static_cast<int>(p.k), &p.alpha, p.B, t,
                      static_cast<int>(p.ldb), p.A, t, static_cast<int>(p.lda), &p.beta, p.D,
                      CUDA_R_32F, static_cast<int>(p.ldd), ct, CUBLAS_GEMM_DEFAULT);
}

// The same over a strided batch (plain batches: the yardstick, cublasGemmStridedBatchedEx).
cublasStatus_t cublas_gemm_batched(cublasHandle_t h, const GemmProblem& p) {
  const cublasComputeType_t ct =
      p.precision == Precision::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const cudaDataType_t t = cuda_input_type(p.precision);
  return cublasGemmStridedBatchedEx(
      h, p.op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T, p.op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T,
      static_cast<int>(p.n), static_cast<int>(p.m), static_cast<int>(p.k), &p.alpha, p.B, t,
      static_cast<int>(p.ldb), p.stride_b, p.A, t, static_cast<int>(p.lda), p.stride_a, &p.beta, p.D,
      CUDA_R_32F, static_cast<int>(p.ldd), p.stride_d, static_cast<int>(p.batch), ct,
      CUBLAS_GEMM_DEFAULT);
}

void fill_resources(const KernelDesc& k, const GemmProblem& p, const DeviceInfo& dev, Row* row) {
  if (!k.config) return;
  const gemmlab::LaunchConfig c = k.config(p);
  if (!c.kernel) return;
  cudaFuncAttributes a{};
  if (cudaFuncGetAttributes(&a, c.kernel) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  row->threads_per_block = static_cast<int>(c.block.x * c.block.y * c.block.z);
  row->registers = a.numRegs;
  row->smem_static = static_cast<long long>(a.sharedSizeBytes);
  row->smem_dynamic = static_cast<long long>(c.smem_bytes);
  row->local_bytes = static_cast<long long>(a.localSizeBytes);
  int blocks = 0;
  // The occupancy query sees the function's shared-memory attributes: opt in to the launch's
  // dynamic shared memory first, as the launch does (above 48 KB the query says 0 otherwise).
  if (gemmlab::prepare_function(c.kernel, static_cast<int>(c.smem_bytes)) == cudaSuccess &&
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, c.kernel, row->threads_per_block,
                                                    c.smem_bytes) == cudaSuccess) {
    row->blocks_per_sm = blocks;
    row->occupancy = dev.max_threads_per_sm
                         ? static_cast<double>(blocks) * row->threads_per_block / dev.max_threads_per_sm
                         : 0;
  } else {
    cudaGetLastError();
  }
}

}  // namespace gemmbench
