// Shared by the gemmlab_dist GPU tests (tests/dist/): one process, one host thread per GPU, one
// NCCL communicator per GPU (ncclCommInitAll; NCCL_NVLS_ENABLE=0 unless set); host matrices, their
// fp64 reference products and the comparison of a rank's result with them; the test cases (every
// input precision x fp32 / bf16 D x op(B)); one rank's all_gather_gemm.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nccl.h>

#include "gemmlab/dist.h"
#include "gpu_util.h"
#include "reference/reference.h"

namespace gemmlab::test {

// The communicators of all GPUs (at most 8), made at the first test that needs them and
// destroyed when the test program ends (a global test environment, dist_test_util.cpp).
struct Comms {
  std::vector<ncclComm_t> comms;
  std::string error;
  static Comms& get();
  static void destroy();
};

#define GEMMLAB_REQUIRE_COMMS()              \
  do {                                       \
    GEMMLAB_REQUIRE_TWO_GPUS();              \
    ASSERT_EQ(Comms::get().error, "");       \
  } while (0)

int ranks();

// fn(rank) on one thread per rank with that rank's device current; the failures, joined.
std::string on_every_rank(const std::function<std::string(int)>& fn);

inline int in_bytes(Precision p) { return (p == Precision::BF16 || p == Precision::FP16) ? 2 : 4; }
inline int out_bytes(DType t) { return t == DType::F32 ? 4 : 2; }

// A host matrix of `rows` x `cols` elements of `bytes` each; sub-blocks copied out of it.
struct HostMatrix {
  int64_t rows = 0, cols = 0;
  int bytes = 4;
  std::vector<char> data;
  HostMatrix(int64_t r, int64_t c, Precision p, uint64_t seed)
      : rows(r), cols(c), bytes(in_bytes(p)), data(static_cast<size_t>(r * c * bytes)) {
    fill_random_host(data.data(), r * c, p, seed);
  }
  // Rows [r0, r0 + nr) and columns [c0, c0 + nc), dense.
  std::vector<char> block(int64_t r0, int64_t nr, int64_t c0, int64_t nc) const {
    std::vector<char> out(static_cast<size_t>(nr * nc * bytes));
    for (int64_t i = 0; i < nr; ++i)
      std::memcpy(out.data() + i * nc * bytes, data.data() + ((r0 + i) * cols + c0) * bytes,
                  static_cast<size_t>(nc * bytes));
    return out;
  }
  // The same block stored transposed (nc x nr, dense): op(B) = B^T's operand.
  std::vector<char> transposed_block(int64_t r0, int64_t nr, int64_t c0, int64_t nc) const {
    const std::vector<char> b = block(r0, nr, c0, nc);
    std::vector<char> t(b.size());
    for (int64_t i = 0; i < nr; ++i)
      for (int64_t j = 0; j < nc; ++j)
        std::memcpy(t.data() + (j * nr + i) * bytes, b.data() + (i * nc + j) * bytes, bytes);
    return t;
  }
};

float to_float(const char* p, DType t);

// Device copy of a host buffer; empty string or the error.
std::string upload(DeviceMem& d, const std::vector<char>& h);
std::vector<char> download(const DeviceMem& d, size_t bytes);

// fp64 reference of the unsharded product: out (m x n) = A (m x k) B (k x n) + bias.
std::vector<double> reference(const HostMatrix& A, const HostMatrix& B, Precision p,
                              const std::vector<float>& bias);

// Relative Frobenius error of out (rows x cols, dtype t, ld cols) against ref's block at
// (r0, c0) (ref has ref_cols columns); "" when within bound.
std::string compare(const std::vector<char>& out, DType t, int64_t rows, int64_t cols,
                    const std::vector<double>& ref, int64_t ref_cols, int64_t r0, int64_t c0,
                    double bound);

double bound_for(Precision p, DType out, DType partial = DType::F32);

struct Case {
  Precision p;
  DType out;
  Op op_b;
};

std::string case_name(const Case& c);
std::vector<Case> all_cases();

// ---- all_gather_gemm: A (m x k) split by rows; rank r's weight slice is columns
// [col0_r, col0_r + n_r) of B (k x N), n_r = 64 + 8 r (ranks differ on purpose). ----
struct AgProblem {
  int64_t m, k;
  std::vector<int64_t> n, col0;  // per rank
  int64_t total_n = 0;
  AgProblem(int64_t m_, int64_t k_) : m(m_), k(k_) {
    for (int r = 0; r < ranks(); ++r) {
      n.push_back(64 + 8 * r);
      col0.push_back(total_n);
      total_n += n.back();
    }
  }
};

// Rank r's result of all_gather_gemm with `chunks`, as bytes (m x n_r, dtype c.out).
std::string run_all_gather(const AgProblem& pr, const Case& c, int chunks, int r,
                           const HostMatrix& A, const HostMatrix& B, const std::vector<float>& bias,
                           std::vector<char>* out, int sm_margin = 0);

}  // namespace gemmlab::test
