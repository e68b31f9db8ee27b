// gemm-tune: times every eligible kernel and plan variant (tile, depth splits) over a grid of
// shapes on this GPU, against `auto` without a table and cuBLAS, and writes the tuning table
// `auto` reads (src/registry/tuning.h): per problem, the best kernel and plan where it beats the
// planners by more than 3% (--margin), else an entry leaving it to the planners. With --rounds N
// the whole measurement runs N times and each kernel or plan is judged by its slowest round; with
// --warm each round runs twice, with the L2 flushed before every launch and left warm, and an
// entry must beat the planners' pick in both (gemm-bench/tune.h: choose_tuning). With
// --time-limit S the first round starts no problem past its share of S seconds and the later
// rounds repeat the problems it reached: a time-boxed GPU session keeps what it measured. A row
// is judged by the 90th percentile of its launches' times (gemm-bench/tune.h: judged_ms), so a
// plan whose time moves from launch to launch is taken at its slow mode. Takes gemm-bench's options
// (--suite, --sizes, --dtype, --trans, --kernels, ...); the kernels default to `auto` and every
// kernel `auto` may pick.
//   gemm-tune --suite decode --dtype fp32 --trans NN,NT --table src/registry/tuning/h100.json
// An existing table of the same device is merged: shapes this run measured are replaced, the
// others kept. Rebuild the library to compile the table in.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "gemm-bench/bandwidth.h"
#include "gemm-bench/options.h"
#include "gemm-bench/report.h"
#include "gemm-bench/runner.h"
#include "gemm-bench/tune.h"
#include "registry/tuning.h"

namespace {

// gemm-tune's own options; the rest go on to gemm-bench's parser (args).
struct TuneArgs {
  std::string table = "tuning.json", command = "gemm-tune";
  double margin_pct = 3;    // how much faster than the planners' pick an entry's kernel must be
  int rounds = 1;           // measurements of the whole grid; each label judged by its slowest
  double time_limit_s = 0;  // --time-limit: the run's seconds (0: none), shared by its rounds
  bool warm = false;        // each round also with the L2 left warm; an entry must win in both
  bool kernels_given = false;
  std::vector<const char*> args;
};

// -1 when the arguments parse, else the exit code (a message on stderr).
int parse_tune_args(int argc, char** argv, TuneArgs* t) {
  t->args = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    t->command += std::string(" ") + argv[i];
    if (std::strcmp(argv[i], "--warm") == 0) {
      t->warm = true;
      continue;
    }
    const bool own = std::strcmp(argv[i], "--table") == 0 || std::strcmp(argv[i], "--margin") == 0 ||
                     std::strcmp(argv[i], "--rounds") == 0 ||
                     std::strcmp(argv[i], "--time-limit") == 0;
    if (own && i + 1 == argc) {  // gemm-tune's own options but --warm take a value
      std::cerr << "gemm-tune: " << argv[i] << " needs a value\n";
      return 2;
    }
    if (std::strcmp(argv[i], "--table") == 0) {
      t->table = argv[++i];
      t->command += std::string(" ") + argv[i];
      continue;
    }
    if (std::strcmp(argv[i], "--margin") == 0) {
      char* end = nullptr;
      t->margin_pct = std::strtod(argv[++i], &end);
      t->command += std::string(" ") + argv[i];
      if (end == argv[i] || *end != '\0' || !(t->margin_pct >= 0 && t->margin_pct < 100)) {
        std::cerr << "gemm-tune: --margin takes a percentage in [0, 100), not " << argv[i] << "\n";
        return 2;
      }
      continue;
    }
    if (std::strcmp(argv[i], "--time-limit") == 0) {
      char* end = nullptr;
      t->time_limit_s = std::strtod(argv[++i], &end);
      t->command += std::string(" ") + argv[i];
      if (end == argv[i] || *end != '\0' || !(t->time_limit_s > 0)) {
        std::cerr << "gemm-tune: --time-limit takes seconds > 0, not " << argv[i] << "\n";
        return 2;
      }
      continue;
    }
    if (std::strcmp(argv[i], "--rounds") == 0) {
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      t->command += std::string(" ") + argv[i];
      if (end == argv[i] || *end != '\0' || v < 1 || v > 10) {
        std::cerr << "gemm-tune: --rounds takes a count in [1, 10], not " << argv[i] << "\n";
        return 2;
      }
      t->rounds = static_cast<int>(v);
      continue;
    }
    if (std::strcmp(argv[i], "--kernels") == 0 || std::strcmp(argv[i], "-k") == 0)
      t->kernels_given = true;
    t->args.push_back(argv[i]);
  }
  return -1;
}

