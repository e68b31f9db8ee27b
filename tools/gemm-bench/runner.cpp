#include "gemm-bench/runner.h"

#include "gemm-bench/bandwidth.h"
#include "gemm-bench/gpu_delay.h"
#include "gemm-bench/measure.h"
#include "gemm-bench/problem.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include "gemm-bench/check.h"
#include "gemm-bench/cublaslt.h"
#include "reference/reference.h"
#include "runtime/device_props.h"

namespace gemmbench {

using gemmlab::GemmProblem;
using gemmlab::KernelDesc;
using gemmlab::Op;
using gemmlab::Precision;

namespace {

constexpr size_t kLtWorkspaceBytes = size_t{32} << 20;  // cuBLASLt's workspace (32 MiB)

// cuBLAS rows of a variant: the plain call gets cublasGemmEx (batches: cublasGemmStridedBatchedEx),
// plus cuBLASLt for batches and with --cublaslt; any other variant gets cuBLASLt alone.
size_t cublas_rows(const Variant& v, const Shape& s, const Options& opt) {
  if (!v.plain()) return 1;
  return (s.batch > 1 || opt.cublaslt) ? 2 : 1;
}

// "out=bf16 bias=bf16 act=gelu_tanh" (progress lines).
std::string variant_label(const Variant& v) {
  return std::string("out=") + gemmlab::dtype_name(v.out) +
         " bias=" + (v.has_bias ? gemmlab::dtype_name(v.bias_type) : "none") +
         " act=" + gemmlab::activation_name(v.act);
}

gemmlab::GemmDesc to_desc(const GemmProblem& p) {
  gemmlab::GemmDesc d;
  d.op_a = p.op_a, d.op_b = p.op_b, d.m = p.m, d.n = p.n, d.k = p.k;
  d.alpha = p.alpha, d.beta = p.beta;
  d.A = p.A, d.lda = p.lda, d.B = p.B, d.ldb = p.ldb;
  d.C = p.C, d.ldc = p.ldc, d.c_type = p.c_type;
  d.D = p.D, d.ldd = p.ldd, d.d_type = p.d_type;
  d.bias = p.bias, d.bias_type = p.bias_type, d.act = p.act;
  d.precision = p.precision;
  d.batch = p.batch;
  d.stride_a = p.stride_a, d.stride_b = p.stride_b, d.stride_c = p.stride_c, d.stride_d = p.stride_d;
  return d;
}

// Rows a run will produce (for the progress line): per dtype, variant, size and transpose, one
// per kernel that takes the dtype, auto's, and cuBLAS's.
size_t planned_rows(const Options& opt, const std::vector<const KernelDesc*>& kernels,
                    bool want_auto, bool want_cublas) {
  size_t total = 0;
  for (Precision d : opt.dtypes) {
    size_t per_variant = want_auto ? 1 : 0;
    for (const KernelDesc* k : kernels) per_variant += (k->dtypes & gemmlab::dtype_bit(d)) ? 1 : 0;
    for (const Variant& v : variants_for(opt, d))
      for (const Shape& s : opt.sizes)
        total += (per_variant + (want_cublas ? cublas_rows(v, s, opt) : 0)) * opt.trans.size();
  }
  return total;
}

std::string gib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  return b;
}

}  // namespace

void set_ratios(std::vector<Row>* rows, size_t first, double cublas_ms, double peak_tflops) {
  double naive_ms = 0;
  for (size_t i = first; i < rows->size(); ++i)
    if ((*rows)[i].kernel == "simt/01_naive" && (*rows)[i].ms_median > 0)
      naive_ms = (*rows)[i].ms_median;
  for (size_t i = first; i < rows->size(); ++i) {
    Row& r = (*rows)[i];
    if (r.ms_median <= 0) continue;
    if (cublas_ms > 0) r.pct_cublas = 100.0 * cublas_ms / r.ms_median;
    if (naive_ms > 0) r.speedup_vs_naive = naive_ms / r.ms_median;
    if (peak_tflops > 0) r.pct_peak = 100.0 * r.tflops / peak_tflops;
  }
}

