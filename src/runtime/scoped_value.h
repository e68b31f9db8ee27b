// A thread's setting changed for a scope and restored after it: what the library's scoped flags
// (ReserveSms, DynamicTiles, NoDepthSplit, ForcePlan, TuningOff, TrustedPointers) each hold.
// Nests: the innermost value holds until it ends.
#pragma once

namespace gemmlab {

template <typename T>
class ScopedValue {
 public:
  ScopedValue(T& slot, T value) : slot_(slot), previous_(slot) { slot_ = value; }
  ~ScopedValue() { slot_ = previous_; }
  ScopedValue(const ScopedValue&) = delete;
  ScopedValue& operator=(const ScopedValue&) = delete;

 private:
  T& slot_;
  T previous_;
};

}  // namespace gemmlab
