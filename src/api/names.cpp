// Names of the public enums and their parsers (gemmlab.h).
#include <cstring>
#include <initializer_list>
#include <string>

#include "gemmlab/gemmlab.h"

namespace gemmlab {

const char* status_name(Status s) {
  switch (s) {
    case Status::Success: return "Success";
    case Status::InvalidValue: return "InvalidValue";
    case Status::InvalidSize: return "InvalidSize";
    case Status::InvalidLeadingDim: return "InvalidLeadingDim";
    case Status::NullPointer: return "NullPointer";
    case Status::NotDevicePointer: return "NotDevicePointer";
    case Status::SizeTooLarge: return "SizeTooLarge";
    case Status::UnknownKernel: return "UnknownKernel";
    case Status::KernelUnsupported: return "KernelUnsupported";
    case Status::NoDevice: return "NoDevice";
    case Status::CudaError: return "CudaError";
    case Status::WrongDevice: return "WrongDevice";
    case Status::ScratchUnavailable: return "ScratchUnavailable";
  }
  return "UnknownStatus";
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::TF32: return "tf32";
    case Precision::BF16: return "bf16";
    case Precision::FP16: return "fp16";
  }
  return "unknown";
}

namespace {

// *out = the value among `values` whose name (name_of) is `name`; false if none is.
template <typename E, typename NameOf>
bool parse_by_name(const char* name, std::initializer_list<E> values, NameOf name_of, E* out) {
  if (!name || !out) return false;
  for (E v : values) {
    if (std::strcmp(name, name_of(v)) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

}  // namespace

bool parse_precision(const char* name, Precision* out) {
  return parse_by_name(name, {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16},
                       precision_name, out);
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::None: return "none";
    case Activation::ReLU: return "relu";
    case Activation::GeluTanh: return "gelu_tanh";
    case Activation::GeluErf: return "gelu_erf";
    case Activation::SiLU: return "silu";
  }
  return "unknown";
}

bool parse_activation(const char* name, Activation* out) {
  return parse_by_name(name, {Activation::None, Activation::ReLU, Activation::GeluTanh,
                              Activation::GeluErf, Activation::SiLU},
                       activation_name, out);
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::BF16: return "bf16";
    case DType::F16: return "f16";
  }
  return "unknown";
}

bool parse_dtype(const char* name, DType* out) {
  if (!name || !out) return false;
  const std::string s = name;
  if (s == "f32" || s == "fp32") return *out = DType::F32, true;
  if (s == "bf16") return *out = DType::BF16, true;
  if (s == "f16" || s == "fp16") return *out = DType::F16, true;
  return false;
}

}  // namespace gemmlab
