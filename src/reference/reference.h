// fp64 references and test data, shared by the tests and gemm-bench (not part of the public API).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "registry/registry.h"

namespace gemmlab {

// (input_bytes(Precision): registry.h)

// The fp32 C of a plain problem (C in place, as gemm()'s float* C), for tests and gemm-bench.
inline float* c_f32(const GemmProblem& p) { return static_cast<float*>(const_cast<void*>(p.C)); }

// Element count a row-major stored matrix needs: (rows - 1) * ld + cols (0 if empty).
int64_t stored_elems(int64_t rows, int64_t cols, int64_t ld);
// Stored rows/cols of A and B for a problem (op(A) is m x k: A is m x k or k x m).
void stored_shape_a(const GemmProblem& p, int64_t* rows, int64_t* cols);
void stored_shape_b(const GemmProblem& p, int64_t* rows, int64_t* cols);

// CPU reference: out (m x n, dense, ld = n) = alpha * op(A) op(B) + beta * C in double precision.
// A, B and C are host pointers (A/B of the problem's storage type; tf32 inputs are used unrounded).
// beta == 0 does not read C. Uses up to `threads` threads (0 = hardware concurrency).
void reference_gemm_cpu(const GemmProblem& p, double* out, int threads = 0);

// GPU reference: the same with device pointers, through cuBLAS DGEMM on inputs upcast to fp64 on
// the device. out is a host array of m * n doubles. Returns an empty string or the error.
std::string reference_gemm_gpu(const GemmProblem& p, double* out);

// The same, and the error scale of every element: scale (host, m * n doubles) =
// |alpha| (|op(A)| |op(B)|)_ij + |beta| |C_ij|, what each element's rounding error is relative to
// (a second DGEMM on |A|, |B|, |C|). out or scale may be null.
std::string reference_gemm_gpu_abs(const GemmProblem& p, double* out, double* scale);

// ||out - ref||_F / ||ref||_F over an m x n result (out with leading dimension ldc, ref dense).
// +infinity if any element of out is not finite; if ||ref|| is 0, the absolute norm.
double relative_error(const float* out, int64_t ldc, const double* ref, int64_t m, int64_t n);

// Error bound per precision against the fp64 reference (relative Frobenius norm).
double error_bound(Precision p);

// Per-element error bound (relative to the scale above) of a kernel of precision p at depth k:
// the unit roundoff of the rounding the kernel applies to its inputs, twice (a product of two
// rounded inputs; tf32: 2^-10, truncation; fp32, bf16, fp16: 0, the reference reads the same
// stored values), plus fp32 accumulation over k terms, alpha and beta (k + 3 roundings of
// 2^-24, doubled for tensor cores that truncate while accumulating).
double elementwise_tolerance(Precision p, int64_t k);

// Elements of out (m x n, leading dimension ldc) whose |out - ref| exceeds tol * scale + 1e-30
// (ref, scale dense m x n); NaN and Inf always count. *first_bad (if not null): i * n + j of the
// first such element, or -1.
int64_t count_elementwise_failures(const float* out, int64_t ldc, const double* ref,
                                   const double* scale, int64_t m, int64_t n, double tol,
                                   int64_t* first_bad = nullptr);

// Device data: uniform values in [-1, 1) from a counter hash (no values are zero-initialized),
// stored as the precision's input type. Returns the CUDA error.
cudaError_t fill_random_device(void* ptr, int64_t count, Precision storage, uint64_t seed,
                               cudaStream_t stream = nullptr);
cudaError_t fill_random_device_f32(float* ptr, int64_t count, uint64_t seed,
                                   cudaStream_t stream = nullptr);
cudaError_t fill_nan_device(float* ptr, int64_t count, cudaStream_t stream = nullptr);
// The same values on the host (bit-identical to the device fill for the same seed).
void fill_random_host(void* ptr, int64_t count, Precision storage, uint64_t seed);

}  // namespace gemmlab
