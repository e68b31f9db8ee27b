#include "gemm-bench/schema.h"

namespace gemmbench {
namespace {

using nlohmann::json;

bool type_ok(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "integer") return v.is_number_integer();
  if (t == "number") return v.is_number();
  return false;
}

void validate(const json& v, const json& schema, const std::string& path,
              std::vector<std::string>* errs) {
  if (schema.contains("type") && !type_ok(v, schema["type"])) {
    errs->push_back(path + ": expected " + schema["type"].get<std::string>());
    return;
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found |= e == v;
    if (!found) errs->push_back(path + ": not in enum");
  }
  if (schema.contains("minimum") && v.is_number() && v.get<double>() < schema["minimum"].get<double>())
    errs->push_back(path + ": below minimum");
  if (schema.contains("maximum") && v.is_number() && v.get<double>() > schema["maximum"].get<double>())
    errs->push_back(path + ": above maximum");
  if (schema.contains("required"))
    for (const auto& r : schema["required"])
      if (!v.contains(r.get<std::string>())) errs->push_back(path + ": missing " + r.get<std::string>());
  if (schema.contains("properties") && v.is_object())
    for (const auto& [key, sub] : schema["properties"].items())
      if (v.contains(key)) validate(v[key], sub, path + "." + key, errs);
  if (schema.contains("items") && v.is_array())
    for (size_t i = 0; i < v.size(); ++i)
      validate(v[i], schema["items"], path + "[" + std::to_string(i) + "]", errs);
}

}  // namespace

const nlohmann::json& bench_schema() {
  static const json schema = json::parse(bench_schema_text());
  return schema;
}

std::vector<std::string> validate_json(const json& v, const json& schema) {
  std::vector<std::string> errs;
  validate(v, schema, "$", &errs);
  return errs;
}

}  // namespace gemmbench
