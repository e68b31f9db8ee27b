// The API's status bookkeeping, shared by its entry points: a failing call records its status name
// and message for last_error_message() (per host thread); a succeeding one clears it.
#pragma once

#include <string>

#include "gemmlab/gemmlab.h"

namespace gemmlab {
namespace api {

// Records "<status name>: <printf-formatted message>" and returns s.
Status fail(Status s, const char* fmt, ...);
// Clears the message and returns Status::Success.
Status ok();
// The message of the last failing call on this thread ("" after a success).
const std::string& last_error();

// Everything gemm(desc, kernel) checks before it enqueues anything, without enqueuing: Success,
// or the status (and message) that gemm(desc, kernel) would return. (src/api/gemm.cpp)
Status check_gemm(const GemmDesc& desc, const char* kernel);

}  // namespace api
}  // namespace gemmlab
