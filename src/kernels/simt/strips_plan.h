// The host-side plan of the thin edge strips (thin_strips.cuh): their sizes and how a problem
// splits into the tile region and the strips. Plain arithmetic: planners and kernels share it.
#pragma once

#include "kernels/common/tile_schedule.h"

namespace gemmlab {
namespace strips {

constexpr int kThin = 8;     // a remainder of <= kThin rows / columns becomes a strip
constexpr int kL = 128;      // long-side entries per strip block
constexpr int kKT = 32;      // depth per pipeline stage
constexpr int kStages = 4;
constexpr int kLdL = kL + 1;  // long tile Ls[k][l]: +1 so k-contiguous copies (lanes walk k)
                              // write distinct banks
constexpr int kStageFloats = kThin * kKT + kKT * kLdL;  // Ts[t][k] first (16-byte aligned), Ls
constexpr int kSmemBytes = kStages * kStageFloats * static_cast<int>(sizeof(float));
constexpr int kPartialFloats = kThin * kL;  // split-k partial of one strip block piece
static_assert(kThin % 4 == 0, "split_publish moves whole float4s");
static_assert(kThin * kKT == 256 && kStageFloats % 4 == 0, "one thin element per thread");

// The split of a problem into the tile region and the strips.
struct Plan {
  int m_main, n_main;  // the tile kernel covers [0, m_main) x [0, n_main)
  int right_blocks;    // strip blocks for cols [n_main, n): ceil(m / kL), or 0
  int bottom_blocks;   // strip blocks for rows [m_main, m): ceil(n_main / kL), or 0
  int splits;          // depth pieces per strip block (> 1: summed through split_k.cuh)
  int k_per_split;     // depth of one piece, a multiple of kKT
  int blocks() const { return (right_blocks + bottom_blocks) * splits; }
};

// splits: how many depth pieces each strip block is cut into (see above).
inline Plan make_plan(int m, int n, int k, int bm, int bn, int splits) {
  const int kts = ceil_div(k, kKT);
  const int per = ceil_div(kts, splits < 1 ? 1 : splits);
  Plan p{m, n, 0, 0, ceil_div(kts, per), per * kKT};
  if (m % bm != 0 && m % bm <= kThin) p.m_main = m - m % bm;
  if (n % bn != 0 && n % bn <= kThin) p.n_main = n - n % bn;
  if (p.n_main < n) p.right_blocks = ceil_div(m, kL);
  if (p.m_main < m && p.n_main > 0) p.bottom_blocks = ceil_div(p.n_main, kL);
  return p;
}

}  // namespace strips
}  // namespace gemmlab
