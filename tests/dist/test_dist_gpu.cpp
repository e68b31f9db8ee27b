// GPU tests of gemmlab_dist (include/gemmlab/dist.h): one process, one host thread per GPU, one
// NCCL communicator per GPU (dist_test_util.h). Every result is checked against the unsharded
// product in fp64 (CPU reference), for every input precision, fp32 and bf16 outputs, uneven
// shards, op(B) = B^T, bias; chunk counts 1, 3 and 8 must give bit-identical results (bad inputs,
// disagreeing shapes, repeated calls and graph replay: test_dist_robustness_gpu.cpp). Skips
// visibly with fewer than 2 GPUs. NVLink multicast stays off (NCCL_NVLS_ENABLE=0 unless set).
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dist_test_util.h"

namespace gemmlab::test {
namespace {

TEST(Dist, AllGatherGemmEveryDtypeUnevenShardsChunkInvariant) {
  GEMMLAB_REQUIRE_COMMS();
  const AgProblem pr(301, 136);  // 301 rows: shards of 151 and 150 on 2 GPUs
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(case_name(c));
    const HostMatrix A(pr.m, pr.k, c.p, 1), B(pr.k, pr.total_n, c.p, 2);
    std::vector<float> bias(static_cast<size_t>(pr.total_n));
    for (size_t j = 0; j < bias.size(); ++j) bias[j] = 0.25f * static_cast<float>(j % 7) - 0.5f;
    const std::vector<double> ref = reference(A, B, c.p, bias);
    const std::string failures = on_every_rank([&](int r) -> std::string {
      std::vector<char> first;
      for (int chunks : {1, 3, 8}) {
        std::vector<char> out;
        if (std::string why = run_all_gather(pr, c, chunks, r, A, B, bias, &out); !why.empty())
          return "chunks " + std::to_string(chunks) + ": " + why;
        if (std::string why = compare(out, c.out, pr.m, pr.n[r], ref, pr.total_n, 0, pr.col0[r],
                                      bound_for(c.p, c.out));
            !why.empty())
          return "chunks " + std::to_string(chunks) + ": " + why;
        if (first.empty()) first = out;
        else if (out != first) return "chunks " + std::to_string(chunks) + " differs in bits from chunks 1";
      }
      return "";
    });
    EXPECT_EQ(failures, "");
  }
}

// ---- gemm_reduce_scatter: A (m x K) split by columns, B (K x n) by rows, with k_r = 128 + 8 r
// (uneven on purpose); rank r gets rows shard(m, P, r) of A B + bias. ----
std::string run_reduce_scatter(int64_t m, int64_t n, const std::vector<int64_t>& k,
                               const std::vector<int64_t>& k0, const Case& c, DType partial,
                               int chunks, int r, const HostMatrix& A, const HostMatrix& B,
                               const std::vector<float>& bias, std::vector<char>* out) {
  const int P = ranks();
  const int64_t rows = dist::shard_rows(m, P, r), kr = k[r];
  const std::vector<char> b =
      c.op_b == Op::T ? B.transposed_block(k0[r], kr, 0, n) : B.block(k0[r], kr, 0, n);
  std::vector<char> bias_bytes(static_cast<size_t>(n * 4));
  std::memcpy(bias_bytes.data(), bias.data(), bias_bytes.size());
  DeviceMem dA(static_cast<size_t>(m * kr * A.bytes)), dB(b.size()), dBias(bias_bytes.size());
  DeviceMem dD(static_cast<size_t>(rows * n * out_bytes(c.out)));
  for (auto [d, h] : {std::pair{&dA, A.block(0, m, k0[r], kr)}, std::pair{&dB, b},
                      std::pair{&dBias, bias_bytes}})
    if (std::string why = upload(*d, h); !why.empty()) return why;
  GemmDesc d;
  d.op_b = c.op_b;
  d.m = m, d.n = n, d.k = kr;
  d.A = dA.ptr, d.lda = kr;
  d.B = dB.ptr, d.ldb = c.op_b == Op::T ? kr : n;
  d.D = dD.ptr, d.ldd = n, d.d_type = c.out;
  d.bias = dBias.ptr, d.bias_type = DType::F32;
  d.precision = c.p;
  dist::Options o;
  o.chunks = chunks, o.partial_type = partial;
  if (Status s = dist::gemm_reduce_scatter(d, Comms::get().comms[r], nullptr, o);
      s != Status::Success)
    return std::string("gemm_reduce_scatter: ") + last_error_message();
  *out = download(dD, dD.bytes);
  return out->empty() && dD.bytes ? "could not read D" : "";
}

TEST(Dist, GemmReduceScatterEveryDtypeUnevenShardsChunkInvariant) {
  GEMMLAB_REQUIRE_COMMS();
  const int P = ranks();
  const int64_t m = 301, n = 72;
  std::vector<int64_t> k, k0;
  int64_t K = 0;
  for (int r = 0; r < P; ++r) k0.push_back(K), k.push_back(128 + 8 * r), K += k.back();
  for (const Case& c : all_cases())
    for (DType partial : {DType::F32, DType::BF16}) {
      SCOPED_TRACE(case_name(c) + ", partials " + dtype_name(partial));
      const HostMatrix A(m, K, c.p, 3), B(K, n, c.p, 4);
      std::vector<float> bias(static_cast<size_t>(n));
      for (size_t j = 0; j < bias.size(); ++j) bias[j] = 0.125f * static_cast<float>(j % 5);
      const std::vector<double> ref = reference(A, B, c.p, bias);
      const std::string failures = on_every_rank([&](int r) -> std::string {
        std::vector<char> first;
        for (int chunks : {1, 3, 8}) {
          std::vector<char> out;
          const std::string at = "chunks " + std::to_string(chunks) + ": ";
          if (std::string why = run_reduce_scatter(m, n, k, k0, c, partial, chunks, r, A, B, bias, &out);
              !why.empty())
            return at + why;
          if (std::string why = compare(out, c.out, dist::shard_rows(m, P, r), n, ref, n,
                                        dist::shard_offset(m, P, r), 0,
                                        bound_for(c.p, c.out, partial));
              !why.empty())
            return at + why;
          if (first.empty()) first = out;
          else if (out != first) return at + "differs in bits from chunks 1";
        }
        return "";
      });
      EXPECT_EQ(failures, "");
    }
}

}  // namespace
}  // namespace gemmlab::test
