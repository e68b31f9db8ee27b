#include "gemm-bench/check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/reference.h"

namespace gemmbench {

using gemmlab::Activation;
using gemmlab::DType;

double unit_roundoff(DType t) {
  switch (t) {
    case DType::BF16: return std::ldexp(1.0, -8);
    case DType::F16: return std::ldexp(1.0, -11);
    default: return std::ldexp(1.0, -24);
  }
}

double round_to_dtype(double x, DType t) {
  if (t == DType::F32) return static_cast<double>(static_cast<float>(x));
  if (!std::isfinite(x) || x == 0.0) return x;
  // precision (bits, implicit one included), frexp exponent of the smallest normal, largest finite
  const int bits = t == DType::BF16 ? 8 : 11;
  const int emin = t == DType::BF16 ? -125 : -13;
  const double max = t == DType::BF16 ? std::ldexp(255.0, 120) : 65504.0;
  int e = 0;
  std::frexp(x, &e);
  const double ulp = std::ldexp(1.0, std::max(e, emin) - bits);
  const double r = std::nearbyint(x / ulp) * ulp;  // default rounding mode: to nearest even
  if (std::fabs(r) > max) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return r;
}



void apply_epilogue_ref(const double* product, int64_t rows, int64_t n, const double* bias,
                        Activation act, DType out, double* expected) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double x = product[i * n + j];
      if (bias) x += bias[j];
      x = gemmlab::activation_ref(act, x);
      expected[i * n + j] = out == DType::F32 ? x : round_to_dtype(x, out);
    }
}

void ErrorSum::add(const void* out, DType t, const double* expected, int64_t count) {
  if (!finite) return;
  for (int64_t i = 0; i < count; ++i) {
    const double o = load_dtype(out, t, i);
    if (!std::isfinite(o)) {
      finite = false;
      return;
    }
    const double d = o - expected[i];
    diff += d * d;
    norm += expected[i] * expected[i];
  }
}

double ErrorSum::relative() const {
  if (!finite) return std::numeric_limits<double>::infinity();
  return norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

double check_bound(gemmlab::Precision p, DType out, Activation act, bool cublaslt) {
  double bound = gemmlab::error_bound(p);
  if (out != DType::F32) bound += 0.25 * unit_roundoff(out);
  if (cublaslt && act != Activation::None && act != Activation::ReLU) bound += 1e-3;
  return bound;
}

std::vector<CheckRegion> check_regions(int64_t batch, int64_t m, int64_t n) {
  std::vector<CheckRegion> out;
  if (batch <= 0 || m <= 0 || n <= 0) return out;
  std::vector<int64_t> entries;
  if (static_cast<double>(batch) * m * n <= static_cast<double>(int64_t{1} << 27)) {
    for (int64_t b = 0; b < batch; ++b) entries.push_back(b);
  } else {
    entries = {0, (batch - 1) / 2, batch - 1};
    entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  }
  const bool whole = static_cast<double>(m) * n <= static_cast<double>(int64_t{1} << 28);
  for (int64_t b : entries) {
    if (whole) {
      out.push_back({b, 0, m});
      continue;
    }
    const int64_t block = std::min<int64_t>(64, m);
    int64_t last_end = 0;
    for (int64_t start : {int64_t{0}, (m - block) / 2, m - block}) {
      start = std::max(start, last_end);  // no row twice
      const int64_t rows = std::min(block, m - start);
      if (rows <= 0) continue;
      out.push_back({b, start, rows});
      last_end = start + rows;
    }
  }
  return out;
}

}  // namespace gemmbench
