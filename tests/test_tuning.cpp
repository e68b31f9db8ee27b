// The tuning table on the CPU: shape classes and the lookup `auto` makes (registry/tuning.h),
// gemm-tune's choice from a run with --variants (gemm-bench/tune.h), the table file it writes and
// its merge with an earlier one, and the compiled-in table's entries naming real kernels.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gemm-bench/report.h"
#include "gemm-bench/runner.h"
#include "gemm-bench/schema.h"
#include "gemm-bench/tune.h"
#include "registry/registry.h"
#include "registry/tuning.h"

namespace gemmlab {
namespace {

TEST(Tuning, ExtentClassIsCeilLog2) {
  EXPECT_EQ(extent_class(1), 0);
  EXPECT_EQ(extent_class(2), 1);
  EXPECT_EQ(extent_class(17), 5);
  EXPECT_EQ(extent_class(32), 5);
  EXPECT_EQ(extent_class(33), 6);
  EXPECT_EQ(extent_class(4096), 12);
  EXPECT_EQ(extent_class(14336), 14);
  EXPECT_EQ(extent_class(int64_t{1} << 40), 40);
}

TEST(Tuning, LookupMatchesDeviceClassDtypeAndTransposes) {
  const TuningEntry table[] = {
      {"GPU A", 132, Precision::FP32, Op::N, Op::T, 5, 12, 12, "simt/sgemm", {4, 8}},
      {"GPU A", 132, Precision::FP32, Op::N, Op::N, 5, 12, 12, "simt/sgemm", {3, 0}},
      {"GPU B", 132, Precision::FP32, Op::N, Op::N, 5, 12, 12, "gemv/small_m", {}},
  };
  GemmProblem p;
  p.precision = Precision::FP32, p.m = 20, p.n = 4000, p.k = 4096, p.op_a = Op::N, p.op_b = Op::T;
  const TuningEntry* e = find_tuning(table, 3, "GPU A", 132, p);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e, &table[0]);
  p.op_b = Op::N;
  EXPECT_EQ(find_tuning(table, 3, "GPU A", 132, p), &table[1]);
  EXPECT_EQ(find_tuning(table, 3, "GPU B", 132, p), &table[2]);
  EXPECT_EQ(find_tuning(table, 3, "GPU B", 114, p), nullptr) << "another SM count: no entry";
  EXPECT_EQ(find_tuning(table, 3, "GPU C", 132, p), nullptr);
  p.m = 33;  // class 6
  EXPECT_EQ(find_tuning(table, 3, "GPU A", 132, p), nullptr);
  p.m = 32, p.precision = Precision::TF32;
  EXPECT_EQ(find_tuning(table, 3, "GPU A", 132, p), nullptr);
  p.precision = Precision::FP32, p.batch = 2;
  EXPECT_EQ(find_tuning(table, 3, "GPU A", 132, p), nullptr) << "batches keep the planners";
  EXPECT_EQ(find_tuning(nullptr, 0, "GPU A", 132, p), nullptr);
}

// Several entries of one class (gemm-tune measured 768^3 and 1024^3, both class 10): the one
// measured nearest the problem, in log2 steps summed over m, n and k; a class-wide entry (no
// shape) is as near as any.
TEST(Tuning, LookupTakesTheEntryMeasuredNearest) {
  const TuningEntry table[] = {
      {"GPU A", 132, Precision::FP32, Op::N, Op::N, 10, 10, 10, "simt/sgemm", {4, 0}, 1024, 1024, 1024},
      {"GPU A", 132, Precision::FP32, Op::N, Op::N, 10, 10, 10, "auto", {}, 768, 768, 768},
      {"GPU A", 132, Precision::FP32, Op::N, Op::N, 11, 11, 11, "simt/sgemm", {3, 0}, 1536, 1536, 1536},
      {"GPU A", 132, Precision::FP32, Op::N, Op::N, 11, 11, 11, "simt/sgemm", {2, 0}},
  };
  GemmProblem p;
  p.precision = Precision::FP32, p.m = p.n = p.k = 1024;
  EXPECT_EQ(find_tuning(table, 4, "GPU A", 132, p), &table[0]);
  p.m = p.n = p.k = 768;
  EXPECT_EQ(find_tuning(table, 4, "GPU A", 132, p), &table[1]);
  p.m = p.n = p.k = 900;  // log2 gaps 0.19 to 1024 and 0.23 to 768, three times
  EXPECT_EQ(find_tuning(table, 4, "GPU A", 132, p), &table[0]);
  p.m = p.n = p.k = 800;
  EXPECT_EQ(find_tuning(table, 4, "GPU A", 132, p), &table[1]);
  p.k = 600;  // m, n a little nearer 1024 (0.19 vs 0.23 each), k much nearer 768 (0.36 vs 0.77)
  p.m = p.n = 900;
  EXPECT_EQ(find_tuning(table, 4, "GPU A", 132, p), &table[1]);
  p.m = p.n = 1020;  // now m, n outweigh it (0.01 vs 0.41 each)
  EXPECT_EQ(find_tuning(table, 4, "GPU A", 132, p), &table[0]);
  p.k = 520;  // 1.35 from 1024, 1.02 from 768: too far from both
  p.m = p.n = 900;
  EXPECT_EQ(find_tuning(table, 2, "GPU A", 132, p), nullptr);
  p.m = p.n = p.k = 1536;  // the shapeless entry is at gap 0 from anything: the first of equals
  EXPECT_EQ(find_tuning(table, 4, "GPU A", 132, p), &table[2]);
  p.m = p.n = p.k = 1100;
  EXPECT_EQ(find_tuning(table, 4, "GPU A", 132, p), &table[3]);
  // Past a summed gap of kMaxTuningGap, no entry (the shapeless one aside).
  const TuningEntry only_1536[] = {table[2]};
  p.m = p.n = p.k = 2048;  // 3 x 0.415
  EXPECT_EQ(find_tuning(only_1536, 1, "GPU A", 132, p), nullptr);
  p.m = p.n = p.k = 1792;  // 3 x 0.222
  EXPECT_EQ(find_tuning(only_1536, 1, "GPU A", 132, p), &only_1536[0]);
  p.m = 2048, p.n = p.k = 1536;  // 0.415 in m alone
  EXPECT_EQ(find_tuning(only_1536, 1, "GPU A", 132, p), &only_1536[0]);
}

// Every compiled-in entry names a registry kernel that takes its dtype, and a plan it offers, or
// leaves the problem to the planners.
TEST(Tuning, CompiledTableNamesRealKernels) {
  size_t count = 0;
  const TuningEntry* t = tuning_table(&count);
  for (size_t i = 0; i < count; ++i) {
    SCOPED_TRACE(t[i].kernel);
    EXPECT_GT(t[i].m, 0) << "gemm-tune writes the problem of every entry";
    if (std::string(t[i].kernel) == kPlannersEntry) {  // the planners decide: no plan forced
      EXPECT_FALSE(t[i].choice.any());
      continue;
    }
    const KernelDesc* k = find_kernel(t[i].kernel);
    ASSERT_NE(k, nullptr);
    EXPECT_TRUE(k->dtypes & dtype_bit(t[i].precision));
    EXPECT_GT(t[i].sms, 0);
    if (t[i].choice.tile != 0) {
      ASSERT_NE(k->tile_names, nullptr);
      int tiles = 0;
      while (k->tile_names[tiles] != nullptr) ++tiles;
      EXPECT_LE(t[i].choice.tile, tiles);
    }
    if (t[i].choice.any()) EXPECT_NE(k->variants, nullptr);
  }
}

// Each GPU's table names each measured problem once, with its own class, and every entry of a
// device has one SM count: two entries for one problem would leave `auto` to the table's order.
TEST(Tuning, CompiledTableHasOneEntryPerProblemAndDevice) {
  size_t count = 0;
  const TuningEntry* t = tuning_table(&count);
  std::map<std::string, int> sms_of;
  std::set<std::string> seen;
  for (size_t i = 0; i < count; ++i) {
    const TuningEntry& e = t[i];
    const std::string problem = std::string(e.device) + " " + precision_name(e.precision) + " " +
                                (e.op_a == Op::N ? "N" : "T") + (e.op_b == Op::N ? "N" : "T") + " " +
                                std::to_string(e.m) + "x" + std::to_string(e.n) + "x" + std::to_string(e.k);
    SCOPED_TRACE(problem);
    EXPECT_TRUE(seen.insert(problem).second) << "a second entry for one problem";
    EXPECT_EQ(e.m_class, extent_class(e.m));
    EXPECT_EQ(e.n_class, extent_class(e.n));
    EXPECT_EQ(e.k_class, extent_class(e.k));
    const auto [it, fresh] = sms_of.emplace(e.device, e.sms);
    EXPECT_EQ(it->second, e.sms) << "one device, one SM count";
  }
  EXPECT_GE(sms_of.size(), 2u) << "the H100 SXM's and the H200's tables are compiled in";
}

}  // namespace
}  // namespace gemmlab

