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
// Its narrower tile (16-bit inputs): 128 x 192, for grids whose 128 x 256 tiles leave most of the
// last round of SMs idle (3072^2: 288 tiles = 2.18 rounds of 132; 128 x 192: 384 = 2.91).
constexpr int kBNNarrow = 192;
constexpr int kMaxContrib = 8;       // CTAs that may share one tile under stream-k
constexpr int kMaxContribOneRow = 5; // the same for one row of tiles (rows <= kBM: decode)
constexpr int kGroupRows = 16;       // tile rows per band of the grouped order

// K-blocks of a problem: each pipeline stage holds 128 bytes of K.
int k_blocks_of(int64_t k, Precision p);

// Stream-k pays when the SMs it brings in outweigh the partial sums it adds (each shared tile
// writes and reads 128 KB per contributor): a model fitted to H100 measurements; and always for
// one row of tiles (rows <= kBM, bound by streaming B) on at most half the SMs with k >= 1024.
bool stream_k_pays(int64_t tiles, int64_t k, int ctas, int64_t rows = 1 << 30);

// The extents wgmma/03's tile order walks (tile_schedule.h: tile_heavy_first, which issues the
// partial last tile row and column after the full tiles, as cheap ones). In this kernel a partial
// tile costs a whole one unless its rows leave the second consumer warpgroup idle (<= 64 rows
// past the last full tile row) or its columns take m64n8 (<= 8); a costly partial row or column
// is walked as if whole, in the grouped order, and so is any partial second row (129..255 rows:
// each B tile's two row tiles run together, B streamed once). Otherwise M = 200 against a weight
// larger than L2 ran the second tile row after the whole first one and read B twice from HBM.
struct TileOrder {
  int rows, cols;
};
TileOrder tile_order(int64_t rows, int64_t cols, int bn = kBN);

// The tile width (kBN or kBNNarrow) for rows x cols over `batch` entries: the narrow tile
// where its rounds of SMs (ceil(tiles / SMs), each tile priced by its columns over its speed per
// flop, kNarrowSpeed) cost less than the wide tile's by a margin; 16-bit inputs only, and never
// where the wide plan runs stream-k (fewer tiles than SMs). want = kBN / kBNNarrow: that one (a
// plan variant gemm-tune measures; tf32 keeps kBN).
constexpr double kNarrowSpeed = 0.92;  // 128 x 192 per flop against 128 x 256 (shared-memory reads)
int persistent_bn(int64_t rows, int64_t cols, Precision p, const DeviceDesc& dev, int64_t batch = 1,
                  int want = 0);
// Tiles of kBM x bn over an m x n C.
int64_t tiles_of(int64_t m, int64_t n, int bn = kBN);

// Whether wgmma/03 runs in CTA pairs (2 x 1 clusters, each CTA loading half of the shared B tile
// and multicasting it) instead of having the host pack B: 16-bit inputs whose B rows are
// 16-byte but not 128-byte aligned (b_off_lines), over at least half a tile per SM (the caller
// keeps stream-k's plans single). Each box row of such a B spans two 128-byte lines, and loading
// it costs the SM's TMA about twice the requests; pairs halve B's requests per SM, so B needs no
// packing (measured, docs/history.md: bf16 3000^3 486 -> 544 TFLOP/s, 4104^3 536 -> 584,
// 2048 x 2048 x 3000 NT 523 -> 630). Aligned B: the pairs measured neutral to -3%: single there.
bool pairs_pay(Precision p, bool b_off_lines, int64_t tiles, const DeviceDesc& dev);

// tf32 with op(A) = A^T (TN, TT): wgmma/03 loads such an A into registers, whose per-k-block
// loads a short K does not amortize. Up to K = 128 A is transposed while packed instead (m x k:
// a copy small next to C) and the kernel reads both operands K-major (H100: 4095 x 4095 x 64 TN
// 35% -> 85% of cuBLAS; at K = 200 the copy lost; docs/history.md, operand packing).
bool transpose_a_pays(int64_t k);

