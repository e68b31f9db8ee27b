// gemm-bench on the CPU: its reports (per-dtype summaries, `auto` against the best kernel, the
// memory-bound share, the extended call's rows), and the JSON report validated against the
// documented schema (docs/bench-schema.json, compiled in: gemm-bench/schema.h), from any working
// directory. The command line: test_bench_cli.cpp; the fp64 checks: test_bench_check.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench_cli_util.h"
#include "gemm-bench/check.h"
#include "gemm-bench/options.h"
#include "gemm-bench/report.h"
#include "gemm-bench/runner.h"
#include "gemm-bench/schema.h"
#include "reference/reference.h"

namespace gemmbench {
namespace {

using nlohmann::json;

// The per-dtype summary: geometric mean of best gemmlab / cuBLAS per problem, and the worst one;
// failed rows and problems without a cuBLAS row do not count.
TEST(BenchReport, PerDtypeSummary) {
  Report r;
  auto row = [&](const char* kernel, int64_t m, gemmlab::Precision p, double tflops,
                 bool pass = true) {
    Row x;
    x.kernel = kernel, x.shape = {m, 64, 64}, x.dtype = p, x.tflops = tflops;
    x.checked = true, x.pass = pass;
    r.rows.push_back(x);
  };
  using gemmlab::Precision;
  row("cublas", 1, Precision::BF16, 2.0);
  row("a", 1, Precision::BF16, 4.0);       // 2x
  row("b", 1, Precision::BF16, 3.0);
  row("cublas", 2, Precision::BF16, 4.0);
  row("a", 2, Precision::BF16, 2.0);       // 0.5x: the worst
  row("a", 2, Precision::BF16, 8.0, false);  // failed its check: ignored
  row("a", 3, Precision::BF16, 9.0);       // no cuBLAS row: ignored
  row("cublas", 1, Precision::FP32, 1.0);
  row("a", 1, Precision::FP32, 1.5);
  const std::vector<DtypeSummary> s = suite_summary(r);
  ASSERT_EQ(s.size(), 2u);
  const DtypeSummary& bf16 = s[0].dtype == "bf16" ? s[0] : s[1];
  EXPECT_EQ(bf16.problems, 2);
  EXPECT_NEAR(bf16.geomean, 1.0, 1e-12);  // sqrt(2 * 0.5)
  EXPECT_NEAR(bf16.worst_ratio, 0.5, 1e-12);
  EXPECT_NE(bf16.worst_problem.find("2x64x64"), std::string::npos) << bf16.worst_problem;
  std::ostringstream os;
  print_dtype_summary(os, s);
  EXPECT_NE(os.str().find("geometric mean 1.00x"), std::string::npos) << os.str();
}

// "auto" against the best registered kernel of the same problem: the share within 5% and the
// worst ratio (problems without an auto row are not counted).
TEST(BenchReport, AutoAgainstTheBestRegisteredKernel) {
  Report r;
  using gemmlab::Precision;
  auto row = [&](const char* kernel, int64_t m, double tflops) {
    Row x;
    x.kernel = kernel, x.shape = {m, 64, 64}, x.dtype = Precision::BF16, x.tflops = tflops;
    x.checked = x.pass = true;
    r.rows.push_back(x);
  };
  row("cublas", 1, 1.0), row("a", 1, 2.0), row("b", 1, 1.0), row("auto", 1, 1.96);  // 0.98
  row("cublas", 2, 1.0), row("a", 2, 2.0), row("auto", 2, 1.0);                      // 0.50
  row("cublas", 3, 1.0), row("a", 3, 2.0);                                           // no auto
  const std::vector<DtypeSummary> s = suite_summary(r);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].problems, 3);
  EXPECT_EQ(s[0].auto_problems, 2);
  EXPECT_EQ(s[0].auto_within_5pct, 1);
  EXPECT_NEAR(s[0].auto_worst_ratio, 0.5, 1e-12);
  EXPECT_NE(s[0].auto_worst_problem.find("2x64x64"), std::string::npos);
  std::ostringstream os;
  print_dtype_summary(os, s);
  EXPECT_NE(os.str().find("auto within 5% of the best registered kernel on 1 of 2 problems; "
                          "worst 0.50x"),
            std::string::npos)
      << os.str();
}

