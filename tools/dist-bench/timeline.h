// dist-bench --timeline: where the time of an overlapped all-gather goes. all_gather_gemm's
// schedule with one piece per shard, written out with events on both streams (the local shard's
// GEMM beside the exchange, then the received shard's): when the exchange ends, when the local
// GEMM ends and when the call ends, from the call's start (medians over the repetitions, the
// slower rank's), for the exchange alone, the GEMMs alone, and overlapped at SM margins 0, 8, 16
// and 32 with the NCCL stream at normal or greatest priority.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "dist-bench/machine.h"

namespace distbench {

nlohmann::json timeline(Machine& mc, int64_t m, int64_t n, int64_t k);

}  // namespace distbench
