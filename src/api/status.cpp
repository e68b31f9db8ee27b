#include "api/status.h"

#include <cstdarg>
#include <cstdio>

namespace gemmlab {
namespace api {
namespace {
thread_local std::string g_last_error;
}  // namespace

Status fail(Status s, const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  g_last_error = std::string(status_name(s)) + ": " + buf;
  return s;
}

Status ok() {
  g_last_error.clear();
  return Status::Success;
}

const std::string& last_error() { return g_last_error; }

}  // namespace api
}  // namespace gemmlab