// Memory-bound problems (fewer FLOPs per byte than the device's balance) are measured against
// the measured HBM read bandwidth: the bytes of A, B, D and the bias over the best row's time.
TEST(BenchReport, MemoryBoundShareOfMeasuredBandwidth) {
  Report r;
  r.device.present = true, r.device.cc = 90, r.device.sms = 132, r.device.clock_mhz = 1980;
  r.device.read_bandwidth_gbs = 3000;
  using gemmlab::Precision;
  auto row = [&](const char* kernel, Shape s, double ms) {
    Row x;
    x.kernel = kernel, x.shape = s, x.dtype = Precision::BF16, x.out_dtype = gemmlab::DType::BF16;
    x.ms_median = ms, x.tflops = row_flops(x) / (ms * 1e-3) / 1e12;
    x.checked = x.pass = true;
    r.rows.push_back(x);
  };
  // 1 x 4096 x 4096 bf16, bf16 D: 2 (4096 + 4096^2 + 4096) bytes; 1 FLOP per byte.
  Row probe;
  probe.shape = {1, 4096, 4096}, probe.dtype = Precision::BF16, probe.out_dtype = gemmlab::DType::BF16;
  EXPECT_DOUBLE_EQ(min_bytes(probe), 2.0 * (4096 + 4096.0 * 4096 + 4096));
  probe.bias = "f32", probe.shape.batch = 3, probe.broadcast_b = true;
  EXPECT_DOUBLE_EQ(min_bytes(probe), 2.0 * (3 * 4096 + 4096.0 * 4096 + 3 * 4096) + 4 * 4096);
  const double bytes = 2.0 * (4096 + 4096.0 * 4096 + 4096);
  row("cublas", {1, 4096, 4096}, bytes / 1.5e12 * 1e3);  // 1.5 TB/s
  row("a", {1, 4096, 4096}, bytes / 2.4e12 * 1e3);       // 2.4 TB/s: 80% of 3000 GB/s
  row("cublas", {4096, 4096, 4096}, 0.2);                // compute-bound: not counted
  row("a", {4096, 4096, 4096}, 0.19);
  const std::vector<DtypeSummary> s = suite_summary(r);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].problems, 2);
  EXPECT_EQ(s[0].memory_bound, 1);
  EXPECT_NEAR(s[0].bw_share_min, 0.8, 1e-9);
  EXPECT_NE(s[0].bw_min_problem.find("1x4096x4096"), std::string::npos);
  std::ostringstream os;
  print_dtype_summary(os, s);
  EXPECT_NE(os.str().find("1 memory-bound: 80-80% of the measured HBM read bandwidth"),
            std::string::npos) << os.str();
  r.device.read_bandwidth_gbs = 0;  // not measured: no memory-bound line
  EXPECT_EQ(suite_summary(r)[0].memory_bound, 0);
}

// The bench-side reference of the epilogue (check.h).
// One problem's rows get their ratios from that problem alone: rows before `first` (another
// problem) keep theirs; rows without a time get none.
TEST(BenchReport, RatiosWithinOneProblem) {
  std::vector<Row> rows(5);
  rows[0].kernel = "simt/01_naive", rows[0].ms_median = 100, rows[0].tflops = 1;  // another problem
  rows[1].kernel = "cublas", rows[1].ms_median = 2, rows[1].tflops = 50;
  rows[2].kernel = "simt/01_naive", rows[2].ms_median = 40, rows[2].tflops = 2.5;
  rows[3].kernel = "simt/sgemm", rows[3].ms_median = 4, rows[3].tflops = 25;
  rows[4].kernel = "simt/15_cp_async_multistage", rows[4].status = "skipped: x";
  set_ratios(&rows, 1, 2.0, 100.0);
  EXPECT_EQ(rows[0].pct_cublas, 0);
  EXPECT_EQ(rows[0].speedup_vs_naive, 0);
  EXPECT_DOUBLE_EQ(rows[1].pct_cublas, 100);
  EXPECT_DOUBLE_EQ(rows[3].pct_cublas, 50);
  EXPECT_DOUBLE_EQ(rows[3].speedup_vs_naive, 10);
  EXPECT_DOUBLE_EQ(rows[3].pct_peak, 25);
  EXPECT_DOUBLE_EQ(rows[2].speedup_vs_naive, 1);
  EXPECT_EQ(rows[4].pct_cublas, 0);
  set_ratios(&rows, 3, 0.0, 0.0);  // no cuBLAS row, no naive row, unknown peak: nothing new
  EXPECT_DOUBLE_EQ(rows[3].pct_cublas, 50);
}

