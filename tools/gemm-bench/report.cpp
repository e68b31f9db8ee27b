#include "gemm-bench/report.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace gemmbench {

using gemmlab::Precision;

namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// TFLOP/s, or GFLOP/s for slow rows, as the seeds' tables do.
std::string rate(double tflops) {
  if (tflops <= 0) return "-";
  return tflops >= 1.0 ? fmt("%.1f T", tflops) : fmt("%.0f G", tflops * 1e3);
}

std::string pct(double v) { return v > 0 ? fmt("%.0f%%", v) : "-"; }

std::string device_line(const Report& r) {
  if (r.cpu_mode) return "CPU fp64 reference (--cpu)";
  const DeviceInfo& d = r.device;
  std::ostringstream s;
  s << d.name << " (sm_" << d.cc << ", " << d.sms << " SMs, " << d.clock_mhz << " MHz, "
    << fmt("%.0f", d.mem_bandwidth_gbs) << " GB/s"
    << (d.read_bandwidth_gbs > 0 ? " spec, " + fmt("%.0f", d.read_bandwidth_gbs) + " GB/s read measured" : "")
    << ", L2 " << d.l2_bytes / (1024 * 1024) << " MB), CUDA runtime "
    << d.runtime_version / 1000 << "." << (d.runtime_version % 1000) / 10 << ", driver "
    << d.driver_version / 1000 << "." << (d.driver_version % 1000) / 10;
  return s.str();
}

}  // namespace

std::string speedup_text(double x) { return x > 0 ? fmt("%.1fx", x) : "-"; }

std::string variant_text(const Row& x) {
  const bool plain = x.out_dtype == gemmlab::DType::F32 && x.bias == "none" &&
                     x.act == gemmlab::Activation::None;
  if (plain && !x.broadcast_b) return "";
  std::string t;
  if (!plain)
    t = std::string("out=") + gemmlab::dtype_name(x.out_dtype) + " bias=" + x.bias +
        " act=" + gemmlab::activation_name(x.act);
  if (x.broadcast_b) t += std::string(t.empty() ? "" : " ") + "B-broadcast";
  return t;
}

std::string problem_key(const Row& x) {
  const std::string v = variant_text(x);
  return std::string(gemmlab::precision_name(x.dtype)) + " " + shape_text(x.shape) + " " + x.trans +
         (v.empty() ? "" : " " + v);
}

bool is_cublas_row(const Row& x) { return x.kernel == "cublas" || x.kernel == "cublaslt"; }

void print_registry(std::ostream& os) {
  char line[512];
  std::snprintf(line, sizeof line, "%-48s %-9s %4s  %-22s %-7s %s\n", "kernel", "family", "step",
                "dtypes", "min cc", "seed / summary");
  os << line;
  for (const gemmlab::KernelDesc& k : gemmlab::all_kernels()) {
    std::string dt;
    for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
      if (k.dtypes & gemmlab::dtype_bit(p)) dt += (dt.empty() ? "" : ",") + std::string(gemmlab::precision_name(p));
    std::snprintf(line, sizeof line, "%-48s %-9s %4d  %-22s sm_%-4d %s\n%76s%s\n", k.name, k.family,
                  k.step, dt.c_str(), k.min_cc, k.seed, "", k.summary);
    os << line;
  }
}

