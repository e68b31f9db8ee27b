// dist-bench: gemmlab_dist against its parts and the naive sequence, on every GPU of one machine
// (one thread per GPU, ncclCommInitAll), all in the same run. For each shape and pattern:
//   T_gemm      the rank's GEMM alone (gemmlab::gemm, the whole local product)
//   T_comm      the NCCL collective alone, on the same bytes (ncclAllGather of the A shards;
//               ncclReduceScatter of the bf16 partials)
//   naive       the collective, then the GEMM (all-gather) / the GEMM, then the collective
//   overlapped  dist::all_gather_gemm / dist::gemm_reduce_scatter, per chunk count
// and the NCCL bus bandwidth of all-gather and reduce-scatter at each message size (nccl-tests'
// definitions: busbw = algbw * (P - 1) / P, algbw = bytes of the whole gathered / reduced
// buffer / time). Times are the median of --iters repetitions after warm-up (an event pair around
// each), the slowest rank's.
// Writes a text report to stdout and JSON to --json. Run it with NCCL_NVLS_ENABLE=0
// (scripts/dist-report does).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <nlohmann/json.hpp>

#include "dist-bench/machine.h"
#include "dist-bench/timeline.h"
#include "gemm-bench/device_info.h"
#include "gemmlab/dist.h"

