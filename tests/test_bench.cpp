// gemm-bench on the CPU: command-line parsing, and the JSON report validated against the
// documented schema (docs/bench-schema.json, compiled in: gemm-bench/schema.h), from any working
// directory.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gemm-bench/options.h"
#include "gemm-bench/report.h"
#include "gemm-bench/runner.h"
#include "gemm-bench/schema.h"

namespace gemmbench {
namespace {

using nlohmann::json;

int parse(std::vector<const char*> args, Options* o, std::string* msg) {
  args.insert(args.begin(), "gemm-bench");
  return parse_options(static_cast<int>(args.size()), args.data(), o, msg);
}

TEST(BenchCli, Defaults) {
  Options o;
  std::string msg;
  ASSERT_EQ(parse({}, &o, &msg), -1) << msg;
  ASSERT_EQ(o.sizes.size(), 2u);
  EXPECT_EQ(o.sizes[0].m, 4096);
  EXPECT_EQ(o.sizes[1].k, 4097);
  EXPECT_EQ(o.dtypes.size(), 4u);
  ASSERT_EQ(o.trans.size(), 1u);
  EXPECT_EQ(o.trans[0].first, gemmlab::Op::N);
  EXPECT_EQ(o.kernels, std::vector<std::string>{"all"});
}

// --suite: the shape suites of the issue (decode: M = 1..256 x 4 weight shapes, NN and NT), exclusive
// with --sizes, unknown names refused.
TEST(BenchCli, Suites) {
  Options o;
  std::string msg;
  ASSERT_EQ(parse({"--suite", "decode"}, &o, &msg), -1) << msg;
  EXPECT_EQ(o.sizes.size(), 36u);
  EXPECT_EQ(o.sizes.front().m, 1);
  EXPECT_EQ(o.sizes.back().m, 256);
  ASSERT_EQ(o.trans.size(), 2u);
  EXPECT_EQ(o.trans[1].second, gemmlab::Op::T);
  Options all;
  ASSERT_EQ(parse({"--suite", "all", "--trans", "NN"}, &all, &msg), -1) << msg;
  EXPECT_EQ(all.sizes.size(), 36u + 8u + 12u + 7u + 2u);
  EXPECT_EQ(all.trans.size(), 1u) << "--trans given wins over the suite's";
  Options bad;
  EXPECT_EQ(parse({"--suite", "nope"}, &bad, &msg), 2);
  EXPECT_NE(msg.find("unknown suite"), std::string::npos);
  Options both;
  EXPECT_EQ(parse({"--suite", "small", "--sizes", "64"}, &both, &msg), 2);
}

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

TEST(BenchCli, ListsAndShapes) {
  Options o;
  std::string msg;
  ASSERT_EQ(parse({"--sizes", "1025,1000x1025x999", "--dtype", "bf16,tf32", "--trans", "NT,TT",
                   "--kernels", "simt/01_naive,wgmma", "--reps", "7", "--no-flush", "--json", "x.json"},
                  &o, &msg),
            -1)
      << msg;
  ASSERT_EQ(o.sizes.size(), 2u);
  EXPECT_EQ(o.sizes[0].n, 1025);
  EXPECT_EQ(o.sizes[1].m, 1000);
  EXPECT_EQ(o.sizes[1].n, 1025);
  EXPECT_EQ(o.sizes[1].k, 999);
  EXPECT_EQ(o.dtypes[0], gemmlab::Precision::BF16);
  EXPECT_EQ(o.dtypes[1], gemmlab::Precision::TF32);
  EXPECT_EQ(o.trans[0].second, gemmlab::Op::T);
  EXPECT_EQ(o.trans[1].first, gemmlab::Op::T);
  EXPECT_EQ(o.kernels.size(), 2u);
  EXPECT_EQ(o.reps, 7);
  EXPECT_FALSE(o.flush_l2);
  EXPECT_EQ(o.json_path, "x.json");
}

TEST(BenchCli, RejectsBadInput) {
  const std::vector<std::vector<const char*>> bad = {
      {"--sizes", "0"},        {"--sizes", "12x3"},   {"--sizes", "-5"},  {"--sizes", "axbxc"},
      {"--dtype", "fp8"},      {"--trans", "NX"},     {"--reps", "0"},    {"--bogus"}};
  for (const auto& args : bad) {
    Options o;
    std::string msg;
    EXPECT_EQ(parse(args, &o, &msg), 2) << args[0] << " " << (args.size() > 1 ? args[1] : "");
    EXPECT_FALSE(msg.empty());
  }
}

TEST(BenchCli, HelpExitsZero) {
  Options o;
  std::string msg;
  EXPECT_EQ(parse({"--help"}, &o, &msg), 0);
  EXPECT_NE(msg.find("--kernels"), std::string::npos);
}

TEST(BenchCli, KernelSelection) {
  std::string err;
  EXPECT_FALSE(select_kernels({"all"}, &err).empty());
  EXPECT_EQ(select_kernels({"simt/01_naive"}, &err).size(), 1u);
  EXPECT_TRUE(select_kernels({"no/such_kernel"}, &err).empty());
  EXPECT_NE(err.find("no/such_kernel"), std::string::npos);
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
    const std::vector<std::string> errs = validate(json::parse(f));
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
