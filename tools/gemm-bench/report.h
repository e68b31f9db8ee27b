// gemm-bench's output: the terminal table, JSON (schema: docs/bench-schema.json) and CSV.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "gemm-bench/runner.h"

namespace gemmbench {

// A row's speed-up over simt/01_naive as printed: "12.3x", or "-" where naive was not run (0).
std::string speedup_text(double speedup_vs_naive);

void print_table(std::ostream& os, const Report& r);
void print_summary(std::ostream& os, const Report& r);
void print_registry(std::ostream& os);
nlohmann::json to_json(const Report& r);
std::string to_csv(const Report& r);

}  // namespace gemmbench