namespace {

// What every row of a run shares: the options, the device, cuBLAS's handles and workspace, the
// L2 flush, the report being filled and the progress count.
struct Bench {
  const Options& opt;
  const DeviceInfo& dev;
  Report& rep;
  cublasHandle_t handle = nullptr;
  cublasLtHandle_t lt_handle = nullptr;
  void* lt_workspace = nullptr;
  L2Flush l2;
  bool want_cublas = false, want_auto = false;
  size_t total = 0, done = 0;
};

// One problem of the run (dtype, transposes, shape): its operands and D on the device, the fp64
// product of every checked region (each variant puts its epilogue on top) and the registered
// kernels that take its dtype.
struct BenchProblem {
  Precision dtype = Precision::FP32;
  Shape s;
  std::string trans;
  GemmProblem p;
  int eb = 0;
  int64_t d_elems = 0;
  void* d = nullptr;
  std::vector<CheckRegion> regions;
  std::vector<std::vector<double>> ref;
  std::string ref_err;
  std::vector<const KernelDesc*> todo;
};

Row base_row(const Bench& b, const BenchProblem& bp, const std::string& name, const Variant& v) {
  Row r;
  r.kernel = name, r.shape = bp.s, r.dtype = bp.dtype, r.trans = bp.trans;
  r.out_dtype = v.out, r.act = v.act, r.broadcast_b = bp.p.batch > 1 && b.opt.broadcast_b;
  r.bias = v.has_bias ? gemmlab::dtype_name(v.bias_type) : "none";
  r.error_bound = check_bound(bp.dtype, v.out, v.act, name == "cublaslt");
  return r;
}

// Runs `launch` once into D poisoned with NaN and compares every checked region of D with
// `expected` (the product, with the variant's epilogue where it has one): r's error and pass.
void check_row(const Bench& b, const BenchProblem& bp, const Variant& v,
               const std::vector<std::vector<double>>& expected,
               const std::function<cudaError_t()>& launch, Row* r) {
  if (!b.opt.check) return;
  if (!bp.ref_err.empty()) {
    r->status = "error: reference failed: " + bp.ref_err;
    return;
  }
  const int ob = gemmlab::dtype_bytes(v.out);
  cudaError_t e = cudaMemset(bp.d, 0xff, static_cast<size_t>(bp.d_elems) * ob);  // NaN
  if (e == cudaSuccess) e = launch();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  ErrorSum sum;
  std::vector<char> out_host;
  for (size_t i = 0; i < bp.regions.size() && e == cudaSuccess; ++i) {
    const CheckRegion& g = bp.regions[i];
    out_host.resize(static_cast<size_t>(g.rows * bp.s.n * ob));
    const int64_t off = g.entry * bp.p.stride_d + g.row0 * bp.p.ldd;
    e = cudaMemcpy(out_host.data(), static_cast<char*>(bp.d) + off * ob, out_host.size(),
                   cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) sum.add(out_host.data(), v.out, expected[i].data(), g.rows * bp.s.n);
  }
  if (e != cudaSuccess) {
    r->status = std::string("error: ") + cudaGetErrorString(e);
    return;
  }
  r->checked = true;
  r->error = sum.relative();
  r->pass = r->error <= r->error_bound;
}

// The cuBLAS rows of a variant (cublasGemmEx / StridedBatchedEx for a plain one; cuBLASLt with the
// matching epilogue, for batches and with --cublaslt too); returns the time the others are
// compared with (0 where there is none).
double run_cublas(Bench& b, const BenchProblem& bp, const Variant& v,
                  const std::vector<std::vector<double>>& expected, const std::string& what) {
  const Options& opt = b.opt;
  const GemmProblem& p = bp.p;
  const int64_t batch = p.batch;
  double cublas_ms = 0;  // the reference: cublasGemmEx / StridedBatchedEx, else cuBLASLt
  if (b.want_cublas && v.plain()) {
    progress(opt, ++b.done, b.total, "cublas" + what);
    Row r = base_row(b, bp, "cublas", v);
    r.family = "cublas";
    auto launch = [&]() -> cudaError_t {
      const cublasStatus_t st =
          batch == 1 ? cublas_gemm(b.handle, p) : cublas_gemm_batched(b.handle, p);
      return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
    };
    if (!b.handle) {
      r.status = "error: cublasCreate failed";
    } else if (std::string e = time_it(launch, opt, b.l2, &r); !e.empty()) {
      r.status = "error: " + e;
    } else {
      cublas_ms = r.ms_median;
      check_row(b, bp, v, expected, launch, &r);
    }
    b.rep.rows.push_back(r);
  }
  if (b.want_cublas && cublas_rows(v, bp.s, opt) > (v.plain() ? 1 : 0)) {
    progress(opt, ++b.done, b.total, "cublaslt" + what);
    Row r = base_row(b, bp, "cublaslt", v);
    r.family = "cublas";
    LtGemm lt;
    auto launch = [&]() -> cudaError_t {
      return lt.run() == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
    };
    if (!b.lt_handle) {
      r.status = "error: cublasLtCreate failed";
    } else if (std::string e = lt.plan(b.lt_handle, p, b.lt_workspace, kLtWorkspaceBytes);
               !e.empty()) {
      r.status = e;
    } else if (std::string e = time_it(launch, opt, b.l2, &r); !e.empty()) {
      r.status = "error: " + e;
    } else {
      if (!v.plain()) cublas_ms = r.ms_median;
      check_row(b, bp, v, expected, launch, &r);
    }
    b.rep.rows.push_back(r);
  }
  return cublas_ms;
}

// The rows of one epilogue variant of a problem: cuBLAS (cublasGemmEx / StridedBatchedEx) and
// cuBLASLt where it is the yardstick, `auto`, every kernel (with --variants, every plan variant it
// offers), then their ratios to cuBLAS.
void run_variant(Bench& b, BenchProblem& bp, const Variant& v) {
  const Options& opt = b.opt;
  GemmProblem& p = bp.p;
  const Shape& s = bp.s;
  p.d_type = v.out, p.act = v.act;
  DeviceBuffer bias(v.has_bias ? s.n * gemmlab::dtype_bytes(v.bias_type) : 0);
  std::vector<double> bias_host;
  p.bias = v.has_bias ? bias.ptr : nullptr;
  p.bias_type = v.has_bias ? v.bias_type : gemmlab::DType::F32;
  if (v.has_bias) {
    const Precision storage = v.bias_type == gemmlab::DType::BF16  ? Precision::BF16
                              : v.bias_type == gemmlab::DType::F16 ? Precision::FP16
                                                                   : Precision::FP32;
    gemmlab::fill_random_device(bias.ptr, s.n, storage, 3000 + s.n);
    std::vector<char> raw(static_cast<size_t>(s.n * gemmlab::dtype_bytes(v.bias_type)));
    cudaMemcpy(raw.data(), bias.ptr, raw.size(), cudaMemcpyDeviceToHost);
    for (int64_t j = 0; j < s.n; ++j) bias_host.push_back(load_dtype(raw.data(), v.bias_type, j));
  }
  // What each checked region of D must hold for this variant.
  std::vector<std::vector<double>> with_epilogue(v.plain() ? 0 : bp.regions.size());
  if (opt.check && bp.ref_err.empty() && !v.plain())
    for (size_t i = 0; i < bp.regions.size(); ++i) {
      with_epilogue[i].resize(bp.ref[i].size());
      apply_epilogue_ref(bp.ref[i].data(), bp.regions[i].rows, s.n,
                         v.has_bias ? bias_host.data() : nullptr, v.act, v.out,
                         with_epilogue[i].data());
    }
  const std::vector<std::vector<double>>& expected = v.plain() ? bp.ref : with_epilogue;
  const gemmlab::GemmDesc desc = to_desc(p);
  const std::string what = " " + shape_text(s) + " " + gemmlab::precision_name(bp.dtype) +
                           (v.plain() ? "" : " " + variant_label(v));

  const size_t first_row = b.rep.rows.size();
  const double cublas_ms = run_cublas(b, bp, v, expected, what);
  auto run_kernel = [&](const KernelDesc* k, Row& r) {
    const gemmlab::ForcePlan force(r.choice);
    fill_resources(*k, p, b.dev, &r);
    const char* name = r.kernel == "auto" ? "auto" : k->name;
    auto launch = [&]() -> cudaError_t {
      const gemmlab::Status st = gemmlab::gemm(desc, name);
      return st == gemmlab::Status::Success ? cudaSuccess : cudaErrorLaunchFailure;
    };
    if (std::string e = time_it(launch, opt, b.l2, &r); !e.empty())
      r.status = "error: " + e + " (" + gemmlab::last_error_message() + ")";
    else
      check_row(b, bp, v, expected, launch, &r);
  };
  if (b.want_auto) {
    progress(opt, ++b.done, b.total, "auto" + what);
    Row r = base_row(b, bp, "auto", v);
    r.family = "auto";
    const char* chosen = gemmlab::auto_kernel_name(desc);
    const KernelDesc* k = chosen ? gemmlab::find_kernel(chosen) : nullptr;
    if (!k) {
      r.status = std::string("error: auto: ") + gemmlab::last_error_message();
    } else {
      r.auto_kernel = k->name, r.step = k->step, r.seed = k->seed;
      run_kernel(k, r);
    }
    b.rep.rows.push_back(r);
  }
  for (const KernelDesc* k : bp.todo) {
    progress(opt, ++b.done, b.total, std::string(k->name) + what);
    Row r = base_row(b, bp, k->name, v);
    r.step = k->step, r.family = k->family, r.seed = k->seed;
    if (b.dev.cc < k->min_cc) {
      r.status = "skipped: needs sm_" + std::to_string(k->min_cc) + (k->min_cc == 90 ? "a" : "");
    } else if (const char* why = gemmlab::kernel_cannot_run(*k, p, b.dev.cc)) {
      r.status = std::string("skipped: ") + why;
    } else {
      run_kernel(k, r);
    }
    b.rep.rows.push_back(r);
    if (opt.variants && k->variants && r.status == "ok") {  // gemm-tune's rows
      // Up to 128: wgmma/small offers ~14 tiles x 3-7 split counts (with the one- and two-wave ones).
      constexpr int kMaxVariants = 128;
      gemmlab::PlanChoice choices[kMaxVariants];
      const int count = k->variants(p, choices, kMaxVariants);
      for (int i = 0; i < count; ++i) {
        Row x = base_row(b, bp, k->name, v);
        x.step = k->step, x.family = k->family, x.seed = k->seed;
        x.choice = choices[i];
        x.plan = gemmlab::plan_choice_label(choices[i], k->tile_names);
        progress(opt, b.done, b.total, std::string(k->name) + "[" + x.plan + "]" + what);
        run_kernel(k, x);
        b.rep.rows.push_back(x);
      }
    }
  }
  set_ratios(&b.rep.rows, first_row, cublas_ms, peak_tflops(b.dev, bp.dtype));
}

// One problem (dtype, transposes, shape): its operands on the device and the fp64 reference set
// up once, then every epilogue variant; an error row where it does not fit the device.
void run_problem(Bench& b, Precision dtype, Op op_a, Op op_b, const Shape& s,
                 const std::vector<Variant>& variants,
                 const std::vector<const KernelDesc*>& kernels) {
  const Options& opt = b.opt;
  BenchProblem bp;
  bp.dtype = dtype, bp.s = s;
  bp.trans = std::string(op_a == Op::N ? "N" : "T") + (op_b == Op::N ? "N" : "T");
  TightProblem tp = tight_problem(s, dtype, op_a, op_b);
  GemmProblem& p = bp.p;
  p = tp.p;
  const int64_t ar = tp.ar, ac = tp.ac, br = tp.br, bc = tp.bc;
  const int eb = bp.eb = tp.eb;
  // Strided batches: entries back to back (B once with --broadcast-b).
  const int64_t batch = s.batch;
  p.batch = batch;
  p.stride_a = batch > 1 ? ar * ac : 0;
  p.stride_b = batch > 1 && !opt.broadcast_b ? br * bc : 0;
  p.stride_d = batch > 1 ? s.m * s.n : 0;
  const int64_t a_elems = batch * ar * ac, b_elems = (p.stride_b ? batch : 1) * br * bc;
  bp.d_elems = batch * s.m * s.n;
  int d_bytes = 2;  // per element: room for the widest out dtype of the variants
  for (const Variant& v : variants) d_bytes = std::max(d_bytes, gemmlab::dtype_bytes(v.out));
  bp.regions = opt.check ? check_regions(batch, s.m, s.n) : std::vector<CheckRegion>{};
  double ref_bytes = 0;  // the fp64 reference's device memory for its largest region
  for (const CheckRegion& g : bp.regions)
    ref_bytes = std::max(ref_bytes, 8.0 * (double(g.rows) * s.k + double(br) * bc + double(g.rows) * s.n));
  const double need = double(a_elems) * eb + double(b_elems) * eb + double(bp.d_elems) * d_bytes +
                      ref_bytes;
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  for (const KernelDesc* k : kernels)
    if (k->dtypes & gemmlab::dtype_bit(dtype)) bp.todo.push_back(k);
  const std::string first =
      b.want_auto ? "auto" : bp.todo.empty() ? "cublas" : bp.todo.front()->name;
  if (need > 0.95 * free_b) {
    Row r = base_row(b, bp, first, variants.front());
    r.status = "error: problem needs " + gib(need) + " of device memory, " + gib(free_b) + " free";
    b.rep.rows.push_back(r);
    return;
  }
  DeviceBuffer a(a_elems * eb), bb(b_elems * eb), d(bp.d_elems * d_bytes);
  if (!a.ptr || !bb.ptr || !d.ptr) {
    Row r = base_row(b, bp, first, variants.front());
    r.status = "error: cudaMalloc failed (" + gib(need) + " needed)";
    b.rep.rows.push_back(r);
    return;
  }
  gemmlab::fill_random_device(a.ptr, a_elems, dtype, 1000 + s.m);
  gemmlab::fill_random_device(bb.ptr, b_elems, dtype, 2000 + s.n);
  p.A = a.ptr, p.B = bb.ptr, p.D = bp.d = d.ptr, p.ldd = s.n;
  p.C = nullptr, p.ldc = s.n;  // beta 0: C is never read

  // The fp64 product of every checked region (the epilogue goes on top per variant).
  bp.ref.resize(bp.regions.size());
  for (size_t i = 0; i < bp.regions.size() && bp.ref_err.empty(); ++i) {
    const CheckRegion& g = bp.regions[i];
    GemmProblem q = p.entry(g.entry);
    const int64_t a_off = op_a == Op::N ? g.row0 * p.lda : g.row0;  // row g.row0 of op(A)
    q.A = static_cast<const char*>(q.A) + a_off * eb;
    q.m = g.rows;
    bp.ref[i].resize(static_cast<size_t>(g.rows * s.n));
    bp.ref_err = gemmlab::reference_gemm_gpu(q, bp.ref[i].data());
  }
  for (const Variant& v : variants) run_variant(b, bp, v);
}

}  // namespace

