// gemmlab_dist: all_gather_gemm and gemm_reduce_scatter (include/gemmlab/dist.h). Host code: the
// checks and the enqueueing of the schedule from dist/plan.h (GEMM pieces on the caller's stream,
// NCCL send/recv on the communicator's internal one: dist/comm.h).
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "api/status.h"
#include "api/validate.h"
#include "dist/comm.h"
#include "dist/plan.h"
#include "dist/reduce.h"
#include "gemmlab/dist.h"
#include "registry/registry.h"
#include "runtime/reserve_sms.h"
#include "runtime/workspace.h"

namespace gemmlab {
namespace dist {

int64_t shard_rows(int64_t total, int ranks, int rank) {
  return ranks < 1 || rank < 0 || rank >= ranks ? 0 : plan::shard(total, ranks, rank).size;
}
int64_t shard_offset(int64_t total, int ranks, int rank) {
  return ranks < 1 || rank < 0 || rank >= ranks ? 0 : plan::shard(total, ranks, rank).begin;
}

namespace {

using api::fail;
using api::ok;
using detail::check_shapes;
using detail::CommState;
using detail::cuda_fail;
using detail::exchange;
using detail::fork;
using detail::join;
using detail::Key;
using detail::kAllGather;
using detail::kMagic;
using detail::kReduceScatter;
using detail::nccl_fail;
using detail::reserve_events;
using detail::state_of;
using plan::Piece;
using plan::Range;

ncclDataType_t nccl_type(int bytes, DType t) {
  if (bytes == 4) return ncclFloat32;
  return t == DType::BF16 ? ncclBfloat16 : ncclFloat16;
}
// The dtype name of A / B's storage, as NCCL moves it.
DType input_dtype(Precision p) {
  return p == Precision::BF16 ? DType::BF16 : p == Precision::FP16 ? DType::F16 : DType::F32;
}

bool valid_dtype(DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; }

// The checks common to both patterns: communicator, device, options, the descriptor's own rules.
Status check_common(const GemmDesc& d, ncclComm_t comm, const Options& o, int* device) {
  if (comm == nullptr) return fail(Status::InvalidValue, "the communicator is null");
  if (static_cast<int>(d.precision) < 0 || static_cast<int>(d.precision) > 3)
    return fail(Status::InvalidValue, "precision %d is not a gemmlab precision",
                static_cast<int>(d.precision));
  if (!valid_dtype(d.d_type) || !valid_dtype(o.partial_type))
    return fail(Status::InvalidValue, "D's dtype or the partials' dtype is not f32, bf16 or f16");
  if (d.op_a != Op::N)
    return fail(Status::InvalidValue, "op_a must be N: A is split by rows (dist.h)");
  if (d.batch != 1)
    return fail(Status::InvalidValue, "batch must be 1 (got %lld)", static_cast<long long>(d.batch));
  if (o.chunks < 0 || o.chunks > 64)
    return fail(Status::InvalidValue, "chunks must be 0 (auto) or 1..64 (got %d)", o.chunks);
  if (o.sm_margin < -1) return fail(Status::InvalidValue, "sm_margin must be -1 (auto) or >= 0");
  if (o.kernel == nullptr) return fail(Status::InvalidValue, "kernel name is null (use \"auto\")");
  if (d.m < 0 || d.n < 0 || d.k < 0) return fail(Status::InvalidSize, "m, n and k must be >= 0");
  if (d.m > 0 && d.n > 0) {
    if (d.D == nullptr) return fail(Status::NullPointer, "D is null");
    if (d.k > 0 && d.alpha != 0.f && (d.A == nullptr || d.B == nullptr))
      return fail(Status::NullPointer, "%s is null", d.A == nullptr ? "A" : "B");
  }
  if (cudaError_t e = cudaGetDevice(device); e != cudaSuccess)
    return fail(Status::NoDevice, "cudaGetDevice: %s", cudaGetErrorString(e));
  int comm_device = -1;
  if (ncclResult_t r = ncclCommCuDevice(comm, &comm_device); r != ncclSuccess)
    return nccl_fail("ncclCommCuDevice", r);
  if (comm_device != *device)
    return fail(Status::WrongDevice,
                "the communicator belongs to device %d, but the current device is %d "
                "(cudaSetDevice)", comm_device, *device);
  return ok();
}

// simt/sgemm computes a remainder of <= 8 rows as a thin strip, whose dot products add the two
// halves of each K stage separately: which rows land in a strip depends on the piece's m, so its
// bits would depend on the chunking. fp32 pieces run this kernel instead (same FFMA order for
// every element, edge tiles bounds-checked, no split).
constexpr const char* kStripKernel = "simt/sgemm";
constexpr const char* kChunkInvariantFp32 = "simt/15_cp_async_multistage";

// The kernel every piece runs: the named one, or what auto picks for the whole unsharded shape
// (with depth splits off), so that the kernel never depends on the chunking.
Status pin_kernel(const GemmDesc& whole, const char* kernel, const char** out) {
  if (std::strcmp(kernel, "auto") != 0) return *out = kernel, ok();
  if (whole.m == 0 || whole.n == 0 || whole.k == 0 || whole.alpha == 0.f) return *out = "auto", ok();
  *out = auto_kernel_name(whole);
  if (*out == nullptr) return fail(Status::KernelUnsupported, "%s", last_error_message());
  if (std::strcmp(*out, kStripKernel) == 0) *out = kChunkInvariantFp32;
  return ok();
}

// Every piece's GEMM passes gemm()'s checks (pointers, alignment, the pinned kernel).
Status check_pieces(const std::vector<GemmDesc>& pieces, const char* kernel) {
  for (const GemmDesc& p : pieces)
    if (Status s = api::check_gemm(p, kernel); s != Status::Success) return s;
  return ok();
}

// Rows of `bytes` that pieces start at must keep row 0's 16-byte alignment.
Status check_row_bytes(const char* what, int64_t bytes) {
  if (bytes % 16 == 0) return ok();
  return fail(Status::InvalidLeadingDim,
              "rows of %s are %lld bytes apart, not a multiple of 16: pieces starting at other "
              "rows would lose row 0's alignment", what, static_cast<long long>(bytes));
}

// One piece's GEMM description: rows [rows.begin, rows.end()) of A (at a_row of `a`) times B.
GemmDesc piece_desc(const GemmDesc& d, const void* a, int64_t a_row, int64_t rows) {
  GemmDesc p = d;
  const int in = input_bytes(d.precision);
  p.m = rows;
  p.A = static_cast<const char*>(a) + a_row * d.lda * in;
  return p;
}
// The same piece writing rows [d_row, ...) of D (and reading C's).
GemmDesc with_output_rows(GemmDesc p, int64_t d_row) {
  p.D = static_cast<char*>(p.D) + d_row * p.ldd * dtype_bytes(p.d_type);
  if (p.beta != 0.f && p.C) p.C = static_cast<const char*>(p.C) + d_row * p.ldc * dtype_bytes(p.c_type);
  return p;
}

// Stream-ordered scratch on the caller's stream, from gemmlab's pool of the device (which keeps
// freed memory mapped for the next call; set_scratch_limit applies).
Status alloc(void** ptr, size_t bytes, cudaStream_t stream) {
  *ptr = nullptr;
  if (bytes == 0) return ok();
  const cudaError_t e = workspace_alloc(ptr, bytes, stream);
  if (e == cudaErrorMemoryAllocation)
    return fail(Status::ScratchUnavailable,
                "%zu bytes of scratch (the gathered A or the partials) could not be had (out of "
                "memory, or over set_scratch_limit)", bytes);
  if (e != cudaSuccess) return cuda_fail("scratch allocation", e);
  return ok();
}

// A piece's GEMM: no depth split (the bits must not depend on the piece), sm_margin SMs left
// out, and tiles drawn from a counter (DynamicTiles), so that CTAs kept off their SMs by NCCL's
// kernel take fewer tiles instead of finishing late with a fixed list.
Status enqueue_gemm(const GemmDesc& p, const char* kernel, int sm_margin, cudaStream_t stream) {
  if (p.m == 0) return ok();
  // The caller's operands were checked (check_pieces); the gathered A and the partials are
  // scratch, a graph allocation under capture that the pointer query cannot see.
  api::TrustedPointers trusted;
  NoDepthSplit no_split;
  ReserveSms reserve(sm_margin);
  DynamicTiles dynamic;
  return gemm(p, kernel, stream);
}

// What both entry points start with: the common checks, the communicator's state (held locked
// for the whole call), the chunk count.
struct Call {
  std::shared_ptr<CommState> st;
  std::unique_lock<std::mutex> lock;
  int chunks = 1;
  int sm_margin = 0;
};

Status begin_call(const GemmDesc& d, ncclComm_t comm, const Options& o, Call* call) {
  int device = -1;
  if (Status s = check_common(d, comm, o, &device); s != Status::Success) return s;
  if (Status s = state_of(comm, device, &call->st); s != Status::Success) return s;
  call->lock = std::unique_lock<std::mutex>(call->st->mutex);
  const CommState& st = *call->st;
  call->chunks = o.chunks ? o.chunks : plan::auto_chunks(plan::shard(d.m, st.ranks, 0).size);
  call->sm_margin = o.sm_margin >= 0 ? o.sm_margin : plan::auto_sm_margin(st.ranks);
  return ok();
}

}  // namespace

Status all_gather_gemm(const GemmDesc& d, ncclComm_t comm, cudaStream_t stream,
                       const Options& o, void* a_full) {
  Call call;
  if (Status s = begin_call(d, comm, o, &call); s != Status::Success) return s;
  CommState* st = call.st.get();
  const int P = st->ranks, r = st->rank, chunks = call.chunks, margin = call.sm_margin;
  const Range mine = plan::shard(d.m, P, r);
  const int in = input_bytes(d.precision);
  if (d.m > 0 && d.k > 0 && mine.size > 0) {
    if (d.lda != d.k)
      return fail(Status::InvalidLeadingDim,
                  "all_gather_gemm needs lda == k (shards travel as dense rows): lda %lld, k %lld",
                  static_cast<long long>(d.lda), static_cast<long long>(d.k));
  }
  if (Status s = check_row_bytes("A", d.k * in); s != Status::Success) return s;
  if (Status s = check_row_bytes("D", d.ldd * dtype_bytes(d.d_type)); s != Status::Success) return s;
  if (d.beta != 0.f)
    if (Status s = check_row_bytes("C", d.ldc * dtype_bytes(d.c_type)); s != Status::Success)
      return s;
  const char* kernel = nullptr;
  NoDepthSplit no_split;  // auto's pick and the pieces' checks see what the pieces will run
  if (Status s = pin_kernel(d, o.kernel, &kernel); s != Status::Success) return s;
  const std::vector<Piece> sched = plan::all_gather_schedule(d.m, P, r, chunks);
  std::vector<GemmDesc> pieces;
  for (const Piece& p : sched)  // A stands in for the gathered buffer: the same row alignment
    pieces.push_back(with_output_rows(piece_desc(d, d.A, 0, p.rows.size), p.rows.begin));
  if (Status s = check_pieces(pieces, kernel); s != Status::Success) return s;
  if (a_full != nullptr)
    if (Status s = api::check_device_memory("a_full", a_full); s != Status::Success) return s;
  const Key key{kMagic, kAllGather, d.m, d.k, static_cast<int64_t>(d.precision), 0, chunks, d.k};
  if (Status s = check_shapes(*st, comm, key, o.check_always, stream); s != Status::Success) return s;

  // Enqueue: scratch, fork, the exchanges on the internal stream, the GEMMs on the caller's
  // stream (each received piece's after its arrival), join, free. A failure past the fork still
  // joins before the scratch is freed (the internal stream may be writing it).
  const size_t row_bytes = static_cast<size_t>(d.k) * in;
  char* gathered = static_cast<char*>(a_full);
  if (gathered == nullptr && P > 1)
    if (Status s = alloc(reinterpret_cast<void**>(&gathered), d.m * row_bytes, stream);
        s != Status::Success)
      return s;
  bool forked = false;
  const auto done = [&](Status s) {
    if (forked && s != Status::Success) join(*st, stream);
    if (gathered != nullptr && gathered != a_full) workspace_free(gathered, stream);
    return s;
  };
  if (cudaError_t e = fork(*st, stream); e != cudaSuccess) return done(cuda_fail("fork", e));
  forked = true;
  if (a_full != nullptr && mine.size > 0)
    if (cudaError_t e = cudaMemcpyAsync(gathered + mine.begin * row_bytes, d.A,
                                        mine.size * row_bytes, cudaMemcpyDeviceToDevice, st->stream);
        e != cudaSuccess)
      return done(cuda_fail("copying the local shard into a_full", e));
  // Every exchange first, so that NCCL's kernels are launched before the GEMMs fill the GPU; an
  // event after each one, for its piece's GEMM to wait on.
  const ncclDataType_t type = nccl_type(in, input_dtype(d.precision));
  if (cudaError_t e = reserve_events(*st, sched.size()); e != cudaSuccess)
    return done(cuda_fail("creating events", e));
  for (size_t i = 0; i < sched.size(); ++i) {
    const Piece& p = sched[i];
    if (p.step == 0) continue;
    const char* send = static_cast<const char*>(d.A) + (p.send.begin - mine.begin) * row_bytes;
    if (Status s = exchange(*st, comm, send, p.send.size * d.k, p.send_to,
                            gathered + p.recv.begin * row_bytes, p.recv.size * d.k, p.recv_from, type);
        s != Status::Success)
      return done(s);
    if (cudaError_t e = cudaEventRecord(st->events[i], st->stream); e != cudaSuccess)
      return done(cuda_fail("cudaEventRecord", e));
  }
  // The GEMMs on the caller's stream: the local shard's pieces, then each received piece. Those
  // beside a transfer leave sm_margin SMs to NCCL; the last received piece takes the whole GPU.
  const std::vector<bool> beside = plan::overlapped_pieces(sched, true);
  for (size_t i = 0; i < sched.size(); ++i) {
    const Piece& p = sched[i];
    GemmDesc g = pieces[i];
    if (p.step == 0) {
      g.A = static_cast<const char*>(d.A) + (p.rows.begin - mine.begin) * row_bytes;
    } else {
      if (cudaError_t e = cudaStreamWaitEvent(stream, st->events[i], 0); e != cudaSuccess)
        return done(cuda_fail("cudaStreamWaitEvent", e));
      g.A = gathered + p.rows.begin * row_bytes;
    }
    if (Status s = enqueue_gemm(g, kernel, beside[i] ? margin : 0, stream); s != Status::Success)
      return done(s);
  }
  if (cudaError_t e = join(*st, stream); e != cudaSuccess) return done(cuda_fail("join", e));
  return done(ok());
}

Status gemm_reduce_scatter(const GemmDesc& d, ncclComm_t comm, cudaStream_t stream,
                           const Options& o) {
  Call call;
  if (Status s = begin_call(d, comm, o, &call); s != Status::Success) return s;
  CommState* st = call.st.get();
  const int P = st->ranks, r = st->rank, chunks = call.chunks, margin = call.sm_margin;
  const Range mine = plan::shard(d.m, P, r);
  const int pb = dtype_bytes(o.partial_type);
  if (Status s = check_row_bytes("A", d.lda * input_bytes(d.precision)); s != Status::Success)
    return s;
  if (Status s = check_row_bytes("the partials", d.n * pb); s != Status::Success) return s;
  // Each piece writes rows of the whole partial (m x n, dense, partial_type); D stands in for it.
  GemmDesc part = d;
  part.alpha = 1.f, part.beta = 0.f, part.C = nullptr, part.bias = nullptr;
  part.act = Activation::None, part.d_type = o.partial_type, part.ldd = d.n;
  const char* kernel = nullptr;
  NoDepthSplit no_split;
  if (Status s = pin_kernel(part, o.kernel, &kernel); s != Status::Success) return s;
  const std::vector<Piece> sched = plan::reduce_scatter_schedule(d.m, P, r, chunks);
  std::vector<GemmDesc> pieces;
  for (const Piece& p : sched) pieces.push_back(piece_desc(part, d.A, p.rows.begin, p.rows.size));
  if (Status s = check_pieces(pieces, kernel); s != Status::Success) return s;
  // The epilogue's own checks: gemm() with k = 0 on this rank's rows checks D, C and bias.
  GemmDesc epi = d;
  epi.m = mine.size, epi.k = 0, epi.A = epi.B = nullptr;
  if (Status s = api::check_gemm(epi, "auto"); s != Status::Success) return s;
  const Key key{kMagic, kReduceScatter, d.m, d.n, static_cast<int64_t>(d.precision),
                static_cast<int64_t>(o.partial_type), chunks, d.n};
  if (Status s = check_shapes(*st, comm, key, o.check_always, stream); s != Status::Success) return s;

  // Scratch: the whole partial (m x n) and the P received blocks of this rank's rows.
  const size_t row_bytes = static_cast<size_t>(d.n) * pb;
  char *partial = nullptr, *recv = nullptr;
  if (Status s = alloc(reinterpret_cast<void**>(&partial), d.m * row_bytes, stream);
      s != Status::Success)
    return s;
  bool forked = false;
  const auto done = [&](Status s) {
    if (forked && s != Status::Success) join(*st, stream);
    if (partial != nullptr) workspace_free(partial, stream);
    if (recv != nullptr) workspace_free(recv, stream);
    return s;
  };
  if (Status s = alloc(reinterpret_cast<void**>(&recv), P * mine.size * row_bytes, stream);
      s != Status::Success)
    return done(s);
  if (cudaError_t e = fork(*st, stream); e != cudaSuccess) return done(cuda_fail("fork", e));
  forked = true;
  const ncclDataType_t type = nccl_type(pb, o.partial_type);
  const size_t block_bytes = mine.size * row_bytes;
  const std::vector<bool> beside = plan::overlapped_pieces(sched, false);  // the first runs alone
  for (size_t i = 0; i < sched.size(); ++i) {
    const Piece& p = sched[i];
    GemmDesc g = pieces[i];
    // The local block's pieces go straight to their slot of the received blocks.
    g.D = p.step == 0 ? recv + r * block_bytes + (p.rows.begin - mine.begin) * row_bytes
                      : partial + p.rows.begin * row_bytes;
    if (Status s = enqueue_gemm(g, kernel, beside[i] ? margin : 0, stream); s != Status::Success)
      return done(s);
    if (p.step == 0) continue;
    cudaError_t e = cudaEventRecord(st->in, stream);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(st->stream, st->in, 0);
    if (e != cudaSuccess) return done(cuda_fail("ordering a piece's send after its GEMM", e));
    char* into = recv + p.recv_from * block_bytes + (p.recv.begin - mine.begin) * row_bytes;
    if (Status s = exchange(*st, comm, partial + p.send.begin * row_bytes, p.send.size * d.n,
                            p.send_to, into, p.recv.size * d.n, p.recv_from, type);
        s != Status::Success)
      return done(s);
  }
  if (cudaError_t e = join(*st, stream); e != cudaSuccess) return done(cuda_fail("join", e));
  SumEpilogue se{recv,    o.partial_type, P,      mine.size, d.n,     d.alpha,     d.beta,
                 d.C,     d.ldc,          d.c_type, d.D,     d.ldd,   d.d_type,    d.bias,
                 d.bias_type, d.act};
  if (cudaError_t e = sum_epilogue(se, stream); e != cudaSuccess)
    return done(cuda_fail("the sum of the partials", e));
  return done(ok());
}

void forget(ncclComm_t comm) { detail::forget_state(comm); }

}  // namespace dist
}  // namespace gemmlab
