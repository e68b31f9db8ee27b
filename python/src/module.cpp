// gemmlab._C: the thin layer between Python and the C++ API. Pointers, strides and streams arrive
// as plain integers (the Python side reads them off torch tensors or the DLPack /
// __cuda_array_interface__ protocols), so a call costs one nanobind dispatch of ints and floats.
// Errors come back as the gemmlab Status (an int; 0 = Success), and gemmlab/_errors.py turns a
// non-zero status into an exception with status_name() and last_error_message().
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "gemmlab/gemmlab.h"
#include "registry/registry.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using gemmlab::Op;
using gemmlab::Precision;
using gemmlab::Status;

// Errors of this layer itself (a batch entry a named kernel cannot run); empty when the last
// error is the library's own (gemmlab::last_error_message()).
thread_local std::string g_own_error;

// Makes `device` current for the call and restores the previous device afterwards (the pointers
// of a call must belong to the current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    int current = -1;
    if (device >= 0 && cudaGetDevice(&current) == cudaSuccess && current != device &&
        cudaSetDevice(device) == cudaSuccess)
      previous_ = current;
  }
  ~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// One GEMM as the Python side describes it: the arguments of gemmlab::gemm plus a batch of
// `batch` problems whose operands lie stride_* bytes apart (0: the same matrix for every entry).
struct Call {
  int op_a, op_b;
  int64_t m, n, k;
  float alpha;
  uintptr_t a;
  int64_t lda;
  uintptr_t b;
  int64_t ldb;
  float beta;
  uintptr_t c;
  int64_t ldc;
  int precision;
  const char* kernel;
  uintptr_t stream;
  int device;
  int64_t batch, stride_a, stride_b, stride_c;
};

Status run_entry(const Call& x, int64_t i) {
  const auto at = [i](uintptr_t base, int64_t stride) { return base + uintptr_t(i * stride); };
  return gemmlab::gemm(static_cast<Op>(x.op_a), static_cast<Op>(x.op_b), x.m, x.n, x.k, x.alpha,
                       reinterpret_cast<const void*>(at(x.a, x.stride_a)), x.lda,
                       reinterpret_cast<const void*>(at(x.b, x.stride_b)), x.ldb, x.beta,
                       reinterpret_cast<float*>(at(x.c, x.stride_c)), x.ldc,
                       static_cast<Precision>(x.precision), x.kernel,
                       reinterpret_cast<cudaStream_t>(x.stream));
}

// A named kernel's constraints can depend on each entry's alignment; entries 1.. are checked before
// anything is enqueued, so that a batch either runs whole or writes nothing (entry 0 is checked
// by gemm itself, which enqueues nothing on failure). `auto` always finds a kernel for an entry
// once it found one for entry 0 (the entries differ only in their addresses).
Status check_named_entries(const Call& x) {
  if (x.batch < 2) return Status::Success;
  const gemmlab::KernelDesc* desc = gemmlab::find_kernel(x.kernel);
  if (desc == nullptr) return Status::Success;  // "auto", or an unknown name that gemm reports
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    cudaGetLastError();
    return Status::Success;  // gemm on entry 0 reports the device problem
  }
  for (int64_t i = 1; i < x.batch; ++i) {
    gemmlab::GemmProblem p;
    p.op_a = static_cast<Op>(x.op_a);
    p.op_b = static_cast<Op>(x.op_b);
    p.m = x.m, p.n = x.n, p.k = x.k, p.alpha = x.alpha, p.beta = x.beta;
    p.A = reinterpret_cast<const void*>(x.a + uintptr_t(i * x.stride_a)), p.lda = x.lda;
    p.B = reinterpret_cast<const void*>(x.b + uintptr_t(i * x.stride_b)), p.ldb = x.ldb;
    p.C = reinterpret_cast<float*>(x.c + uintptr_t(i * x.stride_c)), p.ldc = x.ldc;
    p.precision = static_cast<Precision>(x.precision);
    if (const char* why = gemmlab::kernel_cannot_run(*desc, p, major * 10 + minor)) {
      char buf[512];
      std::snprintf(buf, sizeof buf, "KernelUnsupported: kernel '%s' cannot run batch entry %lld: %s",
                    desc->name, (long long)i, why);
      g_own_error = buf;
      return Status::KernelUnsupported;
    }
  }
  return Status::Success;
}

Status run(const Call& x) {
  g_own_error.clear();
  DeviceGuard guard(x.device);
  if (Status s = check_named_entries(x); s != Status::Success) return s;
  for (int64_t i = 0; i < x.batch; ++i) {
    const Status s = run_entry(x, i);
    if (s != Status::Success) {
      // Only a CUDA error can stop a batch after entry 0 (the arguments were checked).
      if (i > 0) g_own_error = std::string(gemmlab::last_error_message()) + " (batch entry " +
                               std::to_string(i) + "; entries before it were enqueued)";
      return s;
    }
  }
  return Status::Success;
}

