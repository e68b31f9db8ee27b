#include "gemm-bench/runner.h"

#include "gemm-bench/gpu_delay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include "reference/reference.h"
#include "runtime/device_props.h"

namespace gemmbench {

using gemmlab::GemmProblem;
using gemmlab::KernelDesc;
using gemmlab::Op;
using gemmlab::Precision;

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::vector<const KernelDesc*> select_kernels(const std::vector<std::string>& names,
                                              std::string* error) {
  std::vector<bool> chosen(gemmlab::all_kernels().size(), false);
  for (const std::string& name : names) {
    bool matched = false;
    for (size_t i = 0; i < gemmlab::all_kernels().size(); ++i) {
      const KernelDesc& k = gemmlab::all_kernels()[i];
      if (name == "all" || name == k.name || name == k.family) chosen[i] = matched = true;
    }
    if (!matched && name != "cublas") {
      *error = "gemm-bench: unknown kernel or family '" + name + "' (see --list)";
      return {};
    }
  }
  std::vector<const KernelDesc*> out;
  for (size_t i = 0; i < chosen.size(); ++i)
    if (chosen[i]) out.push_back(&gemmlab::all_kernels()[i]);
  return out;
}

namespace {

double flops(const Shape& s) { return 2.0 * s.m * s.n * s.k; }

struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    if (cudaMalloc(&ptr, std::max<size_t>(bytes, 1)) != cudaSuccess) ptr = nullptr;
  }
  ~DeviceBuffer() { cudaFree(ptr); }
};

// A problem of the bench: tight leading dimensions, alpha 1, beta 0; with the stored shapes of A
// and B and the element size.
struct TightProblem {
  GemmProblem p;
  int64_t ar, ac, br, bc;  // A stored ar x ac, B stored br x bc
  int eb;                  // bytes per element of A and B
};
TightProblem tight_problem(const Shape& s, Precision dtype, Op op_a, Op op_b) {
  TightProblem t;
  GemmProblem& p = t.p;
  p.precision = dtype, p.op_a = op_a, p.op_b = op_b, p.m = s.m, p.n = s.n, p.k = s.k;
  p.alpha = 1.f, p.beta = 0.f;
  gemmlab::stored_shape_a(p, &t.ar, &t.ac);
  gemmlab::stored_shape_b(p, &t.br, &t.bc);
  p.lda = t.ac, p.ldb = t.bc, p.ldc = s.n;
  t.eb = gemmlab::input_bytes(dtype);
  return t;
}

