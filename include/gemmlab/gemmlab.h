// gemmlab: matrix multiplication for NVIDIA GPUs.
//
// The whole public API. Row-major storage throughout:
//
//     C = alpha * op(A) * op(B) + beta * C
//
//   op(A) is m x k, op(B) is k x n, C is m x n.
//   op_a == Op::N: A is stored m x k, each row lda >= k elements apart.
//   op_a == Op::T: A is stored k x m (op(A) = A^T), lda >= m.
//   op_b == Op::N: B is stored k x n, ldb >= n.   op_b == Op::T: B is stored n x k, ldb >= k.
//   C is stored m x n, ldc >= n, always float.
//
// Precision selects the arithmetic and the storage type of A and B:
//   FP32  A, B float; exact fp32 FFMA on CUDA cores.
//   TF32  A, B float; tensor cores on inputs rounded to tf32, fp32 accumulation.
//   BF16  A, B __nv_bfloat16; tensor cores, fp32 accumulation.
//   FP16  A, B __half; tensor cores, fp32 accumulation.
//
// Edge semantics: m or n == 0 is a no-op; k == 0 or alpha == 0 gives C = beta * C; beta == 0 never
// reads C (it may hold NaN). Pointers must be device (or managed) memory of the current device
// (cudaSetDevice): memory of another device is WrongDevice, whatever its peer access.
//
// Errors never abort: every call returns a Status, and last_error_message() says what was wrong.
// A non-success status means nothing that writes C was enqueued: C is untouched. An error that the
// caller's own earlier work left in CUDA's last-error slot never becomes this call's status.
//
// Streams and devices: the call enqueues everything on `stream` and returns without waiting.
// Calls may come from several host threads, on several streams and devices at once; state that
// belongs to a device (function attributes, properties, scratch pools) is kept per device.
// Results are deterministic: the same problem gives bit-identical C, on any stream, under
// concurrency and in CUDA graph replays (split-k / stream-k partial sums are added in a fixed
// order, no atomics on C).
//
// Scratch memory. Some paths use scratch memory inside the call: a copy of an operand whose rows
// are misaligned for 16-byte or TMA loads (packed to aligned rows), a transposed copy of B
// (fp32), and the partial tiles and counters of split-k / stream-k. It comes from a gemmlab-owned,
// stream-ordered CUDA memory pool per device (cudaMallocFromPoolAsync on `stream`, freed on the
// same stream after the kernel), which keeps up to 1 GiB of freed scratch mapped for the next
// call (set_scratch_retained, release_scratch). How much one call needs: packed copies are the
// operand with rows padded to 128 bytes (only where that costs at most ~2x the operand); split-k
// needs a few MB at the sizes where it runs. Where scratch cannot be had (out of memory, or more
// than set_scratch_limit allows), the call takes a path without scratch: no split-k / stream-k,
// no copy (4-byte loads instead), or with "auto" another kernel; only a named kernel that cannot
// run at all without scratch returns ScratchUnavailable.
//
// CUDA graphs: a call can be captured (cudaStreamBeginCapture, any mode) and replayed any number
// of times, also concurrently on other streams from other instantiations. Inside a capture the
// scratch becomes the graph's own memory (an allocation node and a free node, so it is mapped
// while the graph runs); split-k counters reset themselves at the end of each run, so a replay
// needs no clearing pass.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace gemmlab {

enum class Op : int { N = 0, T = 1 };

enum class Precision : int { FP32 = 0, TF32 = 1, BF16 = 2, FP16 = 3 };

enum class Status : int {
  Success = 0,
  InvalidValue,       // an enum out of range, a null kernel name
  InvalidSize,        // m, n or k negative
  InvalidLeadingDim,  // lda, ldb or ldc smaller than the row it must hold
  NullPointer,        // A, B or C null where the problem needs it
  NotDevicePointer,   // A, B or C is host memory
  SizeTooLarge,       // m, n or k past 2^31 - 1, or a matrix past 64-bit byte addressing
  UnknownKernel,      // no kernel of that name
  KernelUnsupported,  // the named kernel cannot run this problem (dtype, shape, alignment, GPU)
  NoDevice,           // no CUDA device or driver
  CudaError,          // a CUDA runtime or launch error
  WrongDevice,        // A, B or C lives on another device than the current one
  ScratchUnavailable, // the scratch memory this problem needs could not be had (see below)
};

// Short name of a status, e.g. "InvalidLeadingDim".
const char* status_name(Status s);

// Human-readable detail of the last non-success status returned on this thread.
const char* last_error_message();

