// gemm-bench: every gemmlab kernel against cuBLAS on this GPU. See --help.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "gemm-bench/bandwidth.h"
#include "gemm-bench/options.h"
#include "gemm-bench/report.h"
#include "gemm-bench/runner.h"
#include "gemm-bench/schema.h"

int main(int argc, char** argv) {
  using namespace gemmbench;
  Options opt;
  std::string message;
  if (const int code = parse_options(argc, argv, &opt, &message); code >= 0) {
    (code == 0 ? std::cout : std::cerr) << message << "\n";
    return code;
  }
  if (opt.list) {
    print_registry(std::cout);
    return 0;
  }
  std::string err;
  if (select_kernels(opt.kernels, &err).empty() && err.size()) {
    std::cerr << err << "\n";
    return 2;
  }

  Report report;
  if (opt.cpu) {
    report = run_cpu_bench(opt);
  } else {
    DeviceInfo dev = query_device();
    if (!dev.present) {
      std::cerr << "gemm-bench: no CUDA device available (" << dev.error
                << "); use --cpu to time the fp64 CPU reference instead\n";
      return 3;
    }
    if (!opt.profile_kernel.empty()) return run_profile(opt, dev, argv[0]);
    dev.read_bandwidth_gbs = measure_read_bandwidth_gbs();
    report = run_gpu_bench(opt, dev);
  }
  print_table(std::cout, report);
  print_summary(std::cout, report);
  if (!opt.json_path.empty()) {
    const nlohmann::json j = to_json(report);
    std::ofstream f(opt.json_path);
    f << j.dump(2) << "\n";
    if (!f) {
      std::cerr << "gemm-bench: could not write " << opt.json_path << "\n";
      return 1;
    }
    if (const auto errs = validate_json(j, bench_schema()); !errs.empty()) {
      std::cerr << "gemm-bench: " << opt.json_path << " does not match docs/bench-schema.json: "
                << errs.front() << " (" << errs.size() << " error(s))\n";
      return 1;
    }
  }
  if (!opt.csv_path.empty()) {
    std::ofstream f(opt.csv_path);
    f << to_csv(report);
    if (!f) {
      std::cerr << "gemm-bench: could not write " << opt.csv_path << "\n";
      return 1;
    }
  }
  // A failed correctness check or a run error makes the exit status non-zero.
  for (const Row& r : report.rows)
    if ((r.checked && !r.pass) || r.status.rfind("error", 0) == 0) return 4;
  return 0;
}
