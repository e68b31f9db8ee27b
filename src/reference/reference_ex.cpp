// The fp64 reference of the extended call (reference.h): the product through the DGEMM reference
// per batch entry, the epilogue (beta C in any c_type, bias, activation) on the host in double,
// and the element-wise check of a D of any dtype.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "reference/reference.h"

namespace gemmlab {

double activation_ref(Activation a, double x) {
  switch (a) {
    case Activation::None: return x;
    case Activation::ReLU: return x > 0.0 ? x : 0.0;
    case Activation::GeluTanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case Activation::GeluErf: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::SiLU: return x / (1.0 + std::exp(-x));
  }
  return std::nan("");
}

double activation_slope(Activation a) {
  return a == Activation::None || a == Activation::ReLU ? 1.0 : 1.13;
}

double dtype_unit_roundoff(DType t) {
  switch (t) {
    case DType::BF16: return std::ldexp(1.0, -8);
    case DType::F16: return std::ldexp(1.0, -11);
    default: return 0.0;
  }
}

double load_dtype(const void* base, DType t, int64_t i) {
  switch (t) {
    case DType::BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    case DType::F16: return __half2float(static_cast<const __half*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

Precision dtype_storage(DType t) {
  return t == DType::BF16 ? Precision::BF16 : t == DType::F16 ? Precision::FP16 : Precision::FP32;
}

void apply_epilogue_host(const GemmProblem& p, const double* product, const double* product_scale,
                         const void* c_host, const void* bias_host, int64_t b,
                         EpilogueReference* r) {
  const int64_t m = p.m, n = p.n;
  const double beta = p.beta;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const int64_t at = (b * m + i) * n + j;
      double x = product ? product[i * n + j] : 0.0;
      double s = product_scale ? product_scale[i * n + j] : 0.0;
      if (p.beta != 0.f) {
        const double c = load_dtype(c_host, p.c_type, i * p.ldc + j);
        x += beta * c;
        s += std::fabs(beta * c);
      }
      if (bias_host) {
        const double v = load_dtype(bias_host, p.bias_type, j);
        x += v;
        s += std::fabs(v);
      }
      r->pre[at] = x;
      r->value[at] = activation_ref(p.act, x);
      r->scale[at] = s;
    }
}

std::string reference_gemm_ex_gpu(const GemmProblem& p, EpilogueReference* r) {
  const int64_t batch = p.batch, m = p.m, n = p.n;
  r->batch = batch, r->m = m, r->n = n, r->act = p.act;
  const size_t total = static_cast<size_t>(batch * m * n);
  r->pre.assign(total, 0.0), r->value.assign(total, 0.0), r->scale.assign(total, 0.0);
  if (total == 0) return "";
  auto cuda = [](cudaError_t e, const char* what) {
    return e == cudaSuccess ? std::string() : std::string(what) + ": " + cudaGetErrorString(e);
  };
  std::string err;
  std::vector<char> bias;
  if (p.bias != nullptr) {
    bias.resize(static_cast<size_t>(n * dtype_bytes(p.bias_type)));
    if (!(err = cuda(cudaMemcpy(bias.data(), p.bias, bias.size(), cudaMemcpyDeviceToHost),
                     "copying the bias")).empty())
      return err;
  }
  const bool product = p.k > 0 && p.alpha != 0.f;
  std::vector<double> prod(product ? m * n : 0), prod_scale(product ? m * n : 0);
  std::vector<char> c;
  for (int64_t b = 0; b < batch; ++b) {
    GemmProblem q = p.entry(b);
    if (product) {
      q.beta = 0.f;  // the DGEMM reference reads C as fp32; C is added below in its own dtype
      if (!(err = reference_gemm_gpu_abs(q, prod.data(), prod_scale.data())).empty()) return err;
    }
    if (p.beta != 0.f) {
      c.resize(static_cast<size_t>(stored_elems(m, n, p.ldc) * dtype_bytes(p.c_type)));
      if (!(err = cuda(cudaMemcpy(c.data(), q.C, c.size(), cudaMemcpyDeviceToHost),
                       "copying C")).empty())
        return err;
    }
    apply_epilogue_host(p, product ? prod.data() : nullptr, product ? prod_scale.data() : nullptr,
                        c.data(), p.bias ? bias.data() : nullptr, b, r);
  }
  return "";
}

double epilogue_tolerance(Precision p, int64_t k) {
  return elementwise_tolerance(p, k) + std::ldexp(1.0, -23);
}

double epilogue_bound(DType d, Activation act, double tol, double pre, double value, double scale) {
  double e = activation_slope(act) * tol * scale;
  if (act != Activation::None && act != Activation::ReLU)
    e += std::ldexp(1.0, -20) * (std::fabs(pre) + std::fabs(value));
  const double floor = d == DType::F16 ? std::ldexp(1.0, -25) : 1e-30;
  return e + dtype_unit_roundoff(d) * (std::fabs(value) + e) + floor;
}

std::string EpilogueCheck::message() const {
  if (bad == 0) return "";
  char msg[320];
  std::snprintf(msg, sizeof msg,
                "%" PRId64 " elements past their bound; first: entry %" PRId64 " D(%" PRId64
                ", %" PRId64 ") = %.9g, fp64 %.9g, |diff| %.3g, bound %.3g",
                bad, entry, i, j, got, want, std::fabs(got - want), bound);
  return msg;
}

EpilogueCheck check_epilogue_result(const void* d_host, DType d_type, int64_t ldd, int64_t stride_d,
                                    const EpilogueReference& r, double tol) {
  EpilogueCheck c;
  for (int64_t b = 0; b < r.batch; ++b)
    for (int64_t i = 0; i < r.m; ++i)
      for (int64_t j = 0; j < r.n; ++j) {
        const int64_t at = (b * r.m + i) * r.n + j;
        const double got = load_dtype(d_host, d_type, b * stride_d + i * ldd + j);
        const double want = r.value[at];
        const double bound = epilogue_bound(d_type, r.act, tol, r.pre[at], want, r.scale[at]);
        if (std::isfinite(got) && std::fabs(got - want) <= bound) continue;
        if (c.bad++ == 0) c.entry = b, c.i = i, c.j = j, c.got = got, c.want = want, c.bound = bound;
      }
  return c;
}

}  // namespace gemmlab
