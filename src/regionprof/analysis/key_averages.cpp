// Key averages (docs/design.md, rule 10): one row per (name, device type) seen in a run, two sorted views;
// and the same rows per region that owns them (rule 20).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "regionprof/analysis/engine.hpp"

namespace regionprof::detail::attribution {

template <typename Metric>
std::vector<key_average_row> engine::first_rows(std::vector<row_source> sources, Metric metric, std::size_t limit) const {
  const auto before = [&](const row_source& a, const row_source& b) {
    const std::int64_t ma = metric(a);
    const std::int64_t mb = metric(b);
    if (ma != mb) return ma > mb;
    const std::string_view ka = in_.strings.view(a.name);
    const std::string_view kb = in_.strings.view(b.name);
    if (ka != kb) return ka < kb;
    return a.type < b.type;
  };
  const std::size_t kept = std::min(limit, sources.size());
  std::partial_sort(sources.begin(), sources.begin() + static_cast<std::ptrdiff_t>(kept), sources.end(), before);
  std::vector<key_average_row> out;
  out.reserve(kept);
  for (std::size_t i = 0; i < kept; ++i) {
    const row_source& r = sources[i];
    const cpu_key_stats& s = *r.stats;
    out.push_back(r.type == device_type::cpu ? cpu_row(r.name, s) : device_row(r.name, s.count, s.total_device));
  }
  return out;
}

key_average_row engine::cpu_row(name_id name, const cpu_key_stats& stats) const {
  key_average_row row;
  row.key = std::string(in_.strings.view(name));
  row.type = device_type::cpu;
  row.count = stats.count;
  row.self_cpu_time_ns = stats.self_cpu;
  row.cpu_time_total_ns = stats.total_cpu;
  if (device_data_) {
    row.self_device_time_ns = stats.self_device;
    row.device_time_total_ns = stats.total_device;
  }
  if (!in_.memory_events.empty()) {  // rule 21
    row.self_allocated_bytes = stats.self_allocated;
    row.allocated_bytes = stats.total_allocated;
  }
  return row;
}

key_average_row engine::device_row(name_id name, std::uint64_t count, std::int64_t total) const {
  key_average_row row;
  row.key = std::string(in_.strings.view(name));
  row.type = device_type::cuda;
  row.count = count;
  row.self_device_time_ns = total;
  row.device_time_total_ns = total;
  return row;
}

// The ops' figures are kept per owner (rule 20) and summed here over the owners; the other intervals'
// (run markers, region instances) are cpu_keys_'s.
void engine::add_key_averages(analysis_result& result) {
  std::vector<region_op_index> device_ops;
  for (std::size_t i = 0; i < region_ops_.size(); ++i) {
    const region_op_stats& op = region_ops_[region_op_index::at(i)];
    if (op.type == device_type::cuda) {
      device_ops.push_back(region_op_index::at(i));
      continue;
    }
    cpu_key_stats& sum = cpu_keys_[op.name];
    sum.count += op.stats.count;
    sum.self_cpu += op.stats.self_cpu;
    sum.total_cpu += op.stats.total_cpu;
    sum.self_device += op.stats.self_device;
    sum.total_device += op.stats.total_device;
    sum.self_allocated += op.stats.self_allocated;
    sum.total_allocated += op.stats.total_allocated;
  }
  std::stable_sort(device_ops.begin(), device_ops.end(), [&](region_op_index a, region_op_index b) {
    return region_ops_[a].name < region_ops_[b].name;
  });
  std::vector<std::pair<name_id, cpu_key_stats>> device_sums;  // per device op name: count, total_device
  for (const region_op_index index : device_ops) {
    const region_op_stats& op = region_ops_[index];
    if (device_sums.empty() || device_sums.back().first != op.name) device_sums.push_back({op.name, {}});
    device_sums.back().second.count += op.stats.count;
    device_sums.back().second.total_device += op.stats.total_device;
  }
  std::vector<row_source> sources;
  for (std::size_t name = 0; name < cpu_keys_.size(); ++name) {
    if (cpu_keys_[name].count != 0) sources.push_back({static_cast<name_id>(name), device_type::cpu, &cpu_keys_[name]});
  }
  for (const auto& [name, sum] : device_sums) sources.push_back({name, device_type::cuda, &sum});
  result.cpu_time_total = {"cpu_time_total", options_.row_limit,
                           first_rows(sources, [](const row_source& r) { return r.stats->total_cpu; }, options_.row_limit)};
  if (device_data_) {
    result.device_time_total = key_average_view{
        "device_time_total", options_.row_limit,
        first_rows(std::move(sources), [](const row_source& r) { return r.stats->total_device; }, options_.row_limit)};
  }
}

region_op_index engine::region_op_lookup(op_cache_entry& last, std::uint32_t owner, name_id name, device_type type) {
  region_op_index found = no_region_op::none;
  if (last.owner[1] == owner) {
    found = last.entry[1];
  } else {
    flat_index_map<region_op_index>& entries = type == device_type::cpu ? cpu_op_entries_ : device_op_entries_;
    const std::uint64_t key = (std::uint64_t{owner} << 32) | name;
    found = entries.find(key);
    if (!found.is_index()) {
      found = region_ops_.next();
      region_ops_.push_back({.owner = owner, .name = name, .type = type});
      entries.insert(key, found);
    }
  }
  last.owner[1] = last.owner[0];
  last.entry[1] = last.entry[0];
  last.owner[0] = owner;
  last.entry[0] = found;
  return found;
}

// One entry per reported region (result.regions order), then the residual's when there are runs; each
// owner's rows as the key averages make them, cut as rule 20 says.
void engine::add_region_ops(analysis_result& result, const std::vector<std::uint32_t>& result_index) const {
  result.has_region_ops = true;
  const std::uint32_t residual = residual_owner();
  std::vector<std::vector<region_op_index>> by_owner(std::size_t{residual} + 1);
  for (std::size_t i = 0; i < region_ops_.size(); ++i) {
    by_owner[region_ops_[region_op_index::at(i)].owner].push_back(region_op_index::at(i));
  }
  const auto entry = [&](std::uint32_t owner, std::uint32_t region) {
    std::vector<row_source> sources;
    sources.reserve(by_owner[owner].size());
    for (const region_op_index index : by_owner[owner]) {
      const region_op_stats& op = region_ops_[index];
      sources.push_back({op.name, op.type, &op.stats});
    }
    // The row's total in its own domain (own_domain_total_ns of the row it makes).
    const auto own_domain = [](const row_source& r) {
      return r.type == device_type::cpu ? r.stats->total_cpu : r.stats->total_device;
    };
    return region_op_rows{region, first_rows(std::move(sources), own_domain, options_.row_limit)};
  };
  std::vector<std::uint32_t> owner_of(result.regions.size());
  for (std::uint32_t owner = 0; owner < result_index.size(); ++owner) {
    if (result_index[owner] < owner_of.size()) owner_of[result_index[owner]] = owner;
  }
  result.region_ops.reserve(result.regions.size() + 1);
  for (std::uint32_t region = 0; region < owner_of.size(); ++region) {
    result.region_ops.push_back(entry(owner_of[region], region));
  }
  if (!result.runs.empty()) result.region_ops.push_back(entry(residual, region_op_rows::residual));
}

}  // namespace regionprof::detail::attribution