void print_table(std::ostream& os, const Report& r) {
  os << "gemm-bench " << r.date << " on " << device_line(r) << "\n";
  if (!r.cpu_mode)
    os << "median of up to " << r.options.reps << " runs after " << r.options.warmup
       << " warm-ups, CUDA events (GPU time: a spin kernel hides host overhead), "
       << (!r.options.flush_l2      ? "L2 not flushed"
           : r.options.flush_writes ? "L2 flushed between runs (memset: dirty lines)"
                                    : "L2 flushed between runs (read sweep)")
       << "; error = relative Frobenius vs fp64; cuBLAS in the same run\n";
  bool extended = false;
  for (const Row& x : r.rows) extended |= !variant_text(x).empty() || x.shape.batch != 1;
  if (extended)
    os << "extended call (gemmlab::GemmDesc): B:MxNxK = strided batch of B entries (FLOPs count "
          "every entry); epilogue = D dtype, bias dtype, activation. %cuBL against cublasGemmEx on "
          "plain problems, cublasGemmStridedBatchedEx on plain batches (cublaslt rows beside it), "
          "cuBLASLt (cublasLtMatmul, matching epilogue, D in the out dtype) otherwise; cuBLASLt has "
          "no gelu_erf / silu epilogue: no cuBLAS figure there (-). Errors vs fp64 with the "
          "epilogue applied and D's rounding; large results: sampled rows / entries\n";
  char line[640];
  std::snprintf(line, sizeof line,
                "%-46s %4s %-16s %-4s %-2s %9s %9s %6s %7s %6s %4s %7s %4s %4s %5s %9s %s%s\n", "kernel",
                "step", "MxNxK", "type", "op", "ms", "FLOP/s", "%cuBL", "x naive", "%peak", "regs",
                "smem", "blk", "occ", "spill", "error", "check", extended ? "  epilogue" : "");
  os << line;
  std::string last_group;
  for (const Row& x : r.rows) {
    const std::string group = problem_key(x);
    if (!last_group.empty() && group != last_group) os << "\n";
    last_group = group;
    const std::string variant = variant_text(x);
    // "auto" names the kernel it ran.
    const std::string name = (x.auto_kernel.empty() ? x.kernel : x.kernel + ":" + x.auto_kernel) +
                             (x.plan.empty() ? "" : "[" + x.plan + "]");
    if (x.status != "ok") {
      std::snprintf(line, sizeof line, "%-46s %4d %-16s %-4s %-2s  %s%s\n", name.c_str(), x.step,
                    shape_text(x.shape).c_str(), gemmlab::precision_name(x.dtype), x.trans.c_str(),
                    x.status.c_str(), variant.empty() ? "" : ("  [" + variant + "]").c_str());
      os << line;
      continue;
    }
    const std::string check = !x.checked ? "-" : (x.pass ? "pass" : "FAIL");
    std::snprintf(line, sizeof line,
                  "%-46s %4d %-16s %-4s %-2s %9.3f %9s %6s %7s %6s %4s %7s %4s %4s %5s %9s %s%s\n",
                  name.c_str(), x.step, shape_text(x.shape).c_str(),
                  gemmlab::precision_name(x.dtype), x.trans.c_str(), x.ms_median, rate(x.tflops).c_str(),
                  pct(x.pct_cublas).c_str(),
                  speedup_text(x.speedup_vs_naive).c_str(),
                  pct(x.pct_peak).c_str(),
                  x.registers ? std::to_string(x.registers).c_str() : "-",
                  x.registers ? fmt("%.0fK", (x.smem_static + x.smem_dynamic) / 1024.0).c_str() : "-",
                  x.registers ? std::to_string(x.blocks_per_sm).c_str() : "-",
                  x.registers ? pct(100 * x.occupancy).c_str() : "-",
                  x.registers ? std::to_string(x.local_bytes).c_str() : "-",
                  x.checked ? fmt("%.1e", x.error).c_str() : "-", check.c_str(),
                  variant.empty() ? "" : (std::string(5 - check.size(), ' ') + "  " + variant).c_str());
    os << line;
  }
}

