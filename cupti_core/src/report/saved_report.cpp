// saved_profile -> the report writers' inputs (regionprof/saved_report.hpp).
#include "regionprof/saved_report.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace regionprof {
namespace {

namespace json = boost::json;

const json::value* member(const json::value& value, std::string_view name) {
  if (!value.is_object()) return nullptr;
  const json::value* found = value.get_object().if_contains(json::string_view(name.data(), name.size()));
  return found != nullptr && !found->is_null() ? found : nullptr;
}

std::string text(const json::value* value, std::string fallback = "") {
  return value != nullptr && value->is_string() ? std::string(value->get_string()) : fallback;
}

/// Microseconds as written (a double after parsing) to ns, rounded; 0 for anything but a number.
std::int64_t ns_of(const json::value* value) {
  if (value == nullptr || !value->is_number()) return 0;
  return std::llround(value->to_number<double>() * 1000.0);
}

std::uint64_t count_of(const json::value* value) {
  if (value == nullptr) return 0;
  if (value->is_uint64()) return value->get_uint64();
  if (value->is_int64()) return value->get_int64() < 0 ? 0 : static_cast<std::uint64_t>(value->get_int64());
  return 0;
}

match_kind match_of(std::string_view name) {
  if (name == "exact") return match_kind::exact;
  if (name == "prefix") return match_kind::prefix;
  return match_kind::regex;
}

key_average_view view_of(const json::value* value, std::string_view sort_by) {
  key_average_view view;
  view.sort_by = std::string(sort_by);
  if (value == nullptr) return view;
  view.sort_by = text(member(*value, "sort_by"), view.sort_by);
  view.row_limit = static_cast<std::size_t>(count_of(member(*value, "row_limit")));
  const json::value* events = member(*value, "events");
  if (events == nullptr || !events->is_array()) return view;
  for (const json::value& event : events->get_array()) {
    key_average_row row;
    row.key = text(member(event, "key"));
    row.type = text(member(event, "device_type")) == "CUDA" ? device_type::cuda : device_type::cpu;
    row.count = count_of(member(event, "count"));
    row.self_cpu_time_ns = ns_of(member(event, "self_cpu_time_total_us"));
    row.cpu_time_total_ns = ns_of(member(event, "cpu_time_total_us"));
    if (const json::value* v = member(event, "self_device_time_total_us")) row.self_device_time_ns = ns_of(v);
    if (const json::value* v = member(event, "device_time_total_us")) row.device_time_total_ns = ns_of(v);
    view.rows.push_back(std::move(row));
  }
  return view;
}

/// `run.tree` from the saved nodes; tree region indices through `tree_index`. A node's parent is the
/// earlier node whose path is its path less the last id; a node without one (not written by regionprof)
/// becomes a topmost node of its last region.
void rebuild_tree(const std::vector<saved_tree_node>& saved, run_result& run,
                  const std::function<std::uint32_t(const std::string&)>& tree_index) {
  std::map<std::vector<std::string>, std::uint32_t> node_of;
  for (const saved_tree_node& node : saved) {
    tree_node built;
    built.region = tree_index(node.path.back());
    const std::vector<std::string> parent_path(node.path.begin(), node.path.end() - 1);
    if (const auto parent = node_of.find(parent_path); !parent_path.empty() && parent != node_of.end()) {
      built.parent = parent->second;
      built.depth = run.tree[parent->second].depth + 1;
    }
    built.calls = node.calls;
    built.cpu_time_ns = node.cpu_ns;
    built.self_cpu_time_ns = node.self_cpu_ns;
    built.device_time_ns = node.device_ns;
    built.self_device_time_ns = node.self_device_ns;
    node_of.emplace(node.path, static_cast<std::uint32_t>(run.tree.size()));
    run.tree.push_back(built);
  }
}

}  // namespace

