// One problem of the extended call (gemm(GemmDesc)) on the device, for the GPU tests: A, B, C, D
// and the bias with padded rows, batch strides (dense, broadcast or explicit, odd ones too) and
// optionally misaligned base pointers; seeded random data, C and D poisoned with NaN bytes where
// they must not be read; the fp64 reference (reference_gemm_ex_gpu) and the checks of a result:
// every entry's elements within epilogue_bound, every element of D's buffer outside the entries
// (padding columns, gaps between entries) as before the call.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "gemmlab/gemmlab.h"
#include "gpu_util.h"
#include "problem_util.h"  // op_name
#include "reference/reference.h"

namespace gemmlab::test {

struct ExSpec {
  Precision precision = Precision::FP32;
  int64_t m = 1, n = 1, k = 1;
  Op op_a = Op::N, op_b = Op::N;
  float alpha = 1.f, beta = 0.f;  // beta == 0: C is NaN bytes (it must not be read)
  DType c_type = DType::F32, d_type = DType::F32;
  bool bias = false;
  DType bias_type = DType::F32;
  Activation act = Activation::None;
  int64_t batch = 1;
  int64_t pad_a = 0, pad_b = 0, pad_c = 0;  // extra elements per stored row
  int64_t ldd = 0;                           // 0: n + pad_d
  int64_t pad_d = 0;
  // Batch strides in elements; -1: entries one after the other (the entry's extent), 0: broadcast.
  int64_t stride_a = -1, stride_b = -1, stride_c = -1, stride_d = -1;
  int64_t stride_extra = 0;  // added to every dense (-1) stride: gaps (odd ones) between entries
  int64_t offset = 0;     // every buffer starts this many elements past a 256-byte boundary
  bool in_place = false;  // D == C (c_type, ldc and stride_c are D's)
  bool null_c = false;    // beta == 0: pass C = nullptr
  bool null_ab = false;   // k == 0 or alpha == 0: pass A = B = nullptr
  uint64_t seed = 1;
};

inline std::string describe(const ExSpec& s) {
  std::ostringstream o;
  o << precision_name(s.precision) << " " << s.m << "x" << s.n << "x" << s.k << " "
    << op_name(s.op_a, s.op_b) << " alpha " << s.alpha << " beta " << s.beta << " c "
    << dtype_name(s.c_type) << " d " << dtype_name(s.d_type) << " bias "
    << (s.bias ? dtype_name(s.bias_type) : "none") << " act " << activation_name(s.act)
    << " batch " << s.batch << " strides " << s.stride_a << "/" << s.stride_b << "/" << s.stride_c
    << "/" << s.stride_d << " pad a/b/c/d " << s.pad_a << "/" << s.pad_b << "/" << s.pad_c << "/"
    << s.pad_d << " ldd " << s.ldd << " offset " << s.offset << (s.in_place ? " in-place" : "")
    << " extra stride " << s.stride_extra << (s.null_c ? " C null" : "")
    << (s.null_ab ? " A, B null" : "") << " seed " << s.seed;
  return o.str();
}

class ExProblem {
 public:
  explicit ExProblem(const ExSpec& s) : s_(s) {
    GemmProblem p;
    p.op_a = s.op_a, p.op_b = s.op_b, p.m = s.m, p.n = s.n, p.k = s.k;
    int64_t ar, ac, br, bc;
    stored_shape_a(p, &ar, &ac);
    stored_shape_b(p, &br, &bc);
    // At least 1 (BLAS rule), also for k == 0.
    lda_ = std::max<int64_t>(ac, 1) + s.pad_a, ldb_ = std::max<int64_t>(bc, 1) + s.pad_b;
    ldd_ = s.ldd > 0 ? s.ldd : s.n + s.pad_d;
    ldc_ = s.in_place ? ldd_ : s.n + s.pad_c;
    c_type_ = s.in_place ? s.d_type : s.c_type;
    const int64_t ea = stored_elems(ar, ac, lda_), eb = stored_elems(br, bc, ldb_);
    // Whole rows of C and D, so their padding columns are in the buffer.
    const int64_t ec = s.m * ldc_, ed = s.m * ldd_;
    const int64_t x = s.stride_extra;
    sa_ = s.stride_a < 0 ? ea + x : s.stride_a, sb_ = s.stride_b < 0 ? eb + x : s.stride_b;
    sd_ = s.stride_d < 0 ? ed + x : s.stride_d;
    sc_ = s.in_place ? sd_ : (s.stride_c < 0 ? ec + x : s.stride_c);
    const int64_t last = s.batch > 0 ? s.batch - 1 : 0;
    a_elems_ = last * sa_ + ea, b_elems_ = last * sb_ + eb;
    c_elems_ = last * sc_ + ec, d_elems_ = last * sd_ + ed;
    const int64_t in = input_bytes(s.precision);
    a_ = std::make_unique<DeviceMem>((a_elems_ + s.offset) * in);
    b_ = std::make_unique<DeviceMem>((b_elems_ + s.offset) * in);
    d_ = std::make_unique<DeviceMem>((d_elems_ + s.offset) * dtype_bytes(s.d_type));
    if (!s.in_place) c_ = std::make_unique<DeviceMem>((c_elems_ + s.offset) * dtype_bytes(c_type_));
    bias_ = std::make_unique<DeviceMem>((s.n + s.offset) * dtype_bytes(s.bias_type));
    if (!a_->ptr || !b_->ptr || !d_->ptr || (c_ && !c_->ptr) || !bias_->ptr) {
      error_ = "cudaMalloc failed for " + describe(s);
      return;
    }
    init_data();
  }

