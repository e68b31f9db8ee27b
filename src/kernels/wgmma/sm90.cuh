// Hopper (sm_90a) building blocks: the PTX of mbarriers, TMA (cp.async.bulk.tensor), wgmma,
// fences, setmaxnreg and clusters lives here once; plus the shared-memory tile layout every
// gemmlab wgmma kernel uses (128-byte swizzle, one 128-byte row of K per operand row) with its
// TMA loads and wgmma issue, and the store of a wgmma accumulator fragment through the Epilogue.
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

// Arrive on the barrier at the same shared-memory offset in CTA `cta` of this cluster.
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, uint32_t cta) {
#ifdef GEMMLAB_SM90A
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
      "r"(cta)
      : "memory");
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
// TMA: one 2-D box of a tensor map into shared memory; completion is counted in bytes on `bar`.
// Out-of-range parts of the box are filled with zeros (and still counted), which is what makes
// M, N and K edges free. coord0 is the contiguous dimension.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar,
                                            int coord0, int coord1) {
#ifdef GEMMLAB_SM90A
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(coord0), "r"(coord1)
      : "memory");
#endif
}

// The same box written to the same offset in every CTA of `cta_mask` (cluster ranks), each of
// whose barrier at `bar`'s offset is credited with the bytes.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map,
                                                      uint64_t* bar, int coord0, int coord1,
                                                      uint16_t cta_mask) {
#ifdef GEMMLAB_SM90A
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(coord0), "r"(coord1),
      "h"(cta_mask)
      : "memory");
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
// Clusters
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r = 0;
#ifdef GEMMLAB_SM90A
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
  return r;
}

