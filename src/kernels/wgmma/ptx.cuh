// Hopper (sm_90a) PTX, written once: mbarriers, TMA (cp.async.bulk.tensor), wgmma and its
// descriptors, fences and setmaxnreg (cluster wrappers come back with a kernel that uses them:
// docs/history.md). The stage tile that uses them is stage_tile.cuh,
// the accumulator stores epilogue.cuh; sm90.cuh includes all three.
//
// Everything compiles for any target; the instructions exist only where GEMMLAB_SM90A is defined
// (compute_90a). Kernels guard their bodies with the same condition and have min_cc = 90.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda.h>  // CUtensorMap (the type only: gemmlab does not link libcuda)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/common/cp_async.cuh"  // smem_addr
#include "kernels/common/gemm_common.cuh"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GEMMLAB_SM90A 1
#endif

namespace gemmlab {
namespace sm90 {

// ---------------------------------------------------------------------------------------------
// mbarrier: a shared-memory barrier that counts arrivals and, for TMA, transaction bytes. A phase
// completes when `count` threads have arrived and every expected byte has landed; waiters name
// the parity (0/1) of the phase they wait for.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
#ifdef GEMMLAB_SM90A
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
#endif
}

// Makes the initialized barriers visible to the async proxy (TMA) and to the other CTAs of a cluster.
__device__ __forceinline__ void fence_barrier_init() {
#ifdef GEMMLAB_SM90A
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

// Arrive once and announce `bytes` of TMA data that will complete this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
#ifdef GEMMLAB_SM90A
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
#endif
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
#ifdef GEMMLAB_SM90A
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
#endif
}

// Spin until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
#ifdef GEMMLAB_SM90A
  const uint32_t addr = smem_addr(bar);
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  } while (!done);
#endif
}

// ---------------------------------------------------------------------------------------------
// TMA: one box of a 3-D tensor map (the operand's two dimensions and its batch entry) into shared
// memory; completion is counted in bytes on `bar`. Out-of-range parts of the box are filled with
// zeros (and still counted), which is what makes M, N and K edges free. coord0 is the contiguous
// dimension, z the batch entry (0 for one matrix, or a broadcast operand).
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, uint64_t* bar,
                                            int coord0, int coord1, int z) {
#ifdef GEMMLAB_SM90A
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(coord0), "r"(coord1), "r"(z)
      : "memory");
#endif
}

// TMA store: the box at (coord0, coord1, z) of the map's tensor from shared memory, in the
// issuing thread's bulk async-group. Parts of the box past the tensor's edges are not written.
// The thread commits its stores as one group; wait_read<N> returns once all but its N newest
// groups have finished reading shared memory (the buffer may be rewritten), wait_all<0> once
// they have been written to global memory.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int coord0,
                                             int coord1, int z) {
#ifdef GEMMLAB_SM90A
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
          reinterpret_cast<uint64_t>(map)),
      "r"(smem_addr(src)), "r"(coord0), "r"(coord1), "r"(z)
      : "memory");
#endif
}
__device__ __forceinline__ void bulk_commit_group() {
#ifdef GEMMLAB_SM90A
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
#ifdef GEMMLAB_SM90A
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#endif
}
template <int N>
__device__ __forceinline__ void bulk_wait_all() {
#ifdef GEMMLAB_SM90A
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
#ifdef GEMMLAB_SM90A
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
#endif
}

// Ordinary stores to shared memory become visible to the async proxy (wgmma, TMA) only after
// this fence in each writing thread, followed by a barrier.
__device__ __forceinline__ void fence_proxy_async() {
#ifdef GEMMLAB_SM90A
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// ---------------------------------------------------------------------------------------------
// Register reallocation between warpgroups (needs a register cap at entry: __launch_bounds__(n, 1)).
// ---------------------------------------------------------------------------------------------
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
#ifdef GEMMLAB_SM90A
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
#endif
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
#ifdef GEMMLAB_SM90A
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
#endif
}

