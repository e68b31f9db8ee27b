// The API's argument checks (validate.h): host-side first (no CUDA call), then the device's.
#include "api/validate.h"

#include <cstdint>
#include <cstring>

#include <cuda_runtime_api.h>

#include "api/status.h"
#include "runtime/device_props.h"

namespace gemmlab {
namespace api {
namespace {

bool valid_op(Op op) { return op == Op::N || op == Op::T; }
bool valid_precision(Precision p) {
  return static_cast<int>(p) >= 0 && static_cast<int>(p) <= static_cast<int>(Precision::FP16);
}
bool valid_dtype(DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; }
bool valid_activation(Activation a) {
  return static_cast<int>(a) >= 0 && static_cast<int>(a) <= static_cast<int>(Activation::SiLU);
}

// The stored shape of op(X): rows x cols as laid out in memory.
struct Stored {
  int64_t rows, cols;
};

// One matrix operand of the problem, for the checks below.
struct Matrix {
  const char* name;  // "A", "B", "C", "D"
  Stored s;
  int64_t ld, stride;
  const void* ptr;
  int64_t elem_bytes;
  bool used;  // read or written by this problem
};

// Bytes one batch entry spans, past which 64-bit addressing (well, 2^62 bytes) is not enough.
constexpr int64_t kMaxBytes = int64_t{1} << 62;

// (rows - 1) * ld + cols elements, and the batch's last entry's offset on top, in bytes; false on
// overflow past kMaxBytes.
bool span_bytes(const Matrix& x, int64_t batch, int64_t* bytes) {
  const int64_t max_elems = kMaxBytes / x.elem_bytes;
  if (x.s.rows == 0 || x.s.cols == 0) return *bytes = 0, true;
  if (x.s.rows - 1 > (max_elems - x.s.cols) / x.ld) return false;
  int64_t elems = (x.s.rows - 1) * x.ld + x.s.cols;
  if (batch > 1 && x.stride > 0) {
    if (batch - 1 > (max_elems - elems) / x.stride) return false;
    elems += (batch - 1) * x.stride;
  }
  *bytes = elems * x.elem_bytes;
  return true;
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

}  // namespace

// Checks that need no device: enums, sizes, leading dimensions, size limits, null pointers,
// alignment, the epilogue's dtypes and the batch layout. plain_call: the old gemm(), whose output
// the caller knows as C (so the messages say C).
Status validate_host(const GemmProblem& p, bool plain_call) {
  if (!valid_op(p.op_a) || !valid_op(p.op_b))
    return fail(Status::InvalidValue, "op_a/op_b must be Op::N or Op::T");
  if (!valid_precision(p.precision)) return fail(Status::InvalidValue, "unknown precision");
  if (!valid_dtype(p.c_type) || !valid_dtype(p.d_type) || !valid_dtype(p.bias_type))
    return fail(Status::InvalidValue, "c_type, d_type and bias_type must be DType::F32, BF16 or F16");
  if (!valid_activation(p.act))
    return fail(Status::InvalidValue, "unknown activation %d", static_cast<int>(p.act));
  if (p.m < 0 || p.n < 0 || p.k < 0)
    return fail(Status::InvalidSize, "sizes must be >= 0 (m=%lld, n=%lld, k=%lld)",
                (long long)p.m, (long long)p.n, (long long)p.k);
  if (p.batch < 0) return fail(Status::InvalidSize, "batch must be >= 0 (batch=%lld)", (long long)p.batch);
  if (p.stride_a < 0 || p.stride_b < 0 || p.stride_c < 0 || p.stride_d < 0)
    return fail(Status::InvalidValue, "batch strides must be >= 0 (0 broadcasts an operand)");
  if (p.bias != nullptr && p.bias_type != DType::F32 &&
      !(p.bias_type == DType::BF16 && p.precision == Precision::BF16) &&
      !(p.bias_type == DType::F16 && p.precision == Precision::FP16))
    return fail(Status::InvalidValue,
                "a %s bias with %s inputs: the bias is fp32 or the input dtype", dtype_name(p.bias_type),
                precision_name(p.precision));

  const Stored a = p.op_a == Op::N ? Stored{p.m, p.k} : Stored{p.k, p.m};
  const Stored b = p.op_b == Op::N ? Stored{p.k, p.n} : Stored{p.n, p.k};
  const Stored c = {p.m, p.n};
  const bool any = p.m > 0 && p.n > 0 && p.batch > 0;
  const bool product = any && p.k > 0 && p.alpha != 0.f;
  const int64_t in_bytes = input_bytes(p.precision);
  const Matrix mats[] = {{"A", a, p.lda, p.stride_a, p.A, in_bytes, product},
                         {"B", b, p.ldb, p.stride_b, p.B, in_bytes, product},
                         {"C", c, p.ldc, p.stride_c, p.C, dtype_bytes(p.c_type),
                          any && p.beta != 0.f && !plain_call},
                         {plain_call ? "C" : "D", c, p.ldd, p.stride_d, p.D, dtype_bytes(p.d_type), any}};
  for (const Matrix& x : mats) {
    if (&x == &mats[2] && !x.used) continue;  // C's ld is not looked at when C is not read
    // Like BLAS, the leading dimension must be at least the row length, and at least 1.
    const int64_t need = x.s.cols > 0 ? x.s.cols : 1;
    if (x.ld < need)
      return fail(Status::InvalidLeadingDim,
                  "ld%c=%lld is smaller than the %lld elements of a stored row of %s (%s)",
                  x.name[0] + ('a' - 'A'), (long long)x.ld, (long long)need, x.name,
                  x.name[0] >= 'C' ? "m x n" : (x.name[0] == 'A' ? (p.op_a == Op::N ? "m x k" : "k x m")
                                                                 : (p.op_b == Op::N ? "k x n" : "n x k")));
  }
  const int64_t kMax = INT32_MAX;
  if (p.m > kMax || p.n > kMax || p.k > kMax)
    return fail(Status::SizeTooLarge, "m, n and k must be below 2^31");
  for (const Matrix& x : mats) {
    int64_t bytes = 0;
    if (x.used && !span_bytes(x, p.batch, &bytes))
      return fail(Status::SizeTooLarge, "%s spans more than 2^62 bytes", x.name);
  }
  for (const Matrix& x : mats)
    if (x.used && x.ptr == nullptr)
      return fail(Status::NullPointer, "%s is null%s", x.name,
                  x.name[0] == 'C' ? " (C is read when beta != 0)" : "");
  // Every kernel reads and writes whole elements: a pointer off its element size would fault on
  // the GPU (and leave the context unusable), so it is an argument error here.
  for (const Matrix& x : mats)
    if (x.used && reinterpret_cast<uintptr_t>(x.ptr) % x.elem_bytes != 0)
      return fail(Status::InvalidValue, "%s (%p) is not aligned to its %lld-byte elements", x.name,
                  x.ptr, (long long)x.elem_bytes);
  if (any && p.bias != nullptr && reinterpret_cast<uintptr_t>(p.bias) % dtype_bytes(p.bias_type) != 0)
    return fail(Status::InvalidValue, "bias (%p) is not aligned to its elements", p.bias);
  // In place: D is C itself, so both must describe the same matrices.
  if (any && p.beta != 0.f && p.C == p.D &&
      (p.c_type != p.d_type || p.ldc != p.ldd || (p.batch > 1 && p.stride_c != p.stride_d)))
    return fail(Status::InvalidValue,
                "D == C (in place) needs c_type == d_type, ldc == ldd and stride_c == stride_d");
  // C read while D is written: the same matrices, or apart (a partial overlap would read
  // elements another thread has already written).
  if (any && p.beta != 0.f && p.C != p.D) {
    int64_t c_bytes = 0, d_bytes = 0;
    span_bytes(mats[2], p.batch, &c_bytes);
    span_bytes(mats[3], p.batch, &d_bytes);
    const uintptr_t c0 = reinterpret_cast<uintptr_t>(p.C), d0 = reinterpret_cast<uintptr_t>(p.D);
    if (c0 < d0 + static_cast<uintptr_t>(d_bytes) && d0 < c0 + static_cast<uintptr_t>(c_bytes))
      return fail(Status::InvalidValue,
                  "C and D overlap without being the same matrix (in place needs C == D)");
  }
  // Batch entries of D must not overlap: one after the other, or side by side within rows.
  if (any && p.batch > 1) {
    const int64_t extent = (p.m - 1) * p.ldd + p.n;
    const bool after = p.stride_d >= extent;
    const bool beside = p.stride_d >= p.n && (p.batch - 1) <= (p.ldd - p.n) / p.stride_d;
    if (!after && !beside)
      return fail(Status::InvalidValue,
                  "batch entries of D overlap: stride_d=%lld with ldd=%lld for %lld x %lld entries "
                  "(needs stride_d >= %lld, or entries side by side within ldd)",
                  (long long)p.stride_d, (long long)p.ldd, (long long)p.m, (long long)p.n,
                  (long long)extent);
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

// The device-side checks (validate_host already passed); on success *cc holds the device's
// compute capability.
namespace {
thread_local bool t_trusted_pointers = false;
}  // namespace

TrustedPointers::TrustedPointers() : scope_(t_trusted_pointers, true) {}

Status check_device_memory(const char* name, const void* ptr) {
  int dev = 0;
  if (cudaError_t e = current_device(&dev); e != cudaSuccess)
    return fail(Status::CudaError, "%s", cudaGetErrorString(e));
  return check_device_pointer(name, ptr, dev);
}

Status validate_device(const GemmProblem& p, bool product, int* cc) {
  int dev = 0;
  if (Status s = current_device_cc(&dev, cc); s != Status::Success) return s;
  if (t_trusted_pointers) return ok();
  if (product) {
    if (Status s = check_device_pointer("A", p.A, dev); s != Status::Success) return s;
    if (Status s = check_device_pointer("B", p.B, dev); s != Status::Success) return s;
  }
  if (p.beta != 0.f && p.C != p.D)
    if (Status s = check_device_pointer("C", p.C, dev); s != Status::Success) return s;
  if (p.bias != nullptr)
    if (Status s = check_device_pointer("bias", p.bias, dev); s != Status::Success) return s;
  return check_device_pointer("D", p.D, dev);
}

}  // namespace api
}  // namespace gemmlab
