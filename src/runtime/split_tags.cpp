// Launch tags for the split-k counters (split_k.cuh).
#include "runtime/split_tags.h"

#include <atomic>
#include <random>

namespace gemmlab {

unsigned long long next_split_tag() {
  constexpr unsigned long long kMask = (1ull << 56) - 1;
  static std::atomic<unsigned long long> next{[] {
    std::random_device rd;
    return ((static_cast<unsigned long long>(rd()) << 32) ^ rd()) & kMask;
  }()};
  unsigned long long t;
  do t = next.fetch_add(1, std::memory_order_relaxed) & kMask;
  while (t == 0);  // 0 marks a cleared counter
  return t;
}

}  // namespace gemmlab
