// CPU tests of gemmlab_dist's planner (src/dist/plan.h): the uneven-split rule, the pieces, and
// the schedules of both patterns (every row covered once, sends and receives matching across
// ranks, the local shard first for all-gather and last for reduce-scatter).
#include <map>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "dist/plan.h"

namespace gemmlab::dist::plan {
namespace {

TEST(DistPlan, ShardsFollowTheFirstRanksGetOneMoreRule) {
  // 10 rows over 4 ranks: 3, 3, 2, 2.
  const int64_t sizes[] = {3, 3, 2, 2}, begins[] = {0, 3, 6, 8};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(shard(10, 4, r).size, sizes[r]) << r;
    EXPECT_EQ(shard(10, 4, r).begin, begins[r]) << r;
  }
  for (int64_t total : {0, 1, 7, 8192, 8193})
    for (int ranks : {1, 2, 3, 8}) {
      int64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        const Range s = shard(total, ranks, r);
        EXPECT_EQ(s.begin, next);
        EXPECT_GE(s.size, total / ranks);
        EXPECT_LE(s.size, total / ranks + 1);
        next = s.end();
      }
      EXPECT_EQ(next, total);
    }
}

TEST(DistPlan, PiecesCoverARangeInOrder) {
  const Range whole{100, 7};
  int64_t next = 100;
  for (int c = 0; c < 3; ++c) {
    const Range p = part(whole, 3, c);
    EXPECT_EQ(p.begin, next);
    next = p.end();
  }
  EXPECT_EQ(next, 107);
  EXPECT_EQ(part(whole, 3, 0).size, 3);
  EXPECT_EQ(part({0, 2}, 4, 3).size, 0);  // more pieces than rows: empty pieces at the end
}

TEST(DistPlan, AutoChunks) {
  EXPECT_EQ(auto_chunks(0), 1);
  EXPECT_EQ(auto_chunks(100), 1);
  EXPECT_EQ(auto_chunks(1024), 1);
  EXPECT_EQ(auto_chunks(4096), 2);
  EXPECT_EQ(auto_chunks(16384), 8);
  EXPECT_EQ(auto_sm_margin(1), 0);  // one rank has no transfer to leave SMs to
  EXPECT_GE(auto_sm_margin(8), 0);
  EXPECT_EQ(auto_chunks(1 << 20), 8);
}

// (sender, receiver, step, piece) -> rows: every send must meet a receive of the same size.
using Transfer = std::tuple<int, int, int, int>;

void check_all_gather(int64_t m, int ranks, int chunks) {
  SCOPED_TRACE("all-gather m=" + std::to_string(m) + " P=" + std::to_string(ranks) +
               " chunks=" + std::to_string(chunks));
  std::map<Transfer, int64_t> sent, received;
  for (int r = 0; r < ranks; ++r) {
    const std::vector<Piece> s = all_gather_schedule(m, ranks, r, chunks);
    ASSERT_EQ(s.size(), static_cast<size_t>(ranks * chunks));
    std::vector<int> covered(static_cast<size_t>(m), 0);
    for (size_t i = 0; i < s.size(); ++i) {
      const Piece& p = s[i];
      EXPECT_EQ(p.step, static_cast<int>(i) / chunks);
      EXPECT_EQ(p.block, ((r - p.step) % ranks + ranks) % ranks);  // ring order from the local
      for (int64_t row = p.rows.begin; row < p.rows.end(); ++row) ++covered[row];
      if (p.step == 0) {
        EXPECT_EQ(p.send_to, -1);
        EXPECT_EQ(p.recv_from, -1);
        continue;
      }
      sent[{r, p.send_to, p.step, static_cast<int>(i) % chunks}] = p.send.size;
      received[{p.recv_from, r, p.step, static_cast<int>(i) % chunks}] = p.recv.size;
      EXPECT_EQ(p.recv.begin, p.rows.begin);
    }
    for (int64_t row = 0; row < m; ++row) EXPECT_EQ(covered[row], 1) << "row " << row;
  }
  EXPECT_EQ(sent, received);
}

void check_reduce_scatter(int64_t m, int ranks, int chunks) {
  SCOPED_TRACE("reduce-scatter m=" + std::to_string(m) + " P=" + std::to_string(ranks) +
               " chunks=" + std::to_string(chunks));
  std::map<Transfer, int64_t> sent, received;
  for (int r = 0; r < ranks; ++r) {
    const std::vector<Piece> s = reduce_scatter_schedule(m, ranks, r, chunks);
    ASSERT_EQ(s.size(), static_cast<size_t>(ranks * chunks));
    std::vector<int> covered(static_cast<size_t>(m), 0);
    const Range mine = shard(m, ranks, r);
    std::vector<int> mine_received(static_cast<size_t>(mine.size), 0);
    for (size_t i = 0; i < s.size(); ++i) {
      const Piece& p = s[i];
      EXPECT_EQ(p.block, (r + p.step) % ranks);
      for (int64_t row = p.rows.begin; row < p.rows.end(); ++row) ++covered[row];
      if (p.step == 0) {
        EXPECT_GE(i, s.size() - chunks) << "the local block comes last";
        continue;
      }
      EXPECT_EQ(p.send.begin, p.rows.begin);
      for (int64_t row = p.recv.begin; row < p.recv.end(); ++row) ++mine_received[row - mine.begin];
      sent[{r, p.send_to, p.step, static_cast<int>(i) % chunks}] = p.send.size;
      received[{p.recv_from, r, p.step, static_cast<int>(i) % chunks}] = p.recv.size;
    }
    for (int64_t row = 0; row < m; ++row) EXPECT_EQ(covered[row], 1) << "row " << row;
    for (int x : mine_received) EXPECT_EQ(x, ranks - 1);  // each own row from every other rank
  }
  EXPECT_EQ(sent, received);
}

TEST(DistPlan, SchedulesMatchAcrossRanks) {
  for (int ranks : {1, 2, 3, 4, 8})
    for (int64_t m : {1, 5, 64, 1000, 8193})
      for (int chunks : {1, 2, 3, 8}) {
        check_all_gather(m, ranks, chunks);
        check_reduce_scatter(m, ranks, chunks);
      }
}

// Only the GEMMs that can run beside a transfer give up SMs: all-gather's last received piece and
// reduce-scatter's first piece run alone, and a single rank never gives any up.
TEST(DistPlan, OverlappedPiecesAreThoseBesideATransfer) {
  const auto ag = overlapped_pieces(all_gather_schedule(1000, 2, 0, 2), true);
  EXPECT_EQ(ag, (std::vector<bool>{true, true, true, false}));  // local 2, received 2
  const auto rs = overlapped_pieces(reduce_scatter_schedule(1000, 2, 1, 2), false);
  EXPECT_EQ(rs, (std::vector<bool>{false, true, true, true}));  // remote 2, local 2
  for (bool x : overlapped_pieces(all_gather_schedule(1000, 1, 0, 4), true)) EXPECT_FALSE(x);
  for (bool x : overlapped_pieces(reduce_scatter_schedule(1000, 1, 0, 4), false)) EXPECT_FALSE(x);
  const auto ag3 = overlapped_pieces(all_gather_schedule(999, 3, 2, 1), true);
  EXPECT_EQ(ag3, (std::vector<bool>{true, true, false}));
  const auto rs3 = overlapped_pieces(reduce_scatter_schedule(999, 3, 2, 1), false);
  EXPECT_EQ(rs3, (std::vector<bool>{false, true, true}));
}

}  // namespace
}  // namespace gemmlab::dist::plan
