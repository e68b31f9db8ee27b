// The API's argument checks, shared by its entry points (api/gemm.cpp). Each returns
// Status::Success or records the status and its message (api/status.h) and returns it.
#pragma once
#include "runtime/scoped_value.h"

#include "gemmlab/gemmlab.h"
#include "registry/registry.h"

namespace gemmlab {
namespace api {

// Everything that needs no device: enums, sizes, leading dimensions, size limits, null pointers,
// alignment, the epilogue's dtypes, the batch layout, C/D overlap. plain_call: the old gemm(),
// whose output the caller knows as C (the messages say C).
Status validate_host(const GemmProblem& p, bool plain_call = false);

// The current device and its compute capability (NoDevice, CudaError).
Status current_device_cc(int* dev, int* cc);

// validate_host passed: the operands' memory (device memory of the current device); on success
// *cc holds the device's compute capability. product: A and B are read.
Status validate_device(const GemmProblem& p, bool product, int* cc);

// ptr must be device (or managed) memory of the current device (NotDevicePointer, WrongDevice).
Status check_device_memory(const char* name, const void* ptr);

// While one lives, validate_device leaves out its pointer queries on this thread. For calls from
// inside the library whose operands were checked already or are gemmlab's own scratch:
// gemmlab_dist's pieces read the gathered A and write the partials in scratch, which under graph
// capture is a graph allocation that cudaPointerGetAttributes cannot see (it reports it as host
// memory until the graph runs).
class TrustedPointers {
 public:
  TrustedPointers();

 private:
  ScopedValue<bool> scope_;
};

}  // namespace api
}  // namespace gemmlab
