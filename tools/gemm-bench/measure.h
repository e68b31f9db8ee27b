// gemm-bench's measuring pieces, shared by the runs (runner.cpp): CUDA-event timing of one
// launch, the cuBLAS calls every row is compared with, and a kernel's resources and occupancy.
#pragma once

#include <functional>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "gemm-bench/bandwidth.h"
#include "gemm-bench/device_info.h"
#include "gemm-bench/options.h"
#include "gemm-bench/report.h"
#include "registry/registry.h"

namespace gemmbench {

// Times `launch` with CUDA events: warm-up, then reps timed one by one (the L2 flushed before
// each unless disabled), median/min/max into row (and its TFLOP/s). Empty on success, else the
// error.
std::string time_it(const std::function<cudaError_t()>& launch, const Options& opt,
                    const L2Flush& l2, Row* row);

cudaDataType_t cuda_input_type(gemmlab::Precision p);
// cuBLAS (cublasGemmEx / cublasGemmStridedBatchedEx) for a plain problem of the bench.
cublasStatus_t cublas_gemm(cublasHandle_t h, const gemmlab::GemmProblem& p);
cublasStatus_t cublas_gemm_batched(cublasHandle_t h, const gemmlab::GemmProblem& p);

// Registers, shared memory, spills, blocks per SM and occupancy of k's launch of p into row.
void fill_resources(const gemmlab::KernelDesc& k, const gemmlab::GemmProblem& p,
                    const DeviceInfo& dev, Row* row);

}  // namespace gemmbench
