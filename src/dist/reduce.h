// The last step of gemm_reduce_scatter: the rank's rows of the P partials summed in rank order,
// then the epilogue of gemm(GemmDesc).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "gemmlab/gemmlab.h"

namespace gemmlab {
namespace dist {

struct SumEpilogue {
  const void* parts;     // P blocks of rows x n (dense, ld n), block s = rank s's partial
  DType part_type;
  int ranks;
  int64_t rows, n;
  float alpha, beta;
  const void* C;         // read only when beta != 0
  int64_t ldc;
  DType c_type;
  void* D;
  int64_t ldd;
  DType d_type;
  const void* bias;      // n values or null
  DType bias_type;
  Activation act;
};

// D = act(alpha * (parts_0 + parts_1 + ... + parts_{P-1}) + beta * C + bias), the sum in fp32 in
// this order, then the epilogue in gemm()'s order (alpha * sum + beta * C + bias, act, rounding to
// D's dtype). Enqueued on `stream`.
cudaError_t sum_epilogue(const SumEpilogue& e, cudaStream_t stream);

}  // namespace dist
}  // namespace gemmlab