struct PersistentPlan {
  bool pairs;     // 2 x 1 clusters on tiles of 2 kBM x bn (no stream-k)
  int bn;         // the tile's columns: kBN or kBNNarrow
  TileGrid grid;  // tiles of the kernel's rows x cols (n x m when it runs swapped), one entry
  int tiles;      // tiles of the whole batch: grid's times the entries
  int ctas;       // the persistent grid: one CTA per SM at most, or the stream-k runs
  StreamK sk;     // sk.ctas == 0: one tile at a time per CTA
};
// rows x cols: the kernel's a x b, `batch` entries of it (their tiles form one sequence);
// only 16-bit inputs run stream-k.
// pairs: the CTA pairs' plan (grid: tiles of 2 kBM x bn; ctas: twice the pairs, before the
// device's cluster occupancy caps them).
PersistentPlan plan_persistent(int64_t rows, int64_t cols, int64_t k, Precision p,
                               const DeviceDesc& dev, int64_t batch = 1, int want_bn = 0,
                               bool pairs = false);

// `auto` priority of wgmma/03 for p: below wgmma/02's (100) for 16-bit problems whose 128 x 256
// tiles keep at most half the SMs busy and that are too shallow for stream-k; else 200.
int auto_priority(const GemmProblem& p, const DeviceDesc& dev);

// Where `auto` takes wgmma/pingpong (each consumer warpgroup on its own 128 x 128 tiles, one's
// epilogue under the other's main loop) over wgmma/03, 16-bit inputs: both warpgroups of every
// SM have tiles (at least 2 x SMs of them over the batch), and the main loop is short next to the
// epilogue: 256 <= K <= 512; K <= 1024 with a heavy epilogue (an fp32 D or an activation) or
// entries of at most 1024 x 1024; K <= 2048 with such entries (K below 256 was not measured).
// Measured (H100, docs/history.md: wgmma/pingpong), pingpong / wgmma/03: 1.00-1.11 at K <= 512;
// at K = 1024 1.04-1.13 with an fp32 D, 1.06-1.13 with GELU, 1.02-1.06 on 1024^2 entries, but
// 0.94-1.00 with a plain 16-bit D on 2048^2-8192^2; at K = 2048 1.01-1.09 on 1024^2 entries and
// 0.86-0.99 on 4096^2; at K = 4096 0.84-0.87 (128 x 128 tiles read a third more from L2 per flop).
bool pingpong_pays(int64_t m, int64_t n, int64_t k, int64_t batch, bool heavy_epilogue,
                   const DeviceDesc& dev);

// wgmma/split_k's slices of an m x n x k problem run on the strips kernel (wgmma/small) for 16-bit
// inputs, and for tf32 over a C below 512 x 512 with op(A) = A (its tf32 tokens must be K-major),
// or with A^T transposed while packed: in TN (both operands MN-major ran at 31-59% of cuBLAS on
// wgmma/03), and in TT where A has at most kMaxTransposedTf32A elements (from 1.6 M, 40 x 40000,
// wgmma/03's register A, which saves the copy, measured faster); else on wgmma/03, whose slices
// measured faster for a larger tf32 C (docs/history.md, wgmma/split_k).
constexpr int64_t kMaxTransposedTf32A = 1280 * 1024;
bool slices_on_strips(int64_t m, int64_t n, int64_t k, Precision p, bool a_k_major,
                      bool b_k_major = true);
// wgmma/split_k: the depth of an m x n x k problem cut into `full` slices of `ks` elements (a
// whole number of k-blocks) and a last one of `rest` (may be 0). At most as many slices as the SMs
// hold copies of the problem's 128 x 256 tiles (slices * tiles <= SMs, one wave without
// stream-k), on the strips kernel (slices_on_strips) at most 4096 / sqrt(m n), each at least 4
// k-blocks deep; where the depth is whole k-blocks, the largest count down to half of that which
// divides them (a shorter last slice is a second launch); count() == 1: no split. want > 0 asks
// for that many slices
// instead (a plan variant gemm-tune measures: fewer slices write fewer partials), still at most
// one wave and 4 k-blocks deep each.
struct Slices {
  int full, rest;
  int64_t ks;
  int count() const { return full + (rest > 0 ? 1 : 0); }
};
Slices plan_slices(int64_t m, int64_t n, int64_t k, Precision p, const DeviceDesc& dev,
                   int want = 0, bool a_k_major = true, bool b_k_major = true);

