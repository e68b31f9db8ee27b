// fp64 GPU reference: op(A), op(B) and C upcast to double on the device, then cuBLAS DGEMM.
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so DGEMM gets B first.
#include <cmath>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "reference/reference.h"

namespace gemmlab {
namespace {

template <typename T>
__device__ inline double to_double(T v) { return static_cast<double>(static_cast<float>(v)); }

// Upcast a stored rows x cols matrix (leading dimension ld) into a dense double one (ld = cols),
// or its absolute values.
template <typename T>
__global__ void upcast_kernel(const T* src, int64_t ld, int64_t rows, int64_t cols, bool absolute,
                              double* dst) {
  const int64_t total = rows * cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double v = to_double(src[(i / cols) * ld + (i % cols)]);
    dst[i] = absolute ? fabs(v) : v;
  }
}

cudaError_t upcast(const void* src, int64_t ld, int64_t rows, int64_t cols, Precision p,
                   double* dst, bool absolute = false) {
  if (rows * cols == 0) return cudaSuccess;
  const int blocks = static_cast<int>(std::min<int64_t>((rows * cols + 255) / 256, 8192));
  switch (p) {
    case Precision::BF16:
      upcast_kernel<<<blocks, 256>>>(static_cast<const __nv_bfloat16*>(src), ld, rows, cols,
                                     absolute, dst);
      break;
    case Precision::FP16:
      upcast_kernel<<<blocks, 256>>>(static_cast<const __half*>(src), ld, rows, cols, absolute, dst);
      break;
    default:
      upcast_kernel<<<blocks, 256>>>(static_cast<const float*>(src), ld, rows, cols, absolute, dst);
  }
  return cudaGetLastError();
}

struct DeviceBuffer {
  double* ptr = nullptr;
  ~DeviceBuffer() { cudaFree(ptr); }
};

// alpha op(A) op(B) + beta C in fp64 into out (host); with `absolute`, |alpha| |op(A)| |op(B)| +
// |beta| |C| instead.
std::string dgemm_reference(const GemmProblem& p, bool absolute, double* out) {
  if (p.m == 0 || p.n == 0) return "";
  int64_t ar, ac, br, bc;
  stored_shape_a(p, &ar, &ac);
  stored_shape_b(p, &br, &bc);
  DeviceBuffer a, b, c;
  auto check = [](cudaError_t e) { return e == cudaSuccess ? std::string() : std::string(cudaGetErrorString(e)); };
  std::string err;
  if (!(err = check(cudaMalloc(&a.ptr, sizeof(double) * std::max<int64_t>(1, ar * ac)))).empty()) return err;
  if (!(err = check(cudaMalloc(&b.ptr, sizeof(double) * std::max<int64_t>(1, br * bc)))).empty()) return err;
  if (!(err = check(cudaMalloc(&c.ptr, sizeof(double) * p.m * p.n))).empty()) return err;
  if (!(err = check(upcast(p.A, p.lda, ar, ac, p.precision, a.ptr, absolute))).empty()) return err;
  if (!(err = check(upcast(p.B, p.ldb, br, bc, p.precision, b.ptr, absolute))).empty()) return err;
  if (p.beta != 0.f) {
    if (!(err = check(upcast(p.C, p.ldc, p.m, p.n, Precision::FP32, c.ptr, absolute))).empty()) return err;
  }
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return "cublasCreate failed";
  const double alpha = absolute ? std::fabs(p.alpha) : p.alpha;
  const double beta = absolute ? std::fabs(p.beta) : p.beta;
  // Column-major view: C^T (n x m, ld n) = op(B)^T (n x k) * op(A)^T (k x m).
  // Stored row-major B (br x bc) is column-major B^T; op(B)^T needs the op as-is.
  const cublasOperation_t opb = p.op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t opa = p.op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  cublasStatus_t s = cublasDgemm(h, opb, opa, static_cast<int>(p.n), static_cast<int>(p.m),
                                 static_cast<int>(p.k), &alpha, b.ptr, static_cast<int>(std::max<int64_t>(1, bc)),
                                 a.ptr, static_cast<int>(std::max<int64_t>(1, ac)), &beta, c.ptr,
                                 static_cast<int>(p.n));
  cublasDestroy(h);
  if (s != CUBLAS_STATUS_SUCCESS) return "cublasDgemm failed: " + std::to_string(static_cast<int>(s));
  if (!(err = check(cudaMemcpy(out, c.ptr, sizeof(double) * p.m * p.n, cudaMemcpyDeviceToHost))).empty()) return err;
  return "";
}

}  // namespace

std::string reference_gemm_gpu(const GemmProblem& p, double* out) {
  return dgemm_reference(p, false, out);
}

std::string reference_gemm_gpu_abs(const GemmProblem& p, double* out, double* scale) {
  std::string err = out ? dgemm_reference(p, false, out) : "";
  if (err.empty() && scale) err = dgemm_reference(p, true, scale);
  return err;
}

}  // namespace gemmlab
