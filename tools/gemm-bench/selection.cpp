// What a gemm-bench run covers: the kernels named on the command line, the epilogue variants of
// each dtype (--out-dtype x --bias x --act), and the run's date.
#include <algorithm>
#include <ctime>

#include "gemm-bench/runner.h"

namespace gemmbench {

using gemmlab::KernelDesc;
using gemmlab::Precision;

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::vector<const KernelDesc*> select_kernels(const std::vector<std::string>& names,
                                              std::string* error) {
  std::vector<bool> chosen(gemmlab::all_kernels().size(), false);
  for (const std::string& name : names) {
    bool matched = false;
    for (size_t i = 0; i < gemmlab::all_kernels().size(); ++i) {
      const KernelDesc& k = gemmlab::all_kernels()[i];
      if (name == "all" || name == k.name || name == k.family) chosen[i] = matched = true;
    }
    if (!matched && name != "cublas" && name != "auto") {
      *error = "gemm-bench: unknown kernel or family '" + name + "' (see --list)";
      return {};
    }
  }
  std::vector<const KernelDesc*> out;
  for (size_t i = 0; i < chosen.size(); ++i)
    if (chosen[i]) out.push_back(&gemmlab::all_kernels()[i]);
  return out;
}

std::vector<Variant> variants_for(const Options& opt, Precision p) {
  const std::vector<gemmlab::DType> outs =
      opt.out_dtypes.empty() ? std::vector<gemmlab::DType>{gemmlab::DType::F32} : opt.out_dtypes;
  const std::vector<BiasKind> biases = opt.biases.empty() ? std::vector<BiasKind>{BiasKind::None} : opt.biases;
  const std::vector<gemmlab::Activation> acts =
      opt.acts.empty() ? std::vector<gemmlab::Activation>{gemmlab::Activation::None} : opt.acts;
  const gemmlab::DType input = p == Precision::BF16   ? gemmlab::DType::BF16
                               : p == Precision::FP16 ? gemmlab::DType::F16
                                                      : gemmlab::DType::F32;
  std::vector<Variant> out;
  for (gemmlab::DType o : outs)
    for (BiasKind b : biases)
      for (gemmlab::Activation a : acts) {
        Variant v;
        v.out = o, v.act = a, v.has_bias = b != BiasKind::None;
        v.bias_type = b == BiasKind::Input ? input : gemmlab::DType::F32;
        const bool seen = std::any_of(out.begin(), out.end(), [&](const Variant& w) {
          return w.out == v.out && w.act == v.act && w.has_bias == v.has_bias &&
                 (!v.has_bias || w.bias_type == v.bias_type);
        });
        if (!seen) out.push_back(v);
      }
  return out;
}

}  // namespace gemmbench
