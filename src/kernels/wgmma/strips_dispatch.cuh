// The strips kernel's instances (strips.cu): which template instance runs a plan, by the
// operands' dtype, the tile's tokens, the mode and the majorness of W and X after packing. Device
// code's host-side switch, included by strips.cu only.
#pragma once

#include <type_traits>

#include "kernels/wgmma/host.h"
#include "kernels/wgmma/plan.h"
#include "kernels/wgmma/sm90.cuh"

namespace gemmlab {
namespace strips_detail {

namespace dp = wgmma_decode_plan;
using sm90::TypeTag;

// Which kernel instance runs: the mode and the majorness of W and X (after packing).
struct Instance {
  bool skinny, w_k_major, x_k_major;
  int groups;  // the plan's consumer warpgroups
  bool deep;   // the plan's deep ring (64 tokens on one warpgroup only)
};

// Calls f(TypeTag<T>, integral_constant<tok>, bool_constant<w_k_major>, bool_constant<x_k_major>,
// bool_constant<skinny>, integral_constant<kG>, bool_constant<deep>). Instances: rows as tokens
// (X K-major) and columns as tokens (X K-major, or MN-major with 64..256 tokens), 8..256 tokens
// (and wgmma/small's 96, 192, 208 and 320: the last two 16-bit, 208 with K-major tokens as rows
// only, 320 also with the tokens as columns against an MN-major W),
// W either way; tf32: X K-major, rows as tokens with W either way (MN-major: from registers),
// columns as tokens with W MN-major only.
template <typename F>
cudaError_t dispatch_strips(Precision prec, int tok, Instance in, F&& f) {
  using std::false_type;
  using std::true_type;
  auto by_g = [&](auto tag, auto tk, auto wk, auto xk, auto sk) -> cudaError_t {
    constexpr int kTok = decltype(tk)::value;
    using One = std::integral_constant<int, 1>;
    using Three = std::integral_constant<int, 3>;
    using Default = std::integral_constant<int, 0>;
    // (an else: the 96-token tile, three warpgroups only, instantiates no default-count kernel)
    if constexpr (kTok == 96) {  // wgmma/small's 192 x 96: three warpgroups only
      return in.groups == 3 ? f(tag, tk, wk, xk, sk, Three{}, false_type{}) : cudaErrorInvalidValue;
    } else {
      if constexpr (kTok == 64)
        if (in.groups == 1)
          return in.deep ? f(tag, tk, wk, xk, sk, One{}, true_type{})
                         : f(tag, tk, wk, xk, sk, One{}, false_type{});
      if constexpr (kTok == 128)  // wgmma/small's 64 x 128: one warpgroup, the deep ring
        if (in.groups == 1) return f(tag, tk, wk, xk, sk, One{}, true_type{});
      if constexpr (kTok <= 32)  // one warpgroup by default; the deep ring for wgmma/small's tiles
        if (in.deep) return f(tag, tk, wk, xk, sk, Default{}, true_type{});
      return f(tag, tk, wk, xk, sk, Default{}, false_type{});
    }
  };
  auto by_w = [&](auto tag, auto tk, auto xk, auto sk) -> cudaError_t {
    if (in.w_k_major) return by_g(tag, tk, true_type{}, xk, sk);
    return by_g(tag, tk, false_type{}, xk, sk);
  };
  auto by_mode = [&](auto tag, auto tk) -> cudaError_t {
    constexpr int kTok = decltype(tk)::value;
    if constexpr (kTok > 256 || kTok == 208) {  // wgmma/small's 128 x 320 and 128 x 208: 16-bit
      if constexpr (!std::is_same<typename decltype(tag)::type, float>::value) {
        // K-major tokens as C's rows, W either way; 320 also as C's columns against an MN-major
        // W (op(A) = A^T: wgmma_small_plan::roles_of), the tokens either way.
        if (!in.skinny) {
          if (in.x_k_major) return by_w(tag, tk, true_type{}, false_type{});
        } else if constexpr (kTok == 320) {
          if (!in.w_k_major)
            return in.x_k_major ? by_g(tag, tk, false_type{}, true_type{}, true_type{})
                                : by_g(tag, tk, false_type{}, false_type{}, true_type{});
        }
      }
      return cudaErrorInvalidValue;
    } else if constexpr (std::is_same<typename decltype(tag)::type, float>::value) {
      // tf32: the tokens (wgmma's B) K-major (tf32 wgmma reads B only K-major). As C's columns
      // only against an MN-major weight op(A) = A^T (wgmma_small_plan::roles_of), in registers.
      if (!in.x_k_major) return cudaErrorInvalidValue;
      if (in.skinny) {
        if constexpr (kTok <= dp::kMaxTokWeightInRegisters && kTok != 96)
          if (!in.w_k_major) return by_g(tag, tk, false_type{}, true_type{}, true_type{});
        return cudaErrorInvalidValue;
      }
      if constexpr (kTok > dp::kMaxTokWeightInRegisters)  // (dp::max_tokens: no such instance)
        return in.w_k_major ? by_g(tag, tk, true_type{}, true_type{}, false_type{})
                            : cudaErrorInvalidValue;
      else
        return by_w(tag, tk, true_type{}, false_type{});
    } else {
      if (!in.skinny) {
        if (in.x_k_major) return by_w(tag, tk, true_type{}, false_type{});
        return cudaErrorInvalidValue;
      }
      if (in.x_k_major) return by_w(tag, tk, true_type{}, true_type{});
      if constexpr (kTok % 64 == 0) return by_w(tag, tk, false_type{}, true_type{});
      return cudaErrorInvalidValue;
    }
  };
  auto by_tok = [&](auto tag) -> cudaError_t {
    switch (tok) {
      case 8: return by_mode(tag, std::integral_constant<int, 8>{});
      case 16: return by_mode(tag, std::integral_constant<int, 16>{});
      case 32: return by_mode(tag, std::integral_constant<int, 32>{});
      case 64: return by_mode(tag, std::integral_constant<int, 64>{});
      case 96: return by_mode(tag, std::integral_constant<int, 96>{});
      case 128: return by_mode(tag, std::integral_constant<int, 128>{});
      case 192: return by_mode(tag, std::integral_constant<int, 192>{});
      case 208: return by_mode(tag, std::integral_constant<int, 208>{});
      case 320: return by_mode(tag, std::integral_constant<int, 320>{});
      default: return by_mode(tag, std::integral_constant<int, 256>{});
    }
  };
  if (prec == Precision::BF16) return by_tok(TypeTag<__nv_bfloat16>{});
  if (prec == Precision::FP16) return by_tok(TypeTag<__half>{});
  if (prec == Precision::TF32) return by_tok(TypeTag<float>{});
  return cudaErrorInvalidValue;
}


}  // namespace strips_detail
}  // namespace gemmlab
