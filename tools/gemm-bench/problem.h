// What gemm-bench's modes share: a problem as the bench runs it (tight leading dimensions), a
// device buffer, the FLOP count and the progress line (runner.cpp, cpu_bench.cpp, profile.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include <cuda_runtime_api.h>
#include <unistd.h>

#include "gemm-bench/options.h"
#include "reference/reference.h"
#include "registry/registry.h"

namespace gemmbench {

inline double flops(const Shape& s) { return 2.0 * s.m * s.n * s.k * s.batch; }

struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    if (cudaMalloc(&ptr, std::max<size_t>(bytes, 1)) != cudaSuccess) {
      ptr = nullptr;
      cudaGetLastError();
    }
  }
  ~DeviceBuffer() { cudaFree(ptr); }
};

// A problem of the bench: tight leading dimensions, alpha 1, beta 0; with the stored shapes of A
// and B and the element size.
struct TightProblem {
  gemmlab::GemmProblem p;
  int64_t ar, ac, br, bc;  // A stored ar x ac, B stored br x bc
  int eb;                  // bytes per element of A and B
};
inline TightProblem tight_problem(const Shape& s, gemmlab::Precision dtype, gemmlab::Op op_a,
                                 gemmlab::Op op_b) {
  TightProblem t;
  gemmlab::GemmProblem& p = t.p;
  p.precision = dtype, p.op_a = op_a, p.op_b = op_b, p.m = s.m, p.n = s.n, p.k = s.k;
  p.alpha = 1.f, p.beta = 0.f;
  gemmlab::stored_shape_a(p, &t.ar, &t.ac);
  gemmlab::stored_shape_b(p, &t.br, &t.bc);
  p.lda = t.ac, p.ldb = t.bc, p.ldc = s.n;
  t.eb = gemmlab::input_bytes(dtype);
  return t;
}

inline void progress(const Options& opt, size_t i, size_t total, const std::string& what) {
  if (opt.quiet) return;
  static const bool tty = isatty(2);
  std::fprintf(stderr, tty ? "\r\033[K[%zu/%zu] %s" : "[%zu/%zu] %s\n", i, total, what.c_str());
  std::fflush(stderr);
}

}  // namespace gemmbench
