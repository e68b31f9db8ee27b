// gemmlab._C: the thin layer between Python and the C++ API. Pointers, strides and streams arrive
// as plain integers (the Python side reads them off torch tensors or the DLPack /
// __cuda_array_interface__ protocols), so a call costs one nanobind dispatch of ints and floats.
// Errors come back as the gemmlab Status (an int; 0 = Success), and gemmlab/_errors.py turns a
// non-zero status into an exception with status_name() and last_error_message().
#include <chrono>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "binding_common.h"
#include "gemmlab/gemmlab.h"
#include "registry/registry.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using gemmlab::Precision;
using gemmlab::Status;

// Errors of this layer itself (no device); empty when the last error is the library's own
// (gemmlab::last_error_message()).
thread_local std::string g_own_error;

using gemmlab_py::DeviceGuard;
using gemmlab_py::make_desc;

// The gemm binding: the whole batch in one gemmlab::gemm(GemmDesc) call (the library checks every
// entry and enqueues nothing on error), every argument an int or a float, the GIL released
// around the C++ call.
int gemm(int op_a, int op_b, int64_t m, int64_t n, int64_t k, float alpha, uintptr_t a, int64_t lda,
         uintptr_t b, int64_t ldb, float beta, uintptr_t c, int64_t ldc, int c_type, uintptr_t d,
         int64_t ldd, int d_type, uintptr_t bias, int bias_type, int act, int precision,
         const char* kernel, uintptr_t stream, int device, int64_t batch, int64_t stride_a,
         int64_t stride_b, int64_t stride_c, int64_t stride_d) {
  const gemmlab::GemmDesc x =
      make_desc(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, c_type, d, ldd, d_type,
                bias, bias_type, act, precision, batch, stride_a, stride_b, stride_c, stride_d);
  nb::gil_scoped_release release;
  g_own_error.clear();
  DeviceGuard guard(device);
  return static_cast<int>(gemmlab::gemm(x, kernel, reinterpret_cast<cudaStream_t>(stream)));
}

// Host time of `iterations` back-to-back gemm(GemmDesc) calls made from C++ (no Python in the
// loop), in seconds per call: the baseline for gemmlab.matmul's Python-side overhead (python -m
// gemmlab.bench --overhead). D = op(A) op(B) in d_type, no C, bias or batch. Returns a negative
// value if a call fails.
double bench_cpp_calls(int64_t iterations, int op_a, int op_b, int64_t m, int64_t n, int64_t k,
                       uintptr_t a, int64_t lda, uintptr_t b, int64_t ldb, uintptr_t d,
                       int64_t ldd, int d_type, int precision, const char* kernel,
                       uintptr_t stream, int device) {
  const gemmlab::GemmDesc x = make_desc(op_a, op_b, m, n, k, 1.f, a, lda, b, ldb, 0.f, 0, 0, 0, d,
                                        ldd, d_type, 0, 0, 0, precision, 1, 0, 0, 0, 0);
  nb::gil_scoped_release release;
  g_own_error.clear();
  DeviceGuard guard(device);
  const auto s = reinterpret_cast<cudaStream_t>(stream);
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iterations; ++i)
    if (gemmlab::gemm(x, kernel, s) != Status::Success) return -1.0;
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  return dt.count() / static_cast<double>(iterations > 0 ? iterations : 1);
}

// The kernel `auto` would run for this call (the arguments of gemm, less kernel and stream), or
// None (the reason: last_error_message()).
nb::object auto_kernel_name(int op_a, int op_b, int64_t m, int64_t n, int64_t k, float alpha,
                            uintptr_t a, int64_t lda, uintptr_t b, int64_t ldb, float beta,
                            uintptr_t c, int64_t ldc, int c_type, uintptr_t d, int64_t ldd,
                            int d_type, uintptr_t bias, int bias_type, int act, int precision,
                            int device, int64_t batch, int64_t stride_a, int64_t stride_b,
                            int64_t stride_c, int64_t stride_d) {
  const gemmlab::GemmDesc x =
      make_desc(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, c_type, d, ldd, d_type,
                bias, bias_type, act, precision, batch, stride_a, stride_b, stride_c, stride_d);
  g_own_error.clear();
  DeviceGuard guard(device);
  const char* name = gemmlab::auto_kernel_name(x);
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
        "ldb"_a, "beta"_a, "c"_a, "ldc"_a, "c_type"_a, "d"_a, "ldd"_a, "d_type"_a, "bias"_a,
        "bias_type"_a, "act"_a, "precision"_a, "kernel"_a, "stream"_a, "device"_a, "batch"_a,
        "stride_a"_a, "stride_b"_a, "stride_c"_a, "stride_d"_a,
        "gemmlab::gemm(GemmDesc): D_b = act(alpha*op(A_b)*op(B_b) + beta*C_b + bias) for every "
        "batch entry b in one call (strides in elements); returns the gemmlab Status as an int");
  m.def("_bench_cpp_calls", &bench_cpp_calls, "iterations"_a, "op_a"_a, "op_b"_a, "m"_a, "n"_a,
        "k"_a, "a"_a, "lda"_a, "b"_a, "ldb"_a, "d"_a, "ldd"_a, "d_type"_a, "precision"_a,
        "kernel"_a, "stream"_a, "device"_a);
  m.def("auto_kernel_name", &auto_kernel_name, "op_a"_a, "op_b"_a, "m"_a, "n"_a, "k"_a, "alpha"_a,
        "a"_a, "lda"_a, "b"_a, "ldb"_a, "beta"_a, "c"_a, "ldc"_a, "c_type"_a, "d"_a, "ldd"_a,
        "d_type"_a, "bias"_a, "bias_type"_a, "act"_a, "precision"_a, "device"_a, "batch"_a,
        "stride_a"_a, "stride_b"_a, "stride_c"_a, "stride_d"_a);
  m.def("kernels", &kernels);
  m.def("device_count", &device_count);
  m.def("status_name", [](int s) { return std::string(gemmlab::status_name(static_cast<Status>(s))); });
  m.def("last_error_message", &last_error_message);
}
