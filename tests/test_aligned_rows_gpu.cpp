// copy_matrix (runtime/aligned_rows.h), the one pass that packs operands into aligned rows: a
// strided batch of copies in one launch, straight (16-byte chunks, the last chunk of a row
// zero-padded) and transposed, 2- and 4-byte elements, odd source pitches and odd gaps between
// entries, and more entries than a grid's y dimension holds (65,535: the kernels loop over the
// rest). Every element compared bit for bit; nothing outside the entries written.
#include <cstdint>
#include <cstring>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "gpu_util.h"
#include "runtime/aligned_rows.h"

namespace gemmlab::test {
namespace {

struct Shape {
  int64_t rows, cols, ld;
  int64_t extra_chunks;  // 16-byte chunks of the destination's rows past the aligned width
};

template <typename U>
void check_copies(bool transpose, int64_t entries, Shape sh = {3, 5, 7, 0}) {
  const int64_t rows = sh.rows, cols = sh.cols, ld = sh.ld;
  const int64_t src_stride = rows * ld + 3;  // odd gaps
  const int64_t out_rows = transpose ? cols : rows, out_cols = transpose ? rows : cols;
  const int64_t dst_ld =
      aligned_ld_16(out_cols, sizeof(U)) + sh.extra_chunks * (16 / static_cast<int64_t>(sizeof(U)));
  const int64_t dst_stride = out_rows * dst_ld + 16 / sizeof(U);  // a 16-byte gap
  std::vector<U> src(static_cast<size_t>(entries * src_stride));
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<U>(i * 2654435761u + 7);
  const size_t dst_elems = static_cast<size_t>(entries * dst_stride);
  DeviceMem d_src(src.size() * sizeof(U)), d_dst(dst_elems * sizeof(U));
  ASSERT_EQ(cudaMemcpy(d_src.ptr, src.data(), src.size() * sizeof(U), cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemset(d_dst.ptr, 0xab, dst_elems * sizeof(U)), cudaSuccess);
  ASSERT_EQ(copy_matrix(d_src.ptr, ld, d_dst.ptr, dst_ld, rows, cols, sizeof(U), transpose, nullptr,
                        entries, src_stride, dst_stride),
            cudaSuccess);
  std::vector<U> dst(dst_elems);
  ASSERT_EQ(cudaMemcpy(dst.data(), d_dst.ptr, dst_elems * sizeof(U), cudaMemcpyDeviceToHost),
            cudaSuccess);
  U poison;
  std::memset(&poison, 0xab, sizeof poison);
  int64_t bad = 0;
  for (int64_t e = 0; e < entries; ++e)
    for (int64_t x = 0; x < dst_stride; ++x) {  // the entry's rows, then its gap
      const int64_t r = x / dst_ld, c = x % dst_ld;
      const U got = dst[static_cast<size_t>(e * dst_stride + x)];
      U want = poison;  // outside the copy: untouched
      if (r < out_rows && c < out_cols)
        want = src[static_cast<size_t>(e * src_stride + (transpose ? c * ld + r : r * ld + c))];
      else if (r < out_rows && !transpose)
        want = U(0);  // the padding of the row's last 16-byte chunk, and the chunks past it
      if (got != want && bad++ < 5)
        ADD_FAILURE() << "entry " << e << " (" << r << ", " << c << "): " << +got << ", want "
                      << +want;
    }
  EXPECT_EQ(bad, 0) << (transpose ? "transposed" : "straight") << ", " << sizeof(U)
                    << "-byte elements, " << entries << " entries of " << rows << " x " << cols
                    << " (ld " << ld << ")";
}

TEST(AlignedRows, CopyMatrixBatches) {
  GEMMLAB_REQUIRE_GPU();
  for (bool transpose : {false, true})
    for (int64_t entries : {1, 3, 70000}) {
      check_copies<uint16_t>(transpose, entries);
      check_copies<uint32_t>(transpose, entries);
    }
}

// The straight copy's split of the work (runtime/copy_plan.h): few long rows cut into
// segments of a row per warp (129 x 8191, the B of a 127 x 8191 x 129 GEMM), short rows sharing
// a warp (a row of 100 bf16 is 13 chunks: two rows per warp), rows of one chunk, and destination
// rows wider than the aligned width (packing pads them to 128 bytes: the extra chunks zeroed).
TEST(AlignedRows, CopyMatrixSplitsLongAndShortRows) {
  GEMMLAB_REQUIRE_GPU();
  const Shape shapes[] = {{129, 8191, 8193, 0}, {129, 8191, 8191, 1}, {10000, 100, 101, 0},
                          {1000, 100, 100, 3},  {37, 3, 5, 0},        {2, 1000, 1001, 7}};
  for (const Shape& sh : shapes)
    for (int64_t entries : {1, 3}) {
      check_copies<uint16_t>(false, entries, sh);
      check_copies<uint32_t>(false, entries, sh);
    }
}

}  // namespace
}  // namespace gemmlab::test