void print_summary(std::ostream& os, const Report& r) {
  if (r.cpu_mode) return;
  // Best passing gemmlab kernel per problem (dtype, shape, transpose, variant), against cuBLAS in
  // the same run: its "cublas" row, else its "cublaslt" row.
  struct Best {
    const Row* best = nullptr;
    const Row* cublas = nullptr;
    const Row* lt = nullptr;
    std::string no_cublas;  // why a cuBLAS row was skipped
  };
  std::map<std::string, Best> groups;
  std::vector<std::string> order;
  for (const Row& x : r.rows) {
    const std::string key = problem_key(x);
    if (is_cublas_row(x) && x.status.rfind("skipped: ", 0) == 0) {
      if (!groups.count(key)) order.push_back(key);
      groups[key].no_cublas = x.status.substr(9);
      continue;
    }
    if (x.status != "ok" || (x.checked && !x.pass) || !x.plan.empty()) continue;
    if (!groups.count(key)) order.push_back(key);
    Best& b = groups[key];
    if (x.kernel == "cublas") b.cublas = &x;
    else if (x.kernel == "cublaslt") b.lt = &x;
    else if (!b.best || x.tflops > b.best->tflops) b.best = &x;
  }
  os << "\nSummary: best gemmlab kernel per problem (checked against fp64) vs cuBLAS, same run\n";
  char line[512];
  for (const std::string& key : order) {
    const Best& b = groups[key];
    if (!b.best) continue;
    const Row* ref = b.cublas ? b.cublas : b.lt;
    const char* ref_name = b.cublas ? "cuBLAS" : b.lt ? "cuBLASLt" : "cuBLAS";
    const std::string name =
        b.best->auto_kernel.empty() ? b.best->kernel : b.best->kernel + ":" + b.best->auto_kernel;
    std::snprintf(line, sizeof line, "  %-26s %-46s %8.1f TFLOP/s  %s %8.1f  -> %s of %s%s\n",
                  key.c_str(), name.c_str(), b.best->tflops, ref_name, ref ? ref->tflops : 0.0,
                  ref ? pct(b.best->pct_cublas).c_str() : "n/a", ref_name,
                  !ref && !b.no_cublas.empty() ? (" (" + b.no_cublas + ")").c_str() : "");
    os << line;
  }
  print_dtype_summary(os, suite_summary(r));
}

double row_flops(const Row& x) {
  return 2.0 * static_cast<double>(x.shape.m) * x.shape.n * x.shape.k * x.shape.batch;
}

double min_bytes(const Row& x) {
  const double in = gemmlab::input_bytes(x.dtype);
  const double batch = static_cast<double>(x.shape.batch);
  const double a = in * x.shape.m * x.shape.k * batch;
  const double b = in * x.shape.k * x.shape.n * (x.broadcast_b ? 1.0 : batch);
  const double d = gemmlab::dtype_bytes(x.out_dtype) * static_cast<double>(x.shape.m) * x.shape.n * batch;
  const double bias = x.bias == "none" ? 0.0 : (x.bias == "f32" ? 4.0 : 2.0) * x.shape.n;
  return a + b + d + bias;
}