// Rows of the extended call: the JSON fields (schema-valid), the table's epilogue column, and
// cuBLASLt as the yardstick where there is no cublasGemmEx row.
TEST(BenchReport, ExtendedRows) {
  Report r;
  auto row = [&](const char* kernel, double tflops, double pct, gemmlab::DType out, const char* bias,
                 gemmlab::Activation act, int64_t batch = 1) {
    Row x;
    x.kernel = kernel, x.shape = {512, 512, 512, batch}, x.dtype = gemmlab::Precision::BF16;
    x.tflops = tflops, x.ms_median = 1.0, x.pct_cublas = pct, x.checked = true, x.pass = true;
    x.out_dtype = out, x.bias = bias, x.act = act;
    r.rows.push_back(x);
    return &r.rows.back();
  };
  using gemmlab::Activation;
  using gemmlab::DType;
  row("cublaslt", 2.0, 100, DType::BF16, "bf16", Activation::GeluTanh);
  row("auto", 3.0, 150, DType::BF16, "bf16", Activation::GeluTanh)->auto_kernel = "wgmma/03_tma_wgmma_ws_persistent";
  Row* skipped = row("cublaslt", 0, 0, DType::BF16, "none", Activation::GeluErf);
  skipped->status = "skipped: cuBLASLt has no gelu_erf epilogue (its GELU is the tanh form)";
  skipped->checked = false;
  row("auto", 1.0, 0, DType::BF16, "none", Activation::GeluErf);
  row("cublas", 4.0, 100, DType::F32, "none", Activation::None, 64);
  row("cublaslt", 5.0, 125, DType::F32, "none", Activation::None, 64);
  row("auto", 4.4, 110, DType::F32, "none", Activation::None, 64);

  const json j = to_json(r);
  const std::vector<std::string> errs = validate_json(j, bench_schema());
  EXPECT_TRUE(errs.empty()) << errs.front();
  EXPECT_EQ(j["rows"][1]["out_dtype"], "bf16");
  EXPECT_EQ(j["rows"][1]["bias"], "bf16");
  EXPECT_EQ(j["rows"][1]["act"], "gelu_tanh");
  EXPECT_EQ(j["rows"][1]["auto_kernel"], "wgmma/03_tma_wgmma_ws_persistent");
  EXPECT_EQ(j["rows"][4]["batch"], 64);
  EXPECT_FALSE(j["rows"][0].contains("auto_kernel"));
  json bad = j;
  bad["rows"][0]["out_dtype"] = "fp8";
  EXPECT_FALSE(validate_json(bad, bench_schema()).empty());
  bad = j;
  bad["rows"][0]["batch"] = 0;
  EXPECT_FALSE(validate_json(bad, bench_schema()).empty());
  bad = j;
  bad["rows"][0]["act"] = "gelu";
  EXPECT_FALSE(validate_json(bad, bench_schema()).empty());
  const std::string csv = to_csv(r);
  EXPECT_NE(csv.substr(0, csv.find('\n')).find(",out_dtype,bias,act,batch"), std::string::npos);

  EXPECT_EQ(variant_text(r.rows[0]), "out=bf16 bias=bf16 act=gelu_tanh");
  EXPECT_EQ(variant_text(r.rows[4]), "");
  EXPECT_EQ(problem_key(r.rows[4]), "bf16 64:512x512x512 NN");
  std::ostringstream table;
  print_table(table, r);
  EXPECT_NE(table.str().find("epilogue"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("auto:wgmma/03_tma_wgmma_ws_persistent"), std::string::npos);
  EXPECT_NE(table.str().find("64:512x512x512"), std::string::npos);
  EXPECT_NE(table.str().find("pass   out=bf16 bias=bf16 act=gelu_tanh"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("skipped: cuBLASLt has no gelu_erf epilogue"), std::string::npos);

  std::ostringstream summary;
  print_summary(summary, r);
  const std::string s = summary.str();
  EXPECT_NE(s.find("cuBLASLt      2.0  -> 150% of cuBLASLt"), std::string::npos) << s;
  EXPECT_NE(s.find("n/a of cuBLAS (cuBLASLt has no gelu_erf epilogue"), std::string::npos) << s;
  // The batch's yardstick is its cublas row (cublasGemmStridedBatchedEx), not cuBLASLt beside it.
  EXPECT_NE(s.find("cuBLAS      4.0  -> 110% of cuBLAS"), std::string::npos) << s;
  const std::vector<DtypeSummary> d = suite_summary(r);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].problems, 2) << "gelu_erf has no cuBLAS figure";
  EXPECT_NEAR(d[0].geomean, std::sqrt(1.5 * 1.1), 1e-12);
}