namespace gemmbench {
namespace {

Row row(const std::string& kernel, int64_t m, double ms, const std::string& plan = "",
        gemmlab::PlanChoice choice = {}) {
  Row r;
  r.kernel = kernel, r.shape = Shape{m, 4096, 4096, 1}, r.trans = "NT";
  r.ms_median = ms, r.tflops = 2.0 * m * 4096 * 4096 / ms / 1e9;
  r.checked = true, r.pass = true;
  r.plan = plan, r.choice = choice;
  if (kernel == "auto") r.auto_kernel = "simt/sgemm";
  return r;
}

Report report_of(std::vector<Row> rows) {
  Report r;
  r.device.name = "GPU A", r.device.sms = 132, r.date = "2026-11-23T00:00:00Z";
  r.rows = std::move(rows);
  return r;
}

TEST(GemmTune, PicksTheFastestCheckedVariantWhereItBeatsAuto) {
  Report r = report_of({
      // 32 x 4096 x 4096: a variant 20% faster than auto -> an entry.
      row("cublas", 32, 0.05), row("auto", 32, 0.06), row("simt/sgemm", 32, 0.06),
      row("simt/sgemm", 32, 0.05, "32x256/s8", {4, 8}),
      row("simt/sgemm", 32, 0.04, "32x256/s16", {4, 16}),
      // 64 x 4096 x 4096: the best is 1% faster than auto -> the planners' entry.
      row("cublas", 64, 0.05), row("auto", 64, 0.060), row("simt/sgemm", 64, 0.0595, "64x256/s4", {3, 4}),
  });
  r.rows[4].pass = false;  // the fastest failed its check: never chosen
  const std::vector<TuneEntry> e = choose_tuning(r);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].shape.m, 32);
  EXPECT_EQ(e[0].kernel, "simt/sgemm");
  EXPECT_EQ(e[0].plan, "32x256/s8");
  EXPECT_EQ(e[0].choice, (gemmlab::PlanChoice{4, 8}));
  EXPECT_EQ(e[0].m_class, 5);
  EXPECT_EQ(e[0].k_class, 12);
  EXPECT_DOUBLE_EQ(e[0].auto_ms, 0.06);
  EXPECT_DOUBLE_EQ(e[0].cublas_ms, 0.05);
  EXPECT_EQ(e[1].shape.m, 64);
  EXPECT_EQ(e[1].kernel, gemmlab::kPlannersEntry);
  EXPECT_FALSE(e[1].choice.any());
  EXPECT_EQ(e[1].plan, "");
  EXPECT_DOUBLE_EQ(e[1].ms, 0.06);
}

