// gemmlab._dist: the thin layer between gemmlab.distributed and gemmlab/dist.h (all_gather_gemm,
// gemm_reduce_scatter) plus the NCCL calls that make and destroy gemmlab's own communicator.
// Built only where CMake found NCCL (the target gemmlab_dist), so gemmlab._C never needs NCCL.
// As in gemmlab._C, pointers, leading dimensions, communicators and streams arrive as plain
// integers, and errors come back as the gemmlab Status (an int; 0 = Success) with the reason in
// last_error_message(). This module links its own copy of the gemmlab static library, so its
// statuses and messages are read from here, not from gemmlab._C.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nccl.h>

#include "gemmlab/dist.h"
#include "binding_common.h"
#include "gemmlab/gemmlab.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using gemmlab::DType;
using gemmlab::Status;

// Errors of this layer itself (NCCL set-up, device selection); empty when the last error is the
// library's own.
thread_local std::string g_own_error;

using gemmlab_py::DeviceGuard;
using gemmlab_py::make_desc;

// A fresh ncclUniqueId as bytes (rank 0 of a group makes it; the others receive it).
nb::bytes unique_id() {
  ncclUniqueId id;
  const ncclResult_t r = ncclGetUniqueId(&id);
  if (r != ncclSuccess)
    throw std::runtime_error(std::string("ncclGetUniqueId: ") + ncclGetErrorString(r));
  return nb::bytes(id.internal, sizeof(id.internal));
}

// ncclCommInitRank on `device`: blocks until every rank of the group has called it. Returns the
// communicator as an int, or 0 (the reason in last_error_message()).
uintptr_t comm_init(nb::bytes id_bytes, int ranks, int rank, int device) {
  g_own_error.clear();
  ncclUniqueId id;
  if (id_bytes.size() != sizeof(id.internal)) {
    g_own_error = "InvalidValue: an NCCL unique id is " + std::to_string(sizeof(id.internal)) +
                  " bytes; got " + std::to_string(id_bytes.size());
    return 0;
  }
  std::memcpy(id.internal, id_bytes.c_str(), sizeof(id.internal));
  nb::gil_scoped_release release;
  DeviceGuard guard(device);
  ncclComm_t comm = nullptr;
  const ncclResult_t r = ncclCommInitRank(&comm, ranks, id, rank);
  if (r != ncclSuccess) {
    g_own_error = std::string("CudaError: ncclCommInitRank (rank ") + std::to_string(rank) +
                  " of " + std::to_string(ranks) + ", device " + std::to_string(device) +
                  "): " + ncclGetErrorString(r);
    return 0;
  }
  return reinterpret_cast<uintptr_t>(comm);
}

// dist::forget, then ncclCommDestroy (dist.h: in that order). Waits for the communicator's work.
void comm_destroy(uintptr_t comm, int device) {
  if (comm == 0) return;
  nb::gil_scoped_release release;
  DeviceGuard guard(device);
  const auto c = reinterpret_cast<ncclComm_t>(comm);
  gemmlab::dist::forget(c);
  ncclCommDestroy(c);
}

gemmlab::dist::Options make_options(int chunks, const char* kernel, int partial_type,
                                    int sm_margin) {
  gemmlab::dist::Options o;
  o.chunks = chunks;
  o.kernel = kernel;
  o.partial_type = static_cast<DType>(partial_type);
  o.sm_margin = sm_margin;
  return o;
}

// dist::all_gather_gemm (desc.m: all rows; A: this rank's shard, lda == k). a_full: 0 or an
// m x k buffer that receives the gathered A.
int all_gather_gemm(int op_b, int64_t m, int64_t n, int64_t k, float alpha, uintptr_t a,
                    int64_t lda, uintptr_t b, int64_t ldb, float beta, uintptr_t c, int64_t ldc,
                    int c_type, uintptr_t d, int64_t ldd, int d_type, uintptr_t bias,
                    int bias_type, int act, int precision, uintptr_t comm, uintptr_t stream,
                    int device, int chunks, const char* kernel, int sm_margin, uintptr_t a_full) {
  const gemmlab::GemmDesc x = make_desc(0, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                        c_type, d, ldd, d_type, bias, bias_type, act, precision);
  const gemmlab::dist::Options o = make_options(chunks, kernel, 0, sm_margin);
  nb::gil_scoped_release release;
  g_own_error.clear();
  DeviceGuard guard(device);
  return static_cast<int>(gemmlab::dist::all_gather_gemm(
      x, reinterpret_cast<ncclComm_t>(comm), reinterpret_cast<cudaStream_t>(stream), o,
      reinterpret_cast<void*>(a_full)));
}

