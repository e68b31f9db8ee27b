// The planner of wgmma/03 (the persistent warp-specialized Hopper kernel): how many CTAs, and
// whether a small deep grid runs stream-k, plus the shape-dependent `auto` priority. Plain
// functions of the problem and a device description, shared by config() and launch() and
// unit-tested on the CPU (tests/test_planners.cpp).
#pragma once

#include <cstdint>

#include "kernels/common/tile_schedule.h"
#include "registry/registry.h"

namespace gemmlab {
namespace wgmma_plan {

constexpr int kBM = 128, kBN = 256;  // wgmma/03's tile
constexpr int kMaxContrib = 8;       // CTAs that may share one tile under stream-k
constexpr int kMaxContribOneRow = 5; // the same for one row of tiles (rows <= kBM: decode)
constexpr int kGroupRows = 16;       // tile rows per band of the grouped order

// K-blocks of a problem: each pipeline stage holds 128 bytes of K.
int k_blocks_of(int64_t k, Precision p);

// Stream-k pays when the SMs it brings in outweigh the partial sums it adds (each shared tile
// writes and reads 128 KB per contributor): a model fitted to H100 measurements; and always for
// one row of tiles (rows <= kBM, bound by streaming B) on at most half the SMs with k >= 1024.
bool stream_k_pays(int64_t tiles, int64_t k, int ctas, int64_t rows = 1 << 30);

struct PersistentPlan {
  TileGrid grid;  // tiles of the kernel's rows x cols (n x m when it runs swapped), one entry
  int tiles;      // tiles of the whole batch: grid's times the entries
  int ctas;       // the persistent grid: one CTA per SM at most, or the stream-k runs
  StreamK sk;     // sk.ctas == 0: one tile at a time per CTA
};
// rows x cols: the kernel's a x b, `batch` entries of it (their tiles form one sequence);
// only 16-bit inputs run stream-k.
PersistentPlan plan_persistent(int64_t rows, int64_t cols, int64_t k, Precision p,
                               const DeviceDesc& dev, int64_t batch = 1);

// `auto` priority of wgmma/03 for p: below wgmma/02's (100) for 16-bit problems whose 128 x 256
// tiles keep at most half the SMs busy and that are too shallow for stream-k; else 200.
int auto_priority(const GemmProblem& p, const DeviceDesc& dev);

// wgmma/split_k: the depth of an m x n x k problem cut into `full` slices of `ks` elements (a
// whole number of k-blocks) and a last one of `rest` (may be 0). As many slices as the SMs hold
// copies of the problem's 128 x 256 tiles (slices * tiles <= SMs, one wave without stream-k),
// each at least 4 k-blocks deep; count() == 1: no split.
struct Slices {
  int full, rest;
  int64_t ks;
  int count() const { return full + (rest > 0 ? 1 : 0); }
};
Slices plan_slices(int64_t m, int64_t n, int64_t k, Precision p, const DeviceDesc& dev);

// Where `auto` prefers wgmma/split_k over wgmma/03 (measured, docs/history.md: wgmma/split_k):
// one entry, k >= 8192, at most half the SMs' worth of tiles.
bool split_k_pays(int64_t m, int64_t n, int64_t k, int64_t batch, const DeviceDesc& dev);

}  // namespace wgmma_plan
}  // namespace gemmlab