std::vector<DtypeSummary> suite_summary(const Report& r) {
  // The best passing gemmlab row and cuBLAS's row of each problem, then per dtype.
  struct Best {
    const Row* gemmlab = nullptr;
    const Row* cublas = nullptr;
    const Row* lt = nullptr;
    const Row* autos = nullptr;  // the "auto" row
    const Row* named = nullptr;  // the best registered kernel's row
  };
  std::map<std::string, Best> best;
  for (const Row& x : r.rows) {
    // Forced plan variants (--variants) are gemm-tune's data, not a kernel a call runs.
    if (x.status != "ok" || (x.checked && !x.pass) || x.tflops <= 0 || !x.plan.empty()) continue;
    Best& b = best[problem_key(x)];
    if (x.kernel == "cublas") b.cublas = &x;
    else if (x.kernel == "cublaslt") b.lt = &x;
    else if (!b.gemmlab || x.tflops > b.gemmlab->tflops) b.gemmlab = &x;
    if (x.kernel == "auto") b.autos = &x;
    else if (x.kernel != "cublas" && x.kernel != "cublaslt" &&
             (!b.named || x.tflops > b.named->tflops))
      b.named = &x;
  }
  std::map<std::string, DtypeSummary> by_dtype;
  for (const auto& [key, b] : best) {
    const Row* ref = b.cublas ? b.cublas : b.lt;
    if (!b.gemmlab || !ref) continue;
    const std::string dtype = gemmlab::precision_name(b.gemmlab->dtype);
    DtypeSummary& d = by_dtype[dtype];
    d.dtype = dtype;
    const double ratio = b.gemmlab->tflops / ref->tflops;
    d.log_sum += std::log(ratio);
    if (b.autos && b.named) {
      const double a = b.autos->tflops / b.named->tflops;
      if (d.auto_problems == 0 || a < d.auto_worst_ratio) d.auto_worst_ratio = a, d.auto_worst_problem = key;
      d.auto_within_5pct += a >= 0.95;
      ++d.auto_problems;
    }
    if (d.problems == 0 || ratio < d.worst_ratio) d.worst_ratio = ratio, d.worst_problem = key;
    ++d.problems;
    // Memory-bound: fewer FLOPs per byte than the device's peak rate per byte of bandwidth.
    const double bw = r.device.read_bandwidth_gbs, peak = peak_tflops(r.device, b.gemmlab->dtype);
    const Row& g = *b.gemmlab;
    if (bw > 0 && peak > 0 && g.ms_median > 0 &&
        row_flops(g) / min_bytes(g) < peak * 1e12 / (bw * 1e9)) {
      const double share = min_bytes(g) / (g.ms_median * 1e-3) / (bw * 1e9);
      if (d.memory_bound == 0 || share < d.bw_share_min) d.bw_share_min = share, d.bw_min_problem = key;
      if (d.memory_bound == 0 || share > d.bw_share_max) d.bw_share_max = share;
      ++d.memory_bound;
    }
  }
  std::vector<DtypeSummary> out;
  for (auto& [name, d] : by_dtype) {
    d.geomean = std::exp(d.log_sum / d.problems);
    out.push_back(d);
  }
  return out;
}

void print_dtype_summary(std::ostream& os, const std::vector<DtypeSummary>& s) {
  if (s.empty()) return;
  os << "\nPer dtype: best gemmlab kernel / cuBLAS over every problem of the run\n";
  char line[256];
  for (const DtypeSummary& d : s) {
    std::snprintf(line, sizeof line, "  %-5s %3d problems  geometric mean %.2fx  worst %.2fx (%s)\n",
                  d.dtype.c_str(), d.problems, d.geomean, d.worst_ratio, d.worst_problem.c_str());
    os << line;
    if (d.memory_bound > 0) {
      std::snprintf(line, sizeof line,
                    "        %3d memory-bound: %.0f-%.0f%% of the measured HBM read bandwidth "
                    "(lowest: %s)\n",
                    d.memory_bound, 100 * d.bw_share_min, 100 * d.bw_share_max,
                    d.bw_min_problem.c_str());
      os << line;
    }
    if (d.auto_problems > 0) {
      std::snprintf(line, sizeof line,
                    "        auto within 5%% of the best registered kernel on %d of %d problems; "
                    "worst %.2fx (%s)\n",
                    d.auto_within_5pct, d.auto_problems, d.auto_worst_ratio,
                    d.auto_worst_problem.c_str());
      os << line;
    }
  }
}

