// The planner of gemmlab_dist: which rows each rank and each piece owns, and the order of the
// steps (who sends what to whom). Plain functions, no NCCL and no CUDA: unit-tested on the CPU
// (tests/test_dist_plan.cpp), shared by the library, its tests and dist-bench.
#pragma once

#include <cstdint>
#include <vector>

namespace gemmlab {
namespace dist {
namespace plan {

struct Range {
  int64_t begin = 0, size = 0;
  int64_t end() const { return begin + size; }
};

// Part `index` of `parts` of [begin, begin + size): size / parts each, the first size % parts
// parts one more (parts >= 1; parts past size give empty parts at the end).
Range part(Range whole, int parts, int index);

// Shard `rank` of `total` rows over `ranks` (dist.h: shard_rows / shard_offset).
Range shard(int64_t total, int ranks, int rank);

// Pieces per shard for Options::chunks == 0: about 2048 rows a piece, at most 8 pieces, at least
// 1. Each piece is its own GEMM launch with its own last, partly filled wave, so pieces must stay
// large: on 2 H200s, 512-row pieces made all_gather_gemm slower than the collective followed by
// the GEMM (docs/dist.md, "Measured").
int auto_chunks(int64_t shard_rows);

// SMs the GEMM pieces beside a transfer leave to NCCL's kernels for Options::sm_margin == -1:
// what dist-bench's sweep measured best. On 2 H200s over NVLink that is 0: a margin of 8, 16, 24
// or 32 SMs was slower than none in almost every cell of the sweep (docs/dist.md, "Measured").
int auto_sm_margin(int ranks);

// One GEMM piece of a call and the transfer that goes with it.
struct Piece {
  int step;       // 0: the local shard (no transfer); s = 1..P-1: exchange with ranks r+s / r-s
  int block;      // whose shard's rows (all-gather: the rows of A multiplied; reduce-scatter: the
                  // rows of the partial computed, i.e. the destination rank)
  Range rows;     // rows of the m x ... matrix (A for all-gather, the partial for reduce-scatter)
  int send_to;    // -1 or the rank this piece's transfer sends to
  Range send;     // rows sent: all-gather: rows of the local shard; reduce-scatter: `rows`
  int recv_from;  // -1 or the rank this piece's transfer receives from
  Range recv;     // rows received: all-gather: `rows` (of A_{recv_from}); reduce-scatter: rows of
                  // this rank's block (of recv_from's partial)
};

// all_gather_gemm on rank `rank`: the local shard's pieces first (step 0), then steps 1..P-1.
// Each piece of step s receives `rows` of shard r-s (its GEMM follows) and sends the same piece
// index of the local shard to r+s.
std::vector<Piece> all_gather_schedule(int64_t m, int ranks, int rank, int chunks);

// gemm_reduce_scatter on rank `rank`: steps 1..P-1 first (the partial of block r+s, piece by
// piece, sent to r+s; the same piece index of rank r-s's partial of block r received), the local
// block last (step 0, no transfer).
std::vector<Piece> reduce_scatter_schedule(int64_t m, int ranks, int rank, int chunks);

// Which pieces' GEMMs run while a transfer may still be in flight, in schedule order: those
// leave Options::sm_margin SMs to NCCL's kernels; the others take the whole GPU. all_gather_gemm
// enqueues every transfer first and piece i waits only for its own, so i overlaps every later
// transfer; gemm_reduce_scatter sends piece j after its GEMM, so piece i overlaps the earlier ones.
std::vector<bool> overlapped_pieces(const std::vector<Piece>& schedule, bool all_gather);

}  // namespace plan
}  // namespace dist
}  // namespace gemmlab
