// gemm-tune's choice (tools/gemm-tune): from a gemm-bench run with --variants, the kernel and plan
// variant that ran each problem fastest, as entries of the tuning table `auto` reads
// (src/registry/tuning.h, src/registry/tuning/*.json). Plain functions of a Report: unit-tested.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemm-bench/runner.h"

namespace gemmbench {

struct TuneEntry {
  gemmlab::Precision dtype = gemmlab::Precision::FP32;
  std::string trans;
  Shape shape{};
  int m_class = 0, n_class = 0, k_class = 0;  // registry/tuning.h's extent_class
  std::string kernel;                         // registry name
  gemmlab::PlanChoice choice;                 // all 0: the kernel's own planner
  std::string plan;                           // the choice's label ("" for the planner's)
  double ms = 0, auto_ms = 0, cublas_ms = 0;  // judged times (judged_ms) of its slowest round
  std::string auto_kernel;                    // what `auto` ran there
};

// The time gemm-tune judges a row by: the 90th percentile of its launches (Row::ms_runs,
// nearest rank) where it has at least kJudgedMinRuns of them, else its median. A plan that runs
// fast or slow from launch to launch (tf32 128 x 4096 x 14336 NN on 64 x 64 in 2 splits: 0.085
// ms or 0.095-0.108 from one launch to the next, H100, docs/results/h100-launch-modes.txt) is
// taken at its slow launches whenever one in ten or more of them is slow, not at the median a
// run happened to catch; a `auto` user pays every launch. One slow launch in 20 (a first launch's
// hiccup) is still left out.
constexpr int kJudgedMinRuns = 10;
double judged_ms(const Row& x);

// Per problem of the plain call (f32 D, no bias or activation, batch 1) with an "auto" row and
// candidates: the registry kernel or --variants row that passed its fp64 check and ran fastest,
// where it beats the "auto" row by more than `margin`; elsewhere an entry of kernel
// kPlannersEntry (`auto` already does as well: the planners decide there). Each entry names its
// problem; `auto` takes the entry measured nearest a problem of the same class
// (registry/tuning.h), so a problem measured without a win keeps its sibling's out.
std::vector<TuneEntry> choose_tuning(const Report& r, double margin = 0.03);
// The same over several rounds of one run (gemm-tune --rounds): each label judged by its slowest
// round's judged time (judged_ms), and only labels that ran and passed in every round: a plan
// whose slow mode one round missed is still taken at the round that caught it. Rounds measured
// with the L2 left warm (Options::flush_l2 false: gemm-tune --warm) form a second mode judged on
// its own: a kernel or plan is then ranked by its worse ratio to `auto` of the two modes and must
// beat `auto` by the margin in both (an entry's times stay the flushed mode's).
std::vector<TuneEntry> choose_tuning(const std::vector<Report>& rounds, double margin = 0.03);

// The table file: {"tool", "device", "sms", "date", "command", "entries": [...]}, entries sorted
// by dtype, transposes, class and shape. `previous`: an earlier table of the same device (or
// null); its entries of shapes this run did not measure are kept.
nlohmann::json tuning_json(const Report& r, const std::vector<TuneEntry>& entries,
                           const std::string& command, const nlohmann::json* previous = nullptr);

}  // namespace gemmbench
