// GPU tests of gemmlab_dist beyond the products (test_dist_gpu.cpp): bad inputs get their status
// with nothing enqueued, shapes that disagree across ranks are refused on every rank, repeated
// calls and CUDA graph replay give the eager call's bits. Skips visibly with fewer than 2 GPUs.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dist_test_util.h"

namespace gemmlab::test {
namespace {

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
