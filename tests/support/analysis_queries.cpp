#include "support/analysis_queries.hpp"

#include <cctype>

namespace regionprof::test {

const region_aggregate* find_region(const analysis_result& result, const run_result& run, std::string_view id) {
  for (const region_aggregate& a : run.regions) {
    if (a.region < result.regions.size() && result.regions[a.region].id == id) return &a;
  }
  return nullptr;
}

std::vector<std::string> region_ids(const analysis_result& result, const run_result& run) {
  std::vector<std::string> ids;
  for (const region_aggregate& a : run.regions) ids.push_back(result.regions.at(a.region).id);
  return ids;
}

std::vector<std::string> region_ids(const analysis_result& result) {
  std::vector<std::string> ids;
  for (const region_info& r : result.regions) ids.push_back(r.id);
  return ids;
}

std::int64_t leading_count(std::string_view message) {
  std::size_t i = 0;
  std::int64_t value = 0;
  while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i]))) {
    value = value * 10 + (message[i] - '0');
    ++i;
  }
  return i == 0 ? -1 : value;
}

const key_average_row* find_row(const key_average_view& view, std::string_view key, device_type type) {
  for (const key_average_row& row : view.rows) {
    if (row.key == key && row.type == type) return &row;
  }
  return nullptr;
}

std::vector<std::string> row_keys(const key_average_view& view) {
  std::vector<std::string> keys;
  for (const key_average_row& row : view.rows) keys.push_back(row.key);
  return keys;
}

}  // namespace regionprof::test
