#include "gemm-bench/cublaslt.h"

#include <string>

#include <cuda_runtime_api.h>

namespace gemmbench {

using gemmlab::Activation;
using gemmlab::DType;
using gemmlab::GemmProblem;
using gemmlab::Op;
using gemmlab::Precision;

namespace {

cudaDataType_t input_type(Precision p) {
  switch (p) {
    case Precision::BF16: return CUDA_R_16BF;
    case Precision::FP16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}

cudaDataType_t dtype_type(DType t) {
  switch (t) {
    case DType::BF16: return CUDA_R_16BF;
    case DType::F16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}

cublasLtEpilogue_t epilogue_of(const GemmProblem& p) {
  const bool bias = p.bias != nullptr;
  switch (p.act) {
    case Activation::ReLU: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::GeluTanh: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

std::string lt_error(const char* what, cublasStatus_t s) {
  return std::string("error: ") + what + ": " + cublasGetStatusName(s);
}

}  // namespace

const char* lt_unsupported(const GemmProblem& p) {
  switch (p.act) {
    case Activation::GeluErf: return "cuBLASLt has no gelu_erf epilogue (its GELU is the tanh form)";
    case Activation::SiLU: return "cuBLASLt has no silu epilogue";
    default: return nullptr;
  }
}

LtGemm::~LtGemm() { release(); }

void LtGemm::release() {
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  a_ = b_ = d_ = nullptr;
  op_ = nullptr;
}

cublasStatus_t LtGemm::launch(const cublasLtMatmulAlgo_t& algo) const {
  // beta 0: C is not read; C's layout is D's (cuBLASLt requires C type == D type for 16-bit D).
  return cublasLtMatmul(handle_, op_, &alpha_, A_, a_, B_, b_, &beta_, D_, d_, D_, d_, &algo,
                        workspace_, workspace_bytes_, nullptr);
}

cublasStatus_t LtGemm::run() const { return launch(algo_); }

std::string LtGemm::plan(cublasLtHandle_t handle, const GemmProblem& p, void* workspace,
                         size_t workspace_bytes) {
  release();
  if (const char* why = lt_unsupported(p)) return std::string("skipped: ") + why;
  handle_ = handle, workspace_ = workspace, workspace_bytes_ = workspace_bytes;
  alpha_ = p.alpha, beta_ = p.beta;
  A_ = p.B, B_ = p.A, D_ = p.D;
  const cublasComputeType_t ct =
      p.precision == Precision::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasStatus_t s = cublasLtMatmulDescCreate(&op_, ct, CUDA_R_32F);
  if (s != CUBLAS_STATUS_SUCCESS) return lt_error("cublasLtMatmulDescCreate", s);
  const cublasOperation_t ta = p.op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t tb = p.op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasLtEpilogue_t epi = epilogue_of(p);
  auto set_op = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t bytes) {
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulDescSetAttribute(op_, attr, v, bytes);
  };
  set_op(CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  set_op(CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  set_op(CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
  if (p.bias) {
    const int32_t bias_type = dtype_type(p.bias_type);
    set_op(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p.bias, sizeof p.bias);
    set_op(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type);
    // Bias batch stride: 0 (the default), one bias for every entry as gemmlab's.
  }
  if (s != CUBLAS_STATUS_SUCCESS) return lt_error("cublasLtMatmulDescSetAttribute", s);

  // Column-major layouts. cuBLASLt's A (our B): n x k when op_b == N (stored k x n row-major),
  // else k x n; its B (our A): k x m when op_a == N, else m x k; D: n x m, ld ldd.
  const cudaDataType_t in = input_type(p.precision);
  const bool bn = p.op_b == Op::N, an = p.op_a == Op::N;
  auto layout = [&](cublasLtMatrixLayout_t* l, cudaDataType_t t, int64_t rows, int64_t cols,
                    int64_t ld, int64_t stride) {
    if (s != CUBLAS_STATUS_SUCCESS) return;
    s = cublasLtMatrixLayoutCreate(l, t, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld);
    if (s != CUBLAS_STATUS_SUCCESS || p.batch == 1) return;
    const int32_t count = static_cast<int32_t>(p.batch);
    s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                           sizeof stride);
  };
  layout(&a_, in, bn ? p.n : p.k, bn ? p.k : p.n, p.ldb, p.stride_b);
  layout(&b_, in, an ? p.k : p.m, an ? p.m : p.k, p.lda, p.stride_a);
  layout(&d_, dtype_type(p.d_type), p.n, p.m, p.ldd, p.stride_d);
  if (s != CUBLAS_STATUS_SUCCESS) return lt_error("cublasLtMatrixLayout", s);

  cublasLtMatmulPreference_t pref = nullptr;
  s = cublasLtMatmulPreferenceCreate(&pref);
  if (s != CUBLAS_STATUS_SUCCESS) return lt_error("cublasLtMatmulPreferenceCreate", s);
  const uint64_t ws = workspace_bytes;
  s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  constexpr int kWanted = 8;
  cublasLtMatmulHeuristicResult_t results[kWanted] = {};
  int found = 0;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, d_, d_, pref, kWanted, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  // The heuristic refuses combinations cuBLASLt does not implement (e.g. a bias whose dtype is
  // neither D's nor fp32) with NOT_SUPPORTED or INVALID_VALUE, depending on the version: no
  // cuBLAS figure for this row, not an error of the run.
  if (s != CUBLAS_STATUS_SUCCESS || found == 0)
    return std::string("skipped: cuBLASLt has no algorithm for this combination of dtypes, bias "
                       "type, epilogue and layout (heuristic: ") +
           cublasGetStatusName(s) + ", " + std::to_string(found) + " found)";
  std::string last = "skipped: none of cuBLASLt's heuristic algorithms ran";
  for (int i = 0; i < found; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
    const cublasStatus_t r = launch(results[i].algo);
    const cudaError_t e = r == CUBLAS_STATUS_SUCCESS ? cudaDeviceSynchronize() : cudaSuccess;
    if (r == CUBLAS_STATUS_SUCCESS && e == cudaSuccess) {
      algo_ = results[i].algo;
      return "";
    }
    if (e != cudaSuccess) return std::string("error: cublasLtMatmul: ") + cudaGetErrorString(e);
    last = "skipped: cublasLtMatmul failed with each heuristic algorithm (last: " +
           std::string(cublasGetStatusName(r)) + ")";
  }
  return last;
}

}  // namespace gemmbench
