// Hopper (sm_90a) wgmma instructions, written once: m64nNk16 for bf16 / fp16 with either operand
// K- or MN-major in shared memory, and m64nNk8 for tf32 (both K-major, or A from registers).
// Split from ptx.cuh (mbarriers, TMA, fences, descriptors), which this includes; stage_tile.cuh
// issues them.
#pragma once

#include "kernels/wgmma/ptx.cuh"

namespace gemmlab {
namespace sm90 {

// The accumulator operands of N = 128 (64 registers) and N = 256 (128 registers),
// written once: the register list in the instruction text and the "+f" operand list.
#define GEMMLAB_WGMMA_REGS64 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define GEMMLAB_WGMMA_REGS128 \
  GEMMLAB_WGMMA_REGS64 ", " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, " \
  "%78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, " \
  "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, " \
  "%106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, " \
  "%120, %121, %122, %123, %124, %125, %126, %127"
#define GEMMLAB_WGMMA_ACC8(i)                                                                    \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]),   \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define GEMMLAB_WGMMA_ACC64                                                                      \
  GEMMLAB_WGMMA_ACC8(0), GEMMLAB_WGMMA_ACC8(8), GEMMLAB_WGMMA_ACC8(16), GEMMLAB_WGMMA_ACC8(24),   \
      GEMMLAB_WGMMA_ACC8(32), GEMMLAB_WGMMA_ACC8(40), GEMMLAB_WGMMA_ACC8(48), GEMMLAB_WGMMA_ACC8(56)
#define GEMMLAB_WGMMA_ACC128                                                                     \
  GEMMLAB_WGMMA_ACC64, GEMMLAB_WGMMA_ACC8(64), GEMMLAB_WGMMA_ACC8(72), GEMMLAB_WGMMA_ACC8(80),    \
      GEMMLAB_WGMMA_ACC8(88), GEMMLAB_WGMMA_ACC8(96), GEMMLAB_WGMMA_ACC8(104),                  \
      GEMMLAB_WGMMA_ACC8(112), GEMMLAB_WGMMA_ACC8(120)

// 16-bit inputs, m64nNk16 for N = 16 .. 256 (16 .. 64: the tokens of a swapped decode GEMM,
// wgmma/decode; 96, 192 and 208: wgmma/small's tiles; 128 and 256: the big tiles), A and B from shared memory
// (descriptors; kTransA / kTransB: 1 = the operand is MN-major there): D(64 x N) += A(64 x 16) *
// B(16 x N) into d[0 .. N/2).
// GEMMLAB_WGMMA_SS(N, TYPE, REGS, A, B, P, TA, TB, accumulators...): the instruction with N / 2
// accumulators named in REGS, then the operand numbers of desc_a, desc_b, scale_d and the two
// transpose flags.
#define GEMMLAB_WGMMA_SS(N, TY, REGS, A, B, P, TA, TB, ...)                                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #P ", 0;\n"                                 \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " {" REGS "}, %" #A   \
               ", %" #B ", p, 1, 1, %" #TA ", %" #TB ";\n}\n"                                     \
               : __VA_ARGS__                                                                   \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB))
// The register list and the "+f" operands of the N / 2 accumulators of N = 8, 16, 32, 64, 96, 192,
// 208 (N = 128 and 256: GEMMLAB_WGMMA_REGS64 / 128 and GEMMLAB_WGMMA_ACC64 / 128 above).
#define GEMMLAB_REGS8 "%0, %1, %2, %3"
#define GEMMLAB_ACC8 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
#define GEMMLAB_REGS16 "%0, %1, %2, %3, %4, %5, %6, %7"
#define GEMMLAB_ACC16 GEMMLAB_WGMMA_ACC8(0)
#define GEMMLAB_REGS32 GEMMLAB_REGS16 ", %8, %9, %10, %11, %12, %13, %14, %15"
#define GEMMLAB_ACC32 GEMMLAB_WGMMA_ACC8(0), GEMMLAB_WGMMA_ACC8(8)
#define GEMMLAB_REGS64 \
  GEMMLAB_REGS32 ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define GEMMLAB_ACC64 GEMMLAB_ACC32, GEMMLAB_WGMMA_ACC8(16), GEMMLAB_WGMMA_ACC8(24)
#define GEMMLAB_REGS48 \
  GEMMLAB_REGS32 ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, " \
  "%31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
#define GEMMLAB_ACC48 GEMMLAB_ACC32, GEMMLAB_WGMMA_ACC8(16), GEMMLAB_WGMMA_ACC8(24), \
  GEMMLAB_WGMMA_ACC8(32), GEMMLAB_WGMMA_ACC8(40)
#define GEMMLAB_REGS96 \
  GEMMLAB_WGMMA_REGS64 ", " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define GEMMLAB_ACC96                                                                            \
  GEMMLAB_WGMMA_ACC64, GEMMLAB_WGMMA_ACC8(64), GEMMLAB_WGMMA_ACC8(72), GEMMLAB_WGMMA_ACC8(80),    \
      GEMMLAB_WGMMA_ACC8(88)