// All threads of all CTAs of the cluster: arrive (release) then wait (acquire).
__device__ __forceinline__ void cluster_sync() {
#ifdef GEMMLAB_SM90A
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
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

// ---------------------------------------------------------------------------------------------
// The shared-memory tile of one pipeline stage, as TMA writes it and wgmma reads it.
//
// Every operand row holds one 128-byte swizzle row of K: kBK = 64 elements for 16-bit types,
// 32 for tf32 (fp32 storage). 128-byte swizzle: the 16-byte chunk c of row r lands at chunk
// c ^ (r % 8), so the 8 rows a wgmma core matrix reads hit 8 different bank groups.
//   K-major operand (rows = M or N):  row i at byte 128 * i; one TMA box of kBK x rows.
//   MN-major operand: chunks of 128 bytes of M/N (64 elements, or 32 for tf32), each kBK rows of
//                     K x 128 bytes (8 KB / 4 KB), one TMA box per chunk.
// A warpgroup's 64 rows of A start at byte 8192 * wg in both layouts (64 rows x 128 B, or 64
// elements' worth of chunks). Within a stage, wgmma step kk (16 or 8 elements of K) starts 32 * kk
// bytes into each K-major row, or kKStep * 128 * kk bytes further down an MN-major chunk.
// wgmma reads tf32 only K-major from shared memory; an MN-major tf32 A is instead loaded into
// registers (load_a_fragment + mma_rs), which is how gemmlab avoids transposing it.
// ---------------------------------------------------------------------------------------------
template <typename T, int kBM, int kBN, bool kAKMajor, bool kBKMajor>
struct StageTile {
  static constexpr bool kTf32 = sizeof(T) == 4;
  static constexpr bool kHalf = std::is_same<T, __half>::value;
  static_assert(!kTf32 || kBKMajor, "tf32 wgmma reads B K-major only (A may come from registers)");
  static_assert(kBM % 64 == 0 && kBN % 64 == 0 && kBN <= 256 && kBM <= 256, "tile shape");
  static constexpr int kBK = 128 / static_cast<int>(sizeof(T));  // K per stage
  static constexpr int kKStep = kTf32 ? 8 : 16;                    // K per wgmma
  static constexpr int kKSteps = kBK / kKStep;                     // 4
  static constexpr int kABytes = kBM * 128;
  static constexpr int kBBytes = kBN * 128;
  static constexpr int kBytes = kABytes + kBBytes;  // a multiple of 1024: stages stay aligned
  static constexpr int kMNChunk = 128 / static_cast<int>(sizeof(T));  // MN-major chunk width
  static constexpr int kChunkBytes = kBK * 128;                        // and its bytes

  // TMA boxes (host side builds the maps to match): K-major {kBK, rows}, MN-major {64, kBK}.
  // A: rows [m0, m0 + kBM) of op(A), K [k0, k0 + kBK).
  __device__ static void load_a(const CUtensorMap* map, uint8_t* stage, uint64_t* bar, int m0,
                                int k0) {
    if constexpr (kAKMajor) {
      tma_load_2d(stage, map, bar, k0, m0);
    } else {
#pragma unroll
      for (int c = 0; c < kBM / kMNChunk; ++c)
        tma_load_2d(stage + c * kChunkBytes, map, bar, m0 + kMNChunk * c, k0);
    }
  }
  // B: columns [n0 + first, n0 + first + count) of op(B) (first, count multiples of 64), K [k0, ...).
  // The whole tile is first = 0, count = kBN; a cluster splits it between its CTAs.
  __device__ static void load_b(const CUtensorMap* map, uint8_t* stage, uint64_t* bar, int n0,
                                int k0, int first, int count, uint16_t mcast_mask) {
    uint8_t* b = stage + kABytes;
    if constexpr (kBKMajor) {
      if (mcast_mask) tma_load_2d_multicast(b + first * 128, map, bar, k0, n0 + first, mcast_mask);
      else tma_load_2d(b + first * 128, map, bar, k0, n0 + first);
    } else {
      for (int c = first / kMNChunk; c < (first + count) / kMNChunk; ++c) {
        if (mcast_mask)
          tma_load_2d_multicast(b + c * kChunkBytes, map, bar, n0 + kMNChunk * c, k0, mcast_mask);
        else
          tma_load_2d(b + c * kChunkBytes, map, bar, n0 + kMNChunk * c, k0);
      }
    }
  }

  // Edge tiles with at most kEdgeRows valid rows of A (or columns of B) load only that part of
  // the operand: 8 rows of a K-major one (through a second tensor map whose box has 8 rows), or
  // the first chunk of an MN-major one. The rest of the stage keeps stale data from earlier
  // tiles; it only feeds accumulator rows (columns) past the end, which the epilogue drops.
  // A size like 4097 makes every partial tile such a 1-row or 1-column strip.
  static constexpr int kEdgeRows = 8;
  static constexpr int kAEdgeBytes = kAKMajor ? kEdgeRows * 128 : kChunkBytes;
  static constexpr int kBEdgeBytes = kBKMajor ? kEdgeRows * 128 : kChunkBytes;
  __device__ static void load_a_edge(const CUtensorMap* map, const CUtensorMap* map_edge,
                                     uint8_t* stage, uint64_t* bar, int m0, int k0) {
    if constexpr (kAKMajor) tma_load_2d(stage, map_edge, bar, k0, m0);
    else tma_load_2d(stage, map, bar, m0, k0);
  }
  __device__ static void load_b_edge(const CUtensorMap* map, const CUtensorMap* map_edge,
                                     uint8_t* stage, uint64_t* bar, int n0, int k0) {
    if constexpr (kBKMajor) tma_load_2d(stage + kABytes, map_edge, bar, k0, n0);
    else tma_load_2d(stage + kABytes, map, bar, n0, k0);
  }

  // d (64 x kBN) += A rows [64 wg, 64 wg + 64) x B over the stage's kBK. scale_d = 0 on the first
  // wgmma of a tile overwrites d instead of accumulating (no zero-initialization needed).
  // kNarrow: only the first 8 columns (an edge tile with <= 8 valid ones): m64n8, d[0..3].
  template <bool kNarrow = false>
  __device__ static void mma(float (&d)[kBN / 2], uint32_t stage_addr, int wg, bool accumulate) {
    static_assert(!kTf32 || kAKMajor, "MN-major tf32 A goes through registers (mma_rs)");
    const uint32_t a_addr = stage_addr + wg * 8192;
    const uint32_t b_addr = stage_addr + kABytes;
    constexpr uint32_t a_step = kAKMajor ? 32 : kKStep * 128;
    constexpr uint32_t b_step = kBKMajor ? 32 : kKStep * 128;
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      const uint64_t da = make_smem_desc(a_addr + kk * a_step, kAKMajor ? 16 : kChunkBytes, 1024);
      const uint64_t db = make_smem_desc(b_addr + kk * b_step, kBKMajor ? 16 : kChunkBytes, 1024);
      const int scale_d = (accumulate || kk > 0) ? 1 : 0;
      if constexpr (kNarrow) {
        if constexpr (kTf32) wgmma_m64n8k8_tf32(d, da, db, scale_d);
        else wgmma_m64n8k16<kHalf, !kAKMajor, !kBKMajor>(d, da, db, scale_d);
      } else if constexpr (kTf32) {
        if constexpr (kBN == 256) wgmma_m64n256k8_tf32(d, da, db, scale_d);
        else wgmma_m64n128k8_tf32(d, da, db, scale_d);
      } else {
        if constexpr (kBN == 256) wgmma_m64n256k16<kHalf, !kAKMajor, !kBKMajor>(d, da, db, scale_d);
        else wgmma_m64n128k16<kHalf, !kAKMajor, !kBKMajor>(d, da, db, scale_d);
      }
    }
  }

  // tf32 with A MN-major: the wgmma A fragment of the whole stage (kKSteps x 4 registers) read
  // from the swizzled chunks. Fragment of m64nNk8 tf32: thread (warp w, lane l = 4g + t) holds
  // fragment rows 16w + g + {0, 8} and K columns t + {0, 4} of each k8 step, as a0..a3 =
  // (row, k), (row + 8, k), (row, k + 4), (row + 8, k + 4). Element (mn, kk) of a chunk sits at
  // 128 kk + 16 ((mn / 4) ^ (kk % 8)) + 4 (mn % 4).
  // Which tile row a fragment row holds is ours to choose (D's rows follow A's): register_a_row
  // picks rows so that the 32 lanes of each load hit 32 different banks. For a fixed word mn % 4
  // the two g's sharing it get mn / 4 differing by 4, so (mn / 4) ^ t covers 8 distinct chunks.
  __device__ static int register_a_row(int half) {  // tile row within the warpgroup's 64
    const int t = threadIdx.x % 128, w = t / 32, g = (t % 32) / 4;
    return 32 * (w / 2) + 8 * (w % 2) + (g % 4) + 16 * (g / 4) + 4 * half;
  }
  __device__ static void load_a_fragment(uint32_t (&a)[kKSteps * 4], uint32_t stage_addr, int wg) {
    static_assert(kTf32 && !kAKMajor, "register A only for MN-major tf32");
    const int l = threadIdx.x % 32;
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = 64 * wg + register_a_row(i & 1);
        const int kc = kk * kKStep + l % 4 + 4 * (i >> 1);
        const int mn = r % kMNChunk;
        const uint32_t addr = stage_addr + (r / kMNChunk) * kChunkBytes + kc * 128 +
                              ((((mn >> 2) ^ (kc & 7))) << 4) + ((mn & 3) << 2);
        a[kk * 4 + i] = lds32(addr);
      }
    }
  }

  template <bool kNarrow = false>
  __device__ static void mma_rs(float (&d)[kBN / 2], const uint32_t (&a)[kKSteps * 4],
                                uint32_t stage_addr, bool accumulate) {
    static_assert(kTf32 && !kAKMajor && kBN == 256, "register-A wgmma: tf32, N = 256");
    const uint32_t b_addr = stage_addr + kABytes;
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      const uint64_t db = make_smem_desc(b_addr + kk * 32, 16, 1024);
      const int scale_d = (accumulate || kk > 0) ? 1 : 0;
      if constexpr (kNarrow)
        wgmma_m64n8k8_tf32_rs(d, a[kk * 4 + 0], a[kk * 4 + 1], a[kk * 4 + 2], a[kk * 4 + 3], db,
                              scale_d);
      else
        wgmma_m64n256k8_tf32_rs(d, a[kk * 4 + 0], a[kk * 4 + 1], a[kk * 4 + 2], a[kk * 4 + 3], db,
                                scale_d);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Epilogue of a wgmma accumulator fragment (64 x kN fp32 per warpgroup). Thread t (warp w = t/32
// of the warpgroup, lane l) holds, for each 8-column group j, the pair of columns
// col0 + 8j + 2(l%4) + {0,1} of row row0 + 16w + l/4 in d[4j], d[4j+1], and of the row 8 below
// in d[4j+2], d[4j+3]. Pairs go through Epilogue::store2 (8-byte stores where aligned and in bounds).
// ---------------------------------------------------------------------------------------------

// The two rows of the 64 a thread's fragment holds (wgmma's own order: 16w + g and 8 below).
__device__ __forceinline__ int fragment_row(int half) {
  const int t = threadIdx.x % 128;
  return (t / 32) * 16 + (t % 32) / 4 + 8 * half;
}

// row_lo / row_hi: the C rows of the thread's d[4j], d[4j+1] and d[4j+2], d[4j+3].
template <int kN>
__device__ __forceinline__ void store_fragment(const Epilogue& ep, const float (&d)[kN / 2],
                                               int row_lo, int row_hi, int col0) {
  const int c = col0 + 2 * (threadIdx.x % 4);
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    ep.store2(row_lo, c + 8 * j, d[4 * j + 0], d[4 * j + 1]);
    ep.store2(row_hi, c + 8 * j, d[4 * j + 2], d[4 * j + 3]);
  }
}

// The same fragment of D = C^T (a problem computed with A and B swapped): D(r, c) is C(c, r).
// Each store instruction of a warp still writes whole 32-byte sectors (8 consecutive columns of
// C in each of 4 rows).
template <int kN>
__device__ __forceinline__ void store_fragment_transposed(const Epilogue& ep,
                                                          const float (&d)[kN / 2], int row_lo,
                                                          int row_hi, int col0) {
  const int c = col0 + 2 * (threadIdx.x % 4);
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    ep.store(c + 8 * j, row_lo, d[4 * j + 0]);
    ep.store(c + 8 * j + 1, row_lo, d[4 * j + 1]);
    ep.store(c + 8 * j, row_hi, d[4 * j + 2]);
    ep.store(c + 8 * j + 1, row_hi, d[4 * j + 3]);
  }
}

