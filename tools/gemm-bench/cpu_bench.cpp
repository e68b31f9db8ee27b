// --cpu: the fp64 reference timed on the CPU (works without a GPU), in the report's format.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <unistd.h>

#include "gemm-bench/problem.h"
#include "gemm-bench/runner.h"
#include "reference/reference.h"

namespace gemmbench {

using gemmlab::GemmProblem;
using gemmlab::Op;
using gemmlab::Precision;

Report run_cpu_bench(const Options& opt) {
  Report rep;
  rep.cpu_mode = true;
  rep.date = utc_now();
  rep.options = opt;
  rep.device.name = "CPU (fp64 reference)";
  size_t done = 0;
  const size_t total = opt.dtypes.size() * opt.trans.size() * opt.sizes.size();
  for (Precision dtype : opt.dtypes) {
    for (const auto& [op_a, op_b] : opt.trans) {
      for (const Shape& s : opt.sizes) {
        Row r;
        r.kernel = "cpu_fp64_reference", r.family = "reference", r.shape = s, r.dtype = dtype;
        r.trans = std::string(op_a == Op::N ? "N" : "T") + (op_b == Op::N ? "N" : "T");
        progress(opt, ++done, total, "cpu " + shape_text(s) + " " + gemmlab::precision_name(dtype));
        TightProblem tp = tight_problem(s, dtype, op_a, op_b);
        GemmProblem& p = tp.p;
        const int64_t ar = tp.ar, ac = tp.ac, br = tp.br, bc = tp.bc;
        const int eb = tp.eb;
        std::vector<char> a(ar * ac * eb), b(br * bc * eb);
        gemmlab::fill_random_host(a.data(), ar * ac, dtype, 1);
        gemmlab::fill_random_host(b.data(), br * bc, dtype, 2);
        p.A = a.data(), p.B = b.data();
        std::vector<double> out(static_cast<size_t>(s.m * s.n));
        std::vector<double> ms;
        const int reps = std::max(1, std::min(opt.reps, 3));
        for (int i = 0; i < reps; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          gemmlab::reference_gemm_cpu(p, out.data());
          ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(ms.begin(), ms.end());
        r.reps = reps;
        r.ms_min = ms.front(), r.ms_max = ms.back(), r.ms_median = ms[ms.size() / 2];
        r.tflops = flops(s) / (r.ms_median * 1e-3) / 1e12;
        rep.rows.push_back(r);
      }
    }
  }
  if (!opt.quiet && isatty(2)) std::fprintf(stderr, "\r\033[K");
  return rep;
}

}  // namespace gemmbench
