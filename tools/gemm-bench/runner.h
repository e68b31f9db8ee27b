// gemm-bench's measurements: one Row per kernel x problem, cuBLAS in the same process and run.
#pragma once

#include <string>
#include <vector>

#include "gemm-bench/device_info.h"
#include "gemm-bench/options.h"
#include "registry/registry.h"

namespace gemmbench {

struct Row {
  std::string kernel;          // registry name, "auto", "cublas", "cublaslt" or "cpu_fp64_reference"
  int step = 0;                // ladder step (0 for cuBLAS / the CPU reference)
  std::string family, seed;
  Shape shape{};               // shape.batch: strided batch entries (FLOPs count every entry)
  gemmlab::Precision dtype = gemmlab::Precision::FP32;
  std::string trans = "NN";
  // The extended call's settings (defaults: the plain call).
  gemmlab::DType out_dtype = gemmlab::DType::F32;
  std::string bias = "none";   // "none" or the bias's dtype: "f32", "bf16", "f16"
  gemmlab::Activation act = gemmlab::Activation::None;
  bool broadcast_b = false;    // batches: stride_b = 0
  std::string auto_kernel;     // kernel "auto": the kernel it ran
  std::string plan;            // --variants: the plan variant forced (runtime/plan_choice.h)
  gemmlab::PlanChoice choice;  // ... as numbers; all 0 on ordinary rows
  std::string status = "ok";   // "ok", "skipped: <why>", "error: <what>"
  int reps = 0;
  double ms_median = 0, ms_min = 0, ms_max = 0;
  std::vector<float> ms_runs;  // every timed run, in run order (launch-to-launch variance)
  double tflops = 0;
  double pct_cublas = 0;       // 100 * cuBLAS time / this time, same run; 0 if no cuBLAS row
  double speedup_vs_naive = 0; // simt/01_naive time / this time at the same shape; 0 if not run
  double pct_peak = 0;         // of the chip's peak for this dtype (device_info.h)
  int threads_per_block = 0, registers = 0, blocks_per_sm = 0;
  long long smem_static = 0, smem_dynamic = 0, local_bytes = 0;
  double occupancy = 0;        // resident threads / max threads per SM
  bool checked = false, pass = false;
  double error = 0, error_bound = 0;  // relative Frobenius error vs fp64
};

struct Report {
  DeviceInfo device;
  std::string date;  // ISO 8601, UTC
  std::string gemmlab_version;
  bool cpu_mode = false;
  Options options;
  std::vector<Row> rows;
  // Problems (dtype, transposes, shape) the run had and measured: fewer where
  // Options::stop_after_seconds or max_problems stopped it early.
  size_t problems_planned = 0, problems_run = 0;
};

// One epilogue variant of a problem: D's dtype, the bias (has_bias, its dtype) and activation.
struct Variant {
  gemmlab::DType out = gemmlab::DType::F32;
  bool has_bias = false;
  gemmlab::DType bias_type = gemmlab::DType::F32;
  gemmlab::Activation act = gemmlab::Activation::None;
  bool plain() const {
    return out == gemmlab::DType::F32 && !has_bias && act == gemmlab::Activation::None;
  }
};
// Every combination of --out-dtype x --bias x --act for inputs of precision p (bias "input" is
// the input dtype: fp32 for fp32/tf32, so it may coincide with "f32"; duplicates are dropped).
std::vector<Variant> variants_for(const Options& opt, gemmlab::Precision p);

// The kernels an option list names, in registry order; on an unknown name, *error says which
// ("auto" and "cublas" are not registry kernels and select nothing here).
std::vector<const gemmlab::KernelDesc*> select_kernels(const std::vector<std::string>& names,
                                                       std::string* error);

// The ratios of one problem's rows (one shape, transpose and epilogue variant: rows[first..]):
// % of cuBLAS (cublas_ms: the time of its cuBLAS / cuBLASLt row, 0 if none), the speedup over
// simt/01_naive's row among them, % of the chip's peak (0: unknown).
void set_ratios(std::vector<Row>* rows, size_t first, double cublas_ms, double peak_tflops);

Report run_gpu_bench(const Options& opt, const DeviceInfo& dev);
Report run_cpu_bench(const Options& opt);
// --profile: returns the process exit code.
int run_profile(const Options& opt, const DeviceInfo& dev, const char* argv0);

std::string utc_now();

}  // namespace gemmbench
