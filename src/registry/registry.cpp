// The one list of kernels. Each kernel file defines its KernelDesc; this file names them in ladder
// order. To add a kernel: write its file under src/kernels/, then add one extern line and one
// entry below.
#include "registry/registry.h"

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
extern const KernelDesc kSimtWarptiled;          // 12_warptiled.cu
extern const KernelDesc kSimtCpAsyncMultistage;  // 13_cp_async_multistage.cu
// ---- simt: end ----

// ---- tensor cores: mma.sync (sm_80+) ----
extern const KernelDesc kMmaSyncBasic;
extern const KernelDesc kMmaSyncPipelined;
// ---- mma.sync: end ----

// ---- tensor cores: Hopper wgmma (sm_90a) ----
extern const KernelDesc kWgmmaBasic;
extern const KernelDesc kWgmmaTmaPipelined;
extern const KernelDesc kWgmmaWarpSpecializedPersistent;
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
      // simt: end
      // mma.sync
      kMmaSyncBasic,
      kMmaSyncPipelined,
      // mma.sync: end
      // wgmma
      kWgmmaBasic,
      kWgmmaTmaPipelined,
      kWgmmaWarpSpecializedPersistent,
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
  return k.unsupported ? k.unsupported(p) : nullptr;
}

}  // namespace gemmlab
