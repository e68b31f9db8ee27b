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

// ---- the extended call: D_b = act(alpha op(A_b) op(B_b) + beta C_b + bias) ----

// Host-side epilogue math in double (the formulas of gemmlab.h's Activation).
double activation_ref(Activation a, double x);
// A bound on |act'(x)|: 1 for None and ReLU; 1.13 for GeluTanh, GeluErf (max 1.129 at x ~ 1.4)
// and SiLU (max 1.0998 at x ~ 2.4). An error e in act's input is at most this times e in its output.
double activation_slope(Activation a);
// Unit roundoff of rounding to nearest even into t: 0 for f32 (the kernel's own fp32 roundings
// are in elementwise_tolerance), 2^-8 for bf16, 2^-11 for f16.
double dtype_unit_roundoff(DType t);
// Element i of a host array of dtype t, as double.
double load_dtype(const void* base, DType t, int64_t i);
// The storage Precision whose fill (fill_random_*) gives dtype t's values (F32 -> FP32,
// BF16 -> BF16, F16 -> FP16).
Precision dtype_storage(DType t);

// The fp64 reference of every batch entry of an extended problem, dense: entry b's element (i, j)
// at (b * m + i) * n + j.
struct EpilogueReference {
  int64_t batch = 0, m = 0, n = 0;
  Activation act = Activation::None;
  std::vector<double> pre;    // alpha op(A) op(B) + beta C + bias, before the activation
  std::vector<double> value;  // act(pre): what D holds before its rounding
  std::vector<double> scale;  // |alpha| (|op(A)| |op(B)|) + |beta| |C| + |bias|, before act
};

// The epilogue on the host, one entry: from the product alpha op(A) op(B) (m x n dense, may be
// null where no product is formed: 0) and its scale (|alpha| |op(A)| |op(B)|, may be null: 0),
// host C (entry's, p.c_type, p.ldc; read only when p.beta != 0) and host bias (n values of
// p.bias_type, or null), fills pre, value and scale of entry `b` of r (sized by the caller).
void apply_epilogue_host(const GemmProblem& p, const double* product, const double* product_scale,
                         const void* c_host, const void* bias_host, int64_t b,
                         EpilogueReference* r);

// GPU reference of the extended problem p (device pointers; A, B, C, bias of any dtype the call
// takes, batch and strides): per entry, the product through reference_gemm_gpu_abs on
// p.entry(b) with beta = 0 (nothing when k == 0 or alpha == 0: A and B may be null), then beta C
// (C copied back in its c_type), bias and the activation on the host in double. Computes from
// C's contents now (call it before an in-place run). Returns an empty string or the error.
std::string reference_gemm_ex_gpu(const GemmProblem& p, EpilogueReference* r);

// The bound a D element of dtype d must meet against the reference (documented with
// check_epilogue_result):
//   |D - value| <= e + u_d (|value| + e) + floor_d,
//   e = slope(act) * tol * scale + (act != None, ReLU ? 2^-20 (|pre| + |value|) : 0)
// tol: elementwise_tolerance of the precision and depth plus 2^-23 (the bias's addition and
// slack); the 2^-20 term covers the activation's own fp32 evaluation (tanhf, erff, expf: a few
// ulps of |x|, e.g. 1 + tanh cancelling for large negative x); u_d: dtype_unit_roundoff(d);
// floor_d: 2^-25 for f16 (its subnormals' half spacing), else 1e-30.
double epilogue_bound(DType d, Activation act, double tol, double pre, double value, double scale);

// The first element past its bound, or none (entry < 0).
struct EpilogueCheck {
  int64_t bad = 0;  // elements past their bound (NaN and Inf always are)
  int64_t entry = -1, i = -1, j = -1;
  double got = 0, want = 0, bound = 0;
  std::string message() const;  // "" if bad == 0, else the count and the first bad element
};

// Compares D (host copy; d_type; entry b's element (i, j) at b * stride_d + i * ldd + j) with r
// element by element: |D - value| <= epilogue_bound(d_type, r.act, tol, pre, value, scale).
EpilogueCheck check_epilogue_result(const void* d_host, DType d_type, int64_t ldd, int64_t stride_d,
                                    const EpilogueReference& r, double tol);

// tol for check_epilogue_result: elementwise_tolerance(p, k) + 2^-23.
double epilogue_tolerance(Precision p, int64_t k);

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
