// runtime/plan_choice.h: the thread's forced plan.
#include "runtime/plan_choice.h"

namespace gemmlab {
namespace {
thread_local PlanChoice t_forced{};
}  // namespace

ForcePlan::ForcePlan(PlanChoice choice) : scope_(t_forced, choice) {}

PlanChoice forced_plan() { return t_forced; }

std::string plan_choice_label(const PlanChoice& c, const char* const* tile_names) {
  std::string s;
  if (c.tile == 0) {
    s = "auto";
  } else {
    const char* name = nullptr;
    if (tile_names != nullptr)
      for (int i = 0; tile_names[i] != nullptr; ++i)
        if (i + 1 == c.tile) name = tile_names[i];
    s = name != nullptr ? name : "tile" + std::to_string(c.tile);
  }
  if (c.splits != 0) s += "/s" + std::to_string(c.splits);
  return s;
}

}  // namespace gemmlab
