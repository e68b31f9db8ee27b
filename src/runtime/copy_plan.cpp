#include "runtime/copy_plan.h"

#include <algorithm>

namespace gemmlab {

CopySplit plan_straight_copy(int64_t rows, int64_t chunks_per_row, int warps,
                             int64_t grid_entries) {
  constexpr int64_t kWantWarps = 1024;
  const int64_t ys = std::max<int64_t>(1, grid_entries);
  CopySplit sp;
  int lg = 0;
  while (lg < 5 && (int64_t{1} << lg) < chunks_per_row) ++lg;
  sp.tpr_log2 = lg;
  sp.row_groups = (rows + (32 >> lg) - 1) >> (5 - lg);
  const int64_t per_grid_row = std::max<int64_t>(1, sp.row_groups * ys);
  const int64_t want = (kWantWarps + per_grid_row - 1) / per_grid_row;
  const int64_t most = lg == 5 ? (chunks_per_row + 31) / 32 : 1;
  const int64_t segs = std::max<int64_t>(1, std::min(want, most));
  sp.seg = ((chunks_per_row + segs - 1) / segs + 31) / 32 * 32;
  sp.segs = std::max<int64_t>(1, (chunks_per_row + sp.seg - 1) / sp.seg);
  const int64_t items = sp.row_groups * sp.segs;
  sp.blocks = std::max<int64_t>(1, std::min<int64_t>((items + warps - 1) / warps,
                                                     (int64_t{1} << 20) / ys));
  return sp;
}

}  // namespace gemmlab
