// The kernel registry: the one list of gemmlab's kernels. The API's `auto`, gemm-bench and the tests
// all iterate over it; adding a kernel is one kernel file plus one line in registry.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>

#include "gemmlab/gemmlab.h"
#include "runtime/plan_choice.h"

namespace gemmlab {

// One validated problem, as a kernel's launch function receives it:
//     D_b = act(alpha * op(A_b) op(B_b) + beta * C_b + bias),  b < batch,  X_b = X + b * stride_x.
// By the time a kernel sees it: m, n, k >= 1, alpha != 0, batch >= 1, every pointer is device
// memory, leading dimensions are valid, m, n, k < 2^31. A matrix's extent ((rows - 1) * ld + cols)
// fits in int32 unless the kernel declares kLargeOperands (A and B) - C and D are always written
// through the 64-bit Epilogue (gemm_common.cuh). batch > 1 reaches only kernels with kBatched; the
// API runs the others once per entry. D == C (in place) has C's dtype and leading dimension.
struct GemmProblem : GemmDesc {  // the public descriptor's fields, and the stream
  cudaStream_t stream = nullptr;

  // The problem of batch entry b alone (batch 1): the operands' pointers moved to that entry.
  GemmProblem entry(int64_t b) const;
};

inline int dtype_bytes(DType t) { return t == DType::F32 ? 4 : 2; }

inline GemmProblem GemmProblem::entry(int64_t b) const {
  GemmProblem q = *this;
  const auto at = [b](const void* p, int64_t stride, int64_t bytes) -> const void* {
    return p ? static_cast<const char*>(p) + b * stride * bytes : nullptr;
  };
  const int64_t in = (precision == Precision::BF16 || precision == Precision::FP16) ? 2 : 4;
  q.A = at(A, stride_a, in);
  q.B = at(B, stride_b, in);
  q.C = at(C, stride_c, dtype_bytes(c_type));
  q.D = const_cast<void*>(at(D, stride_d, dtype_bytes(d_type)));
  q.batch = 1;
  return q;
}

// What a launch planner needs to know of the device it plans for. The runtime fills it from the
// current device (runtime/device_props.h: current_device_desc); CPU tests pass made-up ones.
struct DeviceDesc {
  int sms = 1;          // multiprocessors
  int smem_per_sm = 0;  // shared memory one multiprocessor can give its blocks, bytes
};

enum DtypeMask : unsigned {
  kFP32 = 1u << 0,
  kTF32 = 1u << 1,
  kBF16 = 1u << 2,
  kFP16 = 1u << 3,
};
inline unsigned dtype_bit(Precision p) { return 1u << static_cast<int>(p); }
// Bytes of one stored element of A/B for a precision (4 for fp32/tf32, 2 for bf16/fp16; C and D:
// dtype_bytes).
inline int input_bytes(Precision p) {
  return (p == Precision::BF16 || p == Precision::FP16) ? 2 : 4;
}

// The main kernel launch of a problem, for resource and occupancy reports (gemm-bench).
struct LaunchConfig {
  const void* kernel = nullptr;  // the __global__ function
  dim3 grid, block;
  size_t smem_bytes = 0;  // dynamic shared memory
};

// What a kernel's launch function handles itself, beyond one plain problem (KernelDesc::features).
enum FeatureMask : unsigned {
  kBatched = 1u << 0,        // p.batch > 1 in one launch (else the API calls launch per entry)
  kLargeOperands = 1u << 1,  // A and B extents past 2^31 elements (64-bit operand offsets)
};

struct KernelDesc {
  const char* name;     // registry name, e.g. "simt/01_naive"; what gemm(..., kernel) takes
  int step;             // ladder step within its family (1 = first; production kernels last)
  const char* family;   // "simt", "mma_sync", "wgmma": the folder and the registry prefix
  const char* seed;     // seed file and step it reproduces, or "beyond the seeds"
  const char* summary;  // one line: the mechanism
  unsigned dtypes;      // DtypeMask bits
  int min_cc;           // minimum compute capability the build runs it on: 80 (the build emits
                        // sm_80 and sm_90a code, plus compute_80 PTX); 90 for sm_90a kernels
  int auto_priority;    // `auto` picks the highest-priority kernel that can run; 0 = never auto
  // nullptr if the kernel can run this problem; otherwise a static string naming the failed
  // constraint (e.g. "needs lda % 8 == 0"). Precision and compute capability are checked by the
  // registry; this checks the rest.
  const char* (*unsupported)(const GemmProblem& p);
  cudaError_t (*launch)(const GemmProblem& p);  // enqueue on p.stream; returns the launch error
  LaunchConfig (*config)(const GemmProblem& p);
  // Optional: the kernel's `auto` priority for this problem, where it depends on the shape (a
  // kernel that loses on small grids steps back there); nullptr: auto_priority. Only asked when
  // auto_priority > 0.
  int (*auto_priority_for)(const GemmProblem& p) = nullptr;
  unsigned features = 0;  // FeatureMask bits
  // Optional: the plan variants the kernel can run p with (runtime/plan_choice.h; gemm-tune times
  // each, the tuning table names the best): at most max written to out, the count returned; each
  // one a distinct plan. tile_names: its block tiles, null-terminated (PlanChoice::tile - 1).
  int (*variants)(const GemmProblem& p, PlanChoice* out, int max) = nullptr;
  const char* const* tile_names = nullptr;
};

// The priority `auto` gives kernel k for problem p (see KernelDesc).
inline int auto_priority_of(const KernelDesc& k, const GemmProblem& p) {
  return k.auto_priority_for != nullptr ? k.auto_priority_for(p) : k.auto_priority;
}

const std::vector<KernelDesc>& all_kernels();
const KernelDesc* find_kernel(std::string_view name);

// Elements a row-major rows x cols matrix with leading dimension ld spans (validated sizes: no
// overflow), and whether A and B of one entry of p fit 32-bit indexing.
int64_t operand_extent(int64_t rows, int64_t cols, int64_t ld);
bool operands_fit_int32(const GemmProblem& p);

// nullptr if `k` can run `p` on a device of compute capability `cc` (e.g. 90), else the reason.
const char* kernel_cannot_run(const KernelDesc& k, const GemmProblem& p, int cc);

}  // namespace gemmlab
