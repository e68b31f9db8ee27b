// A planner's choice made from outside the planner, for the calls on this thread: gemm-tune times
// each variant a kernel offers (its registry entry lists them: KernelDesc::tile_names,
// max_splits), and `auto` applies the variant the tuning table (registry/tuning.h) measured best.
#pragma once
#include "runtime/scoped_value.h"

#include <string>

namespace gemmlab {

struct PlanChoice {
  int tile = 0;    // 1-based index into the kernel's KernelDesc::tile_names; 0: the planner's
  int splits = 0;  // depth splits of each tile (1: none); 0: the planner's
  bool any() const { return tile != 0 || splits != 0; }
  bool operator==(const PlanChoice& o) const { return tile == o.tile && splits == o.splits; }
};

// While one lives, the kernels that take a PlanChoice use `choice` on this thread (fields left 0
// stay the planner's). Nests: the innermost holds. A choice the kernel cannot honour for a
// problem (a tile index it does not have) is ignored.
class ForcePlan {
 public:
  explicit ForcePlan(PlanChoice choice);

 private:
  ScopedValue<PlanChoice> scope_;
};

// The choice in force on this thread (all 0 where none).
PlanChoice forced_plan();

// "32x256/s8", "auto/s4", "32x256" (tile_names: the kernel's list; null: "tile<i>").
std::string plan_choice_label(const PlanChoice& c, const char* const* tile_names);

}  // namespace gemmlab