// ---------------------------------------------------------------------------------------------
// Epilogue through shared memory. The fragment layout above makes direct stores narrow (8 bytes
// per thread, or 4 when transposed); instead each warpgroup writes its 64 x kN fragment, one
// 64 x 64 chunk at a time, into a private 16 KB buffer and reads it back as rows of float4, so
// every warp store instruction writes 16 bytes per thread and whole 256-byte row segments of C.
//
// The buffer holds 64 rows of 64 floats (256 B), unpadded, so float4 reads stay aligned; bank
// conflicts are avoided with an XOR swizzle on the column that moves whole float4s (multiples of
// 4 words), so a row's 16 float4s stay a permutation of one another:
//   row-major chunk (C row = fragment row):  column ^ 8 (row % 4). A half-warp's float2 stores
//     cover 4 rows (g % 4 differs in both row orders below) x 8 words: 4 distinct 8-word groups.
//   transposed chunk (C row = fragment column 8j + 2t + e): column ^ kUnit * t, with the
//     fragment row as column. kUnit = 8 for wgmma's row order (lanes' rows are 8 consecutive
//     ones: t moves them by whole groups of 8), 4 for StageTile::register_a_row (rows
//     {0..3, 16..19} + a multiple of 4 below 16: t fills bits 2 and 3).
// Both: 32 lanes of a store hit 32 banks; each 8-lane phase of a float4 read covers one row's 8
// float4s, permuted within an aligned group of 8. A named barrier per warpgroup (id 1 + wg, 128
// threads) separates writing a chunk from reading it and reading from overwriting it.
// ---------------------------------------------------------------------------------------------
constexpr int kStagedEpilogueBytes = 64 * 64 * 4;  // per warpgroup