// Where `auto` prefers wgmma/split_k over wgmma/03 (measured, docs/history.md: wgmma/split_k):
// one entry, k >= 8192, at most half the SMs' worth of tiles.
bool split_k_pays(int64_t m, int64_t n, int64_t k, int64_t batch, const DeviceDesc& dev);
// Whether wgmma/split_k's slices should take a deep problem (k >= 8192) over a C of at most
// 512 x 512 from wgmma/small's in-kernel depth splits and wgmma/decode's split strips: so in every
// op pair for 16-bit inputs, and for tf32 where an operand is K-major or the slices run on the
// strips kernel (tf32 TN below 512 x 512: on wgmma/03 its slices lost). Measured, H100, each
// kernel's own plan (bf16 128 x 128 x 8192 TN 96% of cuBLAS against 63%, 64 x 64 x 65536 NN 105%
// against 59%; tf32 512 x 512 x 8192 TT 112% against 64%, 128 x 128 x 8192 TN 84% against 59%;
// docs/history.md, "Deep K in every op pair").
bool slices_lead(int64_t m, int64_t n, int64_t k, Precision p, bool a_k_major, bool b_k_major);

// Whether to copy a 16-bit operand of `elems` elements whose rows are 16-byte but not 128-byte
// aligned into rows padded to 128 bytes (wgmma/host.cu) before an m x n x k GEMM: the copy (a
// read and a write) against the GEMM's own time at ~600 TFLOP/s, up to 0.3 of it for an MN-major
// operand, 0.5 for a K-major B (k_major_b), which costs the kernel more (docs/history.md,
// wgmma/03). tf32 never: its NN runs swapped, both operands K-major.
bool padding_pays(Precision p, int64_t m, int64_t n, int64_t k, int64_t elems, bool k_major_b);

}  // namespace wgmma_plan
// The planner of wgmma/decode: 16-bit problems with few rows of C (M <= 256) computed swapped,
// C^T = op(B)^T op(A)^T, so the rows of C (tokens) are wgmma's N (8 .. 256, the smallest power of
// two >= M) and the columns of C its 64-row M side. The same kernel runs few columns of C
// (N <= 64, "skinny") unswapped: the columns are the tokens and op(A) the weight. A CTA owns a
// strip of 64 (tokens <= 32) or 128 weight rows (two consumer warpgroups) and a range of K;
// strips x splits CTAs, summed in split order by the strip's last CTA. Splits only bring idle SMs
// in, each split still deep (measured: plan.cpp).
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
// The planners count k-blocks of 128 bytes (kBK 16-bit elements, 32 tf32 ones): a tf32 depth k is
// planned as 2k, whose k-blocks are the same in number, bytes and wgmma time (tf32 runs at half
// the 16-bit rate).
inline int64_t planned_k(int64_t k, Precision p) { return p == Precision::TF32 ? 2 * k : k; }
// The most tokens per tile: 256, but 192 for tf32 with an MN-major weight, which goes through
// registers (two A fragments beside the accumulators): its 256-token instance spills under the
// strips kernel's 168-register cap and is not compiled (docs/history.md, wgmma/small).
constexpr int kMaxTokWeightInRegisters = 192;
inline int max_tokens(Precision p, bool w_k_major) {
  return p == Precision::TF32 && !w_k_major ? kMaxTokWeightInRegisters : kMaxM;
}
// Whether the strips kernel's last token tile of `tile` tokens over `rows` of them loads only the
// rows that exist, through a smaller TMA box (stage_tile.cuh: load_b_rows), rather than the whole
// box with TMA's out-of-bounds fill: where at least kTailBoxFrom of its rows are past the end.
// Measured (H200, bf16/fp16/tf32, docs/history.md "Out-of-bounds rows"): 56 to 112 filled rows
// cost a deep 64 x 128 tile 1.5-1.8x its time (144 x 4096 x 4096: 31.0 us, with the smaller box
// 18.1); 28-32 cost 4-41% (2026-11-28 18:30-18:31 UTC, bf16 NN: 96 x 3072 x 8192 on 64 x 128d
// 161 -> 228 TFLOP/s, cuBLAS 237-239; 100 x 13824 x 5120 320 -> 367, cuBLAS 348-353), while 16 of
// 128 ran 2-3% faster with the fill (240 x 4096 x 4096 463 against 454, cuBLAS 431-448).
constexpr int kTailBoxFrom = 24;
inline bool tail_box_pays(int64_t rows, int tile) {
  const int rest = static_cast<int>(rows % tile);
  return rest > 0 && tile - rest >= kTailBoxFrom;
}
constexpr int kMinKBlocks = 4;  // a split streams at least this many stages
constexpr int kMaxSplits = 64;  // the split counters count to 255

