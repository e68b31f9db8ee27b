// gemm-bench's output: the terminal table, JSON (schema: docs/bench-schema.json) and CSV.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemm-bench/runner.h"

namespace gemmbench {

// A row's speed-up over simt/01_naive as printed: "12.3x", or "-" where naive was not run (0).
std::string speedup_text(double speedup_vs_naive);

// The extended call's settings of a row: "" for the plain call (fp32 D, no bias, no activation, B
// not broadcast), else e.g. "out=bf16 bias=bf16 act=gelu_tanh" (" B-broadcast" for stride_b 0).
std::string variant_text(const Row& x);
// One problem of a run, as the summaries name it: "bf16 4096x4096x4096 NN", with the batch
// ("bf16 64:512x512x512 NN") and the variant after it where there is one.
std::string problem_key(const Row& x);
// cuBLAS rows: "cublas" (cublasGemmEx, or cublasGemmStridedBatchedEx on batches) and "cublaslt".
bool is_cublas_row(const Row& x);

void print_table(std::ostream& os, const Report& r);

// Per dtype, over the problems of a run that have a passing gemmlab row and a cuBLAS row: the
// geometric mean of best-gemmlab / cuBLAS and the worst problem ("bf16 1x4096x4096 NT"). A
// problem's cuBLAS figure is its "cublas" row, else its "cublaslt" row (the variants of the
// extended call, where cublasGemmEx cannot do the work).
struct DtypeSummary {
  std::string dtype;
  int problems = 0;
  double geomean = 0, worst_ratio = 0, log_sum = 0;
  std::string worst_problem;
  // Memory-bound problems (below the device's balance: peak FLOP/s over the measured HBM read
  // bandwidth): the best gemmlab row's bandwidth as a share of the measured one, lowest and
  // highest. None when the bandwidth was not measured.
  int memory_bound = 0;
  double bw_share_min = 0, bw_share_max = 0;
  std::string bw_min_problem;
  // Problems with an "auto" row and a registered kernel's row: how often auto ran within 5% of
  // the best registered kernel (TFLOP/s), and its worst ratio to it.
  int auto_problems = 0, auto_within_5pct = 0;
  double auto_worst_ratio = 0;
  std::string auto_worst_problem;
};

// The bytes a row's problem must move at least: A, B (once when broadcast), D in its dtype and
// the bias, over every batch entry (gemm-bench runs beta = 0: C is not read).
double min_bytes(const Row& x);
// FLOPs of a row's problem (every batch entry).
double row_flops(const Row& x);
std::vector<DtypeSummary> suite_summary(const Report& r);
void print_dtype_summary(std::ostream& os, const std::vector<DtypeSummary>& s);
void print_summary(std::ostream& os, const Report& r);
void print_registry(std::ostream& os);
nlohmann::json to_json(const Report& r);
std::string to_csv(const Report& r);

}  // namespace gemmbench