// The problems' entries this run chose, a line each.
void print_entries(const std::vector<gemmbench::TuneEntry>& entries, double margin_pct,
                   size_t table_entries, const std::string& table) {
  size_t wins = 0;
  for (const gemmbench::TuneEntry& e : entries) wins += e.kernel != gemmlab::kPlannersEntry;
  std::cout << "\ngemm-tune: " << entries.size() << " problem(s), " << wins
            << " where a kernel or plan beat auto by more than " << margin_pct
            << "% (the others: the planners'); " << table_entries << " entries in " << table << "\n";
  for (const gemmbench::TuneEntry& e : entries)
    std::cout << "  " << gemmlab::precision_name(e.dtype) << " " << e.trans << " "
              << gemmbench::shape_text(e.shape) << "  " << e.kernel
              << (e.plan.empty() ? "" : "[" + e.plan + "]") << "  " << e.ms << " ms (auto "
              << e.auto_kernel << " " << e.auto_ms << " ms, cuBLAS " << e.cublas_ms << " ms)\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gemmbench;
  // `auto` must be the planners' own: the table being written must not steer it.
  setenv("GEMMLAB_TUNING", "0", 1);
  TuneArgs t;
  if (const int code = parse_tune_args(argc, argv, &t); code >= 0) return code;
  const std::string& table = t.table;
  const std::string& command = t.command;
  const double margin_pct = t.margin_pct;
  const int rounds = t.rounds;
  const bool warm = t.warm;
  std::vector<const char*>& args = t.args;
  const bool kernels_given = t.kernels_given;
  Options opt;
  std::string message;
  if (const int code = parse_options(static_cast<int>(args.size()), args.data(), &opt, &message);
      code >= 0) {
    (code == 0 ? std::cout : std::cerr)
        << message
        << (code == 0 ? "\ngemm-tune: also --table PATH (default tuning.json), --margin PCT (an "
                        "entry's kernel beats the planners' pick by more than PCT%; default 3) and "
                        "--rounds N (measure N times, judge each by its slowest round; default 1) "
                        "and --warm (each round also with the L2 left warm between launches; an "
                        "entry must beat the planners' pick in both) and --time-limit S (the "
                        "first round starts no problem past its share of S seconds; the others "
                        "repeat the problems it reached, and the rest keep their table entries). "
                        "Exit status 4: a checked row failed (the table is written all the same; "
                        "a failed row is never an entry)\n"
                      : "\n");
    return code;
  }
  if (!kernels_given) {
    opt.kernels = {"auto"};
    for (const gemmlab::KernelDesc& k : gemmlab::all_kernels())
      if (k.auto_priority > 0) opt.kernels.push_back(k.name);
  }
  opt.variants = true;
  DeviceInfo dev = query_device();
  if (!dev.present) {
    std::cerr << "gemm-tune: no CUDA device available (" << dev.error << ")\n";
    return 3;
  }
  dev.read_bandwidth_gbs = measure_read_bandwidth_gbs();
  std::vector<Report> reports;
  for (int round = 0; round < rounds; ++round) {
    for (const bool cold : warm ? std::vector<bool>{true, false} : std::vector<bool>{opt.flush_l2}) {
      if (rounds > 1 || warm)
        std::cout << "\ngemm-tune: round " << round + 1 << " of " << rounds
                  << (warm ? cold ? ", L2 flushed" : ", L2 warm" : "") << "\n";
      Options o = opt;
      o.flush_l2 = cold;
      if (t.time_limit_s > 0 && reports.empty())  // the first round's share of the time
        o.stop_after_seconds = t.time_limit_s / (rounds * (warm ? 2 : 1));
      else if (t.time_limit_s > 0)  // the problems the first round reached, no more
        o.max_problems = reports.front().problems_run;
      reports.push_back(run_gpu_bench(o, dev));
      print_table(std::cout, reports.back());
      print_summary(std::cout, reports.back());
    }
  }
  const Report& report = reports.front();
  if (!opt.json_path.empty()) {  // the first round, variants included (gemm-bench's report format)
    std::ofstream f(opt.json_path);
    f << to_json(report).dump(1) << "\n";
  }

  nlohmann::json previous;
  bool have_previous = false;
  if (std::ifstream in(table); in) {
    try {
      in >> previous;
      have_previous = previous.value("device", "") == dev.name && previous.value("sms", 0) == dev.sms;
    } catch (const std::exception& e) {
      std::cerr << "gemm-tune: " << table << " is not a table (" << e.what() << "): overwritten\n";
    }
  }
  const std::vector<TuneEntry> entries = choose_tuning(reports, margin_pct / 100);
  const nlohmann::json j = tuning_json(report, entries, command, have_previous ? &previous : nullptr);
  std::ofstream out(table);
  out << j.dump(1) << "\n";
  if (!out) {
    std::cerr << "gemm-tune: could not write " << table << "\n";
    return 1;
  }
  print_entries(entries, margin_pct, j["entries"].size(), table);
  if (report.problems_run < report.problems_planned)
    std::cout << "gemm-tune: --time-limit reached: " << report.problems_run << " of "
              << report.problems_planned << " problems measured; the others keep their entries\n";
  for (const Report& rep : reports)
    for (const Row& r : rep.rows)
      if ((r.checked && !r.pass) || r.status.rfind("error", 0) == 0) return 4;
  return 0;
}
