// --profile KERNEL: one warm-up and one launch inside an NVTX range, and the ncu command that
// collects hardware counters for exactly that launch.
#include <cstdio>
#include <string>

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "gemm-bench/problem.h"
#include "gemm-bench/runner.h"
#include "reference/reference.h"

namespace gemmbench {

using gemmlab::GemmProblem;
using gemmlab::KernelDesc;
using gemmlab::Op;
using gemmlab::Precision;

int run_profile(const Options& opt, const DeviceInfo& dev, const char* argv0) {
  const KernelDesc* k = gemmlab::find_kernel(opt.profile_kernel);
  if (!k) {
    std::fprintf(stderr, "gemm-bench: unknown kernel '%s' (see --list)\n", opt.profile_kernel.c_str());
    return 2;
  }
  const Shape s = opt.sizes.front();
  Precision dtype = opt.dtypes.front();
  if (!(k->dtypes & gemmlab::dtype_bit(dtype)))
    for (Precision d : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
      if (k->dtypes & gemmlab::dtype_bit(d)) { dtype = d; break; }
  const auto [op_a, op_b] = opt.trans.front();
  TightProblem tp = tight_problem(s, dtype, op_a, op_b);
  GemmProblem& p = tp.p;
  const int64_t ar = tp.ar, ac = tp.ac, br = tp.br, bc = tp.bc;
  const int eb = tp.eb;
  DeviceBuffer a(ar * ac * eb), b(br * bc * eb), c(s.m * s.n * 4);
  if (!a.ptr || !b.ptr || !c.ptr) {
    std::fprintf(stderr, "gemm-bench: cudaMalloc failed for %s\n", shape_text(s).c_str());
    return 1;
  }
  gemmlab::fill_random_device(a.ptr, ar * ac, dtype, 1);
  gemmlab::fill_random_device(b.ptr, br * bc, dtype, 2);
  p.A = a.ptr, p.B = b.ptr, p.C = static_cast<float*>(c.ptr);
  auto run = [&]() {
    return gemmlab::gemm(p.op_a, p.op_b, p.m, p.n, p.k, 1.f, p.A, p.lda, p.B, p.ldb, 0.f, gemmlab::c_f32(p),
                         p.ldc, dtype, k->name);
  };
  if (run() != gemmlab::Status::Success) {  // warm-up, outside the range
    std::fprintf(stderr, "gemm-bench: %s\n", gemmlab::last_error_message());
    return 1;
  }
  cudaDeviceSynchronize();
  nvtxRangePushA("gemmlab_profile");
  const gemmlab::Status st = run();
  cudaDeviceSynchronize();
  nvtxRangePop();
  if (st != gemmlab::Status::Success) {
    std::fprintf(stderr, "gemm-bench: %s\n", gemmlab::last_error_message());
    return 1;
  }
  const std::string trans = std::string(op_a == Op::N ? "N" : "T") + (op_b == Op::N ? "N" : "T");
  std::printf("Profiled launch: %s %s %s %s on %s (one warm-up, then one launch inside NVTX range "
              "'gemmlab_profile').\nTo collect hardware counters for exactly that launch:\n\n"
              "  ncu --nvtx --nvtx-include \"gemmlab_profile/\" --clock-control none --set full "
              "-o profile_%d %s --profile %s --sizes %s --dtype %s --trans %s\n",
              k->name, shape_text(s).c_str(), gemmlab::precision_name(dtype), trans.c_str(),
              dev.name.c_str(), k->step, argv0, k->name, shape_text(s).c_str(),
              gemmlab::precision_name(dtype), trans.c_str());
  return 0;
}

}  // namespace gemmbench
