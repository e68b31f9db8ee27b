// gemmlab/dist.h: tensor-parallel GEMM over NCCL, with the communication hidden behind the GEMM.
// Library target gemmlab_dist (links NCCL and gemmlab). One rank per GPU; the caller owns the
// communicator (ncclCommInitRank / ncclCommInitAll, or torch.distributed's) and calls these on
// every rank, in the same order, like any NCCL collective.
//
// all_gather_gemm (column-parallel, Megatron's ColumnParallelLinear with a sequence-parallel input):
//     D (m x n_r) = act(alpha * A op(B_r) + beta * C + bias),   A = [A_0; A_1; ...; A_{P-1}] (m x k)
//   Rank r holds the row shard A_r (shard_rows(m, P, r) x k) and its own weight slice B_r
//   (op(B_r) is k x n_r; n_r may differ between ranks). desc describes the rank's whole product:
//   desc.m = m (all rows), desc.k = k, desc.n = n_r, desc.A = A_r with desc.lda == k, op_a == N,
//   D, C (m x n_r) and bias (n_r values) as in gemm(GemmDesc).
//   a_full: null, or an m x k buffer (leading dimension k, the input dtype) that receives A.
//
// gemm_reduce_scatter (row-parallel, RowParallelLinear with a sequence-parallel output):
//     D_r = act(alpha * (sum over ranks s, in rank order 0..P-1, of partial_s)[rows of r]
//               + beta * C_r + bias),          partial_s = op(A_s) op(B_s)  (m x n, on rank s)
//   Rank s holds A_s (m x k_s, op_a == N) and B_s (op(B_s) is k_s x n); k_s may differ between
//   ranks. desc.m = m (all rows), desc.n = n, desc.k = k_s; desc.D / desc.C are this rank's rows
//   only (shard_rows(m, P, r) x n, ldd / ldc), bias n values, added once after the sum.
//
// Uneven splits: shard r of `total` rows is shard_rows(total, P, r) rows at shard_offset(total,
// P, r): total / P each, and the first total % P ranks one more (Megatron's and torch.chunk's
// convention for sequence-parallel tokens is even; this rule also covers the rest).
//
// Overlap. The call runs on two streams: the GEMMs on the caller's stream, the NCCL send/recv on
// an internal stream of the communicator (created at its first call; two communicators never
// share one, as collectives of two communicators on one stream can deadlock when ranks issue them
// in different orders). Each shard is cut into `chunks` pieces of rows; events order the streams,
// so piece i's GEMM runs while piece i+1 is in flight.
//   all_gather_gemm: the ring order starts with the local shard: the GEMM of A_r (no
//   communication) starts at once, while step s = 1..P-1 exchanges shards with ranks r+s / r-s
//   (send A_r to r+s, receive A_{r-s} from r-s), piece by piece; each piece's GEMM follows its
//   arrival.
//   gemm_reduce_scatter: step s = 1..P-1 computes the partial rows destined for rank r+s, piece by
//   piece, and sends each piece as soon as its GEMM is done (receiving rank r-s's partial of r's
//   rows); the local rows come last, overlapping the last transfer; then one kernel sums the P
//   partials in rank order with the epilogue.
// Stream order: everything is ordered after the work enqueued on `stream` before the call, and
// work enqueued on `stream` after the call sees the result (events in and out). The call returns
// without waiting, except at a communicator's first call for a shape (the shape check below).
// Scratch (the gathered A when a_full is null; the partials) comes stream-ordered from gemmlab's
// scratch pool of the device (gemmlab.h: retained, set_scratch_limit applies: ScratchUnavailable).
//
// Determinism. Results are bit-identical from run to run and for every chunk count: each element
// of a GEMM output is computed by one kernel over the whole K in that kernel's order (the kernel
// is chosen once for the whole unsharded shape, and depth splits such as split-k / stream-k are
// off for these calls; fp32 runs simt/15 rather than simt/sgemm, whose thin edge strips sum in
// another order), and reduce-scatter never uses NCCL's reduction: the partials travel as they are
// and are summed in rank order 0..P-1 in fp32 by gemmlab. (The sum does depend on P and on how K
// is split, like any tensor-parallel GEMM.) A kernel named in Options::kernel is used as named.
//
// Bad input gets a Status and last_error_message() before anything is enqueued:
//   WrongDevice: the communicator's device (ncclCommCuDevice) is not the current device, or an
//   operand lives elsewhere; InvalidValue: op_a == T, batch != 1, a dtype or option out of range,
//   a null communicator, shapes that disagree across ranks; NullPointer; InvalidLeadingDim: lda
//   != k (all_gather_gemm); rows of A, of the partials or of D not a multiple of 16 bytes where
//   pieces start (InvalidLeadingDim: the pieces must keep the alignment of row 0); and every
//   check of gemm(GemmDesc).
//   Shape agreement: at a communicator's first call for a given local shape, the ranks all-gather
//   a small descriptor (pattern, m, k or n, dtypes, chunk count) and compare it (one small
//   collective and a host synchronization, once per shape); later calls with a shape already
//   checked skip it. A shape that disagrees gives InvalidValue on every rank. Calls after a
//   check trust that ranks keep making matching calls (as NCCL does). check_always runs it on
//   every call. A call being captured into a CUDA graph cannot synchronize: run the shape once
//   before capturing (InvalidValue otherwise).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "gemmlab/gemmlab.h"

namespace gemmlab {
namespace dist {

// Rows of shard `rank` and where it starts, when `total` rows are split over `ranks` (see above).
int64_t shard_rows(int64_t total, int ranks, int rank);
int64_t shard_offset(int64_t total, int ranks, int rank);

struct Options {
  int chunks = 0;                // pieces per shard, >= 1; 0: auto (plan::auto_chunks)
  const char* kernel = "auto";   // "auto": the kernel auto picks for the whole unsharded shape
  DType partial_type = DType::F32;  // gemm_reduce_scatter: dtype the partials travel in (f32:
                                    // fp32 all the way; bf16 / f16: half the bytes, as a 16-bit
                                    // reduce-scatter); summed in fp32 either way
  bool check_always = false;     // run the cross-rank shape check on every call
  int sm_margin = -1;            // SMs the GEMM pieces beside a transfer leave to NCCL's kernels
                                 // (their persistent grids and planners see that many fewer; 0:
                                 // all SMs; -1: plan::auto_sm_margin). A piece with no transfer in
                                 // flight takes the whole GPU. The kernel is still picked for the
                                 // whole GPU: the bits do not change.
};

Status all_gather_gemm(const GemmDesc& desc, ncclComm_t comm, cudaStream_t stream = nullptr,
                       const Options& options = {}, void* a_full = nullptr);

Status gemm_reduce_scatter(const GemmDesc& desc, ncclComm_t comm, cudaStream_t stream = nullptr,
                           const Options& options = {});

// Destroys gemmlab's internal stream and events of `comm` and its checked shapes. Call it before
// ncclCommDestroy (a later communicator at the same address would otherwise inherit them).
// Waits for the communicator's work in flight.
void forget(ncclComm_t comm);

}  // namespace dist
}  // namespace gemmlab