// Each problem its own entry, also two of one class (20 and 32 rows: class 5), each with its own
// fastest: a class-wide pick ran 768^3 fp32 on 1024^3's plan, 3% slower than its own best.
TEST(GemmTune, OneEntryPerProblem) {
  Report r = report_of({row("auto", 20, 0.06), row("simt/sgemm", 20, 0.08, "32x256/s4", {4, 4}),
                        row("simt/sgemm", 20, 0.04, "64x256/s1", {3, 1}),
                        row("auto", 32, 0.06), row("simt/sgemm", 32, 0.03, "32x256/s4", {4, 4}),
                        row("simt/sgemm", 32, 0.04, "64x256/s1", {3, 1})});
  const std::vector<TuneEntry> e = choose_tuning(r);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].shape.m, 20);
  EXPECT_EQ(e[0].plan, "64x256/s1");
  EXPECT_DOUBLE_EQ(e[0].ms, 0.04);
  EXPECT_EQ(e[1].shape.m, 32);
  EXPECT_EQ(e[1].plan, "32x256/s4");
  EXPECT_EQ(e[0].m_class, e[1].m_class);
  // Without candidates (auto alone), no entry.
  EXPECT_TRUE(choose_tuning(report_of({row("auto", 20, 0.06)})).empty());
}