#define GEMMLAB_REGS104 \
  GEMMLAB_REGS96 ", %96, %97, %98, %99, %100, %101, %102, %103"
#define GEMMLAB_ACC104 GEMMLAB_ACC96, GEMMLAB_WGMMA_ACC8(96)
// GEMMLAB_WGMMA_SS in fp16 (kHalf) or bf16: the instruction text differs only in its type.
#define GEMMLAB_WGMMA_SS_16BIT(N, ...)                  \
  if constexpr (kHalf) GEMMLAB_WGMMA_SS(N, "f16", __VA_ARGS__); \
  else GEMMLAB_WGMMA_SS(N, "bf16", __VA_ARGS__)
template <bool kHalf, int kTransA, int kTransB, int kN>
__device__ __forceinline__ void wgmma_m64nNk16(float (&d)[kN / 2], uint64_t desc_a, uint64_t desc_b,
                                               int scale_d) {
  static_assert(kN == 16 || kN == 32 || kN == 64 || kN == 96 || kN == 128 || kN == 192 ||
                    kN == 208 || kN == 256,
                "wgmma_m64nNk16: N = 16, 32, 64, 96, 128, 192, 208 or 256");
#ifdef GEMMLAB_SM90A
  if constexpr (kN == 16) {
    GEMMLAB_WGMMA_SS_16BIT(16, GEMMLAB_REGS16, 8, 9, 10, 11, 12, GEMMLAB_ACC16);
  } else if constexpr (kN == 32) {
    GEMMLAB_WGMMA_SS_16BIT(32, GEMMLAB_REGS32, 16, 17, 18, 19, 20, GEMMLAB_ACC32);
  } else if constexpr (kN == 64) {
    GEMMLAB_WGMMA_SS_16BIT(64, GEMMLAB_REGS64, 32, 33, 34, 35, 36, GEMMLAB_ACC64);
  } else if constexpr (kN == 96) {  // wgmma/small's 192 x 96 tile
    GEMMLAB_WGMMA_SS_16BIT(96, GEMMLAB_REGS48, 48, 49, 50, 51, 52, GEMMLAB_ACC48);
  } else if constexpr (kN == 192) {  // wgmma/small's 128 x 192 tile
    GEMMLAB_WGMMA_SS_16BIT(192, GEMMLAB_REGS96, 96, 97, 98, 99, 100, GEMMLAB_ACC96);
  } else if constexpr (kN == 208) {  // wgmma/small's 128 x 208 tile
    GEMMLAB_WGMMA_SS_16BIT(208, GEMMLAB_REGS104, 104, 105, 106, 107, 108, GEMMLAB_ACC104);
  } else if constexpr (kN == 128) {
    GEMMLAB_WGMMA_SS_16BIT(128, GEMMLAB_WGMMA_REGS64, 64, 65, 66, 67, 68, GEMMLAB_WGMMA_ACC64);
  } else if constexpr (kN == 256) {
    GEMMLAB_WGMMA_SS_16BIT(256, GEMMLAB_WGMMA_REGS128, 128, 129, 130, 131, 132,
                           GEMMLAB_WGMMA_ACC128);
  }
#endif
}
// tf32, m64nNk8 for every N the kernels use (8 .. 256): D(64 x N) += A(64 x 8) * B(8 x N) into
// d[0 .. N/2) of the caller's array (kRegs >= N / 2: the N = 8 of an edge tile updates d[0..3] of
// a full array). tf32 has no transpose: a shared-memory operand is K-major. wgmma_tf32_rs takes A
// from registers instead (this thread's wgmma A fragment a0..a3), read in any order the kernel
// likes (stage_tile.cuh: register_a_row). The macros name the operand numbers of desc_a (or
// a0..a3), desc_b and scale_d after the N / 2 accumulators.
#define GEMMLAB_TF32_SS(N, REGS, A, B, P, ...)                                                   \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #P ", 0;\n"                                 \
               "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 {" REGS "}, %" #A ", %" #B \
               ", p, 1, 1;\n}\n"                                                                 \
               : __VA_ARGS__                                                                   \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d))
