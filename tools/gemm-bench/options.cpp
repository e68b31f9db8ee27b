#include "gemm-bench/options.h"

#include <initializer_list>
#include <sstream>

#include <CLI/CLI.hpp>

namespace gemmbench {

const char* bias_kind_name(BiasKind b) {
  switch (b) {
    case BiasKind::None: return "none";
    case BiasKind::F32: return "f32";
    case BiasKind::Input: return "input";
  }
  return "unknown";
}

bool starts_another_problem(const Options& o, size_t started, double elapsed_s) {
  if (o.max_problems > 0 && started >= o.max_problems) return false;
  if (started == 0) return true;  // a time limit always lets the first problem run
  return !(o.stop_after_seconds > 0 && elapsed_s >= o.stop_after_seconds);
}

bool uses_extended(const Options& o) {
  for (gemmlab::DType t : o.out_dtypes)
    if (t != gemmlab::DType::F32) return true;
  for (BiasKind b : o.biases)
    if (b != BiasKind::None) return true;
  for (gemmlab::Activation a : o.acts)
    if (a != gemmlab::Activation::None) return true;
  for (const Shape& s : o.sizes)
    if (s.batch != 1) return true;
  return o.batch != 1 || o.broadcast_b || o.cublaslt;
}

bool parse_shape(const std::string& text, Shape* out) {
  int64_t batch = 1;
  std::string body = text;
  if (const size_t colon = text.find(':'); colon != std::string::npos) {
    const std::string b = text.substr(0, colon);
    if (b.empty() || b.size() > 12 || b.find_first_not_of("0123456789") != std::string::npos)
      return false;
    batch = std::stoll(b);
    body = text.substr(colon + 1);
  }
  std::vector<int64_t> v;
  std::stringstream ss(body);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return false;
    if (part.size() > 12) return false;
    v.push_back(std::stoll(part));
  }
  if (v.size() == 1) *out = {v[0], v[0], v[0], batch};
  else if (v.size() == 3) *out = {v[0], v[1], v[2], batch};
  else return false;
  return true;
}

// A fixed list of shapes written as gemm-bench's --sizes reads them (MxNxK, B:MxNxK).
static void add_shapes(std::vector<Shape>* shapes, std::initializer_list<const char*> texts) {
  for (const char* text : texts) {
    Shape sh;
    parse_shape(text, &sh);
    shapes->push_back(sh);
  }
}

bool suite_shapes(const std::string& name, std::vector<Shape>* shapes,
                  std::vector<std::string>* trans) {
  // Shapes off the other suites' grids, in every op pair (a scan for cliffs: docs/results/
  // h100-cliffs-2.txt): primes and near-powers, tall-skinny and short-wide C, deep K over a small
  // C, thin K, decode-like rows, and tiny strided batches. Not part of "all" (its four op pairs).
  if (name == "cliffs") {
    add_shapes(shapes, {"100x100x10000", "128x128x8192", "2000x64x2000", "64x2000x2000",
                        "127x8191x129", "333x777x555", "1000x1000x1000", "3000x3000x3000",
                        "5000x5000x5000", "1023x1023x1023", "4095x4095x64", "64x64x65536",
                        "777x333x2222", "4096x128x4096", "96x96x96", "2048x32x2048",
                        "40x40x40000", "3x5000x5000", "5000x3x5000", "6000x6000x256",
                        "256x6000x6000", "16384x1024x64", "8192x16x768", "768x2304x768",
                        "1x11008x4096", "7x4096x11008", "200x200x200", "2500x300x2500",
                        "12:197x197x64", "8:77x77x77", "48:128x64x128", "4:1000x1000x100"});
    *trans = {"NN", "NT", "TN", "TT"};
    return true;
  }
  // Medium 16-bit-sized problems whose 128 x 256 tiles take one to two rounds of the SMs (where
  // a tile that fills one wave decides: docs/history.md, wgmma/small, medium shapes), in the op
  // pairs frameworks use. Not part of "all".
  if (name == "medium") {
    add_shapes(shapes, {"1536x3072x512", "1536x3072x1536", "3072x1536x1536", "1280x4096x2048",
                        "1792x2560x2048", "2048x2048x2048", "2304x2304x2304", "1600x3200x3200",
                        "960x5120x4096", "640x8192x4096", "2560x2560x4096", "1536x3072x6144",
                        "1500x3008x1100"});
    *trans = {"NN", "NT", "TN"};
    return true;
  }
  const bool all = name == "all";
  if (!all && name != "decode" && name != "small" && name != "deep-k" && name != "skinny" &&
      name != "large" && name != "odd-m")
    return false;
  *trans = {"NN"};
  if (all || name == "decode") {  // weights N x K in frameworks: op(B) = B^T, hence NT too
    for (int64_t m : {1, 2, 4, 8, 16, 32, 64, 128, 256})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {8192, 8192}, {14336, 4096},
                          {4096, 14336}})
        shapes->push_back({m, n, k});
    *trans = {"NN", "NT"};
  }
  if (all || name == "small")
    for (int64_t s : {128, 256, 384, 512, 768, 1024, 1280, 1536}) shapes->push_back({s, s, s});
  if (all || name == "deep-k")
    for (int64_t s : {128, 256, 512, 1024})
      for (int64_t k : {8192, 32768, 131072}) shapes->push_back({s, s, k});
  if (all || name == "skinny")
    for (int64_t n : {1, 2, 4, 8, 16, 32, 64}) shapes->push_back({8192, n, 8192});
  if (all || name == "large")
    for (int64_t s : {4096, 4097}) shapes->push_back({s, s, s});
  // Token counts off the powers of two (a serving batch, a prefill chunk) against framework
  // weights (op(B) = B^T): where a planner's rule keyed to 64 / 128 / 256 rows meets a ragged M.
  if (all || name == "odd-m") {
    for (int64_t m : {3, 12, 24, 48, 96, 100, 160, 200, 320, 500})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {14336, 4096}, {4096, 14336},
                          {13824, 5120}})
        shapes->push_back({m, n, k});
    if (!all) *trans = {"NT"};
  }
  return true;
}