struct Events {
  cudaEvent_t start, stop;
  Events() {
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

// Times `launch` with CUDA events: warm-up, then reps timed one by one (the L2 flushed before
// each unless disabled), median/min/max. Slow rows get fewer reps (never fewer than 3). A 200 us
// spin kernel ahead of the start event keeps the GPU busy while the host enqueues the launch, so
// the events time the GPU work of the call, not host overhead or jitter (gpu_delay.cu).
constexpr double kSpinMicroseconds = 200;

std::string time_it(const std::function<cudaError_t()>& launch, const Options& opt,
                    void* flush_buf, size_t flush_bytes, Row* row) {
  for (int i = 0; i < opt.warmup; ++i)
    if (cudaError_t e = launch(); e != cudaSuccess) return cudaGetErrorString(e);
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return cudaGetErrorString(e);
  Events ev;
  std::vector<float> ms;
  int reps = opt.reps;
  for (int r = 0; r < reps; ++r) {
    if (opt.flush_l2 && flush_buf) cudaMemsetAsync(flush_buf, r & 0xff, flush_bytes);
    if (cudaError_t e = enqueue_gpu_delay(kSpinMicroseconds); e != cudaSuccess)
      return cudaGetErrorString(e);
    cudaEventRecord(ev.start);
    if (cudaError_t e = launch(); e != cudaSuccess) return cudaGetErrorString(e);
    cudaEventRecord(ev.stop);
    if (cudaError_t e = cudaEventSynchronize(ev.stop); e != cudaSuccess) return cudaGetErrorString(e);
    float t = 0;
    cudaEventElapsedTime(&t, ev.start, ev.stop);
    ms.push_back(t);
    if (r == 0 && t * 1e-3 * reps > opt.max_seconds_per_row)
      reps = std::max(3, static_cast<int>(opt.max_seconds_per_row / (t * 1e-3)));
  }
  std::sort(ms.begin(), ms.end());
  row->reps = static_cast<int>(ms.size());
  row->ms_min = ms.front();
  row->ms_max = ms.back();
  row->ms_median = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  row->tflops = flops(row->shape) / (row->ms_median * 1e-3) / 1e12;
  return "";
}

cudaDataType_t cuda_input_type(Precision p) {
  switch (p) {
    case Precision::BF16: return CUDA_R_16BF;
    case Precision::FP16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}

// cuBLAS for the same problem. Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
// Compute type made explicit: fp32 -> 32F (no TF32), tf32 -> 32F_FAST_TF32, bf16/fp16 -> 32F.
cublasStatus_t cublas_gemm(cublasHandle_t h, const GemmProblem& p) {
  const cublasComputeType_t ct =
      p.precision == Precision::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const cudaDataType_t t = cuda_input_type(p.precision);
  return cublasGemmEx(h, p.op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T,
                      p.op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T, static_cast<int>(p.n),
                      static_cast<int>(p.m), static_cast<int>(p.k), &p.alpha, p.B, t,
                      static_cast<int>(p.ldb), p.A, t, static_cast<int>(p.lda), &p.beta, c_f32(p),
                      CUDA_R_32F, static_cast<int>(p.ldc), ct, CUBLAS_GEMM_DEFAULT);
}

void fill_resources(const KernelDesc& k, const GemmProblem& p, const DeviceInfo& dev, Row* row) {
  if (!k.config) return;
  const gemmlab::LaunchConfig c = k.config(p);
  if (!c.kernel) return;
  cudaFuncAttributes a{};
  if (cudaFuncGetAttributes(&a, c.kernel) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  row->threads_per_block = static_cast<int>(c.block.x * c.block.y * c.block.z);
  row->registers = a.numRegs;
  row->smem_static = static_cast<long long>(a.sharedSizeBytes);
  row->smem_dynamic = static_cast<long long>(c.smem_bytes);
  row->local_bytes = static_cast<long long>(a.localSizeBytes);
  int blocks = 0;
  // The occupancy query sees the function's shared-memory attributes: opt in to the launch's
  // dynamic shared memory first, as the launch does (above 48 KB the query says 0 otherwise).
  if (gemmlab::prepare_function(c.kernel, static_cast<int>(c.smem_bytes)) == cudaSuccess &&
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, c.kernel, row->threads_per_block,
                                                    c.smem_bytes) == cudaSuccess) {
    row->blocks_per_sm = blocks;
    row->occupancy = dev.max_threads_per_sm
                         ? static_cast<double>(blocks) * row->threads_per_block / dev.max_threads_per_sm
                         : 0;
  } else {
    cudaGetLastError();
  }
}

void progress(const Options& opt, size_t i, size_t total, const std::string& what) {
  if (opt.quiet) return;
  static const bool tty = isatty(2);
  std::fprintf(stderr, tty ? "\r\033[K[%zu/%zu] %s" : "[%zu/%zu] %s\n", i, total, what.c_str());
  std::fflush(stderr);
}

std::string gib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  return b;
}

}  // namespace

Report run_gpu_bench(const Options& opt, const DeviceInfo& dev) {
  Report rep;
  rep.device = dev;
  rep.date = utc_now();
  rep.options = opt;
  std::string err;
  const std::vector<const KernelDesc*> kernels = select_kernels(opt.kernels, &err);
  const bool want_cublas =
      opt.cublas || std::find(opt.kernels.begin(), opt.kernels.end(), "cublas") != opt.kernels.end();

  cublasHandle_t handle = nullptr;
  if (want_cublas && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) handle = nullptr;
  const size_t flush_bytes = static_cast<size_t>(std::max<long long>(dev.l2_bytes, 1 << 20)) * 2;
  DeviceBuffer flush(opt.flush_l2 ? flush_bytes : 0);

  size_t total = 0, done = 0;
  for (Precision d : opt.dtypes)
    for (const KernelDesc* k : kernels) total += (k->dtypes & gemmlab::dtype_bit(d)) ? 1 : 0;
  total = (total + (want_cublas ? opt.dtypes.size() : 0)) * opt.sizes.size() * opt.trans.size();

  for (Precision dtype : opt.dtypes) {
    for (const auto& [op_a, op_b] : opt.trans) {
      for (const Shape& s : opt.sizes) {
        const std::string trans = std::string(op_a == Op::N ? "N" : "T") + (op_b == Op::N ? "N" : "T");
        auto base_row = [&](const std::string& name) {
          Row r;
          r.kernel = name, r.shape = s, r.dtype = dtype, r.trans = trans;
          r.error_bound = gemmlab::error_bound(dtype);
          return r;
        };
        TightProblem tp = tight_problem(s, dtype, op_a, op_b);
        GemmProblem& p = tp.p;
        const int64_t ar = tp.ar, ac = tp.ac, br = tp.br, bc = tp.bc;
        const int eb = tp.eb;
        const double need = double(ar) * ac * eb + double(br) * bc * eb + double(s.m) * s.n * 4 +
                            (opt.check ? 8.0 * (ar * ac + br * bc + s.m * s.n) : 0.0);
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        std::vector<const KernelDesc*> todo;
        for (const KernelDesc* k : kernels)
          if (k->dtypes & gemmlab::dtype_bit(dtype)) todo.push_back(k);
        if (need > 0.95 * free_b) {
          Row r = base_row(todo.empty() ? "cublas" : todo.front()->name);
          r.status = "error: problem needs " + gib(need) + " of device memory, " + gib(free_b) + " free";
          rep.rows.push_back(r);
          continue;
        }
        DeviceBuffer a(ar * ac * eb), b(br * bc * eb), c(s.m * s.n * 4);
        gemmlab::fill_random_device(a.ptr, ar * ac, dtype, 1000 + s.m);
        gemmlab::fill_random_device(b.ptr, br * bc, dtype, 2000 + s.n);
        p.A = a.ptr, p.B = b.ptr, p.C = static_cast<float*>(c.ptr);
        std::vector<double> ref;
        std::string ref_err;
        if (opt.check) {
          ref.resize(static_cast<size_t>(s.m * s.n));
          ref_err = gemmlab::reference_gemm_gpu(p, ref.data());
        }
        std::vector<float> out(opt.check ? static_cast<size_t>(s.m * s.n) : 0);
        auto check = [&](const std::function<cudaError_t()>& launch, Row* r) {
          if (!opt.check) return;
          if (!ref_err.empty()) {
            r->status = "error: reference failed: " + ref_err;
            return;
          }
          gemmlab::fill_nan_device(gemmlab::c_f32(p), s.m * s.n);
          cudaError_t e = launch();
          if (e == cudaSuccess) e = cudaDeviceSynchronize();
          if (e == cudaSuccess)
            e = cudaMemcpy(out.data(), p.C, out.size() * 4, cudaMemcpyDeviceToHost);
          if (e != cudaSuccess) {
            r->status = std::string("error: ") + cudaGetErrorString(e);
            return;
          }
          r->checked = true;
          r->error = gemmlab::relative_error(out.data(), s.n, ref.data(), s.m, s.n);
          r->pass = r->error <= r->error_bound;
        };

        const size_t first_row = rep.rows.size();
        double cublas_ms = 0;
        if (want_cublas) {
          progress(opt, ++done, total, "cublas " + shape_text(s) + " " + gemmlab::precision_name(dtype));
          Row r = base_row("cublas");
          r.family = "cublas";
          auto launch = [&]() -> cudaError_t {
            return cublas_gemm(handle, p) == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
          };
          if (!handle) {
            r.status = "error: cublasCreate failed";
          } else if (std::string e = time_it(launch, opt, flush.ptr, flush_bytes, &r); !e.empty()) {
            r.status = "error: " + e;
          } else {
            cublas_ms = r.ms_median;
            check(launch, &r);
          }
          rep.rows.push_back(r);
        }
        for (const KernelDesc* k : todo) {
          progress(opt, ++done, total, std::string(k->name) + " " + shape_text(s) + " " + gemmlab::precision_name(dtype));
          Row r = base_row(k->name);
          r.step = k->step, r.family = k->family, r.seed = k->seed;
          if (dev.cc < k->min_cc) {
            r.status = "skipped: needs sm_" + std::to_string(k->min_cc) + (k->min_cc == 90 ? "a" : "");
          } else if (const char* why = gemmlab::kernel_cannot_run(*k, p, dev.cc)) {
            r.status = std::string("skipped: ") + why;
          } else {
            fill_resources(*k, p, dev, &r);
            auto launch = [&]() -> cudaError_t {
              const gemmlab::Status st = gemmlab::gemm(p.op_a, p.op_b, p.m, p.n, p.k, p.alpha, p.A,
                                                       p.lda, p.B, p.ldb, p.beta, c_f32(p), p.ldc,
                                                       p.precision, k->name);
              return st == gemmlab::Status::Success ? cudaSuccess : cudaErrorLaunchFailure;
            };
            if (std::string e = time_it(launch, opt, flush.ptr, flush_bytes, &r); !e.empty())
              r.status = "error: " + e + " (" + gemmlab::last_error_message() + ")";
            else
              check(launch, &r);
          }
          rep.rows.push_back(r);
        }
        // Ratios within this problem's rows.
        double naive_ms = 0;
        for (const Row& r : rep.rows)
          if (r.kernel == "simt/01_naive" && r.shape.m == s.m && r.shape.n == s.n &&
              r.shape.k == s.k && r.trans == trans && r.ms_median > 0)
            naive_ms = r.ms_median;
        for (size_t i = first_row; i < rep.rows.size(); ++i) {
          Row& r = rep.rows[i];
          if (r.ms_median <= 0) continue;
          if (cublas_ms > 0) r.pct_cublas = 100.0 * cublas_ms / r.ms_median;
          if (naive_ms > 0) r.speedup_vs_naive = naive_ms / r.ms_median;
          const double peak = peak_tflops(dev, dtype);
          if (peak > 0) r.pct_peak = 100.0 * r.tflops / peak;
        }
      }
    }
  }
  if (!opt.quiet && isatty(2)) std::fprintf(stderr, "\r\033[K");
  if (handle) cublasDestroy(handle);
  return rep;
}

Report run_cpu_bench(const Options& opt) {
  Report rep;
  rep.cpu_mode = true;
  rep.date = utc_now();
  rep.options = opt;
  rep.device.name = "CPU (fp64 reference)";
  size_t done = 0;
  const size_t total = opt.dtypes.size() * opt.trans.size() * opt.sizes.size();
  for (Precision dtype : opt.dtypes) {
    for (const auto& [op_a, op_b] : opt.trans) {
      for (const Shape& s : opt.sizes) {
        Row r;
        r.kernel = "cpu_fp64_reference", r.family = "reference", r.shape = s, r.dtype = dtype;
        r.trans = std::string(op_a == Op::N ? "N" : "T") + (op_b == Op::N ? "N" : "T");
        progress(opt, ++done, total, "cpu " + shape_text(s) + " " + gemmlab::precision_name(dtype));
        TightProblem tp = tight_problem(s, dtype, op_a, op_b);
        GemmProblem& p = tp.p;
        const int64_t ar = tp.ar, ac = tp.ac, br = tp.br, bc = tp.bc;
        const int eb = tp.eb;
        std::vector<char> a(ar * ac * eb), b(br * bc * eb);
        gemmlab::fill_random_host(a.data(), ar * ac, dtype, 1);
        gemmlab::fill_random_host(b.data(), br * bc, dtype, 2);
        p.A = a.data(), p.B = b.data();
        std::vector<double> out(static_cast<size_t>(s.m * s.n));
        std::vector<double> ms;
        const int reps = std::max(1, std::min(opt.reps, 3));
        for (int i = 0; i < reps; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          gemmlab::reference_gemm_cpu(p, out.data());
          ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(ms.begin(), ms.end());
        r.reps = reps;
        r.ms_min = ms.front(), r.ms_max = ms.back(), r.ms_median = ms[ms.size() / 2];
        r.tflops = flops(s) / (r.ms_median * 1e-3) / 1e12;
        rep.rows.push_back(r);
      }
    }
  }
  if (!opt.quiet && isatty(2)) std::fprintf(stderr, "\r\033[K");
  return rep;
}

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
