// What both Python extensions (gemmlab._C, gemmlab._dist) share: the device guard of a call and
// the GemmDesc built from the ints and floats the Python side passes (pointers as ints, enums as
// their int values, as in gemmlab.h).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "gemmlab/gemmlab.h"

namespace gemmlab_py {

// Makes `device` current for the call and restores the previous device afterwards (the pointers
// and communicator of a call belong to one device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    int current = -1;
    if (device >= 0 && cudaGetDevice(&current) == cudaSuccess && current != device &&
        cudaSetDevice(device) == cudaSuccess)
      previous_ = current;
  }
  ~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// One call as the Python side describes it: gemmlab::GemmDesc field for field. Strides are in
// elements of each operand's storage type, as in GemmDesc (0: the same matrix for every batch
// entry).
inline gemmlab::GemmDesc make_desc(int op_a, int op_b, int64_t m, int64_t n, int64_t k,
                                   float alpha, uintptr_t a, int64_t lda, uintptr_t b, int64_t ldb,
                                   float beta, uintptr_t c, int64_t ldc, int c_type, uintptr_t d,
                                   int64_t ldd, int d_type, uintptr_t bias, int bias_type, int act,
                                   int precision, int64_t batch = 1, int64_t stride_a = 0,
                                   int64_t stride_b = 0, int64_t stride_c = 0,
                                   int64_t stride_d = 0) {
  using gemmlab::Activation;
  using gemmlab::DType;
  using gemmlab::Op;
  using gemmlab::Precision;
  gemmlab::GemmDesc x;
  x.op_a = static_cast<Op>(op_a);
  x.op_b = static_cast<Op>(op_b);
  x.m = m, x.n = n, x.k = k, x.alpha = alpha, x.beta = beta;
  x.A = reinterpret_cast<const void*>(a), x.lda = lda;
  x.B = reinterpret_cast<const void*>(b), x.ldb = ldb;
  x.C = reinterpret_cast<const void*>(c), x.ldc = ldc, x.c_type = static_cast<DType>(c_type);
  x.D = reinterpret_cast<void*>(d), x.ldd = ldd, x.d_type = static_cast<DType>(d_type);
  x.bias = reinterpret_cast<const void*>(bias), x.bias_type = static_cast<DType>(bias_type);
  x.act = static_cast<Activation>(act);
  x.precision = static_cast<Precision>(precision);
  x.batch = batch;
  x.stride_a = stride_a, x.stride_b = stride_b, x.stride_c = stride_c, x.stride_d = stride_d;
  return x;
}

}  // namespace gemmlab_py
