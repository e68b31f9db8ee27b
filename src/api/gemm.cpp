// The public entry point: validation, the degenerate cases, kernel choice (`auto` or by name) and
// the launch. Everything here is host code; kernels live under src/kernels/.
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>
#include <algorithm>

#include <cuda_runtime_api.h>

#include "gemmlab/gemmlab.h"
#include "runtime/device_props.h"
#include "runtime/scale_c.h"
#include "api/status.h"
#include "registry/registry.h"

namespace gemmlab {
namespace {

using api::fail;
using api::ok;

bool valid_op(Op op) { return op == Op::N || op == Op::T; }
bool valid_precision(Precision p) {
  return static_cast<int>(p) >= 0 && static_cast<int>(p) <= static_cast<int>(Precision::FP16);
}


// The stored shape of op(X): rows x cols as laid out in memory.
struct Stored {
  int64_t rows, cols;
};

// Checks that need no device: enums, sizes, leading dimensions, size limits, null pointers.
Status validate_host(const GemmProblem& p) {
  if (!valid_op(p.op_a) || !valid_op(p.op_b))
    return fail(Status::InvalidValue, "op_a/op_b must be Op::N or Op::T");
  if (!valid_precision(p.precision)) return fail(Status::InvalidValue, "unknown precision");
  if (p.m < 0 || p.n < 0 || p.k < 0)
    return fail(Status::InvalidSize, "sizes must be >= 0 (m=%lld, n=%lld, k=%lld)",
                (long long)p.m, (long long)p.n, (long long)p.k);

  const Stored a = p.op_a == Op::N ? Stored{p.m, p.k} : Stored{p.k, p.m};
  const Stored b = p.op_b == Op::N ? Stored{p.k, p.n} : Stored{p.n, p.k};
  const Stored c = {p.m, p.n};
  struct Check {
    const char* name;
    Stored s;
    int64_t ld;
    const void* ptr;
    bool used;
  };
  const bool product = p.m > 0 && p.n > 0 && p.k > 0 && p.alpha != 0.f;
  const Check checks[] = {{"A", a, p.lda, p.A, product},
                          {"B", b, p.ldb, p.B, product},
                          {"C", c, p.ldc, p.C, p.m > 0 && p.n > 0}};
  for (const Check& x : checks) {
    // Like BLAS, the leading dimension must be at least the row length, and at least 1.
    const int64_t need = x.s.cols > 0 ? x.s.cols : 1;
    if (x.ld < need)
      return fail(Status::InvalidLeadingDim,
                  "ld%c=%lld is smaller than the %lld elements of a stored row of %s (%s)",
                  x.name[0] + ('a' - 'A'), (long long)x.ld, (long long)need, x.name,
                  x.name[0] == 'C' ? "m x n" : (x.name[0] == 'A' ? (p.op_a == Op::N ? "m x k" : "k x m")
                                                                 : (p.op_b == Op::N ? "k x n" : "n x k")));
  }
  const int64_t kMax = INT32_MAX;
  if (p.m > kMax || p.n > kMax || p.k > kMax)
    return fail(Status::SizeTooLarge, "m, n and k must be below 2^31 (32-bit indexing)");
  for (const Check& x : checks) {
    if (!x.used || x.s.rows == 0) continue;
    // Largest element offset touched: (rows - 1) * ld + cols - 1; computed without overflow.
    if (x.s.rows - 1 > (kMax - x.s.cols) / x.ld)
      return fail(Status::SizeTooLarge,
                  "%s spans (rows-1)*ld+cols = %lld*%lld+%lld elements, past 32-bit indexing",
                  x.name, (long long)(x.s.rows - 1), (long long)x.ld, (long long)x.s.cols);
  }
  for (const Check& x : checks)
    if (x.used && x.ptr == nullptr) return fail(Status::NullPointer, "%s is null", x.name);
  // Every kernel reads and writes whole elements: a pointer off its element size would fault on
  // the GPU (and leave the context unusable), so it is an argument error here.
  const int64_t in_bytes = input_bytes(p.precision);
  for (const Check& x : checks) {
    const int64_t bytes = x.name[0] == 'C' ? static_cast<int64_t>(sizeof(float)) : in_bytes;
    if (x.used && reinterpret_cast<uintptr_t>(x.ptr) % bytes != 0)
      return fail(Status::InvalidValue, "%s (%p) is not aligned to its %lld-byte elements", x.name,
                  x.ptr, (long long)bytes);
  }
  return ok();
}

// The current device and its compute capability (cached per device in runtime/device_props).
Status current_device_cc(int* dev, int* cc) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    if (e != cudaSuccess) cudaGetLastError();  // the failed query's own error, not the caller's
    return fail(Status::NoDevice, "no CUDA device: %s",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount returned 0");
  }
  e = current_device(dev);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
    return fail(Status::NoDevice, "no CUDA device: %s", cudaGetErrorString(e));
  if (e != cudaSuccess) return fail(Status::CudaError, "%s", cudaGetErrorString(e));
  *cc = device_cc();
  if (*cc == 0) return fail(Status::CudaError, "cannot read the compute capability of device %d", *dev);
  return ok();
}

// x must be device (or managed) memory, and device memory must be the current device's: a kernel
// on this device would fault on another device's memory without peer access, and gemmlab does not
// rely on peer access (it would read over NVLink/PCIe at a fraction of the speed).
Status check_device_pointer(const char* name, const void* ptr, int dev) {
  cudaPointerAttributes attr{};
  const cudaError_t e = cudaPointerGetAttributes(&attr, ptr);
  if (e != cudaSuccess) {
    cudaGetLastError();  // this query's own (non-sticky) error
    return fail(Status::NotDevicePointer, "%s: cudaPointerGetAttributes failed: %s", name,
                cudaGetErrorString(e));
  }
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    return fail(Status::NotDevicePointer, "%s (%p) is host memory; gemmlab needs device memory",
                name, ptr);
  if (attr.type == cudaMemoryTypeDevice && attr.device != dev)
    return fail(Status::WrongDevice,
                "%s (%p) is memory of device %d, but the call runs on device %d (the current "
                "device: cudaSetDevice); every operand must live on it",
                name, ptr, attr.device, dev);
  return ok();
}

// The device-side checks (validate_host already passed); on success *cc holds the device's
// compute capability.
Status validate_device(const GemmProblem& p, bool product, int* cc) {
  int dev = 0;
  if (Status s = current_device_cc(&dev, cc); s != Status::Success) return s;
  if (product) {
    if (Status s = check_device_pointer("A", p.A, dev); s != Status::Success) return s;
    if (Status s = check_device_pointer("B", p.B, dev); s != Status::Success) return s;
  }
  return check_device_pointer("C", p.C, dev);
}

// The kernels `auto` may run for p, best first (ties: registry order); at most max of them.
int auto_candidates(const GemmProblem& p, int cc, const KernelDesc** out, int max) {
  std::vector<std::pair<int, const KernelDesc*>> ok;
  for (const KernelDesc& k : all_kernels())
    if (k.auto_priority > 0 && kernel_cannot_run(k, p, cc) == nullptr)
      ok.push_back({auto_priority_of(k, p), &k});
  std::stable_sort(ok.begin(), ok.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  const int n = std::min(static_cast<int>(ok.size()), max);
  for (int i = 0; i < n; ++i) out[i] = ok[i].second;
  return n;
}

const KernelDesc* pick_auto(const GemmProblem& p, int cc) {
  const KernelDesc* best[1];
  return auto_candidates(p, cc, best, 1) ? best[0] : nullptr;
}

GemmProblem make_problem(Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, float alpha,
                         const void* A, int64_t lda, const void* B, int64_t ldb, float beta,
                         float* C, int64_t ldc, Precision precision, cudaStream_t stream) {
  GemmProblem p;
  p.op_a = op_a, p.op_b = op_b, p.m = m, p.n = n, p.k = k, p.alpha = alpha, p.beta = beta;
  p.A = A, p.lda = lda, p.B = B, p.ldb = ldb, p.C = C, p.ldc = ldc;
  p.precision = precision, p.stream = stream;
  return p;
}

}  // namespace

const char* status_name(Status s) {
  switch (s) {
    case Status::Success: return "Success";
    case Status::InvalidValue: return "InvalidValue";
    case Status::InvalidSize: return "InvalidSize";
    case Status::InvalidLeadingDim: return "InvalidLeadingDim";
    case Status::NullPointer: return "NullPointer";
    case Status::NotDevicePointer: return "NotDevicePointer";
    case Status::SizeTooLarge: return "SizeTooLarge";
    case Status::UnknownKernel: return "UnknownKernel";
    case Status::KernelUnsupported: return "KernelUnsupported";
    case Status::NoDevice: return "NoDevice";
    case Status::CudaError: return "CudaError";
    case Status::WrongDevice: return "WrongDevice";
    case Status::ScratchUnavailable: return "ScratchUnavailable";
  }
  return "UnknownStatus";
}

const char* last_error_message() { return api::last_error().c_str(); }

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::TF32: return "tf32";
    case Precision::BF16: return "bf16";
    case Precision::FP16: return "fp16";
  }
  return "unknown";
}