// C = alpha * op(A) * op(B) + beta * C on `stream`.
// kernel: "auto" (the fastest kernel that can run the problem) or a registry name (`gemm-bench --list`).
// The call is asynchronous like a cuBLAS call: errors raised while the kernel runs surface at the
// next synchronization.
Status gemm(Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, float alpha, const void* A,
            int64_t lda, const void* B, int64_t ldb, float beta, float* C, int64_t ldc,
            Precision precision, const char* kernel = "auto", cudaStream_t stream = nullptr);

// The kernel "auto" would run for this problem on the current device, or nullptr (see
// last_error_message()). Pointers are only used for their alignment.
const char* auto_kernel_name(Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, const void* A,
                             int64_t lda, const void* B, int64_t ldb, const float* C, int64_t ldc,
                             Precision precision);

// ---------------------------------------------------------------------------------------------
// The extended call: 16-bit output, a fused bias and activation, strided batches.
//
//     D = act(alpha * op(A) * op(B) + beta * C + bias)          (cuBLASLt's epilogue order)
//
// for every batch entry b: A_b = A + b * stride_a (elements of A's storage type), likewise B_b,
// C_b and D_b. A stride of 0 broadcasts that operand (one weight matrix for the whole batch).
// - D (m x n, ldd >= n) has its own pointer and dtype (fp32, bf16 or fp16: rounded to nearest
//   even). D may be C itself (in place: then c_type == d_type, ldc == ldd and stride_c ==
//   stride_d). D's batch entries must not overlap: stride_d >= (m - 1) * ldd + n, or entries side
//   by side within rows (stride_d >= n and (batch - 1) * stride_d + n <= ldd).
// - C (m x n, ldc >= n) is read only when beta != 0, in its own dtype (c_type).
// - bias: null, or n values (one per column of D: y = x W^T + b), fp32 or the input dtype
//   (bf16 / fp16 for those precisions). act: see Activation.
// - Sizes and offsets are 64-bit: a matrix of more than 2^31 elements is computed (SizeTooLarge
//   only where a dimension itself is past 2^31 - 1).
// Every rule of gemm() above holds (edge cases, errors, determinism, streams, graphs); k == 0 or
// alpha == 0 gives D = act(beta * C + bias).
// ---------------------------------------------------------------------------------------------
enum class DType : int { F32 = 0, BF16 = 2, F16 = 3 };  // storage of C, D and the bias

enum class Activation : int {
  None = 0,
  ReLU,      // max(x, 0)
  GeluTanh,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (cuBLASLt's GELU, PyTorch "tanh")
  GeluErf,   // 0.5 x (1 + erf(x / sqrt(2)))                       (PyTorch's default GELU)
  SiLU,      // x / (1 + exp(-x))
};

struct GemmDesc {
  Op op_a = Op::N, op_b = Op::N;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.f, beta = 0.f;
  const void* A = nullptr;
  int64_t lda = 0;
  const void* B = nullptr;
  int64_t ldb = 0;
  const void* C = nullptr;  // read only when beta != 0
  int64_t ldc = 0;
  DType c_type = DType::F32;
  void* D = nullptr;
  int64_t ldd = 0;
  DType d_type = DType::F32;
  const void* bias = nullptr;  // n values, or null
  DType bias_type = DType::F32;
  Activation act = Activation::None;
  Precision precision = Precision::FP32;
  int64_t batch = 1;  // batch entries (>= 0; 0 is a no-op)
  int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;  // elements; >= 0
};

// The extended call on `stream`; kernel as in gemm(). Asynchronous like gemm().
Status gemm(const GemmDesc& desc, const char* kernel = "auto", cudaStream_t stream = nullptr);

// The kernel "auto" would run for desc on the current device, or nullptr (last_error_message()).
const char* auto_kernel_name(const GemmDesc& desc);

// Names: "none", "relu", "gelu_tanh", "gelu_erf", "silu"; "f32", "bf16", "f16" (also "fp32",
// "fp16"). parse returns false on an unknown name.
const char* activation_name(Activation a);
bool parse_activation(const char* name, Activation* out);
const char* dtype_name(DType t);
bool parse_dtype(const char* name, DType* out);

// Scratch memory (see the top of this file).
// Frees the freed scratch that the pool of `device` (-1: the current device) keeps for reuse.
// Scratch that enqueued work still uses is not affected. Does not synchronize.
Status release_scratch(int device = -1);
// How many bytes of freed scratch the pool of `device` (-1: current) keeps mapped (default 1 GiB).
Status set_scratch_retained(uint64_t bytes, int device = -1);
// The most scratch one call may take, on every device (default: no limit). 0 turns every path
// that needs scratch off. Returns the previous limit.
uint64_t set_scratch_limit(uint64_t bytes);

// Names: "fp32", "tf32", "bf16", "fp16"; parse returns false on an unknown name.
const char* precision_name(Precision p);
bool parse_precision(const char* name, Precision* out);

}  // namespace gemmlab