  const std::string& error() const { return error_; }
  const ExSpec& spec() const { return s_; }
  int64_t ldd() const { return ldd_; }
  int64_t stride_d() const { return sd_; }
  int64_t d_elems() const { return d_elems_; }
  size_t d_bytes() const { return static_cast<size_t>(d_elems_ * dtype_bytes(s_.d_type)); }
  void* d() const { return d_->as<char>() + s_.offset * dtype_bytes(s_.d_type); }
  void* c() const {
    return s_.in_place ? d() : static_cast<void*>(c_->as<char>() + s_.offset * dtype_bytes(c_type_));
  }

  GemmDesc desc() const {
    GemmDesc g;
    const int64_t in = input_bytes(s_.precision);
    g.op_a = s_.op_a, g.op_b = s_.op_b, g.m = s_.m, g.n = s_.n, g.k = s_.k;
    g.alpha = s_.alpha, g.beta = s_.beta;
    g.A = s_.null_ab ? nullptr : a_->as<char>() + s_.offset * in, g.lda = lda_;
    g.B = s_.null_ab ? nullptr : b_->as<char>() + s_.offset * in, g.ldb = ldb_;
    g.C = s_.null_c ? nullptr : c(), g.ldc = ldc_, g.c_type = c_type_;
    g.D = d(), g.ldd = ldd_, g.d_type = s_.d_type;
    g.bias = s_.bias ? bias_->as<char>() + s_.offset * dtype_bytes(s_.bias_type) : nullptr;
    g.bias_type = s_.bias_type, g.act = s_.act, g.precision = s_.precision;
    g.batch = s_.batch;
    g.stride_a = sa_, g.stride_b = sb_, g.stride_c = sc_, g.stride_d = sd_;
    return g;
  }

  // The same problem as the API hands it to a kernel (for kernel_cannot_run and the reference).
  GemmProblem problem(cudaStream_t stream = nullptr) const {
    const GemmDesc g = desc();
    GemmProblem p;
    p.op_a = g.op_a, p.op_b = g.op_b, p.m = g.m, p.n = g.n, p.k = g.k;
    p.alpha = g.alpha, p.beta = g.beta, p.A = g.A, p.lda = g.lda, p.B = g.B, p.ldb = g.ldb;
    p.C = g.C, p.ldc = g.ldc, p.c_type = g.c_type, p.D = g.D, p.ldd = g.ldd, p.d_type = g.d_type;
    p.bias = g.bias, p.bias_type = g.bias_type, p.act = g.act, p.precision = g.precision;
    p.stream = stream, p.batch = g.batch;
    p.stride_a = g.stride_a, p.stride_b = g.stride_b, p.stride_c = g.stride_c, p.stride_d = g.stride_d;
    return p;
  }