// dist::gemm_reduce_scatter (desc.m: all rows of A; D and C: this rank's rows).
int gemm_reduce_scatter(int op_b, int64_t m, int64_t n, int64_t k, float alpha, uintptr_t a,
                        int64_t lda, uintptr_t b, int64_t ldb, float beta, uintptr_t c,
                        int64_t ldc, int c_type, uintptr_t d, int64_t ldd, int d_type,
                        uintptr_t bias, int bias_type, int act, int precision, uintptr_t comm,
                        uintptr_t stream, int device, int chunks, const char* kernel,
                        int sm_margin, int partial_type) {
  const gemmlab::GemmDesc x = make_desc(0, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                        c_type, d, ldd, d_type, bias, bias_type, act, precision);
  const gemmlab::dist::Options o = make_options(chunks, kernel, partial_type, sm_margin);
  nb::gil_scoped_release release;
  g_own_error.clear();
  DeviceGuard guard(device);
  return static_cast<int>(gemmlab::dist::gemm_reduce_scatter(
      x, reinterpret_cast<ncclComm_t>(comm), reinterpret_cast<cudaStream_t>(stream), o));
}

std::string last_error_message() {
  return g_own_error.empty() ? std::string(gemmlab::last_error_message()) : g_own_error;
}

}  // namespace

NB_MODULE(_dist, m) {
  m.doc() = "gemmlab's tensor-parallel C++ API over NCCL (internal; use gemmlab.distributed)";
  m.attr("nccl_version") = nb::make_tuple(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  m.def("unique_id", &unique_id, "a fresh ncclUniqueId as bytes");
  m.def("comm_init", &comm_init, "id"_a, "ranks"_a, "rank"_a, "device"_a,
        "ncclCommInitRank on device; the communicator as an int, 0 on failure");
  m.def("comm_destroy", &comm_destroy, "comm"_a, "device"_a,
        "dist::forget and ncclCommDestroy");
  m.def("all_gather_gemm", &all_gather_gemm, "op_b"_a, "m"_a, "n"_a, "k"_a, "alpha"_a, "a"_a,
        "lda"_a, "b"_a, "ldb"_a, "beta"_a, "c"_a, "ldc"_a, "c_type"_a, "d"_a, "ldd"_a,
        "d_type"_a, "bias"_a, "bias_type"_a, "act"_a, "precision"_a, "comm"_a, "stream"_a,
        "device"_a, "chunks"_a, "kernel"_a, "sm_margin"_a, "a_full"_a,
        "gemmlab::dist::all_gather_gemm; returns the gemmlab Status as an int");
  m.def("gemm_reduce_scatter", &gemm_reduce_scatter, "op_b"_a, "m"_a, "n"_a, "k"_a, "alpha"_a,
        "a"_a, "lda"_a, "b"_a, "ldb"_a, "beta"_a, "c"_a, "ldc"_a, "c_type"_a, "d"_a, "ldd"_a,
        "d_type"_a, "bias"_a, "bias_type"_a, "act"_a, "precision"_a, "comm"_a, "stream"_a,
        "device"_a, "chunks"_a, "kernel"_a, "sm_margin"_a, "partial_type"_a,
        "gemmlab::dist::gemm_reduce_scatter; returns the gemmlab Status as an int");
  m.def("shard_rows", &gemmlab::dist::shard_rows, "total"_a, "ranks"_a, "rank"_a);
  m.def("shard_offset", &gemmlab::dist::shard_offset, "total"_a, "ranks"_a, "rank"_a);
  m.def("status_name", [](int s) { return std::string(gemmlab::status_name(static_cast<Status>(s))); });
  m.def("last_error_message", &last_error_message);
}
