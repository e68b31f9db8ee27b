// The report's JSON schema (docs/bench-schema.json), compiled into gemm-bench from that file at
// configure time (CMakeLists.txt), so neither gemm-bench nor the tests depend on the working
// directory; and a validator for the JSON-Schema subset it uses (type, required, properties,
// items, enum, minimum, maximum).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gemmbench {

// The text of docs/bench-schema.json as it was when the build was configured.
const char* bench_schema_text();
// The same, parsed.
const nlohmann::json& bench_schema();

// What in `v` does not match `schema` ("$.rows[0]: missing tflops", ...); empty if it matches.
std::vector<std::string> validate_json(const nlohmann::json& v, const nlohmann::json& schema);

}  // namespace gemmbench