std::string shape_text(const Shape& s) {
  return (s.batch != 1 ? std::to_string(s.batch) + ":" : std::string()) + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

int parse_options(int argc, const char* const* argv, Options* out, std::string* message) {
  CLI::App app{
      "gemm-bench: every gemmlab kernel against cuBLAS on this GPU (time, TFLOP/s, % of cuBLAS, "
      "% of peak, registers, shared memory, occupancy, spills, error vs fp64).\n"
      "With no arguments: the default report (all kernels, fp32/tf32/bf16/fp16, 4096^3 and 4097^3).",
      "gemm-bench"};
  std::vector<std::string> sizes, dtypes, trans, out_dtypes, biases, acts;
  app.add_option("--kernels,-k", out->kernels,
                 "kernels: registry names, families (simt, mma_sync, wgmma) or 'all' (default)")
      ->delimiter(',');
  app.add_option("--sizes,-s", sizes,
                 "sizes: N (N^3) or MxNxK, comma-separated (default 4096,4097); a B: prefix makes a "
                 "strided batch of B entries (64:512, 32:128x128x4096)")
      ->delimiter(',');
  app.add_option("--suite", out->suite,
                 "a shape suite instead of --sizes: decode, small, deep-k, skinny, large, odd-m, all; "
                 "cliffs (odd shapes in all four op pairs); medium (one to two rounds of 128 x 256 tiles)");
  app.add_option("--dtype,-d", dtypes, "precisions: fp32,tf32,bf16,fp16 (default all)")->delimiter(',');
  app.add_option("--trans,-t", trans, "op(A)op(B) combinations: NN,NT,TN,TT (default NN)")->delimiter(',');
  app.add_option("--out-dtype", out_dtypes,
                 "dtype of D: f32 (default), bf16, f16; a list runs each (the extended call, "
                 "gemmlab::GemmDesc; cuBLAS side: cuBLASLt)")
      ->delimiter(',');
  app.add_option("--bias", biases,
                 "a bias per column of D: none (default), f32, input (the input dtype); a list runs each")
      ->delimiter(',');
  app.add_option("--act", acts,
                 "activation: none (default), relu, gelu_tanh, gelu_erf, silu; a list runs each "
                 "(cuBLASLt has no gelu_erf / silu epilogue: no cuBLAS figure there)")
      ->delimiter(',');
  app.add_option("--batch", out->batch,
                 "strided batch of N contiguous entries per size (sizes with a B: prefix keep theirs); "
                 "cuBLAS side: cublasGemmStridedBatchedEx, plus cuBLASLt")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  app.add_flag("--broadcast-b", out->broadcast_b,
               "batches: stride_b = 0, one B (weight matrix) for every entry");
  app.add_flag("--variants", out->variants,
               "also time every plan variant (tile, depth splits) a kernel offers, one row each "
               "(what gemm-tune measures); the summaries leave them out");
  app.add_flag("--cublaslt", out->cublaslt,
               "also time cuBLASLt (cublasLtMatmul) where the plain cublasGemmEx row is the reference");
  app.add_option("--warmup", out->warmup, "untimed runs before timing")->check(CLI::Range(0, 1000));
  app.add_option("--reps,-r", out->reps, "timed runs (the median is reported)")->check(CLI::Range(1, 100000));
  app.add_option("--max-seconds", out->max_seconds_per_row, "time budget of one row; slow rows get fewer reps")
      ->check(CLI::PositiveNumber);
  app.add_flag("!--no-flush", out->flush_l2, "do not flush the L2 cache between timed runs");
  app.add_flag("--flush-writes", out->flush_writes,
               "flush L2 with a memset, as gemm-bench did before 2026-11-23: its dirty lines are "
               "written back while the timed call reads (default: a read-only sweep)");
  app.add_flag("!--no-check", out->check, "skip the fp64 correctness check");
  app.add_flag("!--no-cublas", out->cublas, "do not time cuBLAS");
  app.add_flag("--list,-l", out->list, "print the kernel registry and exit");
  app.add_flag("--cpu", out->cpu, "time the fp64 CPU reference instead (works without a GPU)");
  app.add_option("--profile", out->profile_kernel,
                 "one warm-up and one launch of KERNEL inside an NVTX range; prints the ncu command");
  app.add_option("--json", out->json_path, "write every field of every row to this JSON file");
  app.add_option("--csv", out->csv_path, "write the rows to this CSV file");
  app.add_flag("--quiet,-q", out->quiet, "no progress lines on stderr");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    *message = app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    *message = std::string("gemm-bench: ") + e.what() + "\nRun with --help for usage.";
    return 2;
  }

  if (!out->suite.empty()) {
    if (!sizes.empty()) {
      *message = "gemm-bench: --suite and --sizes are exclusive";
      return 2;
    }
    std::vector<std::string> suite_trans;
    if (!suite_shapes(out->suite, &out->sizes, &suite_trans)) {
      *message = "gemm-bench: unknown suite '" + out->suite +
                 "' (decode, small, deep-k, skinny, large, odd-m, all, cliffs, medium)";
      return 2;
    }
    if (trans.empty()) trans = suite_trans;
  } else if (sizes.empty()) {
    if (out->cpu) sizes = {"256", "257"};  // the fp64 CPU reference is ~1000x slower than a GPU
    else if (!out->profile_kernel.empty()) sizes = {"4096"};
    else sizes = {"4096", "4097"};
  }
  for (const std::string& s : sizes) {
    Shape shape;
    if (!parse_shape(s, &shape) || shape.m <= 0 || shape.n <= 0 || shape.k <= 0) {
      *message = "gemm-bench: bad size '" + s + "' (use N or MxNxK with positive integers)";
      return 2;
    }
    if (shape.batch <= 0) {
      *message = "gemm-bench: bad batch in size '" + s + "' (B:SHAPE with B >= 1)";
      return 2;
    }
    out->sizes.push_back(shape);
  }
  for (Shape& shape : out->sizes)
    if (shape.batch == 1) shape.batch = out->batch;
  for (const std::string& d : out_dtypes) {
    gemmlab::DType t;
    if (!gemmlab::parse_dtype(d.c_str(), &t)) {
      *message = "gemm-bench: unknown --out-dtype '" + d + "' (f32, bf16, f16)";
      return 2;
    }
    out->out_dtypes.push_back(t);
  }
  for (const std::string& b : biases) {
    if (b == "none") out->biases.push_back(BiasKind::None);
    else if (b == "f32" || b == "fp32") out->biases.push_back(BiasKind::F32);
    else if (b == "input") out->biases.push_back(BiasKind::Input);
    else {
      *message = "gemm-bench: unknown --bias '" + b + "' (none, f32, input)";
      return 2;
    }
  }
  for (const std::string& a : acts) {
    gemmlab::Activation act;
    if (!gemmlab::parse_activation(a.c_str(), &act)) {
      *message = "gemm-bench: unknown --act '" + a + "' (none, relu, gelu_tanh, gelu_erf, silu)";
      return 2;
    }
    out->acts.push_back(act);
  }
  if (out->out_dtypes.empty()) out->out_dtypes = {gemmlab::DType::F32};
  if (out->biases.empty()) out->biases = {BiasKind::None};
  if (out->acts.empty()) out->acts = {gemmlab::Activation::None};
  if ((out->cpu || !out->profile_kernel.empty()) && uses_extended(*out)) {
    *message = std::string("gemm-bench: ") + (out->cpu ? "--cpu" : "--profile") +
               " runs the plain call only (no --out-dtype, --bias, --act, --batch, --broadcast-b, "
               "--cublaslt)";
    return 2;
  }
  if (dtypes.empty()) dtypes = {"fp32", "tf32", "bf16", "fp16"};
  for (const std::string& d : dtypes) {
    gemmlab::Precision p;
    if (!gemmlab::parse_precision(d.c_str(), &p)) {
      *message = "gemm-bench: unknown dtype '" + d + "' (fp32, tf32, bf16, fp16)";
      return 2;
    }
    out->dtypes.push_back(p);
  }
  if (trans.empty()) trans = {"NN"};
  for (const std::string& t : trans) {
    if (t.size() != 2 || (t[0] != 'N' && t[0] != 'T') || (t[1] != 'N' && t[1] != 'T')) {
      *message = "gemm-bench: bad --trans '" + t + "' (NN, NT, TN or TT)";
      return 2;
    }
    out->trans.push_back({t[0] == 'N' ? gemmlab::Op::N : gemmlab::Op::T,
                          t[1] == 'N' ? gemmlab::Op::N : gemmlab::Op::T});
  }
  if (out->kernels.empty()) out->kernels = {"all"};
  return -1;
}

}  // namespace gemmbench