// A report of the plain call keeps its layout: no epilogue column, no extended note.
TEST(BenchReport, PlainTableUnchanged) {
  Report r;
  Row x;
  x.kernel = "cublas", x.shape = {64, 64, 64}, x.ms_median = 1.0, x.tflops = 1.0, x.checked = true,
  x.pass = true;
  r.rows = {x};
  std::ostringstream os;
  print_table(os, r);
  EXPECT_EQ(os.str().find("epilogue"), std::string::npos) << os.str();
  EXPECT_EQ(os.str().find("extended call"), std::string::npos);
  const std::string last = os.str().substr(os.str().rfind("64x64x64"));
  EXPECT_NE(last.find("pass\n"), std::string::npos) << "no trailing padding: " << last;
}

// ---- the report schema: compiled in (gemm-bench/schema.h), so any working directory will do ----

std::vector<std::string> validate(const json& v) { return validate_json(v, bench_schema()); }

// docs/results/ of the source tree: searched upwards from the test program's directory and from
// the working directory, then in $GEMMLAB_SOURCE_DIR and the build's source directory. Empty if
// not found; *tried lists where it looked.
std::string find_results_dir(std::string* tried) {
  namespace fs = std::filesystem;
  std::vector<fs::path> starts;
  std::error_code ec;
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec) starts.push_back(exe.parent_path());
  if (fs::path cwd = fs::current_path(ec); !ec) starts.push_back(cwd);
  std::vector<fs::path> candidates;
  for (fs::path p : starts)
    for (; !p.empty(); p = p.parent_path()) {
      candidates.push_back(p);
      if (p == p.root_path()) break;
    }
  if (const char* env = std::getenv("GEMMLAB_SOURCE_DIR")) candidates.push_back(env);
  candidates.push_back(GEMMLAB_SOURCE_DIR);
  for (const fs::path& c : candidates) {
    const fs::path results = c / "docs" / "results";
    if (fs::is_regular_file(results / "h100-default.json", ec)) return results.string();
  }
  *tried = "upwards from " + (starts.empty() ? std::string("?") : starts[0].string()) +
           " and the working directory, $GEMMLAB_SOURCE_DIR, " GEMMLAB_SOURCE_DIR;
  return "";
}

