// Key averages (docs/design.md, rule 10): one row per (name, device type) seen in a run, two sorted views.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/analysis/engine.hpp"

namespace regionprof::detail::attribution {

void engine::add_key_averages(analysis_result& result) const {
  // Every row exists only until the views pick theirs: reserved exactly (a trace of 100,000 distinct
  // names would otherwise hold up to 2x their rows while the vector grows).
  const auto seen = [](const auto& keys) {
    return static_cast<std::size_t>(std::count_if(keys.begin(), keys.end(), [](const auto& s) { return s.count != 0; }));
  };
  std::vector<key_average_row> rows;
  rows.reserve(seen(cpu_keys_) + seen(device_keys_));
  for (std::size_t name = 0; name < cpu_keys_.size(); ++name) {
    const cpu_key_stats& s = cpu_keys_[name];
    if (s.count == 0) continue;
    key_average_row row;
    row.key = std::string(in_.strings.view(static_cast<name_id>(name)));
    row.type = device_type::cpu;
    row.count = s.count;
    row.self_cpu_time_ns = s.self_cpu;
    row.cpu_time_total_ns = s.total_cpu;
    if (device_data_) {
      row.self_device_time_ns = s.self_device;
      row.device_time_total_ns = s.total_device;
    }
    rows.push_back(std::move(row));
  }
  for (std::size_t name = 0; name < device_keys_.size(); ++name) {
    const device_key_stats& s = device_keys_[name];
    if (s.count == 0) continue;
    key_average_row row;
    row.key = std::string(in_.strings.view(static_cast<name_id>(name)));
    row.type = device_type::cuda;
    row.count = s.count;
    row.self_device_time_ns = s.total;
    row.device_time_total_ns = s.total;
    rows.push_back(std::move(row));
  }
  // Descending by the metric, then ascending by key, then by type; at most row_limit rows.
  auto view = [&](const char* sort_by, auto metric) {
    key_average_view v;
    v.sort_by = sort_by;
    v.row_limit = options_.row_limit;
    std::vector<const key_average_row*> sorted;
    sorted.reserve(rows.size());
    for (const key_average_row& row : rows) sorted.push_back(&row);
    std::sort(sorted.begin(), sorted.end(), [&](const key_average_row* a, const key_average_row* b) {
      const std::int64_t ma = metric(*a);
      const std::int64_t mb = metric(*b);
      if (ma != mb) return ma > mb;
      if (a->key != b->key) return a->key < b->key;
      return a->type < b->type;
    });
    if (sorted.size() > options_.row_limit) sorted.resize(options_.row_limit);
    for (const key_average_row* row : sorted) v.rows.push_back(*row);
    return v;
  };
  result.cpu_time_total = view("cpu_time_total", [](const key_average_row& r) { return r.cpu_time_total_ns; });
  if (device_data_) {
    result.device_time_total =
        view("device_time_total", [](const key_average_row& r) { return r.device_time_total_ns.value_or(0); });
  }
}

}  // namespace regionprof::detail::attribution
