// dist-bench's machine: one thread, stream and communicator per GPU, a barrier, timing by events
// (the median repetition of the slowest rank), and the error checks that end the run.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "gemmlab/gemmlab.h"
#include "reference/reference.h"

namespace distbench {

using gemmlab::Precision;
using gemmlab::Status;

// A barrier for the rank threads (C++17 has none).
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    const int gen = gen_;
    if (++count_ == n_) {
      count_ = 0, ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen != gen_; });
    }
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, count_ = 0, gen_ = 0;
};

[[noreturn]] inline void die(const std::string& why) {
  std::fprintf(stderr, "dist-bench: %s\n", why.c_str());
  std::exit(1);
}
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(e));
}
inline void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) die(std::string(what) + ": " + ncclGetErrorString(r));
}
inline void check(Status s, const char* what) {
  if (s != Status::Success) die(std::string(what) + ": " + gemmlab::last_error_message());
}

// One GPU: its communicator, a stream, timing events, and device buffers that live for the run.
struct Rank {
  int id = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> marks;  // iters + 1 timing events
  std::vector<void*> buffers;
  void* alloc(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
    check(gemmlab::fill_random_device(p, static_cast<int64_t>(bytes / 2), Precision::BF16, 7, stream),
          "fill");
    buffers.push_back(p);
    return p;
  }
  void free_all() {
    check(cudaStreamSynchronize(stream), "sync");
    for (void* p : buffers) cudaFree(p);
    buffers.clear();
  }
};

struct Machine {
  std::vector<Rank> ranks;
  Barrier barrier;
  int iters, warmup;
  std::pair<float, float> spread{0.f, 0.f};  // fastest and slowest repetition of the last time()
  explicit Machine(int n, int it, int wu) : ranks(n), barrier(n), iters(it), warmup(wu) {}

  // fn(rank) enqueued iters times on every rank at once; the slowest rank's median repetition, ms.
  double time(const std::function<void(Rank&)>& fn) {
    std::vector<float> ms(ranks.size()), lo(ranks.size()), hi(ranks.size());
    std::vector<std::thread> threads;
    for (Rank& rank : ranks)
      threads.emplace_back([&, this, rp = &rank] {
        Rank& r = *rp;
        check(cudaSetDevice(r.id), "cudaSetDevice");
        for (int i = 0; i < warmup; ++i) fn(r);
        check(cudaStreamSynchronize(r.stream), "warm-up");
        barrier.wait();
        std::vector<float> each(static_cast<size_t>(iters));
        for (int i = 0; i < iters; ++i) {  // back to back, an event pair around each repetition
          check(cudaEventRecord(r.marks[i], r.stream), "event");
          fn(r);
        }
        check(cudaEventRecord(r.marks[iters], r.stream), "event");
        check(cudaEventSynchronize(r.marks[iters]), "sync");
        for (int i = 0; i < iters; ++i)
          check(cudaEventElapsedTime(&each[i], r.marks[i], r.marks[i + 1]), "elapsed");
        std::sort(each.begin(), each.end());
        ms[r.id] = each[iters / 2];
        lo[r.id] = each.front(), hi[r.id] = each.back();
      });
    for (std::thread& t : threads) t.join();
    const size_t slowest = std::max_element(ms.begin(), ms.end()) - ms.begin();
    spread = {lo[slowest], hi[slowest]};
    return ms[slowest];
  }
  // fn(rank) once on every rank's thread (set-up, no timing).
  void each(const std::function<void(Rank&)>& fn) {
    std::vector<std::thread> threads;
    for (Rank& rank : ranks)
      threads.emplace_back([&fn, rp = &rank] {
        Rank& r = *rp;
        check(cudaSetDevice(r.id), "cudaSetDevice");
        fn(r);
        check(cudaStreamSynchronize(r.stream), "sync");
      });
    for (std::thread& t : threads) t.join();
  }
  int size() const { return static_cast<int>(ranks.size()); }
};

}  // namespace distbench
