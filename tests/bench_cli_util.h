// gemm-bench's command line as the CPU tests call it (test_bench.cpp, test_bench_cli.cpp).
#pragma once

#include <string>
#include <vector>

#include "gemm-bench/options.h"

namespace gemmbench {

// parse_options over "gemm-bench" followed by args.
inline int parse(std::vector<const char*> args, Options* o, std::string* msg) {
  args.insert(args.begin(), "gemm-bench");
  return parse_options(static_cast<int>(args.size()), args.data(), o, msg);
}

}  // namespace gemmbench
