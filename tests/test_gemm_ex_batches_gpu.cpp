// The extended call's strided batches in one launch (test_gemm_ex_gpu.cpp has the rest of
// gemm(GemmDesc)): a batch's misaligned operands packed in one copy launch on the TMA kernels,
// simt/sgemm's one-launch batch (per-entry plans and split scratch, more entries than a grid's y
// dimension), and those paths' bits under CUDA graph replay and on two streams. Results checked
// element by element against the fp64 reference (ex_problem_util.h).
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "ex_problem_util.h"
#include "gpu_util.h"

namespace gemmlab::test {
namespace {

constexpr const char* kWgmma03 = "wgmma/03_tma_wgmma_ws_persistent";

// The TMA kernels pack a batch's misaligned operands in one launch (copy_matrix's entries): every
// kernel that takes batches, 16-bit and tf32 (whose MN-major operands are transposed while
// packed), every op pair, odd gaps between entries. (More entries than a grid's y dimension
// holds: AlignedRows.CopyMatrixBatches.)
TEST(GemmEx, MisalignedBatchPackedInOneLaunch) {
  GEMMLAB_REQUIRE_GPU();
  if (current_cc() < 90) GTEST_SKIP() << "the TMA kernels need sm_90a";
  const Op ops[][2] = {{Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}, {Op::T, Op::T}};
  for (const char* kernel : {kWgmma03, "wgmma/pingpong", "wgmma/small"}) {
    int ran = 0;
    for (Precision p : {Precision::BF16, Precision::TF32})
      for (const auto& op : ops) {
        ExSpec s;
        s.precision = p, s.m = 150, s.n = 140, s.k = 130, s.batch = 9, s.op_a = op[0], s.op_b = op[1];
        s.pad_a = 1, s.pad_b = 3, s.stride_extra = 3, s.offset = 1, s.beta = 0.5f;
        s.d_type = DType::BF16, s.seed = 35;
        SCOPED_TRACE(describe(s) + " on " + kernel);
        ExProblem d(s);
        ASSERT_EQ(d.error(), "");
        EpilogueReference r;
        ASSERT_EQ(d.reference(&r), "");
        const Status st = d.run(kernel);
        if (st == Status::KernelUnsupported) continue;  // (a dtype or shape the kernel refuses)
        ASSERT_EQ(st, Status::Success) << last_error_message();
        EXPECT_EQ(d.check(r, d.read_d()), "");
        ++ran;
      }
    EXPECT_GT(ran, 0) << kernel << " ran none of the cases";
  }
}

// simt/sgemm runs a strided batch in one launch (grid.y: the entries, each planned on its share of
// the SMs): every op pair over misaligned entries with gaps, a broadcast B, depth splits summed
// per entry (2 x 128 x 128 x 8192: each entry its own partials and counters), thin edge strips
// (3 x 1025 x 1025 x 4096: a one-row, one-column fringe), the general epilogue.
TEST(GemmEx, SgemmBatchInOneLaunch) {
  GEMMLAB_REQUIRE_GPU();
  const char* kSgemm = "simt/sgemm";
  const Op ops[][2] = {{Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}, {Op::T, Op::T}};
  for (const auto& op : ops) {
    ExSpec s;
    s.precision = Precision::FP32, s.m = 150, s.n = 140, s.k = 130, s.batch = 9;
    s.op_a = op[0], s.op_b = op[1], s.pad_a = 1, s.pad_b = 3, s.stride_extra = 3, s.offset = 1;
    s.beta = 0.5f, s.d_type = DType::BF16, s.bias = true, s.act = Activation::GeluTanh;
    s.seed = 37;
    expect_correct(s, kSgemm);
    s.stride_b = 0, s.seed = 38;  // one B for every entry
    expect_correct(s, kSgemm);
    // A batch of tiny entries (sgemm_plan::tiny_c: the 32 x 256 tile from 65 rows up).
    s.m = 77, s.n = 77, s.k = 77, s.batch = 8, s.stride_b = -1, s.seed = 39;
    expect_correct(s, kSgemm);
  }
  ExSpec deep;
  deep.precision = Precision::FP32, deep.m = 128, deep.n = 128, deep.k = 8192, deep.batch = 2;
  deep.beta = -1.f, deep.seed = 39;
  expect_correct(deep, kSgemm);
  ExSpec tail = deep;
  tail.m = 1025, tail.n = 1025, tail.k = 4096, tail.batch = 3, tail.op_b = Op::T, tail.seed = 40;
  expect_correct(tail, kSgemm);
}

// More entries than one launch's grid.y holds (65,535): simt/sgemm launches them in chunks.
// 70,000 dot products of length 3, checked on the host (exact: small integers in fp32).
TEST(GemmEx, SgemmBatchPastOneGrid) {
  GEMMLAB_REQUIRE_GPU();
  const int64_t entries = 70000, k = 3;
  std::vector<float> a(entries * k), b(entries * k), d(entries, -1.f);
  for (int64_t i = 0; i < entries * k; ++i) {
    a[i] = static_cast<float>(i % 7 - 3);
    b[i] = static_cast<float>(i % 5 - 2);
  }
  DeviceMem da(a.size() * 4), db(b.size() * 4), dd(d.size() * 4);
  ASSERT_EQ(cudaMemcpy(da.ptr, a.data(), a.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(db.ptr, b.data(), b.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dd.ptr, d.data(), d.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  GemmDesc g;
  g.m = 1, g.n = 1, g.k = k, g.A = da.ptr, g.lda = k, g.B = db.ptr, g.ldb = 1, g.D = dd.ptr;
  g.ldd = 1, g.batch = entries, g.stride_a = k, g.stride_b = k, g.stride_d = 1;
  ASSERT_EQ(gemm(g, "simt/sgemm"), Status::Success) << last_error_message();
  ASSERT_EQ(cudaMemcpy(d.data(), dd.ptr, d.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  int64_t bad = 0;
  for (int64_t e = 0; e < entries; ++e) {
    float want = 0.f;
    for (int64_t j = 0; j < k; ++j) want += a[e * k + j] * b[e * k + j];
    if (d[e] != want && bad++ < 5) ADD_FAILURE() << "entry " << e << ": " << d[e] << ", want " << want;
  }
  EXPECT_EQ(bad, 0);
}

// The batch paths and operand copies of stop 41 keep the eager run's bits under CUDA graph
// capture and replay and on two streams at once: a misaligned batch packed in one launch (and
// transposed while packed, tf32), simt/sgemm's one-launch batch with per-entry split scratch,
// wgmma/small's and wgmma/03's tf32 op(A) = A^T transposed while packed.
TEST(GemmEx, BatchPathsKeepTheirBitsInGraphsAndStreams) {
  GEMMLAB_REQUIRE_GPU();
  ExSpec packed;
  packed.m = 150, packed.n = 140, packed.k = 130, packed.batch = 9, packed.op_b = Op::T;
  packed.pad_a = 1, packed.pad_b = 3, packed.stride_extra = 3, packed.offset = 1;
  packed.beta = 0.5f, packed.d_type = DType::BF16, packed.seed = 41;
  ExSpec sgemm_deep;
  sgemm_deep.precision = Precision::FP32, sgemm_deep.m = 128, sgemm_deep.n = 128;
  sgemm_deep.k = 8192, sgemm_deep.batch = 3, sgemm_deep.beta = -1.f, sgemm_deep.seed = 42;
  ExSpec sgemm_nt = packed;
  sgemm_nt.precision = Precision::FP32, sgemm_nt.bias = true, sgemm_nt.seed = 43;
  expect_same_bits_in_graphs_and_streams(sgemm_deep, "simt/sgemm");
  expect_same_bits_in_graphs_and_streams(sgemm_nt, "simt/sgemm");
  if (current_cc() < 90) GTEST_SKIP() << "the TMA kernels need sm_90a (simt/sgemm's cases ran)";
  for (Precision p : {Precision::BF16, Precision::TF32}) {
    ExSpec s = packed;
    s.precision = p, s.op_a = p == Precision::TF32 ? Op::T : Op::N;
    expect_same_bits_in_graphs_and_streams(s, kWgmma03);
    expect_same_bits_in_graphs_and_streams(s, "wgmma/small");
  }
  ExSpec short_k;  // wgmma/03, tf32 TN over a short K: A transposed while packed
  short_k.precision = Precision::TF32, short_k.m = 1000, short_k.n = 900, short_k.k = 64;
  short_k.op_a = Op::T, short_k.pad_a = 1, short_k.seed = 44;
  expect_same_bits_in_graphs_and_streams(short_k, kWgmma03);
}

}  // namespace
}  // namespace gemmlab::test
