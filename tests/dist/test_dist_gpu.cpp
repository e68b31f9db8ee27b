// GPU tests of gemmlab_dist (include/gemmlab/dist.h): one process, one host thread per GPU, one
// NCCL communicator per GPU (ncclCommInitAll). Every result is checked against the unsharded
// product in fp64 (CPU reference), for every input precision, fp32 and bf16 outputs, uneven
// shards, op(B) = B^T, bias; chunk counts 1, 3 and 8 must give bit-identical results; bad inputs
// get their status with nothing enqueued. Skips visibly with fewer than 2 GPUs. NVLink multicast
// stays off (NCCL_NVLS_ENABLE=0 unless set).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include "gemmlab/dist.h"
#include "gpu_util.h"
#include "reference/reference.h"

namespace gemmlab::test {
namespace {

// The communicators of all GPUs (at most 8), made at the first test that needs them and
// destroyed when the test program ends (CommsEnvironment).
struct Comms {
  std::vector<ncclComm_t> comms;
  std::string error;
  static Comms*& instance() {
    static Comms* c = nullptr;
    return c;
  }
  static Comms& get() {
    if (!instance()) instance() = new Comms(make());
    return *instance();
  }
  static Comms make() {
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
  static void destroy() {
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
};

class CommsEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { Comms::destroy(); }
};
::testing::Environment* const kCommsEnvironment =
    ::testing::AddGlobalTestEnvironment(new CommsEnvironment);

#define GEMMLAB_REQUIRE_COMMS()              \
  do {                                       \
    GEMMLAB_REQUIRE_TWO_GPUS();              \
    ASSERT_EQ(Comms::get().error, "");       \
  } while (0)

int ranks() { return static_cast<int>(Comms::get().comms.size()); }

// fn(rank) on one thread per rank with that rank's device current; the failures, joined.
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

int in_bytes(Precision p) { return (p == Precision::BF16 || p == Precision::FP16) ? 2 : 4; }
int out_bytes(DType t) { return t == DType::F32 ? 4 : 2; }

// A host matrix of `rows` x `cols` elements of `bytes` each; sub-blocks copied out of it.
struct HostMatrix {
  int64_t rows = 0, cols = 0;
  int bytes = 4;
  std::vector<char> data;
  HostMatrix(int64_t r, int64_t c, Precision p, uint64_t seed)
      : rows(r), cols(c), bytes(in_bytes(p)), data(static_cast<size_t>(r * c * bytes)) {
    fill_random_host(data.data(), r * c, p, seed);
  }
  // Rows [r0, r0 + nr) and columns [c0, c0 + nc), dense.
  std::vector<char> block(int64_t r0, int64_t nr, int64_t c0, int64_t nc) const {
    std::vector<char> out(static_cast<size_t>(nr * nc * bytes));
    for (int64_t i = 0; i < nr; ++i)
      std::memcpy(out.data() + i * nc * bytes, data.data() + ((r0 + i) * cols + c0) * bytes,
                  static_cast<size_t>(nc * bytes));
    return out;
  }
};

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

// Device copy of a host buffer; empty string or the error.
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

// fp64 reference of the unsharded product: out (m x n) = A (m x k) B (k x n) + bias.
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

// Relative Frobenius error of out (rows x cols, dtype t, ld cols) against ref's block at
// (r0, c0) (ref has ref_cols columns); "" when within bound.
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

double bound_for(Precision p, DType out, DType partial = DType::F32) {
  auto rounding = [](DType t) {
    return t == DType::BF16 ? std::ldexp(1.0, -8) : t == DType::F16 ? std::ldexp(1.0, -11) : 0.0;
  };
  return error_bound(p) + rounding(out) + rounding(partial);
}

struct Case {
  Precision p;
  DType out;
  Op op_b;
};

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

// ---- all_gather_gemm: A (m x k) split by rows; rank r's weight slice is columns
// [col0_r, col0_r + n_r) of B (k x N), n_r = 64 + 8 r (ranks differ on purpose). ----
struct AgProblem {
  int64_t m, k;
  std::vector<int64_t> n, col0;  // per rank
  int64_t total_n = 0;
  AgProblem(int64_t m_, int64_t k_) : m(m_), k(k_) {
    for (int r = 0; r < ranks(); ++r) {
      n.push_back(64 + 8 * r);
      col0.push_back(total_n);
      total_n += n.back();
    }
  }
};

// Rank r's result of all_gather_gemm with `chunks`, as bytes (m x n_r, dtype c.out).
std::string run_all_gather(const AgProblem& pr, const Case& c, int chunks, int r,
                           const HostMatrix& A, const HostMatrix& B, const std::vector<float>& bias,
                           std::vector<char>* out, int sm_margin = 0) {
  const int P = ranks();
  const int64_t rows = dist::shard_rows(pr.m, P, r), off = dist::shard_offset(pr.m, P, r);
  const int64_t n = pr.n[r];
  // op(B_r) = columns of B; stored k x n_r (N) or n_r x k (T).
  std::vector<char> b = B.block(0, pr.k, pr.col0[r], n);
  if (c.op_b == Op::T) {
    std::vector<char> t(b.size());
    for (int64_t i = 0; i < pr.k; ++i)
      for (int64_t j = 0; j < n; ++j)
        std::memcpy(t.data() + (j * pr.k + i) * B.bytes, b.data() + (i * n + j) * B.bytes, B.bytes);
    b.swap(t);
  }
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

TEST(Dist, AllGatherGemmEveryDtypeUnevenShardsChunkInvariant) {
  GEMMLAB_REQUIRE_COMMS();
  const AgProblem pr(301, 136);  // 301 rows: shards of 151 and 150 on 2 GPUs
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(case_name(c));
    const HostMatrix A(pr.m, pr.k, c.p, 1), B(pr.k, pr.total_n, c.p, 2);
    std::vector<float> bias(static_cast<size_t>(pr.total_n));
    for (size_t j = 0; j < bias.size(); ++j) bias[j] = 0.25f * static_cast<float>(j % 7) - 0.5f;
    const std::vector<double> ref = reference(A, B, c.p, bias);
    const std::string failures = on_every_rank([&](int r) -> std::string {
      std::vector<char> first;
      for (int chunks : {1, 3, 8}) {
        std::vector<char> out;
        if (std::string why = run_all_gather(pr, c, chunks, r, A, B, bias, &out); !why.empty())
          return "chunks " + std::to_string(chunks) + ": " + why;
        if (std::string why = compare(out, c.out, pr.m, pr.n[r], ref, pr.total_n, 0, pr.col0[r],
                                      bound_for(c.p, c.out));
            !why.empty())
          return "chunks " + std::to_string(chunks) + ": " + why;
        if (first.empty()) first = out;
        else if (out != first) return "chunks " + std::to_string(chunks) + " differs in bits from chunks 1";
      }
      return "";
    });
    EXPECT_EQ(failures, "");
  }
}

// ---- gemm_reduce_scatter: A (m x K) split by columns, B (K x n) by rows, with k_r = 128 + 8 r
// (uneven on purpose); rank r gets rows shard(m, P, r) of A B + bias. ----
std::string run_reduce_scatter(int64_t m, int64_t n, const std::vector<int64_t>& k,
                               const std::vector<int64_t>& k0, const Case& c, DType partial,
                               int chunks, int r, const HostMatrix& A, const HostMatrix& B,
                               const std::vector<float>& bias, std::vector<char>* out) {
  const int P = ranks();
  const int64_t rows = dist::shard_rows(m, P, r), kr = k[r];
  std::vector<char> b = B.block(k0[r], kr, 0, n);
  if (c.op_b == Op::T) {
    std::vector<char> t(b.size());
    for (int64_t i = 0; i < kr; ++i)
      for (int64_t j = 0; j < n; ++j)
        std::memcpy(t.data() + (j * kr + i) * B.bytes, b.data() + (i * n + j) * B.bytes, B.bytes);
    b.swap(t);
  }
  std::vector<char> bias_bytes(static_cast<size_t>(n * 4));
  std::memcpy(bias_bytes.data(), bias.data(), bias_bytes.size());
  DeviceMem dA(static_cast<size_t>(m * kr * A.bytes)), dB(b.size()), dBias(bias_bytes.size());
  DeviceMem dD(static_cast<size_t>(rows * n * out_bytes(c.out)));
  for (auto [d, h] : {std::pair{&dA, A.block(0, m, k0[r], kr)}, std::pair{&dB, b},
                      std::pair{&dBias, bias_bytes}})
    if (std::string why = upload(*d, h); !why.empty()) return why;
  GemmDesc d;
  d.op_b = c.op_b;
  d.m = m, d.n = n, d.k = kr;
  d.A = dA.ptr, d.lda = kr;
  d.B = dB.ptr, d.ldb = c.op_b == Op::T ? kr : n;
  d.D = dD.ptr, d.ldd = n, d.d_type = c.out;
  d.bias = dBias.ptr, d.bias_type = DType::F32;
  d.precision = c.p;
  dist::Options o;
  o.chunks = chunks, o.partial_type = partial;
  if (Status s = dist::gemm_reduce_scatter(d, Comms::get().comms[r], nullptr, o);
      s != Status::Success)
    return std::string("gemm_reduce_scatter: ") + last_error_message();
  *out = download(dD, dD.bytes);
  return out->empty() && dD.bytes ? "could not read D" : "";
}

TEST(Dist, GemmReduceScatterEveryDtypeUnevenShardsChunkInvariant) {
  GEMMLAB_REQUIRE_COMMS();
  const int P = ranks();
  const int64_t m = 301, n = 72;
  std::vector<int64_t> k, k0;
  int64_t K = 0;
  for (int r = 0; r < P; ++r) k0.push_back(K), k.push_back(128 + 8 * r), K += k.back();
  for (const Case& c : all_cases())
    for (DType partial : {DType::F32, DType::BF16}) {
      SCOPED_TRACE(case_name(c) + ", partials " + dtype_name(partial));
      const HostMatrix A(m, K, c.p, 3), B(K, n, c.p, 4);
      std::vector<float> bias(static_cast<size_t>(n));
      for (size_t j = 0; j < bias.size(); ++j) bias[j] = 0.125f * static_cast<float>(j % 5);
      const std::vector<double> ref = reference(A, B, c.p, bias);
      const std::string failures = on_every_rank([&](int r) -> std::string {
        std::vector<char> first;
        for (int chunks : {1, 3, 8}) {
          std::vector<char> out;
          const std::string at = "chunks " + std::to_string(chunks) + ": ";
          if (std::string why = run_reduce_scatter(m, n, k, k0, c, partial, chunks, r, A, B, bias, &out);
              !why.empty())
            return at + why;
          if (std::string why = compare(out, c.out, dist::shard_rows(m, P, r), n, ref, n,
                                        dist::shard_offset(m, P, r), 0,
                                        bound_for(c.p, c.out, partial));
              !why.empty())
            return at + why;
          if (first.empty()) first = out;
          else if (out != first) return at + "differs in bits from chunks 1";
        }
        return "";
      });
      EXPECT_EQ(failures, "");
    }
}

// ---- bad inputs: their status and nothing enqueued. The single-rank checks fail before any
// collective, so one rank alone may make them. ----
struct Small {
  DeviceMem A{64 * 72 * 4}, B{72 * 64 * 4}, D{72 * 64 * 4};
  Small() { cudaMemset(D.ptr, 0x7f, D.bytes); }
  GemmDesc desc(int64_t m = 64) const {
    GemmDesc g;
    g.m = m, g.n = 64, g.k = 64;
    g.A = A.ptr, g.lda = 64, g.B = B.ptr, g.ldb = 64, g.D = D.ptr, g.ldd = 64;
    g.precision = Precision::FP32;
    return g;
  }
  bool d_untouched() const {
    std::vector<char> h = download(D, D.bytes);
    for (char c : h)
      if (c != 0x7f) return false;
    return !h.empty();
  }
};

TEST(Dist, BadInputsGetTheirStatusBeforeAnythingIsEnqueued) {
  GEMMLAB_REQUIRE_COMMS();
  ncclComm_t comm0 = Comms::get().comms[0];
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  Small s;
  auto both = [&](const GemmDesc& d, const dist::Options& o, Status want, const std::string& what,
                  ncclComm_t comm) {
    EXPECT_EQ(dist::all_gather_gemm(d, comm, nullptr, o), want)
        << what << " (all_gather_gemm): " << last_error_message();
    EXPECT_NE(std::string(last_error_message()), "") << what;
    EXPECT_EQ(dist::gemm_reduce_scatter(d, comm, nullptr, o), want)
        << what << " (gemm_reduce_scatter): " << last_error_message();
  };
  const dist::Options o;
  both(s.desc(), o, Status::InvalidValue, "null communicator", nullptr);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  both(s.desc(), o, Status::WrongDevice, "communicator of device 0, device 1 current", comm0);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  GemmDesc d = s.desc();
  d.d_type = static_cast<DType>(5);
  both(d, o, Status::InvalidValue, "D dtype 5", comm0);
  d = s.desc(), d.precision = static_cast<Precision>(9);
  both(d, o, Status::InvalidValue, "precision 9", comm0);
  dist::Options bad = o;
  bad.partial_type = static_cast<DType>(1);
  both(s.desc(), bad, Status::InvalidValue, "partial dtype 1", comm0);
  bad = o, bad.chunks = -1;
  both(s.desc(), bad, Status::InvalidValue, "chunks -1", comm0);
  d = s.desc(), d.op_a = Op::T;
  both(d, o, Status::InvalidValue, "op_a = T", comm0);
  d = s.desc(), d.batch = 2;
  both(d, o, Status::InvalidValue, "batch 2", comm0);
  d = s.desc(), d.B = nullptr;
  both(d, o, Status::NullPointer, "B null", comm0);
  d = s.desc(), d.D = nullptr;
  both(d, o, Status::NullPointer, "D null", comm0);
  d = s.desc(), d.lda = 65;
  both(d, o, Status::InvalidLeadingDim, "lda 65 (rows of 260 bytes)", comm0);
  std::vector<float> host(64 * 64);
  d = s.desc(), d.A = host.data();
  both(d, o, Status::NotDevicePointer, "A in host memory", comm0);
  d = s.desc(), d.A = nullptr;
  EXPECT_EQ(dist::all_gather_gemm(d, comm0, nullptr, o), Status::NullPointer) << last_error_message();
  EXPECT_TRUE(s.d_untouched()) << "a failed call wrote D";
}

// Shapes or chunk counts that disagree across ranks: InvalidValue on every rank, D untouched.
TEST(Dist, ShapesThatDisagreeAcrossRanksAreInvalidValueOnEveryRank) {
  GEMMLAB_REQUIRE_COMMS();
  for (int what = 0; what < 2; ++what) {
    const std::string failures = on_every_rank([what](int r) -> std::string {
      Small s;
      const GemmDesc d = s.desc(what == 0 ? 64 + 8 * r : 64);  // m differs, or chunks differ
      dist::Options o;
      o.check_always = true;
      o.chunks = what == 1 ? 1 + r : 2;
      std::string out;
      if (Status st = dist::all_gather_gemm(d, Comms::get().comms[r], nullptr, o);
          st != Status::InvalidValue)
        out += std::string("all_gather_gemm: ") + status_name(st) + " " + last_error_message() + "; ";
      if (Status st = dist::gemm_reduce_scatter(d, Comms::get().comms[r], nullptr, o);
          st != Status::InvalidValue)
        out += std::string("gemm_reduce_scatter: ") + status_name(st) + " " + last_error_message();
      if (!s.d_untouched()) out += " D was written";
      return out;
    });
    EXPECT_EQ(failures, "") << (what == 0 ? "m differs" : "chunks differ");
  }
}

// Repeated calls (the shape checked once, then trusted) give the same bits, also with SMs left to
// NCCL (sm_margin: the same kernel on a smaller persistent grid).
TEST(Dist, RepeatedCallsAreBitIdentical) {
  GEMMLAB_REQUIRE_COMMS();
  const AgProblem pr(257, 64);
  const Case c{Precision::BF16, DType::BF16, Op::T};
  const HostMatrix A(pr.m, pr.k, c.p, 5), B(pr.k, pr.total_n, c.p, 6);
  const std::vector<float> bias(static_cast<size_t>(pr.total_n), 0.5f);
  const std::string failures = on_every_rank([&](int r) -> std::string {
    std::vector<char> first;
    for (int i = 0; i < 3; ++i) {
      std::vector<char> out;
      if (std::string why = run_all_gather(pr, c, 0, r, A, B, bias, &out, i == 1 ? 16 : 0);
          !why.empty())
        return why;
      if (first.empty()) first = out;
      else if (out != first) return "run " + std::to_string(i) + " differs in bits";
    }
    return "";
  });
  EXPECT_EQ(failures, "");
}

// A call captured into a CUDA graph (its NCCL send/recv, the events between the two streams, the
// scratch and wgmma/03's dynamic-tile counter become graph nodes) and replayed three times gives
// the bits of the eager call, for both patterns; bf16 pieces on wgmma/03 with DynamicTiles.
TEST(Dist, GraphCaptureAndReplayKeepTheBits) {
  GEMMLAB_REQUIRE_COMMS();
  const int64_t m = 1536, n = 384, k = 256;
  const std::string failures = on_every_rank([&](int r) -> std::string {
    const int P = ranks();
    const int64_t rows = dist::shard_rows(m, P, r);
    ncclComm_t comm = Comms::get().comms[r];
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return "stream";
    std::string why;
    for (int pattern = 0; pattern < 2 && why.empty(); ++pattern) {
      const bool ag = pattern == 0;
      // all_gather_gemm: A is this rank's rows x k shard, D all m rows; gemm_reduce_scatter: A is
      // m x k (this rank's depth slice), D this rank's rows.
      const int64_t a_rows = ag ? rows : m, d_rows = ag ? m : rows;
      DeviceMem dA(static_cast<size_t>(a_rows * k * 2)), dB(static_cast<size_t>(k * n * 2));
      DeviceMem dD(static_cast<size_t>(d_rows * n * 2));
      fill_random_device(dA.ptr, a_rows * k, Precision::BF16, 40 + r + 2 * pattern);
      fill_random_device(dB.ptr, k * n, Precision::BF16, 50 + r + 2 * pattern);
      GemmDesc d;
      d.m = m, d.n = n, d.k = k;
      d.A = dA.ptr, d.lda = k, d.B = dB.ptr, d.ldb = n, d.D = dD.ptr, d.ldd = n;
      d.d_type = DType::BF16, d.precision = Precision::BF16;
      dist::Options o;
      o.chunks = 3;
      auto call = [&] {
        return ag ? dist::all_gather_gemm(d, comm, s, o) : dist::gemm_reduce_scatter(d, comm, s, o);
      };
      const char* what = ag ? "all_gather_gemm" : "gemm_reduce_scatter";
      if (call() != Status::Success) {
        why = std::string(what) + " eager: " + last_error_message();
        break;
      }
      cudaStreamSynchronize(s);
      const std::vector<char> eager = download(dD, dD.bytes);
      cudaGraph_t graph = nullptr;
      cudaGraphExec_t exec = nullptr;
      if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        why = "begin capture";
        break;
      }
      const Status st = call();
      const cudaError_t ec = cudaStreamEndCapture(s, &graph);
      if (st != Status::Success || ec != cudaSuccess) {
        why = std::string(what) + " captured: " + last_error_message() + " / " + cudaGetErrorString(ec);
        break;
      }
      if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) why = std::string(what) + ": instantiate";
      for (int replay = 0; replay < 3 && why.empty(); ++replay) {
        cudaMemsetAsync(dD.ptr, 0xff, dD.bytes, s);  // NaN in bf16: a replay must write all of D
        if (cudaGraphLaunch(exec, s) != cudaSuccess || cudaStreamSynchronize(s) != cudaSuccess)
          why = std::string(what) + ": replay " + std::to_string(replay) + " failed";
        else if (download(dD, dD.bytes) != eager)
          why = std::string(what) + ": replay " + std::to_string(replay) + " differs in bits from the eager call";
      }
      if (exec) cudaGraphExecDestroy(exec);
      if (graph) cudaGraphDestroy(graph);
    }
    cudaStreamDestroy(s);
    return why;
  });
  EXPECT_EQ(failures, "");
}

}  // namespace
}  // namespace gemmlab::test
