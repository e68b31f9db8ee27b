// copy_matrix's straight-copy split (runtime/copy_plan.h: plan_straight_copy), on the CPU: every
// 16-byte chunk of every row covered once by (row group, segment, lane), segments only where the
// rows alone leave the GPU short of warps, short rows sharing a warp, the grid's limits. No GPU
// involved: these run in CI. (The copies themselves, bit for bit: test_aligned_rows_gpu.cpp.)
#include <algorithm>
#include <cstdint>

#include <gtest/gtest.h>

#include "runtime/copy_plan.h"

namespace gemmlab {
namespace {

// Every chunk of every row covered once by (row group, segment, lane); one warp per item.
void expect_covers(const CopySplit& sp, int64_t rows, int64_t chunks, int warps) {
  const int tpr = 1 << sp.tpr_log2;
  EXPECT_GE(tpr, std::min<int64_t>(32, chunks));         // a row's lanes cover its chunks
  EXPECT_TRUE(tpr == 32 || tpr / 2 < chunks);            // ... with the fewest lanes that do
  EXPECT_GE(sp.row_groups * (32 / tpr), rows);            // every row in a group
  EXPECT_LT((sp.row_groups - 1) * (32 / tpr), rows);      // and no empty group
  EXPECT_EQ(sp.seg % 32, 0);
  EXPECT_GE(sp.segs * sp.seg, chunks);                    // every chunk in a segment
  EXPECT_LT((sp.segs - 1) * sp.seg, chunks);              // and no empty segment
  EXPECT_EQ(sp.blocks, (sp.row_groups * sp.segs + warps - 1) / warps);  // one warp per item
}

TEST(CopyPlan, FewLongRowsAreCutIntoSegments) {
  // B of a bf16 127 x 8191 x 129 GEMM: 129 rows of 1024 chunks (8192 padded elements).
  const CopySplit sp = plan_straight_copy(129, 1024, 8, 1);
  expect_covers(sp, 129, 1024, 8);
  EXPECT_FALSE(sp.warp_per_row());
  EXPECT_EQ(sp.tpr_log2, 5);
  EXPECT_GE(sp.row_groups * sp.segs, 1024);  // the GPU gets its 1024 warps
  // A^T of a 4095 x 4095 x 64 TN GEMM: 64 rows of 512 chunks, 16 segments of 32.
  const CopySplit a = plan_straight_copy(64, 512, 8, 1);
  expect_covers(a, 64, 512, 8);
  EXPECT_EQ(a.segs, 16);
  EXPECT_EQ(a.seg, 32);
}

TEST(CopyPlan, ManyRowsKeepAWarpPerRow) {
  for (int64_t rows : {1024, 2047, 2049, 4097}) {
    const CopySplit sp = plan_straight_copy(rows, 264, 8, 1);
    expect_covers(sp, rows, 264, 8);
    EXPECT_TRUE(sp.warp_per_row()) << rows << " rows";
    EXPECT_EQ(sp.blocks, (rows + 7) / 8);
  }
  EXPECT_FALSE(plan_straight_copy(1023, 264, 8, 1).warp_per_row());
  // A batch's entries count: 32 entries of 1000 rows fill the GPU with a warp per row.
  EXPECT_TRUE(plan_straight_copy(1000, 63, 8, 32).warp_per_row());
  // Rows of one segment's width at most cannot be cut.
  EXPECT_TRUE(plan_straight_copy(3, 32, 8, 1).warp_per_row());
}

TEST(CopyPlan, ShortRowsShareAWarp) {
  // 100 bf16 padded to 128: 16 chunks, two rows per warp; 13 chunks take 16 lanes too.
  for (int64_t chunks : {13, 16}) {
    const CopySplit sp = plan_straight_copy(10000, chunks, 8, 1);
    expect_covers(sp, 10000, chunks, 8);
    EXPECT_EQ(sp.tpr_log2, 4);
    EXPECT_EQ(sp.row_groups, 5000);
    EXPECT_EQ(sp.segs, 1);
  }
  const CopySplit one = plan_straight_copy(37, 1, 8, 3);  // one chunk a row: 32 rows per warp
  expect_covers(one, 37, 1, 8);
  EXPECT_EQ(one.tpr_log2, 0);
  EXPECT_EQ(one.row_groups, 2);
  for (int64_t chunks = 1; chunks <= 70; ++chunks)
    for (int64_t rows : {1, 7, 33, 500, 5000})
      expect_covers(plan_straight_copy(rows, chunks, 8, 1), rows, chunks, 8);
}

TEST(CopyPlan, GridStaysWithinItsLimits) {
  // 65,535 entries in the grid's y: the blocks along x stay within 2^20 / y (the kernels loop).
  const CopySplit sp = plan_straight_copy(100000, 4, 8, 65535);
  EXPECT_GE(sp.blocks, 1);
  EXPECT_LE(sp.blocks * 65535, int64_t{1} << 20);
}

}  // namespace
}  // namespace gemmlab
