// gemmlab_dist's state of a communicator (internal): its stream, events and checked shapes, the
// cross-rank shape check, and the fork / join of the internal stream with the caller's. Used by
// dist.cpp; nothing here is public (dist.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "gemmlab/gemmlab.h"

namespace gemmlab {
namespace dist {
namespace detail {

// What every rank must agree on for one call: the descriptor the shape check all-gathers.
using Key = std::array<int64_t, 8>;
constexpr int64_t kMagic = 0x676c6469737431;  // "gldist1"
enum Pattern : int64_t { kAllGather = 1, kReduceScatter = 2 };

// gemmlab's state of one communicator: its internal stream, two events, the checked shapes.
// Calls on one communicator are serialized by `mutex` (NCCL itself forbids concurrent use).
struct CommState {
  std::mutex mutex;
  int device = -1, rank = 0, ranks = 1;
  cudaStream_t stream = nullptr;
  cudaEvent_t in = nullptr, step = nullptr;
  std::vector<cudaEvent_t> events;  // one per piece of all_gather_gemm (grown as needed)
  std::set<Key> checked;
  ~CommState();
};

// A failed NCCL or CUDA call as a CudaError status with its message.
Status nccl_fail(const char* what, ncclResult_t r);
Status cuda_fail(const char* what, cudaError_t e);

// The communicator's state on the current device; created at its first call (stream, events).
Status state_of(ncclComm_t comm, int device, std::shared_ptr<CommState>* out);

// Drops the communicator's state (dist::forget), once no call of it is still enqueueing.
void forget_state(ncclComm_t comm);

// The cross-rank shape check (dist.h): once per shape and communicator, or every call.
Status check_shapes(CommState& st, ncclComm_t comm, const Key& key, bool always,
                    cudaStream_t stream);

// in: the internal stream waits for the caller's work so far.
cudaError_t fork(CommState& st, cudaStream_t caller);
// The caller's stream waits for the internal stream's work so far.
cudaError_t join(CommState& st, cudaStream_t caller);
// At least n events in st.events.
cudaError_t reserve_events(CommState& st, size_t n);

// One grouped send/recv (either may be empty) on the internal stream.
Status exchange(CommState& st, ncclComm_t comm, const void* send, size_t send_count, int to,
                void* recv, size_t recv_count, int from, ncclDataType_t type);

}  // namespace detail
}  // namespace dist
}  // namespace gemmlab