bool parse_precision(const char* name, Precision* out) {
  if (!name || !out) return false;
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16}) {
    if (std::strcmp(name, precision_name(p)) == 0) {
      *out = p;
      return true;
    }
  }
  return false;
}

Status gemm(Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, float alpha, const void* A,
            int64_t lda, const void* B, int64_t ldb, float beta, float* C, int64_t ldc,
            Precision precision, const char* kernel, cudaStream_t stream) {
  const GemmProblem p =
      make_problem(op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, precision, stream);
  if (kernel == nullptr) return fail(Status::InvalidValue, "kernel name is null (use \"auto\")");
  const bool is_auto = std::strcmp(kernel, "auto") == 0;
  const KernelDesc* chosen = is_auto ? nullptr : find_kernel(kernel);
  if (!is_auto && !chosen)
    return fail(Status::UnknownKernel, "no kernel named '%s' (gemm-bench --list shows them)", kernel);
  if (Status s = validate_host(p); s != Status::Success) return s;
  if (m == 0 || n == 0) return ok();

  const bool product = k > 0 && alpha != 0.f;
  int cc = 0;
  if (Status s = validate_device(p, product, &cc); s != Status::Success) return s;

  if (!product) {
    const cudaError_t e = scale_c(C, ldc, m, n, beta, stream);
    return e == cudaSuccess ? ok() : fail(Status::CudaError, "scale_c: %s", cudaGetErrorString(e));
  }
  // A launch function either enqueues its whole work and returns cudaSuccess, or enqueues nothing
  // that writes C and returns the error; cudaErrorMemoryAllocation means its scratch could not be
  // had on any of its paths, and `auto` then tries the next kernel.
  constexpr int kMaxCandidates = 8;
  const KernelDesc* candidates[kMaxCandidates];
  int count = 1;
  if (is_auto) {
    count = auto_candidates(p, cc, candidates, kMaxCandidates);
    if (count == 0)
      return fail(Status::KernelUnsupported, "no registered kernel can run this %s problem on sm_%d",
                  precision_name(precision), cc);
  } else if (const char* why = kernel_cannot_run(*chosen, p, cc)) {
    return fail(Status::KernelUnsupported, "kernel '%s' cannot run this problem: %s",
                chosen->name, why);
  } else {
    candidates[0] = chosen;
  }
  cudaError_t e = cudaSuccess;
  for (int i = 0; i < count; ++i) {
    chosen = candidates[i];
    e = chosen->launch(p);
    if (e != cudaErrorMemoryAllocation) break;
  }
  if (e == cudaErrorMemoryAllocation)
    return fail(Status::ScratchUnavailable,
                "%s: the scratch memory this problem needs could not be allocated (see "
                "set_scratch_limit), and no path without it exists",
                chosen->name);
  if (e != cudaSuccess) return fail(Status::CudaError, "%s: %s", chosen->name, cudaGetErrorString(e));
  return ok();
}

const char* auto_kernel_name(Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, const void* A,
                             int64_t lda, const void* B, int64_t ldb, const float* C, int64_t ldc,
                             Precision precision) {
  const GemmProblem p = make_problem(op_a, op_b, m, n, k, 1.f, A, lda, B, ldb, 0.f,
                                     const_cast<float*>(C), ldc, precision, nullptr);
  if (validate_host(p) != Status::Success) return nullptr;
  int dev = 0, cc = 0;
  if (current_device_cc(&dev, &cc) != Status::Success) return nullptr;
  const KernelDesc* k_desc = pick_auto(p, cc);
  if (!k_desc) {
    fail(Status::KernelUnsupported, "no registered kernel can run this problem");
    return nullptr;
  }
  return k_desc->name;
}

}  // namespace gemmlab
