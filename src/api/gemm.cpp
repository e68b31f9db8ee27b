// The public entry points: checks (api/validate.h), the degenerate cases, kernel choice (`auto`
// or by name) and the launch. Everything here is host code; kernels live under src/kernels/.
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include <algorithm>

#include <cuda_runtime_api.h>

#include "gemmlab/gemmlab.h"
#include "runtime/device_props.h"
#include "runtime/epilogue_only.h"
#include "api/status.h"
#include "api/validate.h"
#include "registry/registry.h"
#include "registry/tuning.h"
#include "runtime/plan_choice.h"

namespace gemmlab {
namespace {

using api::current_device_cc;
using api::fail;
using api::ok;
using api::validate_device;
using api::validate_host;

// The tuning table's entry for p on the current device (registry/tuning.h), if the kernel it
// names can run p; else null (also where the entry says the planners decide: kPlannersEntry).
const TuningEntry* tuned(const GemmProblem& p, int cc) {
  if (!tuning_enabled()) return nullptr;
  size_t count = 0;
  const TuningEntry* table = tuning_table(&count);
  if (count == 0) return nullptr;
  const TuningEntry* e = find_tuning(table, count, device_name(), device_full_sm_count(), p);
  if (e == nullptr || std::string_view(e->kernel) == kPlannersEntry) return nullptr;
  const KernelDesc* k = find_kernel(e->kernel);
  return k != nullptr && kernel_cannot_run(*k, p, cc) == nullptr ? e : nullptr;
}

// The kernels `auto` may run for p, best first: the tuning table's (with its plan: choices[0]),
// then by priority (ties: registry order); at most max of them.
int auto_candidates(const GemmProblem& p, int cc, const KernelDesc** out, int max,
                    PlanChoice* choices = nullptr) {
  std::vector<std::pair<int, const KernelDesc*>> ok;
  for (const KernelDesc& k : all_kernels())
    if (k.auto_priority > 0 && kernel_cannot_run(k, p, cc) == nullptr)
      ok.push_back({auto_priority_of(k, p), &k});
  std::stable_sort(ok.begin(), ok.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  int n = 0;
  if (const TuningEntry* e = max > 0 ? tuned(p, cc) : nullptr) {
    if (choices) choices[0] = e->choice;
    out[n++] = find_kernel(e->kernel);
  }
  for (size_t i = 0; i < ok.size() && n < max; ++i) {
    if (choices) choices[n] = PlanChoice{};
    out[n++] = ok[i].second;
  }
  return n;
}

const KernelDesc* pick_auto(const GemmProblem& p, int cc) {
  const KernelDesc* best[1];
  return auto_candidates(p, cc, best, 1) ? best[0] : nullptr;
}

// One kernel over the whole problem: in one launch if it takes batches (kBatched), else once per
// batch entry. Only the first launch may fail for want of scratch (cudaErrorMemoryAllocation,
// nothing enqueued): every entry plans the same scratch, which the first has freed
// (stream-ordered) by the time the next one asks.
cudaError_t launch_all(const KernelDesc& k, const GemmProblem& p) {
  if (p.batch == 1 || (k.features & kBatched)) return k.launch(p);
  for (int64_t b = 0; b < p.batch; ++b)
    if (const cudaError_t e = k.launch(p.entry(b)); e != cudaSuccess) return e;
  return cudaSuccess;
}

// Every check of a call before it enqueues anything: the kernel name, the problem (host and device
// side) and, for a named kernel, its constraints. *chosen: the named kernel (null for "auto"),
// *cc: the device's compute capability, *work: whether there is anything to compute at all.
Status check(const GemmProblem& p, const char* kernel, bool plain_call, const KernelDesc** chosen,
             int* cc, bool* work) {
  *chosen = nullptr, *cc = 0, *work = false;
  if (kernel == nullptr) return fail(Status::InvalidValue, "kernel name is null (use \"auto\")");
  const bool is_auto = std::strcmp(kernel, "auto") == 0;
  if (!is_auto && !(*chosen = find_kernel(kernel)))
    return fail(Status::UnknownKernel, "no kernel named '%s' (gemm-bench --list shows them)", kernel);
  if (Status s = validate_host(p, plain_call); s != Status::Success) return s;
  if (p.m == 0 || p.n == 0 || p.batch == 0) return ok();
  const bool product = p.k > 0 && p.alpha != 0.f;
  if (Status s = validate_device(p, product, cc); s != Status::Success) return s;
  *work = true;
  if (product && *chosen)
    if (const char* why = kernel_cannot_run(**chosen, p, *cc))
      return fail(Status::KernelUnsupported, "kernel '%s' cannot run this problem: %s",
                  (*chosen)->name, why);
  return ok();
}

// The checked problem p on `kernel` ("auto" or a name).
Status run(const GemmProblem& p, const char* kernel, bool plain_call) {
  const KernelDesc* chosen = nullptr;
  int cc = 0;
  bool work = false;
  if (Status s = check(p, kernel, plain_call, &chosen, &cc, &work); s != Status::Success || !work)
    return s;
  const bool is_auto = chosen == nullptr;
  const bool product = p.k > 0 && p.alpha != 0.f;
  if (!product) {
    const cudaError_t e = epilogue_only(p);
    return e == cudaSuccess ? ok()
                            : fail(Status::CudaError, "epilogue_only: %s", cudaGetErrorString(e));
  }
  // A launch function either enqueues its whole work and returns cudaSuccess, or enqueues nothing
  // that writes D and returns the error; cudaErrorMemoryAllocation means its scratch could not be
  // had on any of its paths, and `auto` then tries the next kernel.
  constexpr int kMaxCandidates = 8;
  const KernelDesc* candidates[kMaxCandidates];
  PlanChoice choices[kMaxCandidates] = {};
  int count = 1;
  if (is_auto) {
    count = auto_candidates(p, cc, candidates, kMaxCandidates, choices);
    if (count == 0)
      return fail(Status::KernelUnsupported, "no registered kernel can run this %s problem on sm_%d",
                  precision_name(p.precision), cc);
  } else {
    candidates[0] = chosen;
  }
  cudaError_t e = cudaSuccess;
  for (int i = 0; i < count; ++i) {
    chosen = candidates[i];
    // A tuned plan holds for this launch only (a caller's own ForcePlan is kept otherwise).
    if (choices[i].any()) {
      const ForcePlan force(choices[i]);
      e = launch_all(*chosen, p);
    } else {
      e = launch_all(*chosen, p);
    }
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

// The problem of the plain call: C is also the output.
GemmProblem make_problem(Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, float alpha,
                         const void* A, int64_t lda, const void* B, int64_t ldb, float beta,
                         float* C, int64_t ldc, Precision precision, cudaStream_t stream) {
  GemmProblem p;
  p.op_a = op_a, p.op_b = op_b, p.m = m, p.n = n, p.k = k, p.alpha = alpha, p.beta = beta;
  p.A = A, p.lda = lda, p.B = B, p.ldb = ldb, p.C = C, p.ldc = ldc, p.D = C, p.ldd = ldc;
  p.precision = precision, p.stream = stream;
  return p;
}

GemmProblem make_problem(const GemmDesc& d, cudaStream_t stream) {
  GemmProblem p;
  static_cast<GemmDesc&>(p) = d;
  p.stream = stream;
  return p;
}

const char* auto_name(const GemmProblem& p) {
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

}  // namespace

const char* last_error_message() { return api::last_error().c_str(); }

Status gemm(Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, float alpha, const void* A,
            int64_t lda, const void* B, int64_t ldb, float beta, float* C, int64_t ldc,
            Precision precision, const char* kernel, cudaStream_t stream) {
  // The plain call's C is its output, so it must be there even when beta == 0.
  if (m > 0 && n > 0 && C == nullptr) return fail(Status::NullPointer, "C is null");
  return run(make_problem(op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, precision, stream),
             kernel, /*plain_call=*/true);
}

Status gemm(const GemmDesc& desc, const char* kernel, cudaStream_t stream) {
  return run(make_problem(desc, stream), kernel, /*plain_call=*/false);
}

const char* auto_kernel_name(Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, const void* A,
                             int64_t lda, const void* B, int64_t ldb, const float* C, int64_t ldc,
                             Precision precision) {
  return auto_name(make_problem(op_a, op_b, m, n, k, 1.f, A, lda, B, ldb, 0.f,
                                const_cast<float*>(C), ldc, precision, nullptr));
}

const char* auto_kernel_name(const GemmDesc& desc) { return auto_name(make_problem(desc, nullptr)); }

namespace api {
Status check_gemm(const GemmDesc& desc, const char* kernel) {
  const KernelDesc* chosen = nullptr;
  int cc = 0;
  bool work = false;
  return check(make_problem(desc, nullptr), kernel, /*plain_call=*/false, &chosen, &cc, &work);
}
}  // namespace api

}  // namespace gemmlab
