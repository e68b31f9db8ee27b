// gemm-bench/tune.h.
#include "gemm-bench/tune.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "gemm-bench/report.h"
#include "registry/tuning.h"

namespace gemmbench {
namespace {

bool plain_problem(const Row& x) {
  return x.out_dtype == gemmlab::DType::F32 && x.bias == "none" &&
         x.act == gemmlab::Activation::None && x.shape.batch == 1;
}

std::string class_key(const TuneEntry& e) {
  return std::string(gemmlab::precision_name(e.dtype)) + " " + e.trans + " " +
         std::to_string(e.m_class) + "," + std::to_string(e.n_class) + "," +
         std::to_string(e.k_class);
}

nlohmann::json entry_json(const TuneEntry& e) {
  return {{"dtype", gemmlab::precision_name(e.dtype)},
          {"trans", e.trans},
          {"m", e.shape.m},
          {"n", e.shape.n},
          {"k", e.shape.k},
          {"class", {e.m_class, e.n_class, e.k_class}},
          {"kernel", e.kernel},
          {"plan", e.plan},
          {"tile", e.choice.tile},
          {"splits", e.choice.splits},
          {"ms", e.ms},
          {"auto_ms", e.auto_ms},
          {"auto_kernel", e.auto_kernel},
          {"cublas_ms", e.cublas_ms}};
}

}  // namespace

std::vector<TuneEntry> choose_tuning(const Report& r, double margin) {
  struct Problem {
    const Row* best = nullptr;
    const Row* autos = nullptr;
    const Row* cublas = nullptr;
  };
  std::map<std::string, Problem> problems;
  std::vector<std::string> order;
  for (const Row& x : r.rows) {
    if (!plain_problem(x) || x.status != "ok" || x.ms_median <= 0) continue;
    if (x.checked && !x.pass) continue;
    const std::string key = problem_key(x);
    if (!problems.count(key)) order.push_back(key);
    Problem& p = problems[key];
    if (x.kernel == "cublas") p.cublas = &x;
    else if (x.kernel == "auto") p.autos = &x;
    else if (x.kernel != "cublaslt" && x.checked && (!p.best || x.ms_median < p.best->ms_median))
      p.best = &x;
  }
  std::map<std::string, TuneEntry> by_class;
  std::vector<std::string> class_order;
  for (const std::string& key : order) {
    const Problem& p = problems[key];
    if (!p.best || !p.autos) continue;
    if (p.best->ms_median * (1.0 + margin) >= p.autos->ms_median) continue;  // auto does as well
    TuneEntry e;
    e.dtype = p.best->dtype, e.trans = p.best->trans, e.shape = p.best->shape;
    e.m_class = gemmlab::extent_class(e.shape.m);
    e.n_class = gemmlab::extent_class(e.shape.n);
    e.k_class = gemmlab::extent_class(e.shape.k);
    e.kernel = p.best->kernel, e.choice = p.best->choice, e.plan = p.best->plan;
    e.ms = p.best->ms_median, e.auto_ms = p.autos->ms_median, e.auto_kernel = p.autos->auto_kernel;
    e.cublas_ms = p.cublas ? p.cublas->ms_median : 0.0;
    const std::string ck = class_key(e);
    auto it = by_class.find(ck);
    if (it == by_class.end()) {
      class_order.push_back(ck);
      by_class.emplace(ck, e);
    } else {
      const Shape& o = it->second.shape;
      if (double(e.shape.m) * e.shape.n * e.shape.k > double(o.m) * o.n * o.k) it->second = e;
    }
  }
  std::vector<TuneEntry> out;
  for (const std::string& ck : class_order) out.push_back(by_class[ck]);
  return out;
}

nlohmann::json tuning_json(const Report& r, const std::vector<TuneEntry>& entries,
                           const std::string& command, const nlohmann::json* previous) {
  std::map<std::string, nlohmann::json> rows;  // by class: sorted, unique
  auto key_of = [](const nlohmann::json& e) {
    return e.at("dtype").get<std::string>() + " " + e.at("trans").get<std::string>() + " " +
           e.at("class").dump();
  };
  if (previous && previous->contains("entries"))
    for (const nlohmann::json& e : previous->at("entries")) rows[key_of(e)] = e;
  // A class this run measured is this run's to decide (also where auto now does as well).
  for (const Row& x : r.rows) {
    if (!plain_problem(x)) continue;
    const nlohmann::json cls = {gemmlab::extent_class(x.shape.m), gemmlab::extent_class(x.shape.n),
                                gemmlab::extent_class(x.shape.k)};
    rows.erase(std::string(gemmlab::precision_name(x.dtype)) + " " + x.trans + " " + cls.dump());
  }
  for (const TuneEntry& e : entries) {
    const nlohmann::json j = entry_json(e);
    rows[key_of(j)] = j;
  }
  nlohmann::json list = nlohmann::json::array();
  for (auto& [key, e] : rows) list.push_back(e);
  return {{"tool", "gemm-tune"},
          {"device", r.device.name},
          {"sms", r.device.sms},
          {"date", r.date},
          {"command", command},
          {"entries", list}};
}

}  // namespace gemmbench
