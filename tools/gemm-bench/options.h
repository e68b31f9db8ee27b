// gemm-bench's command line.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gemmlab/gemmlab.h"

namespace gemmbench {

struct Shape {
  int64_t m, n, k;
};

struct Options {
  std::vector<std::string> kernels;  // registry names, families ("simt", "mma_sync", "wgmma"), "all"
  std::vector<Shape> sizes;
  std::vector<gemmlab::Precision> dtypes;
  std::vector<std::pair<gemmlab::Op, gemmlab::Op>> trans;
  std::string suite;  // --suite NAME: the shapes (and transposes) of a named shape suite
  int warmup = 3;
  int reps = 20;
  double max_seconds_per_row = 2.0;  // fewer reps for slow rows (never fewer than 3)
  bool flush_l2 = true;
  bool check = true;
  bool cublas = true;
  bool list = false;
  bool cpu = false;
  std::string profile_kernel;  // --profile KERNEL: one warm-up + one launch in an NVTX range
  std::string json_path, csv_path;
  bool quiet = false;
};

// Parses argv. Returns -1 to go on, or an exit code (0 after --help, 2 on a bad command line, with
// the message in *message).
int parse_options(int argc, const char* const* argv, Options* out, std::string* message);

// A named shape suite: decode (M = 1..256 against LLM weight shapes, NN and NT), small (squares
// 128..1536), deep-k (small outputs, K up to 131072), skinny (N = 1..64), large (the default
// report's 4096 and 4097), all. False for an unknown name.
bool suite_shapes(const std::string& name, std::vector<Shape>* shapes, std::vector<std::string>* trans);

// "4096" -> 4096^3, "1000x1025x999" -> m x n x k. False on anything else.
bool parse_shape(const std::string& text, Shape* out);
std::string shape_text(const Shape& s);

}  // namespace gemmbench
