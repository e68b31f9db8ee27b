// registry/tuning.h: shape classes and the table lookup.
#include "registry/tuning.h"

#include <cstdlib>
#include <cstring>

namespace gemmlab {

int extent_class(int64_t x) {
  int c = 0;
  while (c < 62 && (int64_t{1} << c) < x) ++c;
  return c;
}

const TuningEntry* find_tuning(const TuningEntry* table, size_t count, std::string_view device,
                               int sms, const GemmProblem& p) {
  if (table == nullptr || p.batch != 1) return nullptr;
  const int mc = extent_class(p.m), nc = extent_class(p.n), kc = extent_class(p.k);
  for (size_t i = 0; i < count; ++i) {
    const TuningEntry& e = table[i];
    if (e.precision == p.precision && e.op_a == p.op_a && e.op_b == p.op_b && e.m_class == mc &&
        e.n_class == nc && e.k_class == kc && e.sms == sms && device == e.device)
      return &e;
  }
  return nullptr;
}

namespace {
thread_local bool t_tuning_off = false;
}  // namespace

TuningOff::TuningOff() : scope_(t_tuning_off, true) {}

bool tuning_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("GEMMLAB_TUNING");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return on && !t_tuning_off;
}

}  // namespace gemmlab