// wgmma's N for m rows of C: 8, 16, 32, 64, 128 or 256; at least 64 for MN-major tokens (xk
// false: read in 64-wide chunks).
int tokens(int64_t m, bool xk = true);
// Consumer warpgroups (64 columns of C each) and pipeline stages of the instance for `tok`
// tokens; compile-time, shared with the kernel. Up to 32 tokens the ring fits two CTAs per SM, so
// a strip's CTA and the next one overlap where strips outnumber the SMs; from 64 tokens (two
// warpgroups, splits keep one CTA per SM) one CTA takes the SM's whole ring.
// wgmma/small also runs 64 tokens on one warpgroup (g: the warpgroups, where not the default),
// with the ring of two CTAs per SM or, deep, one CTA's 12-16 stages: more bytes in flight for a
// decode row that fills the SMs once, a loss where two CTAs per SM must overlap (docs/history.md,
// wgmma/small). Deep tiles are their own plan variants: the cost model takes the 64 x 64 one where
// its CTAs fit one wave, gemm-tune's table any of them wherever else it wins.
constexpr int groups(int tok) { return tok >= 64 ? 2 : 1; }
constexpr int stage_bytes(int tok, int g = 0) { return (g ? g : groups(tok)) * 8192 + tok * 128; }
constexpr int stages(int tok, int g = 0, bool deep = false) {
  // Tiles of 192 tokens or more on two warpgroups: up to 226 KB, within the SM's 227 (128 x 192:
  // 5 stages; 128 x 320: 4 of 56 KB, with 3 it ran 30% slower). Smaller tiles keep 200 KB
  // (128 x 128 with 7 stages lost 17% on a decode row). docs/results/h100-wgmma-small-320.txt.
  const int budget = (g ? g : groups(tok)) >= 2 ? (tok >= 192 ? 226 * 1024 : 200 * 1024)
                     : deep                     ? 200 * 1024
                                                : 110 * 1024;
  const int cap = deep ? 16 : 8;
  const int s = budget / stage_bytes(tok, g);
  return s > cap ? cap : s < 2 ? 2 : s;
}
constexpr int smem_bytes(int tok, int g = 0, bool deep = false) {
  return stages(tok, g, deep) * stage_bytes(tok, g) + 1024 /* alignment */ +
         2 * stages(tok, g, deep) * 8;
}
// Consumers, then a producer warp; or a producer warpgroup where the consumers need more than
// the 168 registers a thread a CTA of 9 warps may have (3 warps on one SM sub-partition):
// 320 tokens (160 accumulators), which setmaxnreg moves from the producer to the consumers.
constexpr bool producer_warpgroup(int tok) { return tok > 256; }
constexpr int threads(int tok, int g = 0) {
  return 128 * (g ? g : groups(tok)) + (producer_warpgroup(tok) ? 128 : 32);
}

struct Plan {
  int tok, groups, strip;  // tokens per tile, consumer warpgroups, weight rows per tile (64 groups)
  int strips, ttiles;      // tiles: strips of the weight x tiles of tok tokens (1 but wgmma/small)
  int splits;              // the grid: tiles * splits CTAs (CTA b: tile b / splits)
  int num_kb, kb_per_split;
  int ctas_per_sm;
  int entries = 1;  // batch entries, one grid row each (wgmma/small's strided batches)
  bool deep = false;  // the deep ring of one CTA per SM (stages(); wgmma/small's 64x64d tile)
  int tiles() const { return strips * ttiles; }
  int blocks() const { return tiles() * splits; }  // of one entry
};

// m tokens against n weight rows. forced_splits > 0 (a plan variant): that many splits, as far
// as the depth allows. scratch: whether the depth may be split at all (the partials need
// scratch). xk: the tokens are K-major (see tokens()).
Plan plan(int64_t m, int64_t n, int64_t k, const DeviceDesc& dev, bool scratch = true,
          int forced_splits = 0, bool xk = true);

// Scratch: partials (blocks * entries * strip * tok floats), then split_counters(splits) counters
// per tile of every entry (tile_schedule.h); 0 when splits == 1.
size_t scratch_bytes(const Plan& p);

