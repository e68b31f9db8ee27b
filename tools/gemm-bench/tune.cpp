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

double judged_ms(const Row& x) {
  if (static_cast<int>(x.ms_runs.size()) < kJudgedMinRuns) return x.ms_median;
  std::vector<float> v = x.ms_runs;
  std::sort(v.begin(), v.end());
  // Nearest rank: the smallest time at least 90% of the launches reached.
  const size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(v.size())));
  return v[rank - 1];
}

namespace {

// One label's rows over the rounds (auto, cuBLAS, or a checked kernel / plan variant): its row of
// the first round (kernel, plan, choice) and its slowest judged time of any round
// (judged_ms), in how many rounds.
struct Seen {
  const Row* row = nullptr;
  double ms = 0;
  int rounds = 0;
  void add(const Row& x) {
    if (!row) row = &x;
    ms = std::max(ms, judged_ms(x));
    ++rounds;
  }
};

// A problem over the rounds of one L2 mode: auto, cuBLAS, and every checked kernel or plan variant
// by its label ("kernel[plan]").
struct Problem {
  Seen autos, cublas;
  std::map<std::string, Seen> candidates;
};

// A problem's rows by L2 mode (Options::flush_l2: true = flushed before every launch).
using Modes = std::map<bool, Problem>;

// The candidate that ran and passed in every round of every mode with the lowest worst ratio of
// its time to auto's over the modes (with one mode: the fastest); null if none did.
const Seen* best_everywhere(const Modes& modes, const std::map<bool, int>& mode_rounds,
                            const Problem& ref, double* best_ratio) {
  const Seen* best = nullptr;
  for (const auto& [label, x] : ref.candidates) {
    double ratio = 0;
    bool everywhere = true;
    for (const auto& [cold, p] : modes) {
      const auto it = p.candidates.find(label);
      everywhere = it != p.candidates.end() && it->second.rounds == mode_rounds.at(cold);
      if (!everywhere) break;
      ratio = std::max(ratio, it->second.ms / p.autos.ms);
    }
    if (everywhere && (!best || ratio < *best_ratio)) best = &x, *best_ratio = ratio;
  }
  return best;
}

TuneEntry entry_of(const Seen& best, const Problem& p) {
  const Row& r = *best.row;
  TuneEntry e;
  e.dtype = r.dtype, e.trans = r.trans, e.shape = r.shape;
  e.m_class = gemmlab::extent_class(e.shape.m);
  e.n_class = gemmlab::extent_class(e.shape.n);
  e.k_class = gemmlab::extent_class(e.shape.k);
  e.kernel = r.kernel, e.choice = r.choice, e.plan = r.plan;
  e.ms = best.ms, e.auto_ms = p.autos.ms, e.auto_kernel = p.autos.row->auto_kernel;
  e.cublas_ms = p.cublas.row ? p.cublas.ms : 0.0;
  return e;
}

}  // namespace

std::vector<TuneEntry> choose_tuning(const Report& r, double margin) {
  return choose_tuning(std::vector<Report>{r}, margin);
}

std::vector<TuneEntry> choose_tuning(const std::vector<Report>& rounds, double margin) {
  // Each L2 mode (flushed before every launch or left warm: Options::flush_l2) on its own rounds.
  std::map<bool, int> mode_rounds;
  std::map<std::string, Modes> problems;
  std::vector<std::string> order;
  for (const Report& r : rounds) {
    const bool cold = r.options.flush_l2;
    ++mode_rounds[cold];
    for (const Row& x : r.rows) {
      if (!plain_problem(x) || x.status != "ok" || x.ms_median <= 0) continue;
      if (x.checked && !x.pass) continue;
      const std::string key = problem_key(x);
      if (!problems.count(key)) order.push_back(key);
      Problem& p = problems[key][cold];
      if (x.kernel == "cublas") p.cublas.add(x);
      else if (x.kernel == "auto") p.autos.add(x);
      else if (x.kernel != "cublaslt" && x.checked)
        p.candidates[x.kernel + "[" + x.plan + "]"].add(x);
    }
  }
  std::vector<TuneEntry> out;
  for (const std::string& key : order) {
    const Modes& modes = problems.at(key);
    bool complete = modes.size() == mode_rounds.size();
    for (const auto& [cold, p] : modes) complete = complete && p.autos.rounds == mode_rounds.at(cold);
    if (!complete) continue;
    // The entry's times are the flushed mode's where it was measured.
    const Problem& ref = modes.count(true) ? modes.at(true) : modes.begin()->second;
    double best_ratio = 0;
    const Seen* best = best_everywhere(modes, mode_rounds, ref, &best_ratio);
    if (!best) continue;  // no candidate measured everywhere: no entry
    if (best_ratio * (1.0 + margin) < 1.0) {
      out.push_back(entry_of(*best, ref));
    } else {  // the planners' own pick: an entry all the same, so no sibling's applies here
      TuneEntry e = entry_of(ref.autos, ref);
      e.kernel = gemmlab::kPlannersEntry, e.choice = {}, e.plan.clear();
      out.push_back(e);
    }
  }
  return out;
}

nlohmann::json tuning_json(const Report& r, const std::vector<TuneEntry>& entries,
                           const std::string& command, const nlohmann::json* previous) {
  // By dtype, transposes, class and shape: sorted, unique. An entry without a shape (m, n, k
  // absent: a table from before entries were per shape) stands for its whole class.
  std::map<std::string, nlohmann::json> rows;
  auto key_of = [](const nlohmann::json& e) {
    const nlohmann::json shape = {e.value("m", int64_t{0}), e.value("n", int64_t{0}),
                                  e.value("k", int64_t{0})};
    return e.at("dtype").get<std::string>() + " " + e.at("trans").get<std::string>() + " " +
           e.at("class").dump() + " " + shape.dump();
  };
  if (previous && previous->contains("entries"))
    for (const nlohmann::json& e : previous->at("entries")) rows[key_of(e)] = e;
  // A shape this run measured is this run's to decide (also where auto now does as well), and so
  // is a class-wide entry of its class.
  for (const Row& x : r.rows) {
    if (!plain_problem(x)) continue;
    const nlohmann::json cls = {gemmlab::extent_class(x.shape.m), gemmlab::extent_class(x.shape.n),
                                gemmlab::extent_class(x.shape.k)};
    const std::string prefix =
        std::string(gemmlab::precision_name(x.dtype)) + " " + x.trans + " " + cls.dump() + " ";
    rows.erase(prefix + nlohmann::json({x.shape.m, x.shape.n, x.shape.k}).dump());
    rows.erase(prefix + nlohmann::json({0, 0, 0}).dump());
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
