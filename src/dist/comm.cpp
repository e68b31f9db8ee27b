// gemmlab_dist's state of a communicator (comm.h).
#include "dist/comm.h"

#include <map>
#include <string>

#include "api/status.h"

namespace gemmlab {
namespace dist {
namespace detail {

using api::fail;
using api::ok;

namespace {
std::mutex g_mutex;
std::map<ncclComm_t, std::shared_ptr<CommState>> g_states;
}  // namespace

CommState::~CommState() {
  if (device < 0) return;
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(device);
  if (stream) cudaStreamSynchronize(stream), cudaStreamDestroy(stream);
  if (in) cudaEventDestroy(in);
  if (step) cudaEventDestroy(step);
  for (cudaEvent_t e : events) cudaEventDestroy(e);
  cudaSetDevice(previous);
}

Status nccl_fail(const char* what, ncclResult_t r) {
  return fail(Status::CudaError, "NCCL %s: %s", what, ncclGetErrorString(r));
}
Status cuda_fail(const char* what, cudaError_t e) {
  return fail(Status::CudaError, "%s: %s", what, cudaGetErrorString(e));
}

// The communicator's state on the current device; created at its first call (stream, events).
Status state_of(ncclComm_t comm, int device, std::shared_ptr<CommState>* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::shared_ptr<CommState>& st = g_states[comm];
  if (st && st->device == device) return *out = st, ok();
  auto fresh = std::make_shared<CommState>();
  ncclResult_t r = ncclCommUserRank(comm, &fresh->rank);
  if (r == ncclSuccess) r = ncclCommCount(comm, &fresh->ranks);
  if (r != ncclSuccess) return nccl_fail("ncclCommUserRank / ncclCommCount", r);
  fresh->device = device;
  // The greatest priority: when a GEMM piece ends, NCCL's waiting kernel gets the freed SMs
  // before the next piece's CTAs.
  int least = 0, greatest = 0;
  cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
  if (e == cudaSuccess)
    e = cudaStreamCreateWithPriority(&fresh->stream, cudaStreamNonBlocking, greatest);
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&fresh->in, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&fresh->step, cudaEventDisableTiming);
  if (e != cudaSuccess) return cuda_fail("creating the communicator's stream and events", e);
  st = fresh;
  *out = st;
  return ok();
}

void forget_state(ncclComm_t comm) {
  std::shared_ptr<CommState> st;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_states.find(comm);
    if (it == g_states.end()) return;
    st = it->second;
    g_states.erase(it);
  }
  std::lock_guard<std::mutex> lock(st->mutex);  // no call of this communicator still enqueueing
}

Status check_shapes(CommState& st, ncclComm_t comm, const Key& key, bool always,
                    cudaStream_t stream) {
  if (!always && st.checked.count(key)) return ok();
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaError_t e = cudaStreamIsCapturing(stream, &capture); e != cudaSuccess)
    return cuda_fail("cudaStreamIsCapturing", e);
  if (capture != cudaStreamCaptureStatusNone)
    return fail(Status::InvalidValue,
                "the ranks' shapes are checked (a host synchronization) at a communicator's first "
                "call for a shape; make one such call before capturing it into a graph");
  int64_t* dev = nullptr;
  const size_t bytes = sizeof(Key) * static_cast<size_t>(st.ranks + 1);
  if (cudaError_t e = cudaMalloc(&dev, bytes); e != cudaSuccess) return cuda_fail("cudaMalloc", e);
  std::vector<int64_t> all(static_cast<size_t>(st.ranks) * key.size());
  cudaError_t e = cudaMemcpyAsync(dev, key.data(), sizeof(Key), cudaMemcpyHostToDevice, st.stream);
  ncclResult_t r = ncclSuccess;
  if (e == cudaSuccess)
    r = ncclAllGather(dev, dev + key.size(), key.size(), ncclInt64, comm, st.stream);
  if (e == cudaSuccess && r == ncclSuccess)
    e = cudaMemcpyAsync(all.data(), dev + key.size(), sizeof(Key) * st.ranks,
                        cudaMemcpyDeviceToHost, st.stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(st.stream);
  cudaFree(dev);
  if (r != ncclSuccess) return nccl_fail("ncclAllGather (shape check)", r);
  if (e != cudaSuccess) return cuda_fail("shape check", e);
  for (int s = 0; s < st.ranks; ++s)
    for (size_t i = 0; i < key.size(); ++i)
      if (all[s * key.size() + i] != key[i])
        return fail(Status::InvalidValue,
                    "the ranks disagree on the call's shape: rank %d has field %zu = %lld, rank %d "
                    "has %lld (fields: magic, pattern, m, k or n, precision, dtype, chunks, "
                    "elements per row sent)", s, i, static_cast<long long>(all[s * key.size() + i]),
                    st.rank, static_cast<long long>(key[i]));
  st.checked.insert(key);
  return ok();
}

cudaError_t fork(CommState& st, cudaStream_t caller) {
  cudaError_t e = cudaEventRecord(st.in, caller);
  return e == cudaSuccess ? cudaStreamWaitEvent(st.stream, st.in, 0) : e;
}
cudaError_t join(CommState& st, cudaStream_t caller) {
  cudaError_t e = cudaEventRecord(st.step, st.stream);
  return e == cudaSuccess ? cudaStreamWaitEvent(caller, st.step, 0) : e;
}

cudaError_t reserve_events(CommState& st, size_t n) {
  while (st.events.size() < n) {
    cudaEvent_t e = nullptr;
    if (cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming); err != cudaSuccess)
      return err;
    st.events.push_back(e);
  }
  return cudaSuccess;
}

Status exchange(CommState& st, ncclComm_t comm, const void* send, size_t send_count, int to,
                void* recv, size_t recv_count, int from, ncclDataType_t type) {
  if (send_count == 0 && recv_count == 0) return ok();
  ncclResult_t r = ncclGroupStart();
  if (r == ncclSuccess && send_count) r = ncclSend(send, send_count, type, to, comm, st.stream);
  if (r == ncclSuccess && recv_count) r = ncclRecv(recv, recv_count, type, from, comm, st.stream);
  const ncclResult_t end = ncclGroupEnd();
  if (r != ncclSuccess) return nccl_fail("ncclSend / ncclRecv", r);
  if (end != ncclSuccess) return nccl_fail("ncclGroupEnd", end);
  return ok();
}

}  // namespace detail
}  // namespace dist
}  // namespace gemmlab