// Several rounds: each label at its slowest round's median. A plan fast in one round and slow in
// the other (0.04 / 0.07 ms) loses to a steady one (0.05 / 0.05); one that ran in only one round
// (or failed its check in one) is not a candidate; auto's time is its slowest round's too.
TEST(GemmTune, RoundsJudgeEachPlanByItsSlowestRound) {
  Report a = report_of({row("cublas", 32, 0.05), row("auto", 32, 0.06),
                        row("simt/sgemm", 32, 0.04, "32x256/s8", {4, 8}),
                        row("simt/sgemm", 32, 0.05, "32x256/s4", {4, 4}),
                        row("simt/sgemm", 32, 0.03, "64x256/s2", {3, 2}),
                        row("simt/sgemm", 32, 0.035, "64x256/s4", {3, 4})});
  Report b = report_of({row("cublas", 32, 0.05), row("auto", 32, 0.08),
                        row("simt/sgemm", 32, 0.07, "32x256/s8", {4, 8}),
                        row("simt/sgemm", 32, 0.05, "32x256/s4", {4, 4}),
                        row("simt/sgemm", 32, 0.035, "64x256/s4", {3, 4})});
  b.rows[4].pass = false;  // 64x256/s4 failed its check in round 2
  const std::vector<TuneEntry> one = choose_tuning(a);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].plan, "64x256/s2");
  const std::vector<TuneEntry> e = choose_tuning(std::vector<Report>{a, b});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].plan, "32x256/s4");
  EXPECT_EQ(e[0].choice, (gemmlab::PlanChoice{4, 4}));
  EXPECT_DOUBLE_EQ(e[0].ms, 0.05);
  EXPECT_DOUBLE_EQ(e[0].auto_ms, 0.08);
  // One round is the single report's choice.
  const std::vector<TuneEntry> same = choose_tuning(std::vector<Report>{a});
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(same[0].plan, one[0].plan);
  EXPECT_DOUBLE_EQ(same[0].ms, one[0].ms);
}

// A row with ten or more launches is judged by its 90th percentile (nearest rank): two slow
// launches in 20 are left out, three are not; below ten launches, the median.
TEST(GemmTune, RowsAreJudgedByTheirSlowLaunches) {
  Row x = row("simt/sgemm", 32, 0.05);
  EXPECT_DOUBLE_EQ(judged_ms(x), 0.05);  // no launch times: the median
  x.ms_runs.assign(9, 0.04f);
  x.ms_runs[3] = 0.09f;
  EXPECT_DOUBLE_EQ(judged_ms(x), 0.05) << "fewer than kJudgedMinRuns launches: the median";
  x.ms_runs.assign(20, 0.04f);
  x.ms_runs[0] = 0.08f, x.ms_runs[7] = 0.09f;
  EXPECT_FLOAT_EQ(static_cast<float>(judged_ms(x)), 0.04f) << "2 slow launches in 20";
  x.ms_runs[13] = 0.07f;
  EXPECT_FLOAT_EQ(static_cast<float>(judged_ms(x)), 0.07f) << "3 slow launches in 20";
}

