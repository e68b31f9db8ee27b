// The tuning table: what gemm-tune measured best on a GPU, per measured problem, compiled into the
// library from src/registry/tuning/*.json (one file per device, written by gemm-tune). `auto`
// looks a problem up here first and falls back to the kernels' priorities and planners where
// the table has no entry for the device or the class. GEMMLAB_TUNING=0 in the environment turns
// the table off (for comparisons).
#pragma once
#include "runtime/scoped_value.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "registry/registry.h"

namespace gemmlab {

// A shape class: ceil(log2(extent)) of m, n and k (1 -> 0, 2 -> 1, 17..32 -> 5, 4096 -> 12), with
// the dtype and the transposes.
int extent_class(int64_t x);

// An entry's kernel where the planners' own pick was the fastest measured ("auto").
inline constexpr const char* kPlannersEntry = "auto";

struct TuningEntry {
  const char* device;  // cudaDeviceProp::name of the GPU it was measured on
  int sms;             // its multiprocessor count
  Precision precision;
  Op op_a, op_b;
  int m_class, n_class, k_class;
  const char* kernel;  // registry name, or kPlannersEntry
  PlanChoice choice;   // the plan forced on it (all 0: its own planner)
  int64_t m = 0, n = 0, k = 0;  // the problem it was measured on (0: any extent of the class)
};

// The entry of table[0, count) for p on a device called `device` with `sms` multiprocessors, or
// null: single problems (batch 1) only. Among the entries of p's class (several where gemm-tune
// measured several shapes of it: 768^3 and 1024^3), the one measured nearest p: the least sum of
// |log2(p's extent / the entry's)| over m, n and k (the first of equals), if that sum is at most
// kMaxTuningGap; farther off, the planners decide (fp32 2048^3 ran 10% slower on 1536^3's entry,
// a gap of 1.25, than on the planner's own pick).
constexpr double kMaxTuningGap = 1.0;
const TuningEntry* find_tuning(const TuningEntry* table, size_t count, std::string_view device,
                               int sms, const GemmProblem& p);

// The compiled-in table (generated at build time from src/registry/tuning/*.json).
const TuningEntry* tuning_table(size_t* count);

// Whether `auto` reads the table: GEMMLAB_TUNING is unset or not "0" (read once), and no
// TuningOff lives on this thread.
bool tuning_enabled();

// While one lives, `auto` on this thread ignores the table: the kernels' priorities and planners
// alone (tests of the planners' own choices, gemm-tune's baseline).
class TuningOff {
 public:
  TuningOff();

 private:
  ScopedValue<bool> scope_;
};

}  // namespace gemmlab
