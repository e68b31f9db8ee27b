// The one list of kernels. Each kernel file defines its KernelDesc (designated initializers, one
// field per line); this file names them in ladder order, production kernels after their family's
// steps. To add a kernel: write its file under src/kernels/<family>/, then add one extern line and
// one entry below.
#include "registry/registry.h"

#include <climits>
#include <cstdio>

namespace gemmlab {

// ---- simt (FP32 on CUDA cores) ----
extern const KernelDesc kSimtNaive;
extern const KernelDesc kSimtCoalesced;
extern const KernelDesc kSimtSmemTiled32;
extern const KernelDesc kSimtSmemTiledZeroPad;
extern const KernelDesc kSimtSmemTiled8x8Occupancy;
extern const KernelDesc kSimtRectTiles8x32;
extern const KernelDesc kSimtSmemDoubleBuffered;
extern const KernelDesc kSimtRegblock2x2;
extern const KernelDesc kSimtRegblockUncoalesced;
extern const KernelDesc kSimtRegblockCoalesced;
extern const KernelDesc kSimtVectorizedFloat4;
extern const KernelDesc kSimtRectRegtile8x4;
extern const KernelDesc kSimtRegblockDoubleBuffered;
extern const KernelDesc kSimtWarptiled;          // 14_warptiled.cu
extern const KernelDesc kSimtCpAsyncMultistage;  // 15_cp_async_multistage.cu
extern const KernelDesc kSimtSgemm;              // sgemm.cu: the production FP32 kernel
// ---- simt: end ----

// ---- gemv: problems with a few rows of C (decode) ----
extern const KernelDesc kGemvSmallM;
extern const KernelDesc kGemvMma;  // mma.cu: 16-bit, tensor cores
// ---- gemv: end ----

// ---- mma_sync: tensor cores through mma.sync (sm_80+) ----
extern const KernelDesc kMmaSyncBasic;
extern const KernelDesc kMmaSyncPipelined;
// ---- mma_sync: end ----

// ---- tensor cores: Hopper wgmma (sm_90a) ----
extern const KernelDesc kWgmmaBasic;
extern const KernelDesc kWgmmaTmaPipelined;
extern const KernelDesc kWgmmaWarpSpecializedPersistent;
extern const KernelDesc kWgmmaSplitK;  // split_k.cu: deep K, few tiles
extern const KernelDesc kWgmmaDecode;  // decode.cu: 16-bit, m <= 256 (or n <= 64), swapped
extern const KernelDesc kWgmmaSmall;   // small.cu: 16-bit, C too small for 128 x 256 tiles
extern const KernelDesc kWgmmaPingpong;  // pingpong.cu: 16-bit, epilogue under the next main loop
// ---- wgmma: end ----

const std::vector<KernelDesc>& all_kernels() {
  static const std::vector<KernelDesc> kernels = {
      // simt
      kSimtNaive,
      kSimtCoalesced,
      kSimtSmemTiled32,
      kSimtSmemTiledZeroPad,
      kSimtSmemTiled8x8Occupancy,
      kSimtRectTiles8x32,
      kSimtSmemDoubleBuffered,
      kSimtRegblock2x2,
      kSimtRegblockUncoalesced,
      kSimtRegblockCoalesced,
      kSimtVectorizedFloat4,
      kSimtRectRegtile8x4,
      kSimtRegblockDoubleBuffered,
      kSimtWarptiled,
      kSimtCpAsyncMultistage,
      kSimtSgemm,
      // simt: end
      // gemv
      kGemvSmallM,
      kGemvMma,
      // gemv: end
      // mma_sync
      kMmaSyncBasic,
      kMmaSyncPipelined,
      // mma_sync: end
      // wgmma
      kWgmmaBasic,
      kWgmmaTmaPipelined,
      kWgmmaWarpSpecializedPersistent,
      kWgmmaSplitK,
      kWgmmaDecode,
      kWgmmaSmall,
      kWgmmaPingpong,
      // wgmma: end
  };
  return kernels;
}

const KernelDesc* find_kernel(std::string_view name) {
  for (const KernelDesc& k : all_kernels())
    if (name == k.name) return &k;
  return nullptr;
}

const char* kernel_cannot_run(const KernelDesc& k, const GemmProblem& p, int cc) {
  if (!(k.dtypes & dtype_bit(p.precision))) return "does not support this precision";
  if (cc < k.min_cc) {
    static thread_local char msg[64];
    std::snprintf(msg, sizeof msg, "needs compute capability %d.%d or newer", k.min_cc / 10,
                  k.min_cc % 10);
    return msg;
  }
  if (!(k.features & kLargeOperands) && !operands_fit_int32(p))
    return "A or B spans more than 2^31 elements (the kernel indexes its operands in 32 bits)";
  if (!k.unsupported) return nullptr;
  if (p.batch > 1 && !(k.features & kBatched)) {
    // Run entry by entry: each entry's addresses must suit the kernel. Alignment repeats with
    // the entry index with a period of at most 128 (byte offsets b * stride modulo 128).
    for (int64_t b = 0; b < p.batch && b < 128; ++b)
      if (const char* why = k.unsupported(p.entry(b))) return why;
    return nullptr;
  }
  return k.unsupported(p);
}

int64_t operand_extent(int64_t rows, int64_t cols, int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols;
}

bool operands_fit_int32(const GemmProblem& p) {
  const bool an = p.op_a == Op::N, bn = p.op_b == Op::N;
  return operand_extent(an ? p.m : p.k, an ? p.k : p.m, p.lda) <= INT32_MAX &&
         operand_extent(bn ? p.k : p.n, bn ? p.n : p.k, p.ldb) <= INT32_MAX;
}

}  // namespace gemmlab
