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
  double ms = 0, auto_ms = 0, cublas_ms = 0;  // medians of the same run (of its slowest round)
  std::string auto_kernel;                    // what `auto` ran there
};

// Per problem of the plain call (f32 D, no bias or activation, batch 1) with an "auto" row and
// candidates: the registry kernel or --variants row that passed its fp64 check and ran fastest,
// where it beats the "auto" row by more than `margin`; elsewhere an entry of kernel
// kPlannersEntry (`auto` already does as well: the planners decide there). Each entry names its
// problem; `auto` takes the entry measured nearest a problem of the same class
// (registry/tuning.h), so a problem measured without a win keeps its sibling's out.
std::vector<TuneEntry> choose_tuning(const Report& r, double margin = 0.03);
// The same over several rounds of one run (gemm-tune --rounds): each label judged by its slowest
// round's median, and only labels that ran and passed in every round. A plan that runs fast or
// slow from launch to launch (a median of 0.086 ms in one round, 0.110 in the next: docs/history.md,
// the tuning table) is then taken at its slow median, not at whichever mode one round caught.
std::vector<TuneEntry> choose_tuning(const std::vector<Report>& rounds, double margin = 0.03);

// The table file: {"tool", "device", "sms", "date", "command", "entries": [...]}, entries sorted
// by dtype, transposes, class and shape. `previous`: an earlier table of the same device (or
// null); its entries of shapes this run did not measure are kept.
nlohmann::json tuning_json(const Report& r, const std::vector<TuneEntry>& entries,
                           const std::string& command, const nlohmann::json* previous = nullptr);

}  // namespace gemmbench
