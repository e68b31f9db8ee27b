// The helpers of dist_test_util.h, and the environment that destroys the communicators when the
// test program ends.
#include "dist_test_util.h"

#include <cmath>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <cuda_fp16.h>

namespace gemmlab::test {
namespace {

Comms*& instance() {
  static Comms* c = nullptr;
  return c;
}

Comms make() {
  Comms c;
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  const int n = std::min(device_count(), 8);
  if (n < 2) return c;
  c.comms.resize(n);
  std::vector<int> devs(n);
  for (int i = 0; i < n; ++i) devs[i] = i;
  if (ncclResult_t r = ncclCommInitAll(c.comms.data(), n, devs.data()); r != ncclSuccess) {
    c.error = std::string("ncclCommInitAll: ") + ncclGetErrorString(r);
    c.comms.clear();
  }
  cudaSetDevice(0);
  return c;
}

class CommsEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { Comms::destroy(); }
};
::testing::Environment* const kCommsEnvironment =
    ::testing::AddGlobalTestEnvironment(new CommsEnvironment);

}  // namespace

Comms& Comms::get() {
  if (!instance()) instance() = new Comms(make());
  return *instance();
}

void Comms::destroy() {
  Comms* c = instance();
  if (!c) return;
  for (size_t i = 0; i < c->comms.size(); ++i) {
    cudaSetDevice(static_cast<int>(i));
    dist::forget(c->comms[i]);
    ncclCommDestroy(c->comms[i]);
  }
  cudaSetDevice(0);
  delete c;
  instance() = nullptr;
}

int ranks() { return static_cast<int>(Comms::get().comms.size()); }

std::string on_every_rank(const std::function<std::string(int)>& fn) {
  std::mutex mutex;
  std::string failures;
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks(); ++r)
    threads.emplace_back([r, &fn, &mutex, &failures] {
      std::string why;
      if (cudaError_t e = cudaSetDevice(r); e != cudaSuccess)
        why = std::string("cudaSetDevice: ") + cudaGetErrorString(e);
      else
        why = fn(r);
      std::lock_guard<std::mutex> lock(mutex);
      if (!why.empty()) failures += "rank " + std::to_string(r) + ": " + why + "\n";
    });
  for (std::thread& t : threads) t.join();
  cudaSetDevice(0);
  return failures;
}

float to_float(const char* p, DType t) {
  if (t == DType::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  if (t == DType::BF16) {
    const uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

std::string upload(DeviceMem& d, const std::vector<char>& h) {
  if (!d.ptr) return "cudaMalloc failed";
  const cudaError_t e = cudaMemcpy(d.ptr, h.data(), h.size(), cudaMemcpyHostToDevice);
  return e == cudaSuccess ? "" : cudaGetErrorString(e);
}

std::vector<char> download(const DeviceMem& d, size_t bytes) {
  std::vector<char> h(bytes);
  if (cudaDeviceSynchronize() != cudaSuccess ||
      cudaMemcpy(h.data(), d.ptr, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
    h.clear();
  return h;
}

std::vector<double> reference(const HostMatrix& A, const HostMatrix& B, Precision p,
                              const std::vector<float>& bias) {
  GemmProblem q;
  q.m = A.rows, q.n = B.cols, q.k = A.cols;
  q.A = A.data.data(), q.lda = A.cols, q.B = B.data.data(), q.ldb = B.cols;
  q.precision = p;
  std::vector<double> out(static_cast<size_t>(q.m * q.n));
  reference_gemm_cpu(q, out.data());
  for (int64_t i = 0; i < q.m; ++i)
    for (int64_t j = 0; j < q.n; ++j) out[i * q.n + j] += bias[j];
  return out;
}

std::string compare(const std::vector<char>& out, DType t, int64_t rows, int64_t cols,
                    const std::vector<double>& ref, int64_t ref_cols, int64_t r0, int64_t c0,
                    double bound) {
  if (out.empty()) return "could not read the result back";
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const double x = to_float(out.data() + (i * cols + j) * out_bytes(t), t);
      const double y = ref[(r0 + i) * ref_cols + c0 + j];
      if (!std::isfinite(x)) return "non-finite result at " + std::to_string(i) + "," + std::to_string(j);
      diff += (x - y) * (x - y), norm += y * y;
    }
  const double err = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  if (err <= bound) return "";
  return "relative error " + std::to_string(err) + " > " + std::to_string(bound);
}

double bound_for(Precision p, DType out, DType partial) {
  auto rounding = [](DType t) {
    return t == DType::BF16 ? std::ldexp(1.0, -8) : t == DType::F16 ? std::ldexp(1.0, -11) : 0.0;
  };
  return error_bound(p) + rounding(out) + rounding(partial);
}

std::string case_name(const Case& c) {
  return std::string(precision_name(c.p)) + " -> " + dtype_name(c.out) +
         (c.op_b == Op::T ? ", op(B) = B^T" : ", op(B) = B");
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
    for (DType out : {DType::F32, DType::BF16})
      for (Op op_b : {Op::N, Op::T}) cases.push_back({p, out, op_b});
  return cases;
}

std::string run_all_gather(const AgProblem& pr, const Case& c, int chunks, int r,
                           const HostMatrix& A, const HostMatrix& B, const std::vector<float>& bias,
                           std::vector<char>* out, int sm_margin) {
  const int P = ranks();
  const int64_t rows = dist::shard_rows(pr.m, P, r), off = dist::shard_offset(pr.m, P, r);
  const int64_t n = pr.n[r];
  // op(B_r) = columns of B; stored k x n_r (N) or n_r x k (T).
  const std::vector<char> b = c.op_b == Op::T ? B.transposed_block(0, pr.k, pr.col0[r], n)
                                               : B.block(0, pr.k, pr.col0[r], n);
  std::vector<char> bias_bytes(static_cast<size_t>(n * 4));
  std::memcpy(bias_bytes.data(), bias.data() + pr.col0[r], bias_bytes.size());
  DeviceMem dA(static_cast<size_t>(rows * pr.k * A.bytes)), dB(b.size()), dBias(bias_bytes.size());
  DeviceMem dD(static_cast<size_t>(pr.m * n * out_bytes(c.out)));
  for (auto [d, h] : {std::pair{&dA, A.block(off, rows, 0, pr.k)}, std::pair{&dB, b},
                      std::pair{&dBias, bias_bytes}})
    if (std::string why = upload(*d, h); !why.empty()) return why;
  GemmDesc d;
  d.op_b = c.op_b;
  d.m = pr.m, d.n = n, d.k = pr.k;
  d.A = dA.ptr, d.lda = pr.k;
  d.B = dB.ptr, d.ldb = c.op_b == Op::T ? pr.k : n;
  d.D = dD.ptr, d.ldd = n, d.d_type = c.out;
  d.bias = dBias.ptr, d.bias_type = DType::F32;
  d.precision = c.p;
  dist::Options o;
  o.chunks = chunks, o.sm_margin = sm_margin;
  if (Status s = dist::all_gather_gemm(d, Comms::get().comms[r], nullptr, o); s != Status::Success)
    return std::string("all_gather_gemm: ") + last_error_message();
  *out = download(dD, dD.bytes);
  return out->empty() ? "could not read D" : "";
}

}  // namespace gemmlab::test