// `auto`: the problems wgmma/decode takes (measured, docs/history.md: wgmma/decode and
// wgmma/small): m <= 32, and tf32 m <= 64 (from 33 rows, 16-bit, wgmma/small's planner fills the
// SMs where this one's 128-wide strips leave most idle: bf16 64 x 5120 x 5120 40 CTAs, 25.8 us,
// against 80 of 64 x 64, 18.5, H200; its table entries and the H100's chose wgmma/small there
// too; from 128 rows every dtype: bf16 128 x 4096 x 4096 20.3 us against 24.2, H100); skinny
// problems (n <= 64) against a weight of m, k >= 1024; one entry (a batch runs as one launch on
// wgmma/03).
bool auto_takes(int64_t m, int64_t n, int64_t k, int64_t batch, bool a_k_major = true,
                bool tf32 = false);

}  // namespace wgmma_decode_plan

// The planner of wgmma/small: the strips kernel (wgmma/decode's) over a grid of tiles, for 16-bit
// problems whose C is too small for wgmma/03's 128 x 256 tiles to fill the SMs (small squares,
// deep K over a small C, M = 128..256 decode rows). A tile is 64 x tok (tok <= 64: one consumer
// warpgroup, two CTAs per SM; or 128 with a deep ring), 128 x tok (64 <= tok <= 256) or 192 x 96;
// the tokens are the rows of C when
// op(A) = A (K-major), else its columns. The tile and the depth splits come from a cost model of
// the SM (wgmma issue, L2 -> SM bytes) and of the chip's L2, with each split's partial charged;
// gemm-tune measures every (tile, splits) variant where the model is off.
namespace wgmma_small_plan {

namespace dp = wgmma_decode_plan;
constexpr int kTiles = 16;
// Tile index i: (64 kTileGroups[i]) x kTileTok[i] ("64x8" .. "128x256", then "64x64",
// "128x192": bf16 1536^3 is 96 of those in one wave, where 128 x 256 makes 72 and 128 x 128 144,
// "64x64d", "64x8d", "64x16d", "64x32d", "64x128d": one warpgroup with the deep ring of one
// CTA per SM, dp::stages; "192x96": three warpgroups, 1536^3 in 128 CTAs, K-major tokens; and
// "128x320": 257..320 tokens in one tile, so the weight is streamed once, 16-bit with the tokens
// as C's rows (K-major) or as its columns (op(A) = A^T, the tokens either way), kMaxTileTok; and
// "128x208": 193..208 tokens, where 128 x 256 computes a fifth more, 16-bit with the tokens as C's
// rows (K-major) only: max_groups >= 2 with max_tok 320).
constexpr int kTileTok[kTiles] = {8, 16, 32, 64, 128, 256, 64, 192, 64, 8, 16, 32, 128, 96, 320,
                                  208};
constexpr int kTileGroups[kTiles] = {1, 1, 1, 2, 2, 2, 1, 2, 1, 1, 1, 1, 1, 3, 2, 2};
constexpr bool kTileDeep[kTiles] = {false, false, false, false, false, false, false, false,
                                    true,  true,  true,  true,  true,  false, false, false};
// Tiles offered only where max_tok is kMaxTileTok and the tokens are K-major C rows (16-bit:
// max_tile_tokens): 128 x 208, instantiated for that case alone. (128 x 320 needs max_tok 320.)
constexpr bool kTileRowsOnly[kTiles] = {false, false, false, false, false, false, false, false,
                                        false, false, false, false, false, false, false, true};
// Tiles offered only where max_groups is 3 (a 16-bit plain fp32 D, the tokens K-major as C's
// rows): 192 x 96 (its general epilogue measured slower, docs/history.md, wgmma/small).
constexpr bool kTilePlainOnly[kTiles] = {false, false, false, false, false, false, false, false,
                                         false, false, false, false, false, true,  false, false};
// The most tokens of a tile: 320 (two wgmmas per k-step, n256 + n64: stage_tile.cuh) where the
// inputs are 16-bit and the tokens K-major C rows, or C's columns (skinny: op(A) = A^T, an
// MN-major weight, the tokens either way: TN and TT), else dp::max_tokens.
constexpr int kMaxTileTok = 320;
inline int max_tile_tokens(Precision p, bool skinny, bool xk, bool w_k_major) {
  return p != Precision::TF32 && (skinny ? !w_k_major : xk) ? kMaxTileTok
                                                             : dp::max_tokens(p, w_k_major);
}
extern const char* const kTileNames[kTiles + 1];
// Whether tile index i (0-based into kTileTok) may run a problem: MN-major tokens (xk false) take
// whole 64-token chunks, up to dp::kMaxM as C's rows; max_tok and max_groups as plan() takes
// them; rows: the tokens are C's rows (not skinny). The model (plan) and the plan variants
// gemm-tune times (small.cu) offer the same tiles.
constexpr bool tile_offered(int i, bool xk, int max_tok, int max_groups, bool rows = true) {
  return (xk || (kTileTok[i] % 64 == 0 && (kTileTok[i] <= dp::kMaxM || !rows))) &&
         kTileTok[i] <= max_tok &&
         (!kTileRowsOnly[i] || (rows && xk && max_tok >= kMaxTileTok)) &&
         (!kTilePlainOnly[i] || max_groups >= 3) &&
         kTileGroups[i] <= max_groups;
}

// Whether the tokens are C's rows or its columns, and whether they are K-major.
// 16-bit: the rows where op(A) = A (K-major), else the columns (skinny; K-major where op(B) = B^T,
// else read in 64-wide MN-major chunks).
// tf32 (a_k_major, b_k_major as stored): tf32 wgmma reads its B (the tokens) only K-major, so an
// MN-major token operand is transposed while packed, and the weight, wgmma's A, may stay MN-major
// (it goes through registers). Where op(A) = A^T and C has at most a quarter as many columns as
// rows, the tokens are the columns: what is copied is op(B) (n x k, nothing where op(B) = B^T),
// not A (m x k), and the small side is wgmma's N, whose tiles step by 8 where the weight's step by
// 64 (H100, % of cuBLAS, rows / columns: 2048 x 32 x 2048 TN 28 / 71-75, 2500 x 300 x 2500 TT 44 /
// 55, but 777 x 333 x 2222 TT 99 / 88; docs/history.md, cliffs). Else the rows, A transposed where
// op(A) = A^T. xk is then always true.
struct Roles {
  bool skinny;  // tokens = C's columns
  bool xk;      // tokens K-major (after packing)
  int64_t tokens, weights;
};
Roles roles_of(int64_t m, int64_t n, bool a_k_major, bool b_k_major, bool tf32 = false);
// Whether the tokens must be transposed while packed (tf32, an MN-major token operand as stored).
bool tokens_transposed(const Roles& r, bool a_k_major, bool b_k_major, bool tf32);

// The split count that fills `waves` waves of CTAs (SMs x CTAs per SM in `slots`) with `tiles`
// tiles, at most max_splits; 0 where that is below 3 or a power of two (plan() prices those
// anyway). 40 strips of 128 x 128 on 132 SMs: 3, where 2 leaves 52 SMs idle and 4 a second wave.
int wave_splits(int64_t tiles, int slots, int waves, int max_splits);
// plan() takes its tiles' one-wave split counts only where the model prices the best of them
// this much below the best plan in 1, 2, 4, ... splits: priced within 10%, such plans measured no
// faster (H200, 212 problems of 48..200 x 1536..13824 x 1536..11008 and small squares, every
// variant timed, docs/history.md "Wave-filling splits").
constexpr double kWaveFillMargin = 0.1;

// The model's time of a plan, in SM clocks (only its order matters).
double cost(const dp::Plan& p, const DeviceDesc& dev);

// tile (1-based into kTileTok; 0: the model's) and splits (0: the model's) are plan variants.
// The model prices every offered tile in 1, 2, 4, ... splits and in its one-wave count
// (wave_splits, taken only by kWaveFillMargin).
// xk false (MN-major tokens): tiles of 64 to 256 tokens. scratch false: no depth split.
// entries: a strided batch's (one launch; its CTAs count with the others in the model).
// max_tok: tiles of at most that many tokens (max_tile_tokens). max_groups: tiles of at most that
// many warpgroups (2 keeps out 192 x 96, whose store of a 16-bit D, a bias or an activation goes
// element by element, and which measured slower in tf32: docs/history.md, wgmma/small).
dp::Plan plan(int64_t tokens, int64_t weights, int64_t k, const DeviceDesc& dev, bool scratch,
              bool xk, int tile = 0, int splits = 0, int entries = 1, int max_tok = dp::kMaxM,
              int max_groups = 3, bool rows = true);

// The max_groups of plan() for a problem: 3 (192 x 96 allowed) only for 16-bit inputs whose
// tokens are C's rows (not skinny) and whose D is a plain fp32 one (no bias, activation or 16-bit
// D), which that tile writes straight from the registers.
int max_groups(Precision p, bool skinny, bool plain_fp32_d);

// `auto`: 16-bit problems whose 128 x 256 tiles (wgmma/03's), over all batch entries, fill at
// most half the SMs, or whose 128 x 192 tiles fill one wave; but for K >= 32768 over a C of
// 256 x 256 or more (wgmma/split_k's).
// tf32: whether the inputs are tf32 (the rows-streamed rule below is 16-bit only). rows_k_major:
// op(A) = A, so 257..320 rows of C fit one 128 x 320 tile (16-bit, one entry): taken too; and
// so, 16-bit with one entry, problems with more 128 x 256 tiles than SMs (two rounds of wgmma/03)
// whose 128 x 320 tiles fit one wave (H100, bf16 NN, us, wgmma/03 / wgmma/small / cuBLAS in one
// run: 1536 x 3072 x 1536 34.5 / 29.0 / 26.4, 1280 x 4096 x 2048 42.8 / 35.4 / 35.2;
// results/h100-medium-one-wave-ab.txt).
// cols_wide: 16-bit with C's columns as the tokens (op(A) = A^T), which the 128 x 320 tile takes
// too: the same one-wave rule over columns (H100: see docs/history.md, wgmma/small, TN).
bool auto_takes(int64_t m, int64_t n, int64_t k, int64_t batch, const DeviceDesc& dev,
                bool tf32 = false, bool rows_k_major = false, bool cols_wide = false);

// Beyond auto_takes, 16-bit problems of one entry where wgmma/03 runs two rounds (128 x 256 tiles
// more than the SMs, at most twice as many) and wgmma/small's plan `small` rounds better: its
// waves of CTAs times its tile's area below wgmma/03's rounds times its own (128 x 256, or the
// 128 x 192 of persistent_bn), with a tile no smaller than 128 x 192. wide_offered: where the
// 128 x 320 tile is offered (max_tile_tokens). H100, bf16, us, wgmma/03 / wgmma/small, NN and
// NT (results/h100-two-rounds.txt): 2560 x 2560 x 4096 96.6 / 85.5, 95.7 / 84.5 (128 x 208 in
// 260 CTAs against 200 of 128 x 256); 3328 x 2048 x 1024 33.2 / 29.9, 33.1 / 29.4. Where both
// round the same, neither wins: 2304^3 47.4 / 44.0 but 3072 x 2048 x 2048 43.2 / 46.0 (128 x
// 192 both), 2048 x 4096 x 2048 53.3 / 57.1 (128 x 256 both).
bool rounds_pay(const dp::Plan& small, int64_t m, int64_t n, int64_t batch, const DeviceDesc& dev,
                bool wide_offered);
// Whether wgmma/03 runs two rounds of 128 x 256 tiles: more than the SMs, at most twice as many
// (rounds_pay's ground; callers test it before planning).
bool two_rounds(int64_t m, int64_t n, int64_t batch, const DeviceDesc& dev);

// A skinny 16-bit problem (n <= 64 < m: wgmma/decode's skinny mode) that wgmma/small takes
// instead, where its auto_takes holds: from 16 columns on where decode reads the tokens (op(B)^T)
// MN-major (op(B) = B), from 33 where it reads them K-major. Its tiles over C's rows as tokens (or
// as columns where op(A) = A^T) measured faster than decode's split strips there (H100, bf16, % of
// cuBLAS, decode / small: 2048 x 32 x 2048 NN 0.63 / 0.71, 2000 x 64 x 2000 NN 0.65 / 0.83, NT 0.66
// / 0.82, 4096 x 32 x 4096 NN 0.76 / 0.82, 8192 x 32 x 8192 TN 0.90 / 0.96), but not at 8 columns
// (2048 x 8 x 2048 NN 0.59 / 0.36) nor at 32 K-major ones (2048 x 32 x 2048 NT 0.82 / 0.68;
// docs/history.md, cliffs).
bool takes_skinny(int64_t m, int64_t n, int64_t k, int64_t batch, const DeviceDesc& dev,
                  bool b_k_major);

// tf32 whose tokens are transposed while packed (tokens_transposed: tokens x k copied): `auto`
// takes that where the copy stays small next to the product: k <= 32 weights (H100: tf32 1000^3
// TN 66% -> 96% of cuBLAS; 4096 x 64 x 4096 TN, a 64 MB A for a 64-column C, lost to wgmma/03
// before its tokens became C's columns; docs/history.md, operand packing).
bool transposed_tokens_pay(int64_t weights, int64_t k);

}  // namespace wgmma_small_plan

}  // namespace gemmlab
