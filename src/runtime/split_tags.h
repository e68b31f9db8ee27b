// Launch tags for the split-k / stream-k counters (kernels/common/split_k.cuh): host side.
#pragma once

namespace gemmlab {

// A tag no earlier launch in this process used: a random 56-bit start, then counting up; never 0
// (a counter of 0 is a cleared one).
unsigned long long next_split_tag();

}  // namespace gemmlab