nlohmann::json to_json(const Report& r) {
  using nlohmann::json;
  const DeviceInfo& d = r.device;
  json j;
  j["schema"] = "gemmlab-bench/1";
  j["date"] = r.date;
  j["mode"] = r.cpu_mode ? "cpu" : "gpu";
  j["device"] = {{"name", d.name},          {"compute_capability", d.cc},
                 {"sms", d.sms},            {"clock_mhz", d.clock_mhz},
                 {"memory_clock_mhz", d.mem_clock_mhz},
                 {"memory_bus_bits", d.mem_bus_bits},
                 {"memory_bandwidth_gbs", d.mem_bandwidth_gbs},
                 {"read_bandwidth_gbs_measured", d.read_bandwidth_gbs},
                 {"l2_bytes", d.l2_bytes},  {"global_memory_bytes", d.global_mem_bytes},
                 {"cuda_runtime_version", d.runtime_version},
                 {"driver_version", d.driver_version}};
  json peaks = json::object();
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
    peaks[gemmlab::precision_name(p)] = r.cpu_mode ? 0.0 : peak_tflops(d, p);
  j["device"]["peak_tflops"] = peaks;
  j["settings"] = {{"warmup", r.options.warmup},
                   {"reps", r.options.reps},
                   {"flush_l2", r.options.flush_l2},
                   {"flush_mode", !r.options.flush_l2 ? "none" : r.options.flush_writes ? "memset" : "read"},
                   {"check", r.options.check},
                   {"timer", r.cpu_mode ? "std::chrono::steady_clock" : "cudaEvent, median"}};
  json rows = json::array();
  for (const Row& x : r.rows) {
    rows.push_back({{"kernel", x.kernel},
                    {"step", x.step},
                    {"family", x.family},
                    {"seed", x.seed},
                    {"m", x.shape.m},
                    {"n", x.shape.n},
                    {"k", x.shape.k},
                    {"dtype", gemmlab::precision_name(x.dtype)},
                    {"trans", x.trans},
                    {"status", x.status},
                    {"reps", x.reps},
                    {"ms_median", x.ms_median},
                    {"ms_min", x.ms_min},
                    {"ms_max", x.ms_max},
                    {"ms_runs", x.ms_runs},
                    {"tflops", x.tflops},
                    {"gbs", x.ms_median > 0 ? min_bytes(x) / (x.ms_median * 1e-3) / 1e9 : 0.0},
                    {"pct_cublas", x.pct_cublas},
                    {"speedup_vs_naive", x.speedup_vs_naive},
                    {"pct_peak", x.pct_peak},
                    {"threads_per_block", x.threads_per_block},
                    {"registers", x.registers},
                    {"smem_static_bytes", x.smem_static},
                    {"smem_dynamic_bytes", x.smem_dynamic},
                    {"blocks_per_sm", x.blocks_per_sm},
                    {"occupancy", x.occupancy},
                    {"local_bytes", x.local_bytes},
                    {"checked", x.checked},
                    {"pass", x.pass},
                    {"error", x.error},
                    {"error_bound", x.error_bound},
                    {"out_dtype", gemmlab::dtype_name(x.out_dtype)},
                    {"bias", x.bias},
                    {"act", gemmlab::activation_name(x.act)},
                    {"batch", x.shape.batch},
                    {"broadcast_b", x.broadcast_b}});
    if (!x.auto_kernel.empty()) rows.back()["auto_kernel"] = x.auto_kernel;
    if (!x.plan.empty())
      rows.back()["plan"] = {{"label", x.plan}, {"tile", x.choice.tile}, {"splits", x.choice.splits}};
  }
  j["rows"] = rows;
  return j;
}

std::string to_csv(const Report& r) {
  const nlohmann::json j = to_json(r);
  static const char* cols[] = {"kernel", "step", "family", "m", "n", "k", "dtype", "trans", "status",
                               "reps", "ms_median", "ms_min", "ms_max", "tflops", "pct_cublas",
                               "speedup_vs_naive", "pct_peak", "threads_per_block", "registers",
                               "smem_static_bytes", "smem_dynamic_bytes", "blocks_per_sm",
                               "occupancy", "local_bytes", "checked", "pass", "error", "error_bound",
                               "out_dtype", "bias", "act", "batch"};
  std::ostringstream s;
  s << "device,date";
  for (const char* c : cols) s << "," << c;
  s << "\n";
  auto quote = [](std::string v) {
    std::string q = "\"";
    for (char ch : v) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  for (const auto& row : j["rows"]) {
    s << quote(j["device"]["name"].get<std::string>()) << "," << j["date"].get<std::string>();
    for (const char* c : cols) {
      const auto& v = row[c];
      s << "," << (v.is_string() ? quote(v.get<std::string>()) : v.dump());
    }
    s << "\n";
  }
  return s.str();
}

}  // namespace gemmbench
