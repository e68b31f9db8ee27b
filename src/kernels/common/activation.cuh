// The activations of the shared epilogue (gemm_common.cuh's Epilogue): ReLU, GELU in its tanh and
// erf forms, SiLU, one value at a time (activate) or N at a time (activate_n), in fp32 within the
// reference's 2^-20 (|pre| + |value|) allowance for an activation (reference/reference.h).
#pragma once

#include <cuda_runtime.h>

#include "gemmlab/gemmlab.h"  // Activation

namespace gemmlab {

// x * sigmoid(z) = x / (1 + e^-z) with the hardware's ex2 and rcp approximations (MUFU): a few
// instructions where expf and an IEEE division are ~30. Relative error of e^-z ~2^-21 (at the
// |z| where the result is not yet saturated), so |error| <= x s (1 - s) 2^-21 <= 2^-23 |x|: inside
// the reference's 2^-20 (|pre| + |value|) allowance for an activation. e^-z = inf gives x * 0.
__device__ __forceinline__ float mul_sigmoid(float x, float z) {
  float e, r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(z * -1.4426950408889634f));
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(1.f + e));
  return x * r;
}

// The sigmoid's argument z of GELU (tanh form): 0.5 x (1 + tanh(y)) = x sigmoid(2y),
// y = sqrt(2/pi) (x + 0.044715 x^3).
__device__ __forceinline__ float gelu_z(float x) {
  return 1.5957691216057308f * fmaf(0.044715f * x, x * x, x);
}

__device__ __forceinline__ float activate(float x, Activation a) {
  switch (a) {
    case Activation::ReLU: return fmaxf(x, 0.f);
    case Activation::GeluTanh: return mul_sigmoid(x, gelu_z(x));
    case Activation::GeluErf: return 0.5f * x * (1.f + erff(x * 0.7071067811865476f));
    case Activation::SiLU: return mul_sigmoid(x, x);
    default: return x;
  }
}

// x0 sigmoid(z0) and x1 sigmoid(z1) with one reciprocal (MUFU.RCP) for the pair: 1 / d0 =
// d1 / (d0 d1). The multi-function unit runs 16 lanes a clock per SM against 128 for FMA, so with
// an ex2 and a rcp per element it is what a GELU epilogue waits on; here it does 1.5 per element
// for 3 more FMULs / FMNMXs. e^-z is clamped at 2^63 so the product stays finite (a sigmoid
// below 2^-63 gives x 2^-63 for ~0: far inside the 2^-20 |x| allowance); the extra roundings
// (the product, its reciprocal, the multiply back) leave the relative error near 2^-21.
// t0, t1: -z log2(e), so that e^-z = 2^t.
__device__ __forceinline__ void mul_sigmoid2(float& x0, float t0, float& x1, float t1) {
  float e0, e1, r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e0) : "f"(t0));
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e1) : "f"(t1));
  const float d0 = 1.f + fminf(e0, 9.2233720368547758e18f), d1 = 1.f + fminf(e1, 9.2233720368547758e18f);
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d0 * d1));
  x0 *= d1 * r;
  x1 *= d0 * r;
}

// activate() over N values: one test of the activation for all of them (the general epilogue's
// code stays one copy of each function, not one per element). GELU and SiLU take their
// reciprocals in pairs (mul_sigmoid2).
template <Activation kAct, int N>
__device__ __forceinline__ void activate_all(float (&v)[N]) {
  if constexpr ((kAct == Activation::GeluTanh || kAct == Activation::SiLU) && N % 2 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      // -z log2(e) with the constants folded: SiLU z = x; GELU z = x (c0 + c1 x^2).
      constexpr float kL = -1.4426950408889634f, kG0 = kL * 1.5957691216057308f;
      constexpr float kG1 = kG0 * 0.044715f;
      const float x0 = v[i], x1 = v[i + 1];
      const float t0 = kAct == Activation::SiLU ? kL * x0 : x0 * fmaf(kG1, x0 * x0, kG0);
      const float t1 = kAct == Activation::SiLU ? kL * x1 : x1 * fmaf(kG1, x1 * x1, kG0);
      mul_sigmoid2(v[i], t0, v[i + 1], t1);
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = activate(v[i], kAct);
  }
}
template <int N>
__device__ __forceinline__ void activate_n(float (&v)[N], Activation a) {
  switch (a) {
    case Activation::ReLU: return activate_all<Activation::ReLU>(v);
    case Activation::GeluTanh: return activate_all<Activation::GeluTanh>(v);
    case Activation::GeluErf: return activate_all<Activation::GeluErf>(v);
    case Activation::SiLU: return activate_all<Activation::SiLU>(v);
    default: return;
  }
}

}  // namespace gemmlab
