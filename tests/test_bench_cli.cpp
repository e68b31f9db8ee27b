// gemm-bench on the CPU: command-line parsing (suites, shapes, kernels, the extended call's
// options, variants) and its refusals. The reports: test_bench.cpp.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench_cli_util.h"
#include "gemm-bench/options.h"
#include "gemm-bench/runner.h"

namespace gemmbench {
namespace {

TEST(BenchCli, Defaults) {
  Options o;
  std::string msg;
  ASSERT_EQ(parse({}, &o, &msg), -1) << msg;
  ASSERT_EQ(o.sizes.size(), 2u);
  EXPECT_EQ(o.sizes[0].m, 4096);
  EXPECT_EQ(o.sizes[1].k, 4097);
  EXPECT_EQ(o.dtypes.size(), 4u);
  ASSERT_EQ(o.trans.size(), 1u);
  EXPECT_EQ(o.trans[0].first, gemmlab::Op::N);
  EXPECT_EQ(o.kernels, std::vector<std::string>{"all"});
}

// --suite: the shape suites of the issue (decode: M = 1..256 x 4 weight shapes, NN and NT), exclusive
// with --sizes, unknown names refused.
TEST(BenchCli, Suites) {
  Options o;
  std::string msg;
  ASSERT_EQ(parse({"--suite", "decode"}, &o, &msg), -1) << msg;
  EXPECT_EQ(o.sizes.size(), 36u);
  EXPECT_EQ(o.sizes.front().m, 1);
  EXPECT_EQ(o.sizes.back().m, 256);
  ASSERT_EQ(o.trans.size(), 2u);
  EXPECT_EQ(o.trans[1].second, gemmlab::Op::T);
  Options all;
  ASSERT_EQ(parse({"--suite", "all", "--trans", "NN"}, &all, &msg), -1) << msg;
  EXPECT_EQ(all.sizes.size(), 36u + 8u + 12u + 7u + 2u + 40u);
  EXPECT_EQ(all.trans.size(), 1u) << "--trans given wins over the suite's";
  Options odd;  // ragged token counts against framework weights: NT alone
  ASSERT_EQ(parse({"--suite", "odd-m"}, &odd, &msg), -1) << msg;
  ASSERT_EQ(odd.sizes.size(), 40u);
  EXPECT_EQ(odd.sizes.front().m, 3);
  EXPECT_EQ(odd.sizes.back().m, 500);
  EXPECT_EQ(odd.sizes.back().n, 13824);
  ASSERT_EQ(odd.trans.size(), 1u);
  EXPECT_EQ(odd.trans[0].second, gemmlab::Op::T);
  Options cliffs;  // odd shapes and tiny batches in all four op pairs; not part of "all"
  ASSERT_EQ(parse({"--suite", "cliffs"}, &cliffs, &msg), -1) << msg;
  ASSERT_EQ(cliffs.sizes.size(), 32u);
  EXPECT_EQ(cliffs.sizes.front().m, 100);
  EXPECT_EQ(cliffs.sizes.front().k, 10000);
  EXPECT_EQ(cliffs.sizes[29].batch, 8);  // 8:77x77x77
  EXPECT_EQ(cliffs.sizes[29].n, 77);
  EXPECT_EQ(cliffs.sizes.back().batch, 4);
  EXPECT_EQ(cliffs.trans.size(), 4u);
  Options medium;  // one to two rounds of 128 x 256 tiles, NN / NT / TN; not part of "all"
  ASSERT_EQ(parse({"--suite", "medium"}, &medium, &msg), -1) << msg;
  ASSERT_EQ(medium.sizes.size(), 13u);
  EXPECT_EQ(medium.sizes[1].m, 1536);
  EXPECT_EQ(medium.sizes[1].n, 3072);
  EXPECT_EQ(medium.sizes.back().k, 1100);
  EXPECT_EQ(medium.trans.size(), 3u);
  Options bad;
  EXPECT_EQ(parse({"--suite", "nope"}, &bad, &msg), 2);
  EXPECT_NE(msg.find("unknown suite"), std::string::npos);
  Options both;
  EXPECT_EQ(parse({"--suite", "small", "--sizes", "64"}, &both, &msg), 2);
}

TEST(BenchCli, ListsAndShapes) {
  Options o;
  std::string msg;
  ASSERT_EQ(parse({"--sizes", "1025,1000x1025x999", "--dtype", "bf16,tf32", "--trans", "NT,TT",
                   "--kernels", "simt/01_naive,wgmma", "--reps", "7", "--no-flush", "--json", "x.json"},
                  &o, &msg),
            -1)
      << msg;
  ASSERT_EQ(o.sizes.size(), 2u);
  EXPECT_EQ(o.sizes[0].n, 1025);
  EXPECT_EQ(o.sizes[1].m, 1000);
  EXPECT_EQ(o.sizes[1].n, 1025);
  EXPECT_EQ(o.sizes[1].k, 999);
  EXPECT_EQ(o.dtypes[0], gemmlab::Precision::BF16);
  EXPECT_EQ(o.dtypes[1], gemmlab::Precision::TF32);
  EXPECT_EQ(o.trans[0].second, gemmlab::Op::T);
  EXPECT_EQ(o.trans[1].first, gemmlab::Op::T);
  EXPECT_EQ(o.kernels.size(), 2u);
  EXPECT_EQ(o.reps, 7);
  EXPECT_FALSE(o.flush_l2);
  EXPECT_EQ(o.json_path, "x.json");
}

TEST(BenchCli, RejectsBadInput) {
  const std::vector<std::vector<const char*>> bad = {
      {"--sizes", "0"},        {"--sizes", "12x3"},   {"--sizes", "-5"},  {"--sizes", "axbxc"},
      {"--dtype", "fp8"},      {"--trans", "NX"},     {"--reps", "0"},    {"--bogus"}};
  for (const auto& args : bad) {
    Options o;
    std::string msg;
    EXPECT_EQ(parse(args, &o, &msg), 2) << args[0] << " " << (args.size() > 1 ? args[1] : "");
    EXPECT_FALSE(msg.empty());
  }
}

TEST(BenchCli, HelpExitsZero) {
  Options o;
  std::string msg;
  EXPECT_EQ(parse({"--help"}, &o, &msg), 0);
  EXPECT_NE(msg.find("--kernels"), std::string::npos);
}

TEST(BenchCli, KernelSelection) {
  std::string err;
  EXPECT_FALSE(select_kernels({"all"}, &err).empty());
  EXPECT_EQ(select_kernels({"simt/01_naive"}, &err).size(), 1u);
  EXPECT_TRUE(select_kernels({"no/such_kernel"}, &err).empty());
  EXPECT_NE(err.find("no/such_kernel"), std::string::npos);
}

// ---- the extended call (issue 12): out dtype, bias, activation, strided batches ----
TEST(BenchCli, ExtendedDefaultsArePlain) {
  Options o;
  std::string msg;
  ASSERT_EQ(parse({}, &o, &msg), -1) << msg;
  EXPECT_EQ(o.out_dtypes, std::vector<gemmlab::DType>{gemmlab::DType::F32});
  EXPECT_EQ(o.biases, std::vector<BiasKind>{BiasKind::None});
  EXPECT_EQ(o.acts, std::vector<gemmlab::Activation>{gemmlab::Activation::None});
  EXPECT_EQ(o.batch, 1);
  EXPECT_FALSE(o.broadcast_b);
  EXPECT_FALSE(uses_extended(o));
  for (const Shape& s : o.sizes) EXPECT_EQ(s.batch, 1);
}

TEST(BenchCli, ExtendedOptions) {
  Options o;
  std::string msg;
  ASSERT_EQ(parse({"--out-dtype", "bf16,fp16", "--bias", "input,none", "--act", "gelu_tanh,relu,silu",
                   "--sizes", "512,32:128x128x4096", "--batch", "4", "--broadcast-b", "--cublaslt",
                   "--kernels", "auto"},
                  &o, &msg),
            -1)
      << msg;
  EXPECT_EQ(o.out_dtypes, (std::vector<gemmlab::DType>{gemmlab::DType::BF16, gemmlab::DType::F16}));
  EXPECT_EQ(o.biases, (std::vector<BiasKind>{BiasKind::Input, BiasKind::None}));
  ASSERT_EQ(o.acts.size(), 3u);
  EXPECT_EQ(o.acts[0], gemmlab::Activation::GeluTanh);
  EXPECT_EQ(o.acts[2], gemmlab::Activation::SiLU);
  ASSERT_EQ(o.sizes.size(), 2u);
  EXPECT_EQ(o.sizes[0].batch, 4) << "--batch applies to sizes without a B: prefix";
  EXPECT_EQ(o.sizes[1].batch, 32) << "a B: prefix keeps its own batch";
  EXPECT_EQ(o.sizes[1].m, 128);
  EXPECT_EQ(o.sizes[1].k, 4096);
  EXPECT_EQ(shape_text(o.sizes[1]), "32:128x128x4096");
  EXPECT_EQ(shape_text(Shape{8, 9, 10}), "8x9x10");
  EXPECT_TRUE(o.broadcast_b);
  EXPECT_TRUE(o.cublaslt);
  EXPECT_TRUE(uses_extended(o));
  std::string err;
  EXPECT_TRUE(select_kernels(o.kernels, &err).empty());
  EXPECT_TRUE(err.empty()) << "'auto' is a pseudo-kernel, not an unknown name: " << err;

  // Each option alone turns the extended path on.
  for (const std::vector<const char*>& args :
       std::vector<std::vector<const char*>>{{"--out-dtype", "f16"}, {"--bias", "f32"},
                                             {"--act", "relu"}, {"--batch", "2"}, {"--sizes", "2:64"}}) {
    Options x;
    ASSERT_EQ(parse(args, &x, &msg), -1) << msg;
    EXPECT_TRUE(uses_extended(x)) << args[0] << " " << args[1];
  }
  Options f32;
  ASSERT_EQ(parse({"--out-dtype", "fp32", "--bias", "none", "--act", "none"}, &f32, &msg), -1) << msg;
  EXPECT_FALSE(uses_extended(f32)) << "the defaults spelled out are still the plain call";
}

TEST(BenchCli, ExtendedRejectsBadInput) {
  const std::vector<std::vector<const char*>> bad = {
      {"--out-dtype", "fp8"}, {"--out-dtype", "tf32"}, {"--bias", "bf16x"}, {"--act", "gelu"},
      {"--act", "GELU_TANH"}, {"--batch", "0"},     {"--batch", "-3"},     {"--sizes", "0:512"},
      {"--sizes", "x:512"},  {"--sizes", ":512"},   {"--sizes", "4:"},     {"--sizes", "2:3:512"},
      {"--cpu", "--act", "relu"}, {"--cpu", "--sizes", "4:16"}, {"--profile", "simt/sgemm", "--batch", "2"}};
  for (const auto& args : bad) {
    Options o;
    std::string msg;
    EXPECT_EQ(parse(args, &o, &msg), 2) << args[0] << " " << args[1];
    EXPECT_FALSE(msg.empty());
  }
}

// Every out x bias x act combination once; bias "input" of fp32 inputs is the f32 bias.
TEST(BenchCli, Variants) {
  Options o;
  std::string msg;
  ASSERT_EQ(parse({"--out-dtype", "f32,bf16", "--bias", "none,f32,input", "--act", "none,gelu_tanh"},
                  &o, &msg),
            -1)
      << msg;
  const std::vector<Variant> bf16 = variants_for(o, gemmlab::Precision::BF16);
  EXPECT_EQ(bf16.size(), 2u * 3u * 2u);
  EXPECT_TRUE(bf16.front().plain());
  int input_bias = 0;
  for (const Variant& v : bf16) input_bias += v.has_bias && v.bias_type == gemmlab::DType::BF16;
  EXPECT_EQ(input_bias, 4);
  const std::vector<Variant> fp32 = variants_for(o, gemmlab::Precision::FP32);
  EXPECT_EQ(fp32.size(), 2u * 2u * 2u) << "input == f32 for fp32 inputs";
  const std::vector<Variant> tf32 = variants_for(o, gemmlab::Precision::TF32);
  for (const Variant& v : tf32) EXPECT_EQ(v.bias_type, gemmlab::DType::F32);
  Options plain;
  ASSERT_EQ(parse({}, &plain, &msg), -1);
  ASSERT_EQ(variants_for(plain, gemmlab::Precision::FP16).size(), 1u);
  EXPECT_TRUE(variants_for(plain, gemmlab::Precision::FP16)[0].plain());
}

}  // namespace
}  // namespace gemmbench
