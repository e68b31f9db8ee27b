// gemm-bench on the CPU: command-line parsing, and the JSON report validated against the
// documented schema (docs/bench-schema.json) with a small JSON-Schema subset validator.
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gemm-bench/options.h"
#include "gemm-bench/report.h"
#include "gemm-bench/runner.h"

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

// ---- a JSON-Schema subset: type, required, properties, items, enum, minimum, maximum ----
bool type_ok(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "integer") return v.is_number_integer();
  if (t == "number") return v.is_number();
  return false;
}

void validate(const json& v, const json& schema, const std::string& path, std::vector<std::string>* errs) {
  if (schema.contains("type") && !type_ok(v, schema["type"])) {
    errs->push_back(path + ": expected " + schema["type"].get<std::string>());
    return;
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found |= e == v;
    if (!found) errs->push_back(path + ": not in enum");
  }
  if (schema.contains("minimum") && v.is_number() && v.get<double>() < schema["minimum"].get<double>())
    errs->push_back(path + ": below minimum");
  if (schema.contains("maximum") && v.is_number() && v.get<double>() > schema["maximum"].get<double>())
    errs->push_back(path + ": above maximum");
  if (schema.contains("required"))
    for (const auto& r : schema["required"])
      if (!v.contains(r.get<std::string>())) errs->push_back(path + ": missing " + r.get<std::string>());
  if (schema.contains("properties") && v.is_object())
    for (const auto& [key, sub] : schema["properties"].items())
      if (v.contains(key)) validate(v[key], sub, path + "." + key, errs);
  if (schema.contains("items") && v.is_array())
    for (size_t i = 0; i < v.size(); ++i) validate(v[i], schema["items"], path + "[" + std::to_string(i) + "]", errs);
}

json load_schema() {
  std::ifstream f(std::string(GEMMLAB_SOURCE_DIR) + "/docs/bench-schema.json");
  EXPECT_TRUE(f.good()) << "docs/bench-schema.json not found";
  return json::parse(f);
}

TEST(BenchReport, CpuReportValidatesAgainstSchema) {
  Options o;
  std::string msg;
  ASSERT_EQ(parse({"--cpu", "--sizes", "16,7x5x3", "--dtype", "fp32,bf16", "--trans", "NN,TT", "-q"}, &o, &msg), -1);
  const Report r = run_cpu_bench(o);
  ASSERT_EQ(r.rows.size(), 8u);
  for (const Row& row : r.rows) EXPECT_GT(row.ms_median, 0.0);
  const json j = to_json(r);
  std::vector<std::string> errs;
  validate(j, load_schema(), "$", &errs);
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
  const json schema = load_schema();
  std::vector<std::string> errs;
  json missing = j;
  missing["rows"][0].erase("tflops");
  validate(missing, schema, "$", &errs);
  EXPECT_FALSE(errs.empty());
  errs.clear();
  json wrong = j;
  wrong["rows"][0]["dtype"] = "fp8";
  validate(wrong, schema, "$", &errs);
  EXPECT_FALSE(errs.empty());
}

TEST(BenchReport, CommittedResultsValidate) {
  // Every report committed under docs/results/ must match the schema too.
  const json schema = load_schema();
  int seen = 0;
  for (const char* name : {"/docs/results/h100-default.json", "/docs/results/h100-ladder.json"}) {
    std::ifstream f(std::string(GEMMLAB_SOURCE_DIR) + name);
    if (!f.good()) continue;
    std::vector<std::string> errs;
    validate(json::parse(f), schema, name, &errs);
    EXPECT_TRUE(errs.empty()) << errs.front();
    ++seen;
  }
  std::printf("[  INFO    ] %d committed report(s) validated\n", seen);
}

}  // namespace
}  // namespace gemmbench
