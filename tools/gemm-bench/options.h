// gemm-bench's command line.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gemmlab/gemmlab.h"

namespace gemmbench {

// One problem's shape; batch > 1: a strided batch of that many m x n x k entries.
struct Shape {
  int64_t m, n, k;
  int64_t batch = 1;
};

// --bias: none, an fp32 bias, or one of the input dtype (bf16/fp16; fp32 for fp32/tf32 inputs).
enum class BiasKind : int { None = 0, F32, Input };
const char* bias_kind_name(BiasKind b);

struct Options {
  std::vector<std::string> kernels;  // registry names, families ("simt", "mma_sync", "wgmma"), "all"
  std::vector<Shape> sizes;
  std::vector<gemmlab::Precision> dtypes;
  std::vector<std::pair<gemmlab::Op, gemmlab::Op>> trans;
  std::string suite;  // --suite NAME: the shapes (and transposes) of a named shape suite
  // The extended call (gemmlab::GemmDesc). Every combination of out dtype x bias x activation is
  // a variant of each problem; the defaults (f32, none, none) are the plain call.
  std::vector<gemmlab::DType> out_dtypes;        // --out-dtype (default f32)
  std::vector<BiasKind> biases;                  // --bias (default none)
  std::vector<gemmlab::Activation> acts;         // --act (default none)
  int64_t batch = 1;         // --batch: entries of shapes without their own "B:" prefix
  bool broadcast_b = false;  // --broadcast-b: stride_b = 0, one B for every batch entry
  bool cublaslt = false;     // --cublaslt: also time cuBLASLt on plain problems
  bool variants = false;     // --variants: also every plan variant a kernel offers (gemm-tune)
  int warmup = 3;
  int reps = 20;
  double max_seconds_per_row = 2.0;  // fewer reps for slow rows (never fewer than 3)
  bool flush_l2 = true;
  bool flush_writes = false;  // flush with a memset (dirty lines) instead of a read sweep
  bool check = true;
  bool cublas = true;
  bool list = false;
  bool cpu = false;
  std::string profile_kernel;  // --profile KERNEL: one warm-up + one launch in an NVTX range
  std::string json_path, csv_path;
  bool quiet = false;
  // gemm-tune --time-limit: start no problem once this many seconds of the run have passed (0:
  // no limit), and at most this many problems in the run's order (0: all), so that a later round
  // measures exactly the problems the first one reached.
  double stop_after_seconds = 0;
  size_t max_problems = 0;
};

// Whether a run that has started `started` problems, `elapsed_s` seconds ago, starts another
// (Options::stop_after_seconds, Options::max_problems). The first always starts under a time
// limit, so a limited first round leaves the later ones at least one problem to repeat.
bool starts_another_problem(const Options& o, size_t started, double elapsed_s);

// Parses argv. Returns -1 to go on, or an exit code (0 after --help, 2 on a bad command line, with
// the message in *message).
int parse_options(int argc, const char* const* argv, Options* out, std::string* message);

// A named shape suite: decode (M = 1..256 against LLM weight shapes, NN and NT), small (squares
// 128..1536), deep-k (small outputs, K up to 131072), skinny (N = 1..64), large (the default
// report's 4096 and 4097), all. False for an unknown name.
bool suite_shapes(const std::string& name, std::vector<Shape>* shapes, std::vector<std::string>* trans);

// Whether any option of the extended call is in use (an out dtype other than f32, a bias, an
// activation, a batch, --broadcast-b or --cublaslt).
bool uses_extended(const Options& o);

// "4096" -> 4096^3, "1000x1025x999" -> m x n x k; a "B:" prefix makes it a strided batch of B
// entries ("64:512", "32:128x128x4096"). False on anything else.
bool parse_shape(const std::string& text, Shape* out);
std::string shape_text(const Shape& s);

}  // namespace gemmbench
