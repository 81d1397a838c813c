// Key averages (docs/design.md, rule 10): one row per (name, device type) seen in a run, two sorted views;
// and the same rows per region that owns them (rule 20).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/analysis/engine.hpp"

namespace regionprof::detail::attribution {

namespace {

/// At most `limit` of `rows`: descending by `metric`, then ascending by key, then CPU before CUDA.
template <typename Metric>
std::vector<key_average_row> first_rows(const std::vector<key_average_row>& rows, Metric metric, std::size_t limit) {
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
  if (sorted.size() > limit) sorted.resize(limit);
  std::vector<key_average_row> out;
  out.reserve(sorted.size());
  for (const key_average_row* row : sorted) out.push_back(*row);
  return out;
}

}  // namespace

key_average_row engine::cpu_row(name_id name, std::uint64_t count, std::int64_t self_cpu, std::int64_t total_cpu,
                                std::int64_t self_device, std::int64_t total_device) const {
  key_average_row row;
  row.key = std::string(in_.strings.view(name));
  row.type = device_type::cpu;
  row.count = count;
  row.self_cpu_time_ns = self_cpu;
  row.cpu_time_total_ns = total_cpu;
  if (device_data_) {
    row.self_device_time_ns = self_device;
    row.device_time_total_ns = total_device;
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
  }
  std::stable_sort(device_ops.begin(), device_ops.end(), [&](region_op_index a, region_op_index b) {
    return region_ops_[a].name < region_ops_[b].name;
  });
  // Every row exists only until the views pick theirs: reserved exactly (a trace of 100,000 distinct
  // names would otherwise hold up to 2x their rows while the vector grows).
  std::size_t device_names = 0;
  for (std::size_t i = 0; i < device_ops.size(); ++i) {
    device_names += i == 0 || region_ops_[device_ops[i]].name != region_ops_[device_ops[i - 1]].name ? 1 : 0;
  }
  std::vector<key_average_row> rows;
  rows.reserve(static_cast<std::size_t>(std::count_if(cpu_keys_.begin(), cpu_keys_.end(),
                                                      [](const cpu_key_stats& s) { return s.count != 0; })) +
               device_names);
  for (std::size_t name = 0; name < cpu_keys_.size(); ++name) {
    const cpu_key_stats& s = cpu_keys_[name];
    if (s.count == 0) continue;
    rows.push_back(cpu_row(static_cast<name_id>(name), s.count, s.self_cpu, s.total_cpu, s.self_device, s.total_device));
  }
  for (std::size_t i = 0; i < device_ops.size();) {
    const name_id name = region_ops_[device_ops[i]].name;
    std::uint64_t count = 0;
    std::int64_t total = 0;
    for (; i < device_ops.size() && region_ops_[device_ops[i]].name == name; ++i) {
      count += region_ops_[device_ops[i]].stats.count;
      total += region_ops_[device_ops[i]].stats.total_device;
    }
    rows.push_back(device_row(name, count, total));
  }
  result.cpu_time_total = {"cpu_time_total", options_.row_limit,
                           first_rows(rows, [](const key_average_row& r) { return r.cpu_time_total_ns; },
                                      options_.row_limit)};
  if (device_data_) {
    result.device_time_total = key_average_view{
        "device_time_total", options_.row_limit,
        first_rows(rows, [](const key_average_row& r) { return r.device_time_total_ns.value_or(0); },
                   options_.row_limit)};
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
    std::vector<key_average_row> rows;
    rows.reserve(by_owner[owner].size());
    for (const region_op_index index : by_owner[owner]) {
      const region_op_stats& op = region_ops_[index];
      const cpu_key_stats& s = op.stats;
      rows.push_back(op.type == device_type::cpu
                         ? cpu_row(op.name, s.count, s.self_cpu, s.total_cpu, s.self_device, s.total_device)
                         : device_row(op.name, s.count, s.total_device));
    }
    return region_op_rows{region, first_rows(rows, own_domain_total_ns, options_.row_limit)};
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