  // A and B all NaN bytes (a run then leaves NaN in the shared memory its kernel streamed).
  cudaError_t poison_inputs() const {
    const cudaError_t e = cudaMemset(a_->ptr, 0xff, a_->bytes);
    return e == cudaSuccess ? cudaMemset(b_->ptr, 0xff, b_->bytes) : e;
  }

  // D's buffer (and C's, in place) back to its contents before any call.
  cudaError_t reset(cudaStream_t stream = nullptr) const {
    return cudaMemcpyAsync(d(), d_before_.data(), d_bytes(), cudaMemcpyHostToDevice, stream);
  }

  // Resets D and runs the call on `kernel`.
  Status run(const char* kernel, cudaStream_t stream = nullptr) const {
    if (reset(stream) != cudaSuccess) return Status::CudaError;
    return gemm(desc(), kernel, stream);
  }

  // D's whole buffer after synchronizing the device (empty on an error).
  std::vector<char> read_d() const {
    std::vector<char> out(d_bytes());
    if (cudaDeviceSynchronize() != cudaSuccess ||
        cudaMemcpy(out.data(), d(), out.size(), cudaMemcpyDeviceToHost) != cudaSuccess)
      out.clear();
    return out;
  }

  // The fp64 reference on C's initial contents (D is reset first: in place, D is C).
  std::string reference(EpilogueReference* r) const {
    if (reset() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) return "cannot reset D";
    return reference_gemm_ex_gpu(problem(), r);
  }

  // Empty if `out` (D's buffer after the call) is right: every entry's elements within
  // epilogue_bound, every other element of the buffer as before the call. Else what is wrong.
  std::string check(const EpilogueReference& r, const std::vector<char>& out) const {
    if (out.size() != d_bytes()) return "could not read D back";
    const EpilogueCheck c = check_epilogue_result(out.data(), s_.d_type, ldd_, sd_, r,
                                                  epilogue_tolerance(s_.precision, s_.k));
    if (c.bad > 0) return c.message();
    // Elements that belong to no entry (padding columns, gaps between entries) stay untouched.
    std::vector<bool> covered(d_elems_, false);
    for (int64_t b = 0; b < s_.batch; ++b)
      for (int64_t i = 0; i < s_.m; ++i)
        for (int64_t j = 0; j < s_.n; ++j) covered[b * sd_ + i * ldd_ + j] = true;
    const int eb = dtype_bytes(s_.d_type);
    int64_t touched = 0, first = -1;
    for (int64_t e = 0; e < d_elems_; ++e)
      if (!covered[e] && std::memcmp(&out[e * eb], &d_before_[e * eb], eb) != 0)
        if (touched++ == 0) first = e;
    if (touched > 0)
      return std::to_string(touched) + " elements of D outside every entry changed; first at " +
             std::to_string(first);
    return "";
  }

  // Runs `kernel` and checks the result against r: empty on success, else why not.
  std::string run_and_check(const EpilogueReference& r, const char* kernel) const {
    if (Status st = run(kernel); st != Status::Success)
      return std::string(kernel) + " returned " + status_name(st) + ": " + last_error_message();
    const std::string why = check(r, read_d());
    return why.empty() ? "" : std::string(kernel) + ": " + why;
  }

