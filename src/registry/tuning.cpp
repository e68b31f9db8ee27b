// registry/tuning.h: shape classes and the table lookup.
#include "registry/tuning.h"

#include <cmath>
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
  auto gap = [](int64_t x, int64_t measured) {
    return measured > 0 ? std::fabs(std::log2(static_cast<double>(x) / measured)) : 0.0;
  };
  const TuningEntry* best = nullptr;
  double best_gap = kMaxTuningGap;
  for (size_t i = 0; i < count; ++i) {
    const TuningEntry& e = table[i];
    if (e.precision == p.precision && e.op_a == p.op_a && e.op_b == p.op_b && e.m_class == mc &&
        e.n_class == nc && e.k_class == kc && e.sms == sms && device == e.device) {
      const double g = gap(p.m, e.m) + gap(p.n, e.n) + gap(p.k, e.k);
      if (g < best_gap || (!best && g <= best_gap)) best = &e, best_gap = g;
    }
  }
  return best;
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
