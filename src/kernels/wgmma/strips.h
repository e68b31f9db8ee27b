// The strips kernel (strips.cu), shared by wgmma/decode and wgmma/small: a CTA computes one tile
// of C, a strip of 64, 128 or 192 rows of the weight W (wgmma's M side, a consumer warpgroup per
// 64) against tok tokens X (wgmma's N side, 8 .. 256), over a range of K; the splits of a tile
// sum their partials in split order.
// Host side: the launch of a problem the caller has planned (wgmma/plan.h).
#pragma once

#include "kernels/wgmma/plan.h"
#include "registry/registry.h"

namespace gemmlab {

// skinny = false: the tokens are C's rows (X = op(A), K-major: op(A) = A; W = op(B)^T), C^T is
// computed; true: they are C's columns (X = op(B)^T, W = op(A)), MN-major X only with tok >= 64.
// p's operands are read as they are (packed where TMA needs it: sm90::prepare_operands); a batch
// of p.batch == pl.entries entries is one launch (grid.y: the entry).

// The kernel instance and grid of the plan (gemm-bench's resource report).
LaunchConfig strips_config(const GemmProblem& p, bool skinny, const wgmma_decode_plan::Plan& pl);

// Launches pl; where its depth splits find no scratch, `unsplit` (the same problem without
// splits) runs instead.
cudaError_t launch_strips(const GemmProblem& p, bool skinny, const wgmma_decode_plan::Plan& pl,
                          const wgmma_decode_plan::Plan& unsplit);

// Whether `auto` gives p to wgmma/split_k's slices rather than to the strips kernel's own depth
// splits (wgmma/small, wgmma/decode): wgmma_plan::slices_lead, where wgmma/split_k can run p
// (split_k.cu).
bool split_k_takes(const GemmProblem& p);

}  // namespace gemmlab