saved_report_input to_report_input(const saved_profile& profile) {
  saved_report_input input;
  analysis_result& result = input.result;
  std::unordered_map<std::string, std::uint32_t> index;
  const auto region_index = [&](const std::string& id) {
    const auto [it, added] = index.emplace(id, static_cast<std::uint32_t>(result.regions.size()));
    if (added) {
      const std::size_t colon = id.find(':');
      region_info info{id, colon == std::string::npos ? id : id.substr(colon + 1),
                       colon == std::string::npos ? std::string() : id.substr(0, colon), "-"};
      result.regions.push_back(std::move(info));
    }
    return it->second;
  };
  for (const saved_region& region : profile.regions) {
    const std::uint32_t at = region_index(region.id);
    if (!region.name.empty()) result.regions[at].name = region.name;
    if (!region.kind.empty()) result.regions[at].kind = region.kind;
    if (!region.module_type.empty()) result.regions[at].module_type = region.module_type;
  }
  for (const saved_run& run : profile.runs) {
    if (run.device_ns) result.has_device_data = true;
  }
  for (const saved_run& saved : profile.runs) {
    run_result run;
    run.run_index = static_cast<std::size_t>(saved.run_index);
    run.wall_time_ns = saved.wall_ns;
    run.cpu_time_ns = saved.cpu_ns;
    run.device_time_ns = saved.device_ns;
    run.device_busy_ns = saved.device_busy_ns;
    run.device_span_ns = saved.device_span_ns;
    if (result.has_device_data && !run.device_time_ns) run.device_time_ns = 0;
    for (const saved_region_time& time : saved.regions) {
      region_aggregate aggregate;
      aggregate.region = region_index(time.region_id);
      aggregate.calls = time.calls;
      aggregate.cpu_time_ns = time.cpu_ns;
      aggregate.device_time_ns = time.device_ns;
      if (result.has_device_data && !aggregate.device_time_ns) aggregate.device_time_ns = 0;
      aggregate.off_thread_cpu_time_ns = time.off_thread_cpu_ns;
      run.regions.push_back(aggregate);
    }
    run.residual_cpu_ns = saved.residual.cpu_ns;
    run.residual_device_ns = saved.residual.device_ns;
    if (result.has_device_data && !run.residual_device_ns) run.residual_device_ns = 0;
    result.runs.push_back(std::move(run));
  }

  // tree_regions: `regions` first (same indices), then the ids seen only nested, by first appearance.
  result.tree_regions = result.regions;
  const auto tree_index = [&](const std::string& id) {
    const auto [it, added] = index.emplace(id, static_cast<std::uint32_t>(result.tree_regions.size()));
    if (added) {
      const std::size_t colon = id.find(':');
      result.tree_regions.push_back({id, colon == std::string::npos ? id : id.substr(colon + 1),
                                     colon == std::string::npos ? std::string() : id.substr(0, colon), "-"});
    }
    return it->second;
  };
  for (std::size_t r = 0; r < profile.runs.size(); ++r) {
    if (!profile.runs[r].tree) continue;
    result.has_region_tree = true;
    rebuild_tree(*profile.runs[r].tree, result.runs[r], tree_index);
  }

  const json::value& document = profile.document;
  const json::value* key_averages = member(document, "profiler") ? member(*member(document, "profiler"), "key_averages")
                                                                 : nullptr;
  result.cpu_time_total = view_of(key_averages ? member(*key_averages, "cpu_time_total") : nullptr, "cpu_time_total");
  if (result.has_device_data) {
    result.device_time_total =
        view_of(key_averages ? member(*key_averages, "device_time_total") : nullptr, "device_time_total");
  }
  for (const saved_warning& item : profile.warnings) {
    if (item.code) result.warnings.push_back({*item.code, item.source.value_or(warning_source::core), item.message});
  }

  input.source.target_type = profile.target_type;
  const json::value* config = member(document, "config");
  if (config != nullptr) {
    input.options.run_marker = {match_kind::regex, profile.run_marker.value_or(""), "region", ""};
    if (input.options.run_marker.pattern == default_run_marker().pattern) input.options.run_marker = default_run_marker();
    if (const json::value* rules = member(*config, "region_rules"); rules != nullptr && rules->is_array()) {
      input.options.region_rules.clear();
      for (const json::value& rule : rules->get_array()) {
        input.options.region_rules.push_back({match_of(text(member(rule, "match"))), text(member(rule, "pattern")),
                                              text(member(rule, "kind"), "region"), text(member(rule, "domain"))});
      }
    }
    if (const json::value* cross = member(*config, "cross_thread"); cross != nullptr && cross->is_bool()) {
      input.options.cross_thread = cross->get_bool();
    }
    input.context.warmup_runs = static_cast<std::size_t>(count_of(member(*config, "warmup_runs")));
    input.context.measured_runs = static_cast<std::size_t>(count_of(member(*config, "measured_runs")));
    if (const json::value* uses = member(*config, "uses_inference_function"); uses != nullptr && uses->is_bool()) {
      input.context.uses_inference_function = uses->get_bool();
    }
  }
  input.options.row_limit = result.cpu_time_total.row_limit;
  input.context.created_at = profile.created_at;
  return input;
}

}  // namespace regionprof
