// dist-bench --timeline (timeline.h).
#include "dist-bench/timeline.h"

#include <array>

#include "gemmlab/dist.h"
#include "runtime/reserve_sms.h"
#include "runtime/workspace.h"

namespace distbench {

using gemmlab::DType;
using gemmlab::GemmDesc;
using gemmlab::Op;
using json = nlohmann::json;

json timeline(Machine& mc, int64_t m, int64_t n, int64_t k) {
  const int P = mc.size();
  const int64_t mr = gemmlab::dist::shard_rows(m, P, 0);
  json out = json::array();
  std::printf("\ntimeline: all-gather + GEMM, m %lld, n %lld, k %lld per rank, one piece per shard "
              "(ms from the call's start, medians of %d)\n", static_cast<long long>(m),
              static_cast<long long>(n), static_cast<long long>(k), mc.iters);
  std::printf("  %-15s %-10s %-9s %12s %12s %12s\n", "", "sm_margin", "priority", "transfer end",
              "local GEMM end", "call end");
  struct Bufs {
    void *shard, *full, *b, *d;
    cudaStream_t comm[2];
    std::vector<cudaEvent_t> ev;  // per iteration: start, transfer end, local end, end
  };
  std::vector<Bufs> bufs(P);
  mc.each([&](Rank& r) {
    Bufs& b = bufs[r.id];
    b.shard = r.alloc(static_cast<size_t>(mr * k * 2));
    b.full = r.alloc(static_cast<size_t>(m * k * 2));
    b.b = r.alloc(static_cast<size_t>(n * k * 2));
    b.d = r.alloc(static_cast<size_t>(m * n * 2));
    int lo = 0, hi = 0;
    check(cudaDeviceGetStreamPriorityRange(&lo, &hi), "priority range");
    check(cudaStreamCreateWithPriority(&b.comm[0], cudaStreamNonBlocking, lo), "stream");
    check(cudaStreamCreateWithPriority(&b.comm[1], cudaStreamNonBlocking, hi), "stream");
    b.ev.resize(static_cast<size_t>(4 * (mc.iters + mc.warmup)));
    for (cudaEvent_t& e : b.ev) check(cudaEventCreate(&e), "event");
  });
  struct Variant {
    int prio, margin;
    bool transfer, gemm;
    const char* what;
  };
  std::vector<Variant> variants{{0, 0, true, false, "transfer alone"}, {0, 0, false, true, "GEMMs alone"}};
  for (int prio = 0; prio < 2; ++prio)
    for (int margin : {0, 8, 16, 32}) variants.push_back({prio, margin, true, true, "overlapped"});
  for (const Variant& v : variants) {
    const int prio = v.prio, margin = v.margin;
    std::vector<std::array<float, 3>> med(P);
    std::vector<std::thread> threads;
    for (Rank& rank : mc.ranks)
      threads.emplace_back([&, rp = &rank] {
        Rank& r = *rp;
        Bufs& b = bufs[r.id];
        check(cudaSetDevice(r.id), "cudaSetDevice");
        const int peer = (r.id + 1) % P, from = (r.id + P - 1) % P;
        const int reps = mc.iters + mc.warmup;
        mc.barrier.wait();
        for (int i = 0; i < reps; ++i) {
          cudaEvent_t* e = &b.ev[4 * i];
          cudaStream_t c = b.comm[prio];
          check(cudaEventRecord(e[0], r.stream), "event");
          check(cudaStreamWaitEvent(c, e[0], 0), "wait");
          if (v.transfer) {
            check(ncclGroupStart(), "group");
            check(ncclSend(b.shard, mr * k, ncclBfloat16, peer, r.comm, c), "send");
            check(ncclRecv(static_cast<char*>(b.full) + from * mr * k * 2, mr * k, ncclBfloat16,
                           from, r.comm, c), "recv");
            check(ncclGroupEnd(), "group");
          }
          check(cudaEventRecord(e[1], c), "event");
          GemmDesc d;
          d.op_b = Op::T, d.m = mr, d.n = n, d.k = k, d.lda = k, d.ldb = k, d.ldd = n;
          d.B = b.b, d.d_type = DType::BF16, d.precision = Precision::BF16;
          {
            gemmlab::NoDepthSplit no_split;
            gemmlab::ReserveSms reserve(margin);
            d.A = b.shard, d.D = b.d;
            if (v.gemm) check(gemmlab::gemm(d, "auto", r.stream), "local gemm");
          }
          check(cudaEventRecord(e[2], r.stream), "event");
          check(cudaStreamWaitEvent(r.stream, e[1], 0), "wait");
          {
            gemmlab::NoDepthSplit no_split;
            d.A = static_cast<char*>(b.full) + from * mr * k * 2;
            d.D = static_cast<char*>(b.d) + mr * n * 2;
            if (v.gemm) check(gemmlab::gemm(d, "auto", r.stream), "remote gemm");
          }
          check(cudaEventRecord(e[3], r.stream), "event");
        }
        check(cudaStreamSynchronize(r.stream), "sync");
        std::array<std::vector<float>, 3> t;
        for (int i = mc.warmup; i < reps; ++i)
          for (int j = 0; j < 3; ++j) {
            float ms = 0;
            check(cudaEventElapsedTime(&ms, b.ev[4 * i], b.ev[4 * i + 1 + j]), "elapsed");
            t[j].push_back(ms);
          }
        for (int j = 0; j < 3; ++j) {
          std::sort(t[j].begin(), t[j].end());
          med[r.id][j] = t[j][t[j].size() / 2];
        }
      });
    for (std::thread& t : threads) t.join();
    std::array<float, 3> worst{0, 0, 0};
    for (int rk = 0; rk < P; ++rk)
      for (int j = 0; j < 3; ++j) worst[j] = std::max(worst[j], med[rk][j]);
    std::printf("  %-15s %-10d %-9s %12.4f %12.4f %12.4f\n", v.what, margin,
                prio ? "greatest" : "normal", worst[0], worst[1], worst[2]);
    out.push_back({{"what", v.what}, {"sm_margin", margin}, {"comm_priority", prio ? "greatest" : "normal"},
                   {"transfer_end_ms", worst[0]}, {"local_gemm_end_ms", worst[1]},
                   {"end_ms", worst[2]}});
  }
  mc.each([&](Rank& r) {
    for (cudaStream_t c : bufs[r.id].comm) cudaStreamDestroy(c);
    for (cudaEvent_t e : bufs[r.id].ev) cudaEventDestroy(e);
    r.free_all();
  });
  return out;
}

}  // namespace distbench
