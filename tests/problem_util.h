// One GEMM problem on the device, for the GPU tests: A, B and C with padded rows and optionally
// misaligned base pointers, seeded random data, C poisoned with NaN (beta == 0) or random; its
// fp64 reference with a per-element error scale; and the checks of a result (element-wise bound,
// NaN/Inf, C's padding columns untouched, bit-for-bit comparison).
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "gemmlab/gemmlab.h"
#include "gpu_util.h"
#include "reference/reference.h"

namespace gemmlab::test {

struct ProblemSpec {
  Precision precision = Precision::FP32;
  int64_t m = 1, n = 1, k = 1;
  Op op_a = Op::N, op_b = Op::N;
  int64_t pad_a = 0, pad_b = 0, pad_c = 0;  // extra elements per stored row of A, B, C
  int64_t offset = 0;  // A, B and C start this many elements past a 256-byte boundary
  float alpha = 1.f, beta = 0.f;  // beta == 0: C is poisoned with NaN before the call
  uint64_t seed = 1;
};

inline const char* op_name(Op a, Op b) {
  return a == Op::N ? (b == Op::N ? "NN" : "NT") : (b == Op::N ? "TN" : "TT");
}

inline std::string describe(const ProblemSpec& s) {
  std::ostringstream o;
  o << precision_name(s.precision) << " " << s.m << "x" << s.n << "x" << s.k << " "
    << op_name(s.op_a, s.op_b) << " pad a/b/c " << s.pad_a << "/" << s.pad_b << "/" << s.pad_c
    << " offset " << s.offset << " alpha " << s.alpha << " beta " << s.beta << " seed " << s.seed;
  return o.str();
}

// Tight NN (or given ops) problem with alpha = 1, beta = 0.
inline ProblemSpec spec(Precision p, int64_t m, int64_t n, int64_t k, Op a = Op::N,
                        Op b = Op::N) {
  ProblemSpec s;
  s.precision = p, s.m = m, s.n = n, s.k = k, s.op_a = a, s.op_b = b;
  return s;
}

struct Reference {
  std::vector<double> value, scale;  // dense m x n; scale: see reference_gemm_gpu_abs
  std::string error;                 // empty on success
};

class DeviceProblem {
 public:
  explicit DeviceProblem(const ProblemSpec& s) : s_(s) {
    GemmProblem p = base();
    int64_t ar, ac, br, bc;
    stored_shape_a(p, &ar, &ac);
    stored_shape_b(p, &br, &bc);
    lda_ = ac + s.pad_a, ldb_ = bc + s.pad_b, ldc_ = s.n + s.pad_c;
    const int64_t eb = input_bytes(s.precision);
    a_elems_ = stored_elems(ar, ac, lda_), b_elems_ = stored_elems(br, bc, ldb_);
    a_ = std::make_unique<DeviceMem>((a_elems_ + s.offset) * eb);
    b_ = std::make_unique<DeviceMem>((b_elems_ + s.offset) * eb);
    c_ = std::make_unique<DeviceMem>((c_elems() + s.offset) * sizeof(float));
    if (!a_->ptr || !b_->ptr || !c_->ptr) {
      error_ = "cudaMalloc failed for " + describe(s);
      return;
    }
    init_data();
  }

  const std::string& error() const { return error_; }  // empty once set up
  const ProblemSpec& spec() const { return s_; }
  int64_t lda() const { return lda_; }
  int64_t ldb() const { return ldb_; }
  int64_t ldc() const { return ldc_; }
  int64_t c_elems() const { return s_.m * (s_.n + s_.pad_c); }  // whole rows of C
  float* c() const { return c_->as<float>() + s_.offset; }
  const std::vector<float>& c_before() const { return c_before_; }

  // The problem with its device pointers; `c` (same layout) in place of C if given.
  GemmProblem problem(float* c = nullptr, cudaStream_t stream = nullptr) const {
    GemmProblem p = base();
    const int64_t eb = input_bytes(s_.precision);
    p.A = a_->as<char>() + s_.offset * eb, p.lda = lda_;
    p.B = b_->as<char>() + s_.offset * eb, p.ldb = ldb_;
    p.C = c ? c : this->c(), p.ldc = ldc_;
    p.stream = stream;
    return p;
  }

  // C (or `c`) back to its contents before any call, on `stream`.
  cudaError_t reset_c(float* c = nullptr, cudaStream_t stream = nullptr) const {
    return cudaMemcpyAsync(c ? c : this->c(), c_before_.data(), c_elems() * sizeof(float),
                           cudaMemcpyHostToDevice, stream);
  }

  Status run(const char* kernel, float* c = nullptr, cudaStream_t stream = nullptr) const {
    const GemmProblem p = problem(c, stream);
    return gemm(p.op_a, p.op_b, p.m, p.n, p.k, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, c_f32(p),
                p.ldc, p.precision, kernel, stream);
  }

