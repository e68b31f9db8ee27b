// Hopper (sm_90a) PTX, written once: mbarriers, TMA (cp.async.bulk.tensor), wgmma's fences and
// shared-memory descriptors, setmaxnreg (cluster wrappers come back with a kernel that uses them:
// docs/history.md). The wgmma instructions are wgmma_ops.cuh, the stage tile that issues them
// stage_tile.cuh, the accumulator stores epilogue.cuh; sm90.cuh includes them all.
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

// ---------------------------------------------------------------------------------------------
// Clusters (wgmma/03's 2 x 1 CTA pairs): this CTA's rank, a barrier over the whole cluster, an
// arrive on the barrier at the same offset in another CTA's shared memory (the plain .release.cta
// arrive: a .cluster-scope one stalled every k-block, docs/history.md), and a TMA load
// multicast to the CTAs of `mask` (same shared offsets; each CTA's barrier at `bar`'s offset).
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r = 0;
#ifdef GEMMLAB_SM90A
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
  return r;
}
__device__ __forceinline__ void cluster_sync() {
#ifdef GEMMLAB_SM90A
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" :::
                   "memory");
#endif
}
// The shared::cluster address of `p`'s counterpart in CTA `cta` of the cluster.
__device__ __forceinline__ uint32_t cluster_map(const void* p, uint32_t cta) {
  uint32_t r = 0;
#ifdef GEMMLAB_SM90A
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(smem_addr(p)), "r"(cta));
#endif
  return r;
}
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t cluster_addr) {
#ifdef GEMMLAB_SM90A
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
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

__device__ __forceinline__ void tma_load_3d_multicast(void* dst, const CUtensorMap* map,
                                                      uint64_t* bar, int coord0, int coord1, int z,
                                                      uint16_t mask) {
#ifdef GEMMLAB_SM90A
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(coord0), "r"(coord1), "r"(z),
      "h"(mask)
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

// stmatrix: four 8 x 8 matrices of 16-bit values from the warp's registers into shared memory.
// Lane l holds, in r[i], the pair (row l / 4, columns 2 (l % 4) + {0, 1}) of matrix i (the mma /
// wgmma fragment layout) and gives the address of row l % 8 of matrix l / 8 (16 bytes).
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                            uint32_t r3) {
#ifdef GEMMLAB_SM90A
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
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

}  // namespace sm90
}  // namespace gemmlab
