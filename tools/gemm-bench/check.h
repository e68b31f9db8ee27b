// gemm-bench's own fp64 check of the extended call (gemmlab::GemmDesc): the fp64 product from the
// shared reference (reference/reference.h) with the epilogue applied on the host - bias, activation
// and the rounding to D's dtype - compared over the parts of the result it samples.
//
// The dtype loads and activations are the tests' (reference/reference.h); what is the bench's own
// is the sampling of large results and the norm-style bound of its table.
#pragma once

#include <cstdint>
#include <vector>

#include "gemmlab/gemmlab.h"
#include "reference/reference.h"  // load_dtype, activation_ref

namespace gemmbench {

// Unit roundoff of a D dtype: 2^-24 f32, 2^-8 bf16, 2^-11 f16.
double unit_roundoff(gemmlab::DType t);

// x rounded to nearest-even in dtype t: subnormals and overflow to infinity as the GPU's
// __float2bfloat16_rn / __float2half_rn do (f32: the nearest float).
double round_to_dtype(double x, gemmlab::DType t);

// (Element i of a stored array of dtype t: reference.h's load_dtype; act(x) in fp64:
// reference.h's activation_ref.)

// expected (rows x n, dense) = act(product + bias[j]) rounded to `out` (f32: not rounded, so the
// plain call's check is the one gemm-bench always had). bias: n values or null.
void apply_epilogue_ref(const double* product, int64_t rows, int64_t n, const double* bias,
                        gemmlab::Activation act, gemmlab::DType out, double* expected);

// ||out - expected||_F / ||expected||_F accumulated over several regions, as relative_error
// (reference.h): +infinity once any element of out is not finite; the absolute norm where
// ||expected|| is 0.
struct ErrorSum {
  double diff = 0, norm = 0;
  bool finite = true;
  void add(const void* out, gemmlab::DType t, const double* expected, int64_t count);
  double relative() const;
};

// The error bound of a row: the precision's bound (reference.h's error_bound) plus a quarter of
// D's unit roundoff for 16-bit D (the reference is rounded like D: a correct kernel differs by one
// unit in the last place only where its fp32 value and the exact one straddle a rounding midpoint;
// truncating instead of rounding would show as ~u). cuBLASLt rows with a transcendental
// activation get 1e-3 more: its GELU may use a fast tanh (it is the yardstick, not under test).
double check_bound(gemmlab::Precision p, gemmlab::DType out, gemmlab::Activation act, bool cublaslt);

// The part of a batch x (m x n) result that is checked: `rows` rows from `row0` of batch entry
// `entry`.
struct CheckRegion {
  int64_t entry, row0, rows;
};
// Every entry when batch * m * n <= 2^27 elements, else the first, middle and last; of each entry
// every row when m * n <= 2^28, else three blocks of 64 rows (first, middle, last: past 2^31
// elements in a D that large).
std::vector<CheckRegion> check_regions(int64_t batch, int64_t m, int64_t n);

}  // namespace gemmbench