  // Whole rows of C (or `c`), after synchronizing the device.
  std::vector<float> read_c(float* c = nullptr) const {
    std::vector<float> out(c_elems());
    if (cudaDeviceSynchronize() != cudaSuccess ||
        cudaMemcpy(out.data(), c ? c : this->c(), out.size() * sizeof(float),
                   cudaMemcpyDeviceToHost) != cudaSuccess)
      out.clear();
    return out;
  }

  // The fp64 reference of the problem on C's initial contents (whatever C holds now).
  Reference reference() const {
    Reference r;
    r.value.resize(s_.m * s_.n);
    r.scale.resize(s_.m * s_.n);
    DeviceMem c0(c_elems() * sizeof(float));
    if (!c0.ptr || reset_c(c0.as<float>()) != cudaSuccess) {
      r.error = "cannot stage C for the reference";
      return r;
    }
    r.error = reference_gemm_gpu_abs(problem(c0.as<float>()), r.value.data(), r.scale.data());
    return r;
  }

 private:
  GemmProblem base() const {
    GemmProblem p;
    p.precision = s_.precision, p.m = s_.m, p.n = s_.n, p.k = s_.k;
    p.op_a = s_.op_a, p.op_b = s_.op_b, p.alpha = s_.alpha, p.beta = s_.beta;
    return p;
  }

  void init_data() {
    const GemmProblem p = problem();
    cudaError_t e = fill_random_device(const_cast<void*>(p.A), a_elems_, s_.precision, s_.seed * 3 + 1);
    if (e == cudaSuccess)
      e = fill_random_device(const_cast<void*>(p.B), b_elems_, s_.precision, s_.seed * 3 + 2);
    if (e == cudaSuccess)
      e = s_.beta == 0.f ? fill_nan_device(c(), c_elems())
                         : fill_random_device_f32(c(), c_elems(), s_.seed * 3 + 3);
    c_before_.resize(c_elems());
    if (e == cudaSuccess)
      e = cudaMemcpy(c_before_.data(), c(), c_elems() * sizeof(float), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) error_ = std::string("filling the operands: ") + cudaGetErrorString(e);
  }

  ProblemSpec s_;
  int64_t lda_ = 0, ldb_ = 0, ldc_ = 0, a_elems_ = 0, b_elems_ = 0;
  std::unique_ptr<DeviceMem> a_, b_, c_;
  std::vector<float> c_before_;
  std::string error_;
};

// Elements whose bits differ between two results.
inline int64_t bits_differ(const std::vector<float>& x, const std::vector<float>& y) {
  if (x.size() != y.size()) return -1;
  int64_t n = 0;
  for (size_t i = 0; i < x.size(); ++i) n += std::memcmp(&x[i], &y[i], sizeof(float)) != 0;
  return n;
}

// Empty if `out` (whole rows of C after the call) is right: every element within
// elementwise_tolerance of the reference (NaN and Inf never are), and C's padding columns as
// before the call. Else what is wrong, with the first bad element.
inline std::string check_result(const DeviceProblem& d, const Reference& r,
                                const std::vector<float>& out) {
  const ProblemSpec& s = d.spec();
  if (!r.error.empty()) return "reference failed: " + r.error;
  if (out.size() != static_cast<size_t>(d.c_elems())) return "could not read C back";
  const double tol = elementwise_tolerance(s.precision, s.k);
  int64_t first = -1;
  const int64_t bad = count_elementwise_failures(out.data(), d.ldc(), r.value.data(),
                                                 r.scale.data(), s.m, s.n, tol, &first);
  char msg[256];
  if (bad > 0) {
    const int64_t i = first / s.n, j = first % s.n;
    std::snprintf(msg, sizeof msg,
                  "%" PRId64 " of %" PRId64 " elements off; first C(%" PRId64 ", %" PRId64
                  ") = %.9g, fp64 %.9g, bound %.3g",
                  bad, s.m * s.n, i, j, out[i * d.ldc() + j], r.value[first],
                  tol * r.scale[first] + 1e-30);
    return msg;
  }
  int64_t touched = 0;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = s.n; j < d.ldc(); ++j)
      touched += std::memcmp(&out[i * d.ldc() + j], &d.c_before()[i * d.ldc() + j], 4) != 0;
  if (touched > 0) {
    std::snprintf(msg, sizeof msg, "%" PRId64 " padding elements of C changed", touched);
    return msg;
  }
  return "";
}

// Resets C, runs `kernel`, and checks the result against r: empty on success, else why not.
inline std::string run_and_check(const DeviceProblem& d, const Reference& r, const char* kernel) {
  if (cudaError_t e = d.reset_c(); e != cudaSuccess) return cudaGetErrorString(e);
  if (Status st = d.run(kernel); st != Status::Success)
    return std::string(kernel) + " returned " + status_name(st) + ": " + last_error_message();
  const std::string why = check_result(d, r, d.read_c());
  return why.empty() ? "" : std::string(kernel) + ": " + why;
}

}  // namespace gemmlab::test
