#include "dist/plan.h"

#include <algorithm>

namespace gemmlab {
namespace dist {
namespace plan {

Range part(Range whole, int parts, int index) {
  const int64_t base = whole.size / parts, extra = whole.size % parts;
  const int64_t begin = whole.begin + index * base + std::min<int64_t>(index, extra);
  return {begin, base + (index < extra ? 1 : 0)};
}

Range shard(int64_t total, int ranks, int rank) { return part({0, total}, ranks, rank); }

int auto_chunks(int64_t shard_rows) {
  const int64_t pieces = shard_rows / 2048;
  return static_cast<int>(std::clamp<int64_t>(pieces, 1, 8));
}

int auto_sm_margin(int ranks) {
  (void)ranks;
  return 0;  // measured best on 2 H200s (NVLink): margins of 8..32 SMs were slower almost always
}

namespace {

int ring(int rank, int step, int ranks) { return ((rank + step) % ranks + ranks) % ranks; }

}  // namespace

std::vector<Piece> all_gather_schedule(int64_t m, int ranks, int rank, int chunks) {
  std::vector<Piece> out;
  const Range mine = shard(m, ranks, rank);
  for (int s = 0; s < ranks; ++s) {
    const int from = ring(rank, -s, ranks), to = ring(rank, s, ranks);
    const Range theirs = shard(m, ranks, from);
    for (int c = 0; c < chunks; ++c) {
      Piece p;
      p.step = s, p.block = from, p.rows = part(theirs, chunks, c);
      p.send_to = s == 0 ? -1 : to, p.send = s == 0 ? Range{} : part(mine, chunks, c);
      p.recv_from = s == 0 ? -1 : from, p.recv = s == 0 ? Range{} : p.rows;
      out.push_back(p);
    }
  }
  return out;
}

std::vector<Piece> reduce_scatter_schedule(int64_t m, int ranks, int rank, int chunks) {
  std::vector<Piece> out;
  const Range mine = shard(m, ranks, rank);
  for (int i = 1; i <= ranks; ++i) {
    const int s = i % ranks;  // 1, 2, ..., P-1, then 0 (the local block last)
    const int to = ring(rank, s, ranks), from = ring(rank, -s, ranks);
    for (int c = 0; c < chunks; ++c) {
      Piece p;
      p.step = s, p.block = to, p.rows = part(shard(m, ranks, to), chunks, c);
      p.send_to = s == 0 ? -1 : to, p.send = s == 0 ? Range{} : p.rows;
      p.recv_from = s == 0 ? -1 : from, p.recv = s == 0 ? Range{} : part(mine, chunks, c);
      out.push_back(p);
    }
  }
  return out;
}

std::vector<bool> overlapped_pieces(const std::vector<Piece>& schedule, bool all_gather) {
  const size_t n = schedule.size();
  std::vector<bool> out(n, false);
  bool seen = false;  // a transfer among the pieces already walked (from the far end for all-gather)
  for (size_t j = 0; j < n; ++j) {
    const size_t i = all_gather ? n - 1 - j : j;
    out[i] = seen;
    seen = seen || schedule[i].step != 0;
  }
  return out;
}

}  // namespace plan
}  // namespace dist
}  // namespace gemmlab
