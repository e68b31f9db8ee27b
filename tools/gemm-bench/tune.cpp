// gemm-bench/tune.h.
#include "gemm-bench/tune.h"

#include <algorithm>
#include <cmath>
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

namespace {

// A problem of the run: the rows of auto and cuBLAS, and every checked kernel or plan variant by
// its label ("kernel[plan]").
struct Problem {
  const Row* autos = nullptr;
  const Row* cublas = nullptr;
  std::map<std::string, const Row*> candidates;
  const Row* best() const {
    const Row* b = nullptr;
    for (const auto& [label, x] : candidates)
      if (!b || x->ms_median < b->ms_median) b = x;
    return b;
  }
};

double volume(const Shape& s) { return double(s.m) * s.n * s.k; }

TuneEntry entry_of(const Row& best, const Problem& p) {
  TuneEntry e;
  e.dtype = best.dtype, e.trans = best.trans, e.shape = best.shape;
  e.m_class = gemmlab::extent_class(e.shape.m);
  e.n_class = gemmlab::extent_class(e.shape.n);
  e.k_class = gemmlab::extent_class(e.shape.k);
  e.kernel = best.kernel, e.choice = best.choice, e.plan = best.plan;
  e.ms = best.ms_median, e.auto_ms = p.autos->ms_median, e.auto_kernel = p.autos->auto_kernel;
  e.cublas_ms = p.cublas ? p.cublas->ms_median : 0.0;
  return e;
}

// The entry of one class, whose problems all have an auto row: the candidate measured on every
// one of them with the least geometric mean of its time over auto's, if it beats auto by the
// margin (an entry holds for the whole class: 1280^3 and 1536^3 share one). Where no candidate
// ran on all of them, the largest problem's fastest, if it beats auto there.
bool class_entry(const std::vector<const Problem*>& probs, double margin, TuneEntry* out) {
  const Problem* largest = probs.front();
  for (const Problem* p : probs)
    if (volume(p->autos->shape) > volume(largest->autos->shape)) largest = p;
  std::string pick;
  double pick_log = 0;
  for (const auto& [label, x] : probs.front()->candidates) {
    double log_ratio = 0;
    bool everywhere = true;
    for (const Problem* p : probs) {
      const auto it = p->candidates.find(label);
      if (it == p->candidates.end()) {
        everywhere = false;
        break;
      }
      log_ratio += std::log(it->second->ms_median / p->autos->ms_median);
    }
    if (everywhere && (pick.empty() || log_ratio < pick_log)) pick = label, pick_log = log_ratio;
  }
  if (!pick.empty()) {
    if (std::exp(pick_log / probs.size()) * (1.0 + margin) >= 1.0) return false;  // auto does as well
    *out = entry_of(*largest->candidates.at(pick), *largest);
    return true;
  }
  const Row* best = largest->best();
  if (!best || best->ms_median * (1.0 + margin) >= largest->autos->ms_median) return false;
  *out = entry_of(*best, *largest);
  return true;
}

}  // namespace

std::vector<TuneEntry> choose_tuning(const Report& r, double margin) {
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
    else if (x.kernel != "cublaslt" && x.checked)
      p.candidates[x.kernel + "[" + x.plan + "]"] = &x;
  }
  std::map<std::string, std::vector<const Problem*>> by_class;
  std::vector<std::string> class_order;
  for (const std::string& key : order) {
    const Problem& p = problems[key];
    if (!p.autos || p.candidates.empty()) continue;
    TuneEntry probe;
    probe.dtype = p.autos->dtype, probe.trans = p.autos->trans;
    probe.m_class = gemmlab::extent_class(p.autos->shape.m);
    probe.n_class = gemmlab::extent_class(p.autos->shape.n);
    probe.k_class = gemmlab::extent_class(p.autos->shape.k);
    const std::string ck = class_key(probe);
    if (!by_class.count(ck)) class_order.push_back(ck);
    by_class[ck].push_back(&p);
  }
  std::vector<TuneEntry> out;
  for (const std::string& ck : class_order) {
    TuneEntry e;
    if (class_entry(by_class[ck], margin, &e)) out.push_back(e);
  }
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