// In one round, a plan fast at its median but slow in a fifth of its launches (tf32 128 x 4096 x
// 14336 NN on 64 x 64 in 2 splits, H100) loses to a steady plan a little slower at the median.
TEST(GemmTune, ABimodalPlanLosesToASteadyOne) {
  auto runs = [](Row r, float fast, float slow, int slow_every) {
    for (int i = 0; i < 20; ++i) r.ms_runs.push_back(i % slow_every == 0 ? slow : fast);
    return r;
  };
  Report a = report_of({row("cublas", 32, 0.100), runs(row("auto", 32, 0.095), 0.095f, 0.095f, 1),
                        runs(row("wgmma/small", 32, 0.085, "64x64/s2", {7, 2}), 0.085f, 0.105f, 5),
                        runs(row("wgmma/small", 32, 0.087, "128x64/s2", {4, 2}), 0.087f, 0.088f, 10)});
  const std::vector<TuneEntry> e = choose_tuning(a);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].plan, "128x64/s2");
  EXPECT_FLOAT_EQ(static_cast<float>(e[0].ms), 0.087f);
}

// With the L2 left warm in a second set of rounds (gemm-tune --warm), a plan is ranked by its
// worse ratio to auto over the two modes: 2 splits that win warm but lose cold (bf16 1 x 4096 x
// 4096 on the H100: 17.8 / 12.4 us against 16.0 / 14.8 unsplit) get no entry; a plan a little
// faster in both does; a plan missing from the warm rounds is no candidate.
TEST(GemmTune, WarmRoundsMustAgreeWithTheFlushedOnes) {
  Report cold = report_of({row("cublas", 32, 0.016), row("auto", 32, 0.0160),
                           row("wgmma/decode", 32, 0.0178, "auto/s2", {0, 2}),
                           row("wgmma/decode", 32, 0.0150, "auto/s4", {0, 4})});
  Report warm = report_of({row("cublas", 32, 0.011), row("auto", 32, 0.0148),
                           row("wgmma/decode", 32, 0.0124, "auto/s2", {0, 2})});
  warm.options.flush_l2 = false;
  // Flushed alone, 4 splits win; measured warm too, they were not, and 2 splits lose cold.
  ASSERT_EQ(choose_tuning(cold).size(), 1u);
  EXPECT_EQ(choose_tuning(cold)[0].plan, "auto/s4");
  std::vector<TuneEntry> e = choose_tuning(std::vector<Report>{cold, warm});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].kernel, gemmlab::kPlannersEntry);
  // A plan 5% faster in both modes gets the entry, with the flushed mode's times.
  cold.rows.push_back(row("wgmma/small", 32, 0.0152, "64x8/s1", {1, 1}));
  warm.rows.push_back(row("wgmma/small", 32, 0.0140, "64x8/s1", {1, 1}));
  e = choose_tuning(std::vector<Report>{warm, cold});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].plan, "64x8/s1");
  EXPECT_DOUBLE_EQ(e[0].ms, 0.0152);
  EXPECT_DOUBLE_EQ(e[0].auto_ms, 0.0160);
}