namespace {

using distbench::check;
using distbench::die;
using distbench::Machine;
using distbench::Rank;
using gemmlab::DType;
using gemmlab::GemmDesc;
using gemmlab::Op;
using gemmlab::Precision;
using gemmlab::Status;
using json = nlohmann::json;

struct Args {
  int iters = 15, warmup = 3;
  int64_t tokens = 8192, hidden = 8192, intermediate = 28672;
  std::vector<int64_t> widths{512, 1024, 1536, 2048, 3072, 4096, 8192};
  std::vector<int> chunks{0, 1, 2, 4};
  std::vector<int> margins{-1, 0, 8, 16, 24, 32};  // sm_margin values tried at every chunk count
  std::string json_path;
  bool quick = false, timeline = false;
};

double tflops(int64_t m, int64_t n, int64_t k, double ms) { return 2.0 * m * n * k / (ms * 1e9); }

// NCCL bus bandwidth (GB/s) of all-gather and reduce-scatter of `bytes` (the whole buffer).
json bus_bandwidth(Machine& mc, const std::vector<size_t>& sizes) {
  json rows = json::array();
  const int P = mc.size();
  std::printf("\nNCCL bus bandwidth (bf16, %d ranks; bytes = the whole gathered / reduced buffer)\n", P);
  std::printf("%14s %12s %12s %12s %12s\n", "bytes", "AG ms", "AG busbw", "RS ms", "RS busbw");
  for (size_t bytes : sizes) {
    const size_t count = bytes / 2 / P;  // elements per rank's shard
    std::vector<void*> full(P), shard(P);
    mc.each([&](Rank& r) {
      full[r.id] = r.alloc(count * P * 2);
      shard[r.id] = r.alloc(count * 2);
    });
    const double ag = mc.time([&](Rank& r) {
      check(ncclAllGather(shard[r.id], full[r.id], count, ncclBfloat16, r.comm, r.stream), "ag");
    });
    const double rs = mc.time([&](Rank& r) {
      check(ncclReduceScatter(full[r.id], shard[r.id], count, ncclBfloat16, ncclSum, r.comm, r.stream),
            "rs");
    });
    mc.each([](Rank& r) { r.free_all(); });
    const double total = static_cast<double>(count) * P * 2, f = (P - 1.0) / P;
    const double ag_bw = total / (ag * 1e6) * f, rs_bw = total / (rs * 1e6) * f;
    std::printf("%14.0f %12.4f %12.1f %12.4f %12.1f\n", total, ag, ag_bw, rs, rs_bw);
    rows.push_back({{"bytes", total}, {"allgather_ms", ag}, {"allgather_busbw_gbs", ag_bw},
                    {"reducescatter_ms", rs}, {"reducescatter_busbw_gbs", rs_bw}});
  }
  return rows;
}

// One pattern at one shape: T_gemm, T_comm, naive, overlapped per chunk count.
// all-gather: A (m x k) gathered, B_r k x n (op(B) = B^T, stored n x k, as nn.Linear's weight).
// reduce-scatter: A_r m x k, B_r n x k (op T), partials m x n bf16.
json measure(Machine& mc, bool all_gather, int64_t m, int64_t n, int64_t k,
             const std::vector<int>& chunk_list, const std::vector<int>& margins,
             const std::string& label) {
  const int P = mc.size();
  const int64_t mr = gemmlab::dist::shard_rows(m, P, 0);
  struct Bufs {
    void *a_shard, *a_full, *b, *d, *partial, *d_rows;
  };
  std::vector<Bufs> bufs(P);
  mc.each([&](Rank& r) {
    Bufs& b = bufs[r.id];
    const int64_t rows = gemmlab::dist::shard_rows(m, P, r.id);
    b.a_shard = all_gather ? r.alloc(static_cast<size_t>(rows * k * 2)) : nullptr;
    b.a_full = r.alloc(static_cast<size_t>(m * k * 2));
    b.b = r.alloc(static_cast<size_t>(n * k * 2));
    b.d = all_gather ? r.alloc(static_cast<size_t>(m * n * 2)) : nullptr;
    b.partial = all_gather ? nullptr : r.alloc(static_cast<size_t>(m * n * 2));
    b.d_rows = all_gather ? nullptr : r.alloc(static_cast<size_t>(rows * n * 2));
  });
  const auto desc = [&](Rank& r, const void* A) {
    GemmDesc d;
    d.op_b = Op::T;
    d.m = m, d.n = n, d.k = k;
    d.A = A, d.lda = k, d.B = bufs[r.id].b, d.ldb = k;
    d.d_type = DType::BF16, d.precision = Precision::BF16;
    if (all_gather) {
      d.D = bufs[r.id].d, d.ldd = n;
    } else {
      d.D = bufs[r.id].partial, d.ldd = n;
    }
    return d;
  };
  const auto gemm_alone = [&](Rank& r) {
    check(gemmlab::gemm(desc(r, bufs[r.id].a_full), "auto", r.stream), "gemm");
  };
  const double t_gemm = mc.time(gemm_alone);
  const size_t count = static_cast<size_t>(all_gather ? mr * k : mr * n);  // even shapes here
  const auto collective = [&](Rank& r) {
    if (all_gather)
      check(ncclAllGather(bufs[r.id].a_shard, bufs[r.id].a_full, count, ncclBfloat16, r.comm, r.stream),
            "all-gather");
    else
      check(ncclReduceScatter(bufs[r.id].partial, bufs[r.id].d_rows, count, ncclBfloat16, ncclSum,
                              r.comm, r.stream),
            "reduce-scatter");
  };
  const double t_comm = mc.time(collective);
  const auto naive_sequence = [&](Rank& r) {
    if (all_gather) collective(r);
    check(gemmlab::gemm(desc(r, bufs[r.id].a_full), "auto", r.stream), "gemm");
    if (!all_gather) collective(r);
  };
  const double naive = mc.time(naive_sequence);
  const double best_bound = std::max(t_gemm, t_comm);
  std::printf("\n%s (%s, %d ranks): m %lld, n %lld, k %lld per rank; bf16 in, bf16 out\n",
              label.c_str(), all_gather ? "all_gather_gemm" : "gemm_reduce_scatter", P,
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k));
  std::printf("  T_gemm %.4f ms (%.0f TFLOP/s)  T_comm %.4f ms  naive %.4f ms  max(T_gemm, T_comm) %.4f ms\n",
              t_gemm, tflops(m, n, k, t_gemm), t_comm, naive, best_bound);
  json out = {{"label", label}, {"pattern", all_gather ? "all_gather_gemm" : "gemm_reduce_scatter"},
              {"m", m}, {"n", n}, {"k", k}, {"ranks", P}, {"t_gemm_ms", t_gemm},
              {"t_comm_ms", t_comm}, {"naive_ms", naive}, {"bound_ms", best_bound},
              {"overlapped", json::array()}};
  const auto overlapped = [&](gemmlab::dist::Options o) {
    return [&, o](Rank& r) {
      GemmDesc d = desc(r, all_gather ? bufs[r.id].a_shard : bufs[r.id].a_full);
      if (all_gather) {
        check(gemmlab::dist::all_gather_gemm(d, r.comm, r.stream, o), "all_gather_gemm");
      } else {
        d.D = bufs[r.id].d_rows;
        check(gemmlab::dist::gemm_reduce_scatter(d, r.comm, r.stream, o), "gemm_reduce_scatter");
      }
    };
  };
  std::vector<std::pair<int, int>> variants;  // (chunks, sm_margin); 0 / -1: auto
  for (int chunks : chunk_list)
    for (int margin : margins) variants.push_back({chunks, margin});
  for (auto [chunks, margin] : variants)
    for (DType partial : all_gather ? std::vector<DType>{DType::BF16}
                                    : std::vector<DType>{DType::BF16, DType::F32}) {
      gemmlab::dist::Options o;
      o.chunks = chunks, o.partial_type = partial, o.sm_margin = margin;
      const double t = mc.time(overlapped(o));
      std::printf("  overlapped chunks %-4s sm_margin %-4s partials %-4s %.4f ms [%.3f-%.3f]: %5.1f%% "
                  "over max(T_gemm, T_comm), %5.1f%% of naive\n",
                  chunks ? std::to_string(chunks).c_str() : "auto",
                  margin >= 0 ? std::to_string(margin).c_str() : "auto",
                  gemmlab::dtype_name(partial), t, mc.spread.first, mc.spread.second,
                  100.0 * (t / best_bound - 1.0), 100.0 * t / naive);
      out["overlapped"].push_back({{"chunks", chunks}, {"sm_margin", margin},
                                   {"partial_type", gemmlab::dtype_name(partial)},
                                   {"ms", t}, {"min_ms", mc.spread.first},
                                   {"max_ms", mc.spread.second}, {"over_bound", t / best_bound - 1.0},
                                   {"of_naive", t / naive}});
    }
  // The first timings of a shape ran on a rested GPU (the first overlapped variant came out up to
  // 14% faster than the same variant timed later): T_gemm, naive and the default call again,
  // interleaved round by round, the median of each over the rounds.
  gemmlab::dist::Options defaults;
  defaults.partial_type = DType::BF16;
  std::vector<double> r_gemm, r_naive, r_auto;
  for (int round = 0; round < 5; ++round) {
    r_gemm.push_back(mc.time(gemm_alone));
    r_naive.push_back(mc.time(naive_sequence));
    r_auto.push_back(mc.time(overlapped(defaults)));
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double ig = median(r_gemm), in = median(r_naive), ia = median(r_auto);
  const double ib = std::max(ig, t_comm);
  std::printf("  interleaved (5 rounds): T_gemm %.4f  naive %.4f  default call (bf16 partials) %.4f ms: "
              "%5.1f%% over max(T_gemm, T_comm), %5.1f%% of naive\n",
              ig, in, ia, 100.0 * (ia / ib - 1.0), 100.0 * ia / in);
  out["interleaved"] = {{"t_gemm_ms", ig}, {"naive_ms", in}, {"default_ms", ia},
                        {"over_bound", ia / ib - 1.0}, {"of_naive", ia / in}};
  mc.each([](Rank& r) { r.free_all(); });
  return out;
}
// The width per rank whose |T_comm - T_gemm| is smallest (the balanced layer).
json balanced(const json& sweep) {
  json best;
  double gap = 1e300;
  for (const json& s : sweep) {
    const double g = std::abs(s["t_comm_ms"].get<double>() - s["t_gemm_ms"].get<double>());
    if (g < gap) gap = g, best = s;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"dist-bench: all_gather_gemm and gemm_reduce_scatter against T_gemm, T_comm and the "
               "naive sequence, on every GPU of this machine (NCCL_NVLS_ENABLE=0 recommended)"};
  app.add_option("--iters", a.iters, "timed repetitions (default 15)");
  app.add_option("--warmup", a.warmup, "warm-up repetitions (default 3)");
  app.add_option("--tokens", a.tokens, "rows m (default 8192)");
  app.add_option("--hidden", a.hidden, "hidden size (default 8192)");
  app.add_option("--intermediate", a.intermediate, "intermediate size, split across ranks (default 28672)");
  app.add_option("--widths", a.widths, "per-rank widths of the balance sweep (n per rank for "
                 "all-gather, k per rank for reduce-scatter)")->delimiter(',');
  app.add_option("--chunks", a.chunks, "chunk counts of the overlapped call (0 = auto)")->delimiter(',');
  app.add_option("--sm-margins", a.margins, "sm_margin values tried at every chunk count (-1 = auto)")->delimiter(',');
  app.add_option("--json", a.json_path, "write the results as JSON here");
  app.add_flag("--quick", a.quick, "small shapes, for a smoke test");
  app.add_flag("--timeline", a.timeline, "only the event timeline of all-gather + GEMM at the "
               "Llama fc1 shape and at n_r 4096 (where the overlap's time goes)");
  CLI11_PARSE(app, argc, argv);
  if (a.quick) a.tokens = 1024, a.hidden = 1024, a.intermediate = 2048, a.widths = {256, 512};

  int n = 0;
  check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  if (n < 2) die("needs at least 2 GPUs, found " + std::to_string(n));
  n = std::min(n, 8);
  Machine mc(n, a.iters, a.warmup);
  std::vector<ncclComm_t> comms(n);
  std::vector<int> devs(n);
  for (int i = 0; i < n; ++i) devs[i] = i;
  check(ncclCommInitAll(comms.data(), n, devs.data()), "ncclCommInitAll");
  json devices = json::array();
  for (int i = 0; i < n; ++i) {
    Rank& r = mc.ranks[i];
    r.id = i, r.comm = comms[i];
    check(cudaSetDevice(i), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "stream");
    r.marks.resize(static_cast<size_t>(a.iters) + 1);
    for (cudaEvent_t& e : r.marks) check(cudaEventCreate(&e), "event");
    const gemmbench::DeviceInfo info = gemmbench::query_device();
    devices.push_back({{"index", i}, {"name", info.name}, {"cc", info.cc}, {"sms", info.sms}});
  }
  int nccl_version = 0;
  ncclGetVersion(&nccl_version);
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  std::printf("dist-bench: %d GPUs (%s), NCCL %d, NCCL_NVLS_ENABLE=%s, %d iterations after %d warm-up\n",
              n, devices[0]["name"].get<std::string>().c_str(), nccl_version, nvls ? nvls : "(unset)",
              a.iters, a.warmup);
  json report = {{"tool", "dist-bench"}, {"devices", devices}, {"nccl_version", nccl_version},
                 {"nccl_nvls_enable", nvls ? nvls : ""}, {"iters", a.iters}};

  std::vector<size_t> sizes;
  for (size_t b = size_t{1} << 20; b <= (a.quick ? size_t{1} << 24 : size_t{1} << 30); b <<= 2)
    sizes.push_back(b);
  report["busbw"] = bus_bandwidth(mc, sizes);

  const int64_t inter_r = a.intermediate / n;
  if (a.timeline) {
    report["timeline"] = distbench::timeline(mc, a.tokens, inter_r, a.hidden);
    report["timeline_n4096"] = distbench::timeline(mc, a.tokens, 4096, a.hidden);
  } else {
    json shapes = json::array();
    shapes.push_back(measure(mc, true, a.tokens, inter_r, a.hidden, a.chunks, a.margins, "llama-70b-like fc1"));
    shapes.push_back(measure(mc, false, a.tokens, a.hidden, inter_r, a.chunks, a.margins, "llama-70b-like fc2"));
    report["llama"] = shapes;
    json sweep_ag = json::array(), sweep_rs = json::array();
    for (int64_t w : a.widths) {
      sweep_ag.push_back(measure(mc, true, a.tokens, w, a.hidden, a.chunks, a.margins, "sweep n_r=" + std::to_string(w)));
      sweep_rs.push_back(measure(mc, false, a.tokens, a.hidden, w, a.chunks, a.margins, "sweep k_r=" + std::to_string(w)));
    }
    report["sweep_all_gather"] = sweep_ag;
    report["sweep_reduce_scatter"] = sweep_rs;
    report["balanced_all_gather"] = balanced(sweep_ag);
    report["balanced_reduce_scatter"] = balanced(sweep_rs);
    std::printf("\nbalanced layer (|T_comm - T_gemm| smallest): all-gather n_r = %lld, reduce-scatter k_r = %lld\n",
                static_cast<long long>(report["balanced_all_gather"]["n"].get<int64_t>()),
                static_cast<long long>(report["balanced_reduce_scatter"]["k"].get<int64_t>()));
  }

  for (int i = 0; i < n; ++i) {
    cudaSetDevice(i);
    gemmlab::dist::forget(comms[i]);
    ncclCommDestroy(comms[i]);
  }
  if (!a.json_path.empty()) {
    std::ofstream f(a.json_path);
    f << report.dump(2) << "\n";
    if (!f) die("cannot write " + a.json_path);
    std::printf("wrote %s\n", a.json_path.c_str());
  }
  return 0;
}