__device__ __forceinline__ void warpgroup_bar(int id) {
#ifdef GEMMLAB_SM90A
  asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory");
#endif
}

// row_lo / row_hi: this thread's fragment rows within the warpgroup's 64 (fragment_row or
// register_a_row); (row0, col0): the fragment's origin in the kernel's result D. kTransposed:
// D = C^T (a swapped problem), so D(r, c) goes to C(c, r). kUnit: see above (transposed only).
template <int kN, bool kTransposed, int kUnit = 8>
__device__ __forceinline__ void store_fragment_staged(const Epilogue& ep, const float (&d)[kN / 2],
                                                      float* buf, int wg_bar, int row_lo,
                                                      int row_hi, int row0, int col0) {
  static_assert(kN % 64 == 0, "whole 64-column chunks");
  const int lane = threadIdx.x % 128, t = lane % 4;
#pragma unroll
  for (int chunk = 0; chunk < kN / 64; ++chunk) {
    if (chunk > 0) warpgroup_bar(wg_bar);  // the previous chunk has been read
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
      const int j = chunk * 8 + jj, c = 8 * jj + 2 * t;  // chunk column of d[4j], d[4j+2]
      if constexpr (kTransposed) {
        // buffer row = chunk column (a C row), buffer column = fragment row (a C column)
        const int swz = kUnit * t;  // ((c >> 1) & 3) == t for both c and c + 1
        buf[c * 64 + (row_lo ^ swz)] = d[4 * j + 0];
        buf[(c + 1) * 64 + (row_lo ^ swz)] = d[4 * j + 1];
        buf[c * 64 + (row_hi ^ swz)] = d[4 * j + 2];
        buf[(c + 1) * 64 + (row_hi ^ swz)] = d[4 * j + 3];
      } else {
        *reinterpret_cast<float2*>(&buf[row_lo * 64 + (c ^ (8 * (row_lo % 4)))]) =
            make_float2(d[4 * j + 0], d[4 * j + 1]);
        *reinterpret_cast<float2*>(&buf[row_hi * 64 + (c ^ (8 * (row_hi % 4)))]) =
            make_float2(d[4 * j + 2], d[4 * j + 3]);
      }
    }
    warpgroup_bar(wg_bar);  // the chunk is complete
    // 64 rows x 16 float4: a warp covers 2 rows per step, 8 steps. Not unrolled: the 128
    // accumulators are still live, and unrolled steps would hold 8 addresses and float4s at once.
#pragma unroll 1
    for (int i = 0; i < 8; ++i) {
      const int r = i * 8 + lane / 16, q = lane % 16;
      const int swz4 = kTransposed ? kUnit / 4 * ((r >> 1) & 3) : 2 * (r % 4);
      const float4 v = *reinterpret_cast<const float4*>(&buf[r * 64 + 4 * (q ^ swz4)]);
      if constexpr (kTransposed) ep.store4(col0 + 64 * chunk + r, row0 + 4 * q, v);
      else ep.store4(row0 + r, col0 + 64 * chunk + 4 * q, v);
    }
  }
  warpgroup_bar(wg_bar);  // the buffer is free for the next tile
}

}  // namespace sm90
}  // namespace gemmlab