TEST(GemmTune, TableMergesWithAnEarlierOne) {
  Report r = report_of({row("auto", 32, 0.06), row("simt/sgemm", 32, 0.03, "32x256/s8", {4, 8}),
                        row("auto", 64, 0.06), row("simt/sgemm", 64, 0.06)});
  const nlohmann::json previous = {
      {"device", "GPU A"},
      {"sms", 132},
      {"entries",
       {// class-wide (no shape), of a class this run measured (64 x 4096 x 4096 NT): replaced
        {{"dtype", "fp32"}, {"trans", "NT"}, {"class", {6, 12, 12}}, {"kernel", "old"}},
        // the shape this run measured again: replaced
        {{"dtype", "fp32"}, {"trans", "NT"}, {"class", {5, 12, 12}}, {"m", 32}, {"n", 4096},
         {"k", 4096}, {"kernel", "old"}},
        // another shape of a measured class, and another transpose: kept
        {{"dtype", "fp32"}, {"trans", "NT"}, {"class", {5, 12, 12}}, {"m", 20}, {"n", 4096},
         {"k", 4096}, {"kernel", "kept"}},
        {{"dtype", "fp32"}, {"trans", "NN"}, {"class", {6, 12, 12}}, {"kernel", "kept"}}}}};
  const nlohmann::json j = tuning_json(r, choose_tuning(r), "gemm-tune --test", &previous);
  EXPECT_EQ(j["tool"], "gemm-tune");
  EXPECT_EQ(j["device"], "GPU A");
  EXPECT_EQ(j["sms"], 132);
  ASSERT_EQ(j["entries"].size(), 4u);
  std::vector<std::string> kernels;
  for (const auto& e : j["entries"]) kernels.push_back(e["kernel"]);
  EXPECT_EQ(std::count(kernels.begin(), kernels.end(), "kept"), 2);
  EXPECT_EQ(std::count(kernels.begin(), kernels.end(), "simt/sgemm"), 1);
  EXPECT_EQ(std::count(kernels.begin(), kernels.end(), "auto"), 1);
  EXPECT_EQ(std::find(kernels.begin(), kernels.end(), "old"), kernels.end())
      << "a shape this run measured, and its class-wide entry, are decided by this run";
  for (const auto& e : j["entries"])
    if (e["kernel"] == "simt/sgemm") {
      EXPECT_EQ(e["tile"], 4);
      EXPECT_EQ(e["splits"], 8);
      EXPECT_EQ(e["class"], nlohmann::json({5, 12, 12}));
      EXPECT_EQ(e["m"], 32);
    }
}

// A --variants row in the report: its plan in the JSON (the schema knows it), the summaries leave
// it out.
TEST(GemmTune, VariantRowsValidateAndStayOutOfTheSummary) {
  Report r = report_of({row("cublas", 32, 0.05), row("simt/sgemm", 32, 0.06),
                        row("simt/sgemm", 32, 0.01, "32x256/s8", {4, 8})});
  r.rows[0].pct_cublas = 100;
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["rows"][2]["plan"]["label"], "32x256/s8");
  EXPECT_EQ(j["rows"][2]["plan"]["splits"], 8);
  EXPECT_TRUE(validate_json(j, bench_schema()).empty()) << validate_json(j, bench_schema()).front();
  const std::vector<DtypeSummary> s = suite_summary(r);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NEAR(s[0].worst_ratio, 0.05 / 0.06, 1e-9) << "the forced variant is not a kernel a call runs";
}

// gemm-tune --time-limit: the first round starts no problem past its share of the time (but
// always its first); the later rounds repeat exactly the problems it reached, so every problem
// measured has all its rounds (choose_tuning skips the incomplete ones).
TEST(GemmTune, TimeLimitStopsBetweenProblemsAndLaterRoundsRepeatTheFirst) {
  Options o;
  EXPECT_TRUE(starts_another_problem(o, 1000, 1e6)) << "no limit";
  o.stop_after_seconds = 10;
  EXPECT_TRUE(starts_another_problem(o, 0, 50)) << "the first problem always starts";
  EXPECT_TRUE(starts_another_problem(o, 3, 9.9));
  EXPECT_FALSE(starts_another_problem(o, 3, 10));
  Options later;
  later.max_problems = 4;
  EXPECT_TRUE(starts_another_problem(later, 3, 1e6)) << "a later round has no clock, a count";
  EXPECT_FALSE(starts_another_problem(later, 4, 0));
  // A problem the second round did not reach gets no entry from one round's numbers.
  Report first = report_of({row("auto", 16, 0.02), row("simt/sgemm", 16, 0.01, "32x256", {4, 0}),
                            row("auto", 32, 0.04), row("simt/sgemm", 32, 0.02, "32x256", {4, 0})});
  Report second = report_of({row("auto", 16, 0.02), row("simt/sgemm", 16, 0.01, "32x256", {4, 0})});
  const std::vector<TuneEntry> e = choose_tuning(std::vector<Report>{first, second});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].shape.m, 16);
}

}  // namespace
}  // namespace gemmbench