// ---------------------------------------------------------------------------------------------
// wgmma: warpgroup-wide asynchronous MMA. fence before the first wgmma that touches accumulators
// written by other instructions; commit closes a group; wait<N> blocks until at most N groups
// are pending. fence_operand keeps the compiler from moving accumulator reads or writes across
// those points (the asm statements are volatile and so stay in order).
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ void wgmma_fence() {
#ifdef GEMMLAB_SM90A
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#ifdef GEMMLAB_SM90A
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
#ifdef GEMMLAB_SM90A
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
#endif
}
template <int kRegs>
__device__ __forceinline__ void fence_operand(float (&d)[kRegs]) {
#pragma unroll
  for (int i = 0; i < kRegs; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <int kRegs>
__device__ __forceinline__ void fence_operand(uint32_t (&a)[kRegs]) {
#pragma unroll
  for (int i = 0; i < kRegs; ++i) asm volatile("" : "+r"(a[i])::"memory");
}

// 32-bit shared-memory load, kept in order with the (volatile) barrier waits around it.
__device__ __forceinline__ uint32_t lds32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

// Shared-memory matrix descriptor for the 128-byte swizzle mode. Byte offsets, encoded >> 4:
//   K-major:  sbo = distance between groups of 8 rows (1024 here); lbo is unused (1 by convention).
//   MN-major: lbo = distance between 64-element (128-byte) chunks along M/N; sbo = distance between
//             groups of 8 rows along K (1024).
// Base offset 0: every tile starts on a 1024-byte boundary, where the swizzle pattern repeats.
__device__ __forceinline__ uint64_t make_smem_desc(uint32_t smem_byte_addr, uint32_t lbo,
                                                   uint32_t sbo) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((smem_byte_addr & 0x3FFFF) >> 4);
  d |= static_cast<uint64_t>((lbo & 0x3FFFF) >> 4) << 16;
  d |= static_cast<uint64_t>((sbo & 0x3FFFF) >> 4) << 32;
  d |= 1ull << 62;  // 128-byte swizzle
  return d;
}

// The accumulator operands of the N = 128 (64 registers) and N = 256 (128 registers) wrappers,
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

// ---- wgmma wrappers (m64nNk16 for bf16/fp16, m64nNk8 for tf32; N = 128, 256) ----
// D(64x128) += A(64x16) * B(16x128), A and B from shared memory (descriptors), 16-bit inputs.
// kTransA / kTransB: 1 = the operand is MN-major in shared memory.
template <bool kHalf, int kTransA, int kTransB>
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                 int scale_d) {
#ifdef GEMMLAB_SM90A
  if constexpr (kHalf) {
    asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
      GEMMLAB_WGMMA_REGS64 " "
      "}, %64, %65, p, 1, 1, %67, %68;\n}\n"
      :
          GEMMLAB_WGMMA_ACC64
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  } else {
    asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      GEMMLAB_WGMMA_REGS64 " "
      "}, %64, %65, p, 1, 1, %67, %68;\n}\n"
      :
          GEMMLAB_WGMMA_ACC64
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  }
#endif
}

// D(64x128) += A(64x8) * B(8x128) in tf32 (fp32 bits in shared memory, low 13 mantissa bits ignored).
// tf32 has no transpose: both operands K-major.
__device__ __forceinline__ void wgmma_m64n128k8_tf32(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                    int scale_d) {
#ifdef GEMMLAB_SM90A
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
      GEMMLAB_WGMMA_REGS64 " "
      "}, %64, %65, p, 1, 1;\n}\n"
      :
          GEMMLAB_WGMMA_ACC64
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
#endif
}

// D(64x256) += A(64x16) * B(16x256), A and B from shared memory (descriptors), 16-bit inputs.
// kTransA / kTransB: 1 = the operand is MN-major in shared memory.
template <bool kHalf, int kTransA, int kTransB>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                 int scale_d) {
#ifdef GEMMLAB_SM90A
  if constexpr (kHalf) {
    asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
      GEMMLAB_WGMMA_REGS128 " "
      "}, %128, %129, p, 1, 1, %131, %132;\n}\n"
      :
          GEMMLAB_WGMMA_ACC128
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  } else {
    asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      GEMMLAB_WGMMA_REGS128 " "
      "}, %128, %129, p, 1, 1, %131, %132;\n}\n"
      :
          GEMMLAB_WGMMA_ACC128
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  }
#endif
}

// D(64x256) += A(64x8) * B(8x256) in tf32 (fp32 bits in shared memory, low 13 mantissa bits ignored).
// tf32 has no transpose: both operands K-major.
__device__ __forceinline__ void wgmma_m64n256k8_tf32(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                    int scale_d) {
#ifdef GEMMLAB_SM90A
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
      GEMMLAB_WGMMA_REGS128 " "
      "}, %128, %129, p, 1, 1;\n}\n"
      :
          GEMMLAB_WGMMA_ACC128
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
#endif
}

// D(64x256) += A(64x8) * B(8x256) in tf32 with A from registers (the wgmma A fragment: a[0..3] of
// this thread) and B from shared memory (K-major descriptor).
__device__ __forceinline__ void wgmma_m64n256k8_tf32_rs(float (&d)[128], uint32_t a0, uint32_t a1,
                                                       uint32_t a2, uint32_t a3, uint64_t desc_b,
                                                       int scale_d) {
#ifdef GEMMLAB_SM90A
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
      GEMMLAB_WGMMA_REGS128 " "
      "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
      :
          GEMMLAB_WGMMA_ACC128
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc_b), "r"(scale_d));
#endif
}

// Decode widths (N = 16, 32, 64: the tokens of a swapped decode GEMM, wgmma/decode), 16-bit
// inputs, A and B from shared memory: D(64 x N) += A(64 x 16) * B(16 x N) into d[0 .. N/2).
// GEMMLAB_WGMMA_SS(N, TYPE, REGS, A, B, P, TA, TB, accumulators...): the instruction with N / 2
// accumulators named in REGS, then the operand numbers of desc_a, desc_b, scale_d and the two
// transpose flags.
#define GEMMLAB_WGMMA_SS(N, TY, REGS, A, B, P, TA, TB, ...)                                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #P ", 0;\n"                                 \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " {" REGS "}, %" #A   \
               ", %" #B ", p, 1, 1, %" #TA ", %" #TB ";\n}\n"                                     \
               : __VA_ARGS__                                                                   \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB))