#define GEMMLAB_TF32_RS(N, REGS, A0, A1, A2, A3, B, P, ...)                                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #P ", 0;\n"                                 \
               "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 {" REGS "}, {%" #A0     \
               ", %" #A1 ", %" #A2 ", %" #A3 "}, %" #B ", p, 1, 1;\n}\n"                          \
               : __VA_ARGS__                                                                   \
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc_b), "r"(scale_d))
template <int kN, int kRegs>
__device__ __forceinline__ void wgmma_tf32(float (&d)[kRegs], uint64_t desc_a, uint64_t desc_b,
                                           int scale_d) {
  static_assert(kRegs >= kN / 2, "wgmma_tf32: N / 2 accumulators");
#ifdef GEMMLAB_SM90A
  if constexpr (kN == 8) GEMMLAB_TF32_SS(8, GEMMLAB_REGS8, 4, 5, 6, GEMMLAB_ACC8);
  else if constexpr (kN == 16) GEMMLAB_TF32_SS(16, GEMMLAB_REGS16, 8, 9, 10, GEMMLAB_ACC16);
  else if constexpr (kN == 32) GEMMLAB_TF32_SS(32, GEMMLAB_REGS32, 16, 17, 18, GEMMLAB_ACC32);
  else if constexpr (kN == 64) GEMMLAB_TF32_SS(64, GEMMLAB_REGS64, 32, 33, 34, GEMMLAB_ACC64);
  else if constexpr (kN == 128)
    GEMMLAB_TF32_SS(128, GEMMLAB_WGMMA_REGS64, 64, 65, 66, GEMMLAB_WGMMA_ACC64);
  else if constexpr (kN == 96) GEMMLAB_TF32_SS(96, GEMMLAB_REGS48, 48, 49, 50, GEMMLAB_ACC48);
  else if constexpr (kN == 192) GEMMLAB_TF32_SS(192, GEMMLAB_REGS96, 96, 97, 98, GEMMLAB_ACC96);
  else if constexpr (kN == 256)
    GEMMLAB_TF32_SS(256, GEMMLAB_WGMMA_REGS128, 128, 129, 130, GEMMLAB_WGMMA_ACC128);
  else static_assert(kN == 8, "wgmma_tf32: N = 8, 16, 32, 64, 96, 128, 192 or 256");
#endif
}
template <int kN, int kRegs>
__device__ __forceinline__ void wgmma_tf32_rs(float (&d)[kRegs], uint32_t a0, uint32_t a1,
                                              uint32_t a2, uint32_t a3, uint64_t desc_b,
                                              int scale_d) {
  static_assert(kRegs >= kN / 2, "wgmma_tf32_rs: N / 2 accumulators");
#ifdef GEMMLAB_SM90A
  if constexpr (kN == 8) GEMMLAB_TF32_RS(8, GEMMLAB_REGS8, 4, 5, 6, 7, 8, 9, GEMMLAB_ACC8);
  else if constexpr (kN == 16)
    GEMMLAB_TF32_RS(16, GEMMLAB_REGS16, 8, 9, 10, 11, 12, 13, GEMMLAB_ACC16);
  else if constexpr (kN == 32)
    GEMMLAB_TF32_RS(32, GEMMLAB_REGS32, 16, 17, 18, 19, 20, 21, GEMMLAB_ACC32);
  else if constexpr (kN == 64)
    GEMMLAB_TF32_RS(64, GEMMLAB_REGS64, 32, 33, 34, 35, 36, 37, GEMMLAB_ACC64);
  else if constexpr (kN == 128)
    GEMMLAB_TF32_RS(128, GEMMLAB_WGMMA_REGS64, 64, 65, 66, 67, 68, 69, GEMMLAB_WGMMA_ACC64);
  else if constexpr (kN == 96)
    GEMMLAB_TF32_RS(96, GEMMLAB_REGS48, 48, 49, 50, 51, 52, 53, GEMMLAB_ACC48);
  else if constexpr (kN == 192)
    GEMMLAB_TF32_RS(192, GEMMLAB_REGS96, 96, 97, 98, 99, 100, 101, GEMMLAB_ACC96);
  else if constexpr (kN == 256)
    GEMMLAB_TF32_RS(256, GEMMLAB_WGMMA_REGS128, 128, 129, 130, 131, 132, 133,
                    GEMMLAB_WGMMA_ACC128);
  else static_assert(kN == 8, "wgmma_tf32_rs: N = 8, 16, 32, 64, 96, 128, 192 or 256");
#endif
}

// Narrow variants (N = 8) for edge tiles with at most 8 valid columns: they update d[0..3] of the
// caller's full accumulator array and leave the rest alone.
template <bool kHalf, int kTransA, int kTransB, int kRegs>
__device__ __forceinline__ void wgmma_m64n8k16(float (&d)[kRegs], uint64_t desc_a, uint64_t desc_b,
                                               int scale_d) {
#ifdef GEMMLAB_SM90A
  GEMMLAB_WGMMA_SS_16BIT(8, GEMMLAB_REGS8, 4, 5, 6, 7, 8, GEMMLAB_ACC8);
#endif
}

#undef GEMMLAB_TF32_SS
#undef GEMMLAB_TF32_RS
#undef GEMMLAB_REGS8
#undef GEMMLAB_ACC8
#undef GEMMLAB_WGMMA_SS
#undef GEMMLAB_WGMMA_SS_16BIT
#undef GEMMLAB_REGS16
#undef GEMMLAB_REGS32
#undef GEMMLAB_REGS64
#undef GEMMLAB_ACC16
#undef GEMMLAB_ACC32
#undef GEMMLAB_ACC64
#undef GEMMLAB_REGS48
#undef GEMMLAB_ACC48
#undef GEMMLAB_REGS96
#undef GEMMLAB_ACC96

}  // namespace sm90
}  // namespace gemmlab
