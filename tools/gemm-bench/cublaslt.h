// cuBLASLt for the extended call's problems (gemm-bench's yardstick there): cublasLtMatmul with
// the epilogue that matches (bias, ReLU, GELU), D in the out dtype, strided batches.
//
// gemmlab is row-major, cuBLASLt column-major: row-major D = op(A) op(B) is column-major
// D^T = op(B)^T op(A)^T, so cuBLASLt's A is our B and its B our A (m and n swapped). Our bias,
// one value per column of D, is then one per row of cuBLASLt's D: what CUBLASLT_EPILOGUE_BIAS adds.
#pragma once

#include <string>
#include <vector>

#include <cublasLt.h>

#include "registry/registry.h"

namespace gemmbench {

// nullptr if cuBLASLt has an epilogue for p's activation, else why not (gelu_erf, silu).
const char* lt_unsupported(const gemmlab::GemmProblem& p);

class LtGemm {
 public:
  LtGemm() = default;
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Describes p (D = p.D, C = D with beta 0, p.bias, p.act, p.batch and strides) and asks the
  // heuristic for up to 8 algorithms; keeps the first that runs (each tried with one launch,
  // synchronized). Returns "" or the row's status ("skipped: ..." where cuBLASLt has no
  // algorithm for the combination, "error: ...").
  std::string plan(cublasLtHandle_t handle, const gemmlab::GemmProblem& p, void* workspace,
                   size_t workspace_bytes);
  // One call with the planned algorithm.
  cublasStatus_t run() const;

 private:
  void release();
  cublasStatus_t launch(const cublasLtMatmulAlgo_t& algo) const;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  const void* A_ = nullptr;  // cuBLASLt's A: our B
  const void* B_ = nullptr;  // cuBLASLt's B: our A
  void* D_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  float alpha_ = 1.f, beta_ = 0.f;
};

}  // namespace gemmbench