// Every report committed under docs/results/; fails if none is found.
void validate_committed_results() {
  std::string tried;
  const std::string dir = find_results_dir(&tried);
  ASSERT_FALSE(dir.empty()) << "docs/results/ not found (looked " << tried
                            << "); set GEMMLAB_SOURCE_DIR to the source tree";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream f(entry.path());
    const json report = json::parse(f);
    if (report.value("tool", "") == "dist-bench") {  // not a gemm-bench report: what dist-model reads
      for (const char* key : {"devices", "busbw", "llama", "nccl_version"})
        EXPECT_TRUE(report.contains(key)) << entry.path() << ": dist-bench report without " << key;
      continue;
    }
    const std::vector<std::string> errs = validate(report);
    EXPECT_TRUE(errs.empty()) << entry.path() << ": " << errs.front();
    ++seen;
  }
  EXPECT_GE(seen, 1);
  std::printf("[  INFO    ] %d committed report(s) in %s validated\n", seen, dir.c_str());
}

// The working directory for a scope, restored after it.
class InDirectory {
 public:
  explicit InDirectory(const char* dir) : saved_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~InDirectory() { std::filesystem::current_path(saved_); }

 private:
  std::filesystem::path saved_;
};

TEST(BenchReport, EmbeddedSchemaIsTheDocumentedOne) {
  EXPECT_EQ(bench_schema().value("$id", ""), "gemmlab-bench/1");
  EXPECT_TRUE(bench_schema().contains("properties"));
}

TEST(BenchReport, CpuReportValidatesAgainstSchema) {
  Options o;
  std::string msg;
  ASSERT_EQ(parse({"--cpu", "--sizes", "16,7x5x3", "--dtype", "fp32,bf16", "--trans", "NN,TT", "-q"}, &o, &msg), -1);
  const Report r = run_cpu_bench(o);
  ASSERT_EQ(r.rows.size(), 8u);
  for (const Row& row : r.rows) EXPECT_GT(row.ms_median, 0.0);
  const std::vector<std::string> errs = validate(to_json(r));
  EXPECT_TRUE(errs.empty()) << errs.front();
  // The CSV has a header and one line per row.
  const std::string csv = to_csv(r);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 9);
}

TEST(BenchReport, ValidatorCatchesBadReports) {
  // A validator that accepts anything would make the test above meaningless.
  Options o;
  std::string msg;
  ASSERT_EQ(parse({"--cpu", "--sizes", "8", "--dtype", "fp32", "-q"}, &o, &msg), -1);
  json j = to_json(run_cpu_bench(o));
  EXPECT_TRUE(validate(j).empty());
  json missing = j;
  missing["rows"][0].erase("tflops");
  EXPECT_FALSE(validate(missing).empty());
  json wrong = j;
  wrong["rows"][0]["dtype"] = "fp8";
  EXPECT_FALSE(validate(wrong).empty());
}

// "x naive" is "-" where simt/01_naive was not in the run (speed-up 0), never "0.0x".
TEST(BenchReport, SpeedupWithoutNaiveIsADash) {
  EXPECT_EQ(speedup_text(0.0), "-");
  EXPECT_EQ(speedup_text(12.3), "12.3x");
  Report r;
  Row with, without;
  with.kernel = "simt/15_example", with.ms_median = 1.0, with.speedup_vs_naive = 40.0;
  without.kernel = "wgmma/03_example", without.ms_median = 1.0;
  r.rows = {with, without};
  std::ostringstream os;
  print_table(os, r);
  const std::string table = os.str();
  EXPECT_NE(table.find("40.0x"), std::string::npos) << table;
  std::string line = table.substr(table.find("wgmma/03_example"));
  line = line.substr(0, line.find('\n'));
  EXPECT_EQ(line.find("0.0x"), std::string::npos) << line;
  EXPECT_NE(line.find(" - "), std::string::npos) << line;
}

TEST(BenchReport, CommittedResultsValidate) { validate_committed_results(); }

// The schema checks do not depend on the working directory.
TEST(BenchReport, ValidatesFromAnotherWorkingDirectory) {
  InDirectory elsewhere("/tmp");
  Options o;
  std::string msg;
  ASSERT_EQ(parse({"--cpu", "--sizes", "8", "--dtype", "fp32", "-q"}, &o, &msg), -1);
  const std::vector<std::string> errs = validate(to_json(run_cpu_bench(o)));
  EXPECT_TRUE(errs.empty()) << errs.front();
  validate_committed_results();
}

}  // namespace
}  // namespace gemmbench