// The gemm binding: every argument an int or a float, the GIL released around the C++ call.
int gemm(int op_a, int op_b, int64_t m, int64_t n, int64_t k, float alpha, uintptr_t a, int64_t lda,
         uintptr_t b, int64_t ldb, float beta, uintptr_t c, int64_t ldc, int precision,
         const char* kernel, uintptr_t stream, int device, int64_t batch, int64_t stride_a,
         int64_t stride_b, int64_t stride_c) {
  const Call x{op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, precision, kernel,
               stream, device, batch, stride_a, stride_b, stride_c};
  nb::gil_scoped_release release;
  return static_cast<int>(run(x));
}

// Host time of `iterations` back-to-back gemm calls made from C++ (no Python in the loop), in
// seconds per call: the baseline for gemmlab.matmul's Python-side overhead (python -m
// gemmlab.bench --overhead). Returns a negative value if a call fails.
double bench_cpp_calls(int64_t iterations, int op_a, int op_b, int64_t m, int64_t n, int64_t k,
                       uintptr_t a, int64_t lda, uintptr_t b, int64_t ldb, uintptr_t c,
                       int64_t ldc, int precision, const char* kernel, uintptr_t stream,
                       int device) {
  const Call x{op_a, op_b, m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc, precision, kernel,
               stream, device, 1, 0, 0, 0};
  nb::gil_scoped_release release;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iterations; ++i)
    if (run(x) != Status::Success) return -1.0;
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  return dt.count() / static_cast<double>(iterations > 0 ? iterations : 1);
}

// The kernel `auto` would run, or None (the reason: last_error_message()).
nb::object auto_kernel_name(int op_a, int op_b, int64_t m, int64_t n, int64_t k, uintptr_t a,
                            int64_t lda, uintptr_t b, int64_t ldb, uintptr_t c, int64_t ldc,
                            int precision, int device) {
  g_own_error.clear();
  DeviceGuard guard(device);
  const char* name = gemmlab::auto_kernel_name(
      static_cast<Op>(op_a), static_cast<Op>(op_b), m, n, k, reinterpret_cast<const void*>(a),
      lda, reinterpret_cast<const void*>(b), ldb, reinterpret_cast<const float*>(c), ldc,
      static_cast<Precision>(precision));
  if (name == nullptr) return nb::none();
  return nb::str(name);
}

nb::list kernels() {
  nb::list out;
  for (const gemmlab::KernelDesc& k : gemmlab::all_kernels()) {
    nb::dict d;
    d["name"] = k.name;
    d["step"] = k.step;
    d["family"] = k.family;
    d["seed"] = k.seed;
    d["summary"] = k.summary;
    nb::list dtypes;
    for (const std::string& name : {std::string("fp32"), std::string("tf32"), std::string("bf16"),
                                    std::string("fp16")}) {
      Precision p;
      if (gemmlab::parse_precision(name.c_str(), &p) && (k.dtypes & gemmlab::dtype_bit(p)))
        dtypes.append(name);
    }
    d["dtypes"] = dtypes;
    d["min_cc"] = k.min_cc;
    d["auto_priority"] = k.auto_priority;
    out.append(d);
  }
  return out;
}

// Number of CUDA devices; 0 (and the reason in last_error_message()) when there is no GPU or
// no driver. Does no GPU work beyond the runtime's own initialization.
int device_count() {
  g_own_error.clear();
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    g_own_error = std::string("NoDevice: ") + cudaGetErrorString(e);
    return 0;
  }
  if (count == 0) g_own_error = "NoDevice: cudaGetDeviceCount returned 0";
  return count;
}

std::string last_error_message() {
  return g_own_error.empty() ? std::string(gemmlab::last_error_message()) : g_own_error;
}

}  // namespace

NB_MODULE(_C, m) {
  m.doc() = "gemmlab's C++ API (internal; use gemmlab.matmul)";
  m.attr("__version__") = GEMMLAB_VERSION;
  m.def("gemm", &gemm, "op_a"_a, "op_b"_a, "m"_a, "n"_a, "k"_a, "alpha"_a, "a"_a, "lda"_a, "b"_a,
        "ldb"_a, "beta"_a, "c"_a, "ldc"_a, "precision"_a, "kernel"_a, "stream"_a, "device"_a,
        "batch"_a = 1, "stride_a"_a = 0, "stride_b"_a = 0, "stride_c"_a = 0,
        "C = alpha*op(A)*op(B) + beta*C for each batch entry; returns the gemmlab Status as an int");
  m.def("_bench_cpp_calls", &bench_cpp_calls, "iterations"_a, "op_a"_a, "op_b"_a, "m"_a, "n"_a,
        "k"_a, "a"_a, "lda"_a, "b"_a, "ldb"_a, "c"_a, "ldc"_a, "precision"_a, "kernel"_a,
        "stream"_a, "device"_a);
  m.def("auto_kernel_name", &auto_kernel_name, "op_a"_a, "op_b"_a, "m"_a, "n"_a, "k"_a, "a"_a,
        "lda"_a, "b"_a, "ldb"_a, "c"_a, "ldc"_a, "precision"_a, "device"_a);
  m.def("kernels", &kernels);
  m.def("device_count", &device_count);
  m.def("status_name", [](int s) { return std::string(gemmlab::status_name(static_cast<Status>(s))); });
  m.def("last_error_message", &last_error_message);
}