// The register list and the "+f" operands of N / 2 accumulators, for GEMMLAB_WGMMA_SS.
#define GEMMLAB_REGS16 \
  "%0, %1, %2, %3, %4, %5, %6, %7"
#define GEMMLAB_ACC16 \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define GEMMLAB_REGS32 \
  "%0, %1, %2, %3, %4, %5, %6, %7, " "%8, %9, %10, %11, %12, %13, %14, %15"
#define GEMMLAB_ACC32 \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), \
  "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), \
  "+f"(d[14]), "+f"(d[15])
#define GEMMLAB_REGS64 \
  "%0, %1, %2, %3, %4, %5, %6, %7, " "%8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, " "%24, %25, %26, %27, %28, %29, %30, %31"
#define GEMMLAB_ACC64 \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), \
  "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), \
  "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
  "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
  "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define GEMMLAB_REGS96 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define GEMMLAB_ACC96 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
template <bool kHalf, int kTransA, int kTransB, int kN>
__device__ __forceinline__ void wgmma_m64nNk16(float (&d)[kN / 2], uint64_t desc_a, uint64_t desc_b,
                                               int scale_d) {
  static_assert(kN == 16 || kN == 32 || kN == 64 || kN == 192,
                "wgmma_m64nNk16: N = 16, 32, 64 or 192");
#ifdef GEMMLAB_SM90A
  if constexpr (kN == 16) {
    if constexpr (kHalf) GEMMLAB_WGMMA_SS(16, "f16",
        GEMMLAB_REGS16, 8, 9, 10, 11, 12, GEMMLAB_ACC16);
    else GEMMLAB_WGMMA_SS(16, "bf16", GEMMLAB_REGS16, 8, 9, 10, 11, 12, GEMMLAB_ACC16);
  } else if constexpr (kN == 32) {
    if constexpr (kHalf) GEMMLAB_WGMMA_SS(32, "f16",
        GEMMLAB_REGS32, 16, 17, 18, 19, 20, GEMMLAB_ACC32);
    else GEMMLAB_WGMMA_SS(32, "bf16", GEMMLAB_REGS32, 16, 17, 18, 19, 20, GEMMLAB_ACC32);
  } else if constexpr (kN == 64) {
    if constexpr (kHalf) GEMMLAB_WGMMA_SS(64, "f16",
        GEMMLAB_REGS64, 32, 33, 34, 35, 36, GEMMLAB_ACC64);
    else GEMMLAB_WGMMA_SS(64, "bf16", GEMMLAB_REGS64, 32, 33, 34, 35, 36, GEMMLAB_ACC64);
  } else if constexpr (kN == 192) {  // wgmma/small's 128 x 192 tile
    if constexpr (kHalf) GEMMLAB_WGMMA_SS(192, "f16",
        GEMMLAB_REGS96, 96, 97, 98, 99, 100, GEMMLAB_ACC96);
    else GEMMLAB_WGMMA_SS(192, "bf16", GEMMLAB_REGS96, 96, 97, 98, 99, 100, GEMMLAB_ACC96);
  }
#endif
}
#undef GEMMLAB_WGMMA_SS
#undef GEMMLAB_REGS16
#undef GEMMLAB_REGS32
#undef GEMMLAB_REGS64
#undef GEMMLAB_ACC16
#undef GEMMLAB_ACC32
#undef GEMMLAB_ACC64
#undef GEMMLAB_REGS96
#undef GEMMLAB_ACC96

// Narrow variants (N = 8) for edge tiles with at most 8 valid columns: they update d[0..3] of the
// caller's full accumulator array and leave the rest alone.
template <bool kHalf, int kTransA, int kTransB, int kRegs>
__device__ __forceinline__ void wgmma_m64n8k16(float (&d)[kRegs], uint64_t desc_a, uint64_t desc_b,
                                               int scale_d) {
#ifdef GEMMLAB_SM90A
  if constexpr (kHalf) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, %7, %8;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, %7, %8;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));
  }
#endif
}

template <int kRegs>
__device__ __forceinline__ void wgmma_m64n8k8_tf32(float (&d)[kRegs], uint64_t desc_a,
                                                   uint64_t desc_b, int scale_d) {
#ifdef GEMMLAB_SM90A
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0, %1, %2, %3}, %4, %5, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
#endif
}

template <int kRegs>
__device__ __forceinline__ void wgmma_m64n8k8_tf32_rs(float (&d)[kRegs], uint32_t a0, uint32_t a1,
                                                      uint32_t a2, uint32_t a3, uint64_t desc_b,
                                                      int scale_d) {
#ifdef GEMMLAB_SM90A
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc_b), "r"(scale_d));
#endif
}

}  // namespace sm90
}  // namespace gemmlab