 private:
  void init_data() {
    const GemmDesc g = desc();
    const int64_t in = input_bytes(s_.precision);
    void* a = a_->as<char>() + s_.offset * in;
    void* b = b_->as<char>() + s_.offset * in;
    cudaError_t e = fill_random_device(a, a_elems_, s_.precision, s_.seed * 5 + 1);
    if (e == cudaSuccess) e = fill_random_device(b, b_elems_, s_.precision, s_.seed * 5 + 2);
    if (e == cudaSuccess)
      e = fill_random_device(bias_->as<char>() + s_.offset * dtype_bytes(s_.bias_type), s_.n,
                             dtype_storage(s_.bias_type), s_.seed * 5 + 3);
    // NaN bytes in any dtype: D is poisoned, and so is C where it must not be read.
    if (e == cudaSuccess) e = cudaMemset(d_->ptr, 0xff, d_->bytes);
    if (e == cudaSuccess && c_) e = cudaMemset(c_->ptr, 0xff, c_->bytes);
    if (e == cudaSuccess && s_.beta != 0.f)
      e = fill_random_device(c(), c_elems_, dtype_storage(c_type_), s_.seed * 5 + 4);
    d_before_.resize(d_bytes());
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
      e = cudaMemcpy(d_before_.data(), g.D, d_before_.size(), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) error_ = std::string("filling the operands: ") + cudaGetErrorString(e);
  }

  ExSpec s_;
  int64_t lda_ = 0, ldb_ = 0, ldc_ = 0, ldd_ = 0;
  int64_t sa_ = 0, sb_ = 0, sc_ = 0, sd_ = 0;
  int64_t a_elems_ = 0, b_elems_ = 0, c_elems_ = 0, d_elems_ = 0;
  DType c_type_ = DType::F32;
  std::unique_ptr<DeviceMem> a_, b_, c_, d_, bias_;
  std::vector<char> d_before_;
  std::string error_;
};

// gtest: builds s, runs `kernel` on it and checks it against fp64 (a failure names the spec).
inline void expect_correct(const ExSpec& s, const char* kernel = "auto") {
  SCOPED_TRACE(describe(s) + " on " + kernel);
  ExProblem d(s);
  ASSERT_EQ(d.error(), "");
  EpilogueReference r;
  ASSERT_EQ(d.reference(&r), "");
  EXPECT_EQ(d.run_and_check(r, kernel), "");
}

// gtest: `kernel` on s keeps the eager run's bits under CUDA graph capture and three replays (D
// reset before each), and for two problems with the same data run at once on two streams.
inline void expect_same_bits_in_graphs_and_streams(const ExSpec& s, const char* kernel) {
  SCOPED_TRACE(describe(s) + " on " + kernel);
  ExProblem d(s), d2(s);
  ASSERT_EQ(d.error(), "");
  ASSERT_EQ(d2.error(), "");
  EpilogueReference r;
  ASSERT_EQ(d.reference(&r), "");
  EXPECT_EQ(d.run_and_check(r, kernel), "");
  const std::vector<char> eager = d.read_d();
  ASSERT_FALSE(eager.empty());
  Stream s1, s2;
  ASSERT_NE(s1.s, nullptr);
  ASSERT_NE(s2.s, nullptr);
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s1.s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const Status st = gemm(d.desc(), kernel, s1.s);
  ASSERT_EQ(cudaStreamEndCapture(s1.s, &g), cudaSuccess);
  ASSERT_EQ(st, Status::Success) << last_error_message();
  ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(d.reset(s1.s), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, s1.s), cudaSuccess);
    EXPECT_TRUE(d.read_d() == eager) << "replay " << i;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  ASSERT_EQ(d.reset(s1.s), cudaSuccess);
  ASSERT_EQ(d2.reset(s2.s), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(gemm(d.desc(), kernel, s1.s), Status::Success) << last_error_message();
  ASSERT_EQ(gemm(d2.desc(), kernel, s2.s), Status::Success) << last_error_message();
  EXPECT_TRUE(d.read_d() == eager) << "stream 1";
  EXPECT_TRUE(d2.read_d() == eager) << "stream 2";
}

}  // namespace gemmlab::test