Report run_gpu_bench(const Options& opt, const DeviceInfo& dev) {
  Report rep;
  rep.device = dev;
  rep.date = utc_now();
  rep.options = opt;
  std::string err;
  const std::vector<const KernelDesc*> kernels = select_kernels(opt.kernels, &err);
  Bench b{opt, dev, rep};
  b.want_cublas =
      opt.cublas || std::find(opt.kernels.begin(), opt.kernels.end(), "cublas") != opt.kernels.end();
  b.want_auto = std::find(opt.kernels.begin(), opt.kernels.end(), "auto") != opt.kernels.end();

  if (b.want_cublas && cublasCreate(&b.handle) != CUBLAS_STATUS_SUCCESS) b.handle = nullptr;
  // cuBLASLt (the extended call's yardstick) only where a row needs it.
  const bool want_lt = b.want_cublas && uses_extended(opt);
  if (want_lt && cublasLtCreate(&b.lt_handle) != CUBLAS_STATUS_SUCCESS) b.lt_handle = nullptr;
  DeviceBuffer lt_workspace(want_lt ? kLtWorkspaceBytes : 0);
  b.lt_workspace = lt_workspace.ptr;
  const size_t flush_bytes = static_cast<size_t>(std::max<long long>(dev.l2_bytes, 1 << 20)) * 2;
  DeviceBuffer flush(opt.flush_l2 ? flush_bytes : 0);
  b.l2 = L2Flush{flush.ptr, flush_bytes, std::max(dev.sms, 1), opt.flush_writes};
  b.total = planned_rows(opt, kernels, b.want_auto, b.want_cublas);

  rep.problems_planned = opt.dtypes.size() * opt.trans.size() * opt.sizes.size();
  const auto start = std::chrono::steady_clock::now();
  auto go_on = [&] {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    return starts_another_problem(opt, rep.problems_run, elapsed.count());
  };
  for (Precision dtype : opt.dtypes) {
    const std::vector<Variant> variants = variants_for(opt, dtype);
    for (const auto& [op_a, op_b] : opt.trans)
      for (const Shape& s : opt.sizes) {
        if (!go_on()) break;
        run_problem(b, dtype, op_a, op_b, s, variants, kernels);
        ++rep.problems_run;
      }
  }
  if (!opt.quiet && isatty(2)) std::fprintf(stderr, "\r\033[K");
  if (b.lt_handle) cublasLtDestroy(b.lt_handle);
  if (b.handle) cublasDestroy(b.handle);
  return rep;
}

}  // namespace gemmbench
