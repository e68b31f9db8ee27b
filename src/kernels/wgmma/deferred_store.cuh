// A 16-bit D's tile, finished and rounded in registers and stored later: wgmma/03 stores each
// box of a tile while the wgmmas of the next tile's first k-blocks run, instead of while the
// tensor cores idle.
//
// Why it fits: a consumer warpgroup's 64 x 256 fp32 accumulators are 128 registers a thread; the
// same tile rounded to bf16 / fp16 pairs is 64. Once the epilogue (alpha, bias, activation) has
// been applied and the values packed, the accumulators are free for the next tile's main loop,
// whose first k-blocks are issued at once (the producer has already filled the ring), and each
// box goes through stmatrix and a TMA store between one k-block's commit and the wait for the
// one before (mainloop.cuh: consume_ss_with). Boxes, buffers and swizzle: store_fragment_tma.
#pragma once

#include "kernels/wgmma/epilogue.cuh"

namespace gemmlab {
namespace sm90 {

// The tile's last two boxes a warp (of four, or three in 128 x 192 tiles) wait for the next main
// loop; the others are stored at once, as store_fragment_tma does. Two are what fits: with all
// four (64 words) ptxas spilled ~240 bytes a thread, and ran no faster
// (results/h100-deferred-store.txt).
template <int kN>
struct PackedTile {
  using B = TmaBoxes<kN, 2>;
  static constexpr int kBoxes = 2;                    // deferred boxes
  static constexpr int kFirst = B::kBoxes - kBoxes;   // the first deferred box of the tile
  static constexpr int kBoxWords = B::kVals / 2;      // a thread's words per box
  uint32_t w[kBoxes * kBoxWords];
  int row0 = 0, col0 = 0, z = 0;  // the fragment's origin in D, its batch entry
  bool pending = false;           // holds a tile not yet stored

  // The fragment d of rows [row0, row0 + 64) from column col0 (batch entry z) finished as
  // store_fragment_tma would (bias_word: load_bias_word(ep, col0)); boxes before kFirst are
  // stored, the others rounded to D's dtype and kept.
  __device__ __forceinline__ void pack(const Epilogue& ep, const float (&d)[kN / 2],
                                       uint8_t* buf, const CUtensorMap* map, uint32_t* bias_smem,
                                       uint32_t bias_word, int wg_bar, int row0_, int col0_,
                                       int z_) {
    stage_tile_bias(ep, bias_smem, bias_word, wg_bar);
    const bool bf16 = ep.d_type == DType::BF16;
    row0 = row0_, col0 = col0_, z = z_;
#pragma unroll
    for (int box = 0; box < B::kBoxes; ++box) {
      float v[B::kVals];
      tma_box_values<kN, 2>(ep, d, box, col0, bias_smem, v);
      uint32_t p[kBoxWords];
      pack_box(v, bf16, p);
      if (box < kFirst) {
        put_box(box, p, 0, buf, map);
      } else {
#pragma unroll
        for (int j = 0; j < kBoxWords; ++j) w[(box - kFirst) * kBoxWords + j] = p[j];
      }
    }
    pending = true;
  }

  // Box `box` of the tile, its words from word `first` of words, out through the warp's buffer.
  template <int kAll>
  __device__ __forceinline__ void put_box(int box, const uint32_t (&words)[kAll], int first,
                                          uint8_t* buf, const CUtensorMap* map) const {
    uint8_t* half = tma_box_half<B::kBoxes>(buf, box);
    stmatrix_box<kBoxWords>(half, words, first);
    tma_box_issue(map, half, col0 + B::kW * box, row0, z);
  }

  // Deferred box i (a constant after unrolling: w is indexed by it) out through the warp's buffer.
  __device__ __forceinline__ void store_box(int i, uint8_t* buf, const CUtensorMap* map) const {
    put_box(kFirst + i, w, i * kBoxWords, buf, map);
  }

  // Every deferred box of a pending tile, now.
  __device__ __forceinline__ void flush(uint8_t* buf, const CUtensorMap* map) {
    if (!pending) return;
#pragma unroll
    for (int i = 0; i < kBoxes; ++i) store_box(i, buf, map);
    pending = false;
  }
};

}  // namespace sm90
}  // namespace gemmlab
