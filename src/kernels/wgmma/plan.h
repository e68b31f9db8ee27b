// The planner of wgmma/03 (the persistent warp-specialized Hopper kernel): how many CTAs, and
// whether a small deep grid runs stream-k, plus the shape-dependent `auto` priority. Plain
// functions of the problem and a device description, shared by config() and launch() and
// unit-tested on the CPU (tests/test_planners.cpp).
#pragma once

#include <cstddef>
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
// The planner of wgmma/decode: 16-bit problems with few rows of C (M <= 256) computed swapped,
// C^T = op(B)^T op(A)^T, so the rows of C (tokens) are wgmma's N (8 .. 256, the smallest power of
// two >= M) and the columns of C its 64-row M side. The same kernel runs few columns of C
// (N <= 64, "skinny") unswapped: the columns are the tokens and op(A) the weight. A CTA owns a strip of 64 (tokens <= 32) or
// 128 columns of C (two consumer warpgroups) and a range of K; strips x splits CTAs, summed in
// split order by the strip's last CTA. Splits only bring idle SMs in, each split still deep
// (measured: plan.cpp).
namespace wgmma_decode_plan {

constexpr int kMaxM = 256;
constexpr int kMaxSkinnyN = 64;  // skinny: columns of C as tokens, at most one 64-wide wgmma N

// Which operand is the weight (wgmma's M side, streamed once) and which the tokens (its N side).
// Decode: m <= 256 with op(A) = A (the tokens K-major); else skinny: n <= 64 (the tokens may be
// MN-major there: B stored k x n, read as 64-wide chunks); else neither.
enum class Mode { None, Decode, Skinny };
Mode mode_of(int64_t m, int64_t n, bool a_k_major);
// The extents as the kernel sees them: tokens, weight rows (C's rows or columns).
struct Roles {
  int64_t tokens, weights;
  bool skinny;
};
Roles roles_of(Mode mode, int64_t m, int64_t n);
constexpr int kBK = 64;         // 16-bit elements of K per stage (128 bytes)
constexpr int kMinKBlocks = 4;  // a split streams at least this many stages
constexpr int kMaxSplits = 64;  // the split counters count to 255

// wgmma's N for m rows of C: 8, 16, 32, 64, 128 or 256; at least 64 for MN-major tokens (xk
// false: read in 64-wide chunks).
int tokens(int64_t m, bool xk = true);
// Consumer warpgroups (64 columns of C each) and pipeline stages of the instance for `tok`
// tokens, K-major (xk) or not; compile-time, shared with the kernel. Up to 32 tokens the ring
// fits two CTAs per SM, so a strip's CTA and the next one overlap where strips outnumber the SMs;
// from 64 K-major tokens (two warpgroups, splits keep one CTA per SM) one CTA takes the SM's
// whole ring. MN-major tokens (skinny NN: n <= 64 in one 64-wide chunk, mostly zeros) keep one
// warpgroup and two CTAs per SM, like few tokens (8192 x 8 x 8192 bf16: 88% of cuBLAS with two
// warpgroups' 128-row strips, 64 CTAs).
constexpr int groups(int tok, bool xk = true) { return xk && tok >= 64 ? 2 : 1; }
constexpr int stage_bytes(int tok, bool xk = true) { return groups(tok, xk) * 8192 + tok * 128; }
constexpr int stages(int tok, bool xk = true) {
  const int budget = groups(tok, xk) == 2 ? 200 * 1024 : 110 * 1024;
  const int s = budget / stage_bytes(tok, xk);
  return s > 8 ? 8 : s < 2 ? 2 : s;
}
constexpr int smem_bytes(int tok, bool xk = true) {
  return stages(tok, xk) * stage_bytes(tok, xk) + 1024 /* alignment */ + 2 * stages(tok, xk) * 8;
}
// Consumers, then a producer warp.
constexpr int threads(int tok, bool xk = true) { return 128 * groups(tok, xk) + 32; }

struct Plan {
  int tok, groups, strip;  // tokens, consumer warpgroups, columns of C per CTA (64 * groups)
  int strips, splits;      // the grid: strips * splits CTAs (CTA b: strip b / splits)
  int num_kb, kb_per_split;
  int ctas_per_sm;
  int blocks() const { return strips * splits; }
};

// m tokens against n weight rows. forced_splits > 0 (a plan variant): that many splits, as far
// as the depth allows. scratch: whether the depth may be split at all (the partials need
// scratch). xk: the tokens are K-major (see tokens() and groups()).
Plan plan(int64_t m, int64_t n, int64_t k, const DeviceDesc& dev, bool scratch = true,
          int forced_splits = 0, bool xk = true);

// Scratch: partials (blocks * strip * tok floats), then one counter per strip; 0 when splits == 1.
size_t scratch_bytes(const Plan& p);

// `auto`: the problems wgmma/decode takes (measured, docs/history.md: wgmma/decode): m <= 64,
// and m <= 128 against a decode-sized weight (n, k >= 1024); skinny problems (n <= 64) against a
// weight of m, k >= 1024; one entry (a batch runs as one launch on wgmma/03).
bool auto_takes(int64_t m, int64_t n, int64_t k, int64_t batch, bool a_k_major = true);

}  // namespace wgmma_decode_plan

}  // namespace gemmlab
