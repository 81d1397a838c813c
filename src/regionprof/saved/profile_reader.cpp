// The saved-profile reader: JSON (json/json_with_number_text) -> the one result model (Profile),
// checking each key it reads against schema_version 1 and naming the key's path in every error.
#include "regionprof/saved/profile_reader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>

#include "regionprof/json/json_text.hpp"
#include "regionprof/json/json_with_number_text.hpp"
#include "regionprof/json/microseconds.hpp"
#include "regionprof/saved/profile_value.hpp"
#include "regionprof/trace/run_target_json.hpp"

namespace regionprof {
namespace {

namespace json = boost::json;
using report_detail::json_location;

constexpr std::uint64_t supported_schema_version = 1;

std::string full_message(const std::string& file, const std::string& path, const std::string& problem) {
  return path.empty() ? file + ": " + problem : file + ": " + path + ": " + problem;
}

const char* kind_name(const json::value& value) {
  switch (value.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64: return "an integer";
    case json::kind::double_: return "a non-integer number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}

/// Walks one document; every accessor names the key's location when it throws.
class reader {
 public:
  reader(const std::string& file, const std::unordered_map<std::string, std::string>& double_texts)
      : file_(file), double_texts_(double_texts) {}

  [[noreturn]] void fail(const json_location& at, const std::string& problem) const {
    throw profile_read_error(file_, at.text(), problem);
  }
  [[noreturn]] void expected(const json_location& at, const char* what, const json::value& found) const {
    fail(at, std::string("expected ") + what + ", found " + kind_name(found));
  }

  /// The member `name` of `object`, or nullptr when absent or null.
  static const json::value* optional_member(const json::object& object, std::string_view name) {
    return saved_detail::present_member(object, name);
  }
  const json::value& required_member(const json::object& object, const json_location& at,
                                     std::string_view name) const {
    const json::value* value = optional_member(object, name);
    if (value == nullptr) fail(at.member(name), "required key missing");
    return *value;
  }

  const json::object& as_object(const json::value& value, const json_location& at) const {
    if (!value.is_object()) expected(at, "an object", value);
    return value.get_object();
  }
  const json::array& as_array(const json::value& value, const json_location& at) const {
    if (!value.is_array()) expected(at, "an array", value);
    return value.get_array();
  }
  std::string as_string(const json::value& value, const json_location& at) const {
    if (!value.is_string()) expected(at, "a string", value);
    return std::string(value.get_string());
  }
  std::uint64_t as_unsigned(const json::value& value, const json_location& at) const {
    if (value.is_uint64()) return value.get_uint64();
    if (value.is_int64() && value.get_int64() >= 0) return static_cast<std::uint64_t>(value.get_int64());
    if (value.is_int64()) fail(at, "expected an unsigned integer, found " + std::to_string(value.get_int64()));
    expected(at, "an unsigned integer", value);
  }
  /// A device's total allocated (rule 21): an unsigned integer that fits in int64.
  std::int64_t as_total_bytes(const json::value& value, const json_location& at) const {
    const std::uint64_t bytes = as_unsigned(value, at);
    if (bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) fail(at, "above 2^63 - 1");
    return static_cast<std::int64_t>(bytes);
  }
  /// Microseconds -> ns, exactly from the number's text (integers exactly from their value).
  std::int64_t as_ns(const json::value& value, const json_location& at) const {
    constexpr std::int64_t max_us = std::numeric_limits<std::int64_t>::max() / 1000;
    if (value.is_int64()) {
      const std::int64_t us = value.get_int64();
      if (us > max_us || us < -max_us) fail(at, "microseconds out of range (ns must fit in int64)");
      return us * 1000;
    }
    if (value.is_uint64()) {
      if (value.get_uint64() > static_cast<std::uint64_t>(max_us)) {
        fail(at, "microseconds out of range (ns must fit in int64)");
      }
      return static_cast<std::int64_t>(value.get_uint64()) * 1000;
    }
    if (!value.is_double()) expected(at, "a number (microseconds)", value);
    const auto text = double_texts_.find(at.key());
    std::optional<std::int64_t> ns;
    if (text != double_texts_.end()) {
      ns = microseconds_text_to_ns(text->second);
    } else {
      // Not reached for documents from parse_json_with_number_text; kept for any other DOM.
      std::string shortest;
      report_detail::append_double(shortest, value.get_double());
      ns = microseconds_text_to_ns(shortest);
    }
    if (!ns) fail(at, "microseconds out of range (ns must fit in int64)");
    return *ns;
  }

  /// A number, exactly from its text (Boost.JSON's own double parse may be off by an ulp).
  double as_double(const json::value& value, const json_location& at) const {
    if (value.is_int64()) return static_cast<double>(value.get_int64());
    if (value.is_uint64()) return static_cast<double>(value.get_uint64());
    if (!value.is_double()) expected(at, "a number", value);
    const auto text = double_texts_.find(at.key());
    if (text == double_texts_.end()) return value.get_double();
    double parsed = 0.0;
    const std::string& digits = text->second;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), parsed);
    if (error != std::errc() || end != digits.data() + digits.size()) fail(at, "not a number: " + digits);
    return parsed;
  }

  /// `stopping` (docs/design.md, rule 16).
  stopping_summary stopping(const json::object& object, const json_location& at) const {
    stopping_summary summary;
    summary.criterion = as_string(required_member(object, at, "criterion"), at.member("criterion"));
    summary.runs = static_cast<std::size_t>(as_unsigned(required_member(object, at, "runs"), at.member("runs")));
    if (const json::value* noise = optional_member(object, "noise")) summary.noise = as_double(*noise, at.member("noise"));
    summary.target = as_double(required_member(object, at, "target"), at.member("target"));
    const std::string reason = as_string(required_member(object, at, "reason"), at.member("reason"));
    const auto parsed = stop_reason_from_string(reason);
    if (!parsed) fail(at.member("reason"), "unknown stopping reason '" + reason + "' (noise_reached, max_runs, max_time)");
    summary.reason = *parsed;
    return summary;
  }

  gpu_clock_state gpu_clocks(const json::object& object, const json_location& at) const {
    gpu_clock_state state;
    state.sm_clock_mhz = as_u32(required_member(object, at, "sm_clock_mhz"), at.member("sm_clock_mhz"));
    state.memory_clock_mhz = as_u32(required_member(object, at, "memory_clock_mhz"), at.member("memory_clock_mhz"));
    if (const json::array* reasons = optional_array(object, at, "throttle_reasons")) {
      for (std::size_t i = 0; i < reasons->size(); ++i) {
        state.throttle_reasons.push_back(as_string((*reasons)[i], at.member("throttle_reasons").element(i)));
      }
    }
    return state;
  }

  std::uint32_t as_u32(const json::value& value, const json_location& at) const {
    const std::uint64_t number = as_unsigned(value, at);
    if (number > std::numeric_limits<std::uint32_t>::max()) fail(at, "above 2^32 - 1");
    return static_cast<std::uint32_t>(number);
  }

  /// `environment`: every member optional, as written.
  machine_environment environment(const json::object& object, const json_location& at) const {
    machine_environment env;
    env.cpu_model = optional_string(object, at, "cpu_model");
    if (const json::value* count = optional_member(object, "cpu_count")) {
      env.cpu_count = static_cast<std::size_t>(as_unsigned(*count, at.member("cpu_count")));
    }
    if (const json::array* load = optional_array(object, at, "load_average")) {
      const json_location load_at = at.member("load_average");
      if (load->size() != 3) fail(load_at, "expected 3 numbers (1, 5 and 15 minutes), found " + std::to_string(load->size()));
      env.load_average = std::array<double, 3>{as_double((*load)[0], load_at.element(0)), as_double((*load)[1], load_at.element(1)),
                                               as_double((*load)[2], load_at.element(2))};
    }
    if (const json::object* load = optional_object(object, at, "runs_load")) {
      const json_location load_at = at.member("runs_load");
      load_samples& samples = env.runs_load.emplace();
      for (auto [name, member] : {std::pair{"samples", &load_samples::samples},
                                  std::pair{"above_cpu_count", &load_samples::above_cpu_count},
                                  std::pair{"max_runnable", &load_samples::max_runnable}}) {
        samples.*member = as_unsigned(required_member(*load, load_at, name), load_at.member(name));
      }
    }
    if (const json::value* total = optional_member(object, "memory_total_bytes")) {
      env.memory_total_bytes = as_unsigned(*total, at.member("memory_total_bytes"));
    }
    if (const json::value* available = optional_member(object, "memory_available_bytes")) {
      env.memory_available_bytes = as_unsigned(*available, at.member("memory_available_bytes"));
    }
    env.cpu_governor = optional_string(object, at, "cpu_governor");
    if (const json::value* llc = optional_member(object, "cpu_last_level_cache_bytes")) {
      env.cpu_last_level_cache_bytes = as_unsigned(*llc, at.member("cpu_last_level_cache_bytes"));
    }
    if (const json::array* gpus = optional_array(object, at, "gpus")) {
      const json_location gpus_at = at.member("gpus");
      for (std::size_t i = 0; i < gpus->size(); ++i) {
        const json_location gpu_at = gpus_at.element(i);
        const json::object& entry = as_object((*gpus)[i], gpu_at);
        gpu_environment gpu;
        gpu.index = as_u32(required_member(entry, gpu_at, "index"), gpu_at.member("index"));
        gpu.name = optional_string(entry, gpu_at, "name");
        if (const json::value* peak = optional_member(entry, "peak_memory_bandwidth_bytes_per_second")) {
          gpu.peak_memory_bandwidth_bytes_per_second = as_unsigned(*peak, gpu_at.member("peak_memory_bandwidth_bytes_per_second"));
        }
        if (const json::object* before = optional_object(entry, gpu_at, "before")) gpu.before = gpu_clocks(*before, gpu_at.member("before"));
        if (const json::object* after = optional_object(entry, gpu_at, "after")) gpu.after = gpu_clocks(*after, gpu_at.member("after"));
        env.gpus.push_back(std::move(gpu));
      }
    }
    return env;
  }

  std::optional<std::int64_t> optional_ns(const json::object& object, const json_location& at,
                                          std::string_view name) const {
    const json::value* value = optional_member(object, name);
    if (value == nullptr) return std::nullopt;
    return as_ns(*value, at.member(name));
  }
  std::string optional_string(const json::object& object, const json_location& at, std::string_view name) const {
    const json::value* value = optional_member(object, name);
    return value != nullptr ? as_string(*value, at.member(name)) : std::string();
  }
  /// The member `name` as an object, or nullptr when absent or null.
  const json::object* optional_object(const json::object& object, const json_location& at,
                                      std::string_view name) const {
    const json::value* value = optional_member(object, name);
    return value != nullptr ? &as_object(*value, at.member(name)) : nullptr;
  }
  const json::array* optional_array(const json::object& object, const json_location& at,
                                    std::string_view name) const {
    const json::value* value = optional_member(object, name);
    return value != nullptr ? &as_array(*value, at.member(name)) : nullptr;
  }

  /// The region's index in `regions` (and `tree_regions`): a new id is added with its kind and name split
  /// at the first ':' and module type "-", which `regions` may override.
  std::uint32_t region_index(const std::string& id, std::vector<region_info>& regions) {
    const auto [at, added] = index_.emplace(id, static_cast<std::uint32_t>(regions.size()));
    if (added) {
      const std::size_t colon = id.find(':');
      regions.push_back({id, colon == std::string::npos ? id : id.substr(colon + 1),
                         colon == std::string::npos ? std::string() : id.substr(0, colon), "-"});
    }
    return at->second;
  }

  /// `memory` of a run, a residual or a region in a run (docs/design.md, rule 21): per device key (`cpu`,
  /// `cuda:N`) the four sums (unsigned integers, required) and `peak_allocated_bytes` (a non-negative
  /// integer below 2^63, optional), stored by device ascending. The index of the figures in
  /// result.memory; no_memory when the key is absent or `{}`.
  std::uint32_t memory(const json::object& owner, const json_location& at, analysis_result& result) const {
    const json::object* object = optional_object(owner, at, "memory");
    if (object == nullptr || object->empty()) return no_memory;
    const json_location memory_at = at.member("memory");
    memory_figures figures;
    figures.reserve(object->size());
    for (const auto& member : *object) {
      const std::string_view key(member.key().data(), member.key().size());
      const json_location device_at = memory_at.member(key);
      const std::optional<memory_device> device = parse_memory_device_key(key);
      if (!device) fail(device_at, "unknown memory device (expected cpu or cuda:N, N in 0..32767)");
      const json::object& entry = as_object(member.value(), device_at);
      device_memory& figure = figures.emplace_back();
      figure.device = *device;
      for (auto [name, sum] : {std::pair{"allocated_bytes", &device_memory::allocated_bytes},
                               std::pair{"freed_bytes", &device_memory::freed_bytes},
                               std::pair{"allocations", &device_memory::allocations},
                               std::pair{"frees", &device_memory::frees}}) {
        figure.*sum = as_unsigned(required_member(entry, device_at, name), device_at.member(name));
      }
      if (const json::value* peak = optional_member(entry, "peak_allocated_bytes")) {
        figure.peak_allocated_bytes = as_total_bytes(*peak, device_at.member("peak_allocated_bytes"));
      }
    }
    std::sort(figures.begin(), figures.end(),
              [](const device_memory& a, const device_memory& b) { return a.device < b.device; });
    result.memory.push_back(std::move(figures));
    return static_cast<std::uint32_t>(result.memory.size() - 1);
  }

  region_aggregate region_time(const json::value& value, const json_location& at, analysis_result& result) {
    const json::object& object = as_object(value, at);
    region_aggregate region;
    region.region = region_index(as_string(required_member(object, at, "region_id"), at.member("region_id")),
                                 result.regions);
    region.calls = as_unsigned(required_member(object, at, "calls"), at.member("calls"));
    region.cpu_time_ns = as_ns(required_member(object, at, "cpu_time_us"), at.member("cpu_time_us"));
    region.device_time_ns = optional_ns(object, at, "device_time_us");
    region.off_thread_cpu_time_ns = optional_ns(object, at, "off_thread_cpu_time_us");
    if (const json::object* work = optional_object(object, at, "work")) {  // rule 18; throughput is derived
      const json_location work_at = at.member("work");
      declared_work declared;
      auto quantity = [&](std::string_view name, std::optional<std::uint64_t>& out) {
        if (const json::value* member = optional_member(*work, name)) out = as_unsigned(*member, work_at.member(name));
      };
      quantity("bytes", declared.bytes);
      quantity("flops", declared.flops);
      quantity("items", declared.items);
      region.work = static_cast<std::uint32_t>(result.work.size());
      result.work.push_back(declared);
    }
    region.memory = memory(object, at, result);
    return region;
  }

  /// `timing.devices[k]`.
  device_timing device_entry(const json::value& value, const json_location& at) const {
    const json::object& object = as_object(value, at);
    device_timing device;
    const std::uint64_t number = as_unsigned(required_member(object, at, "device"), at.member("device"));
    if (number > std::numeric_limits<std::uint16_t>::max()) fail(at.member("device"), "device number above 65535");
    device.device = static_cast<std::uint16_t>(number);
    device.device_time_ns = optional_ns(object, at, "device_time_us").value_or(0);
    device.device_busy_ns = optional_ns(object, at, "device_busy_us").value_or(0);
    device.device_span_ns = optional_ns(object, at, "device_span_us").value_or(0);
    return device;
  }

  /// One tree node (`runs[i].tree[n]`); its parent is the earlier node whose path is its path less the
  /// last id (a node without one, which regionprof never writes, becomes a topmost node).
  tree_node tree_entry(const json::value& value, const json_location& at, const run_result& run,
                       std::map<std::vector<std::uint32_t>, std::uint32_t>& node_of,
                       std::vector<region_info>& tree_regions) {
    const json::object& object = as_object(value, at);
    tree_node node;
    const json_location path_at = at.member("path");
    const json::array& path = as_array(required_member(object, at, "path"), path_at);
    if (path.empty()) fail(path_at, "expected a non-empty array of region ids");
    std::vector<std::uint32_t> ids;
    ids.reserve(path.size());
    for (std::size_t i = 0; i < path.size(); ++i) {
      ids.push_back(region_index(as_string(path[i], path_at.element(i)), tree_regions));
    }
    node.region = ids.back();
    ids.pop_back();
    if (const auto parent = node_of.find(ids); !ids.empty() && parent != node_of.end()) {
      node.parent = parent->second;
      node.depth = run.tree[parent->second].depth + 1;
    }
    ids.push_back(node.region);
    node_of.emplace(std::move(ids), static_cast<std::uint32_t>(run.tree.size()));
    node.calls = as_unsigned(required_member(object, at, "calls"), at.member("calls"));
    node.cpu_time_ns = as_ns(required_member(object, at, "cpu_time_us"), at.member("cpu_time_us"));
    node.self_cpu_time_ns = as_ns(required_member(object, at, "self_cpu_time_us"), at.member("self_cpu_time_us"));
    node.device_time_ns = optional_ns(object, at, "device_time_us");
    node.self_device_time_ns = optional_ns(object, at, "self_device_time_us");
    return node;
  }

  run_result run(const json::value& value, const json_location& at, analysis_result& result) {
    const json::object& object = as_object(value, at);
    run_result run;
    run.run_index = static_cast<std::size_t>(as_unsigned(required_member(object, at, "run_index"), at.member("run_index")));

    const json_location timing_at = at.member("timing");
    const json::object& timing = as_object(required_member(object, at, "timing"), timing_at);
    run.wall_time_ns = as_ns(required_member(timing, timing_at, "wall_time_us"), timing_at.member("wall_time_us"));
    run.cpu_time_ns = as_ns(required_member(timing, timing_at, "cpu_time_us"), timing_at.member("cpu_time_us"));
    run.device_time_ns = optional_ns(timing, timing_at, "device_time_us");
    run.device_busy_ns = optional_ns(timing, timing_at, "device_busy_us");
    run.device_span_ns = optional_ns(timing, timing_at, "device_span_us");
    if (const json::array* devices = optional_array(timing, timing_at, "devices")) {
      const json_location devices_at = timing_at.member("devices");
      for (std::size_t i = 0; i < devices->size(); ++i) run.devices.push_back(device_entry((*devices)[i], devices_at.element(i)));
    }

    const json_location regions_at = at.member("regions");
    const json::array& regions = as_array(required_member(object, at, "regions"), regions_at);
    run.regions.reserve(regions.size());
    for (std::size_t i = 0; i < regions.size(); ++i) {
      run.regions.push_back(region_time(regions[i], regions_at.element(i), result));
    }

    const json_location residual_at = at.member("residual");
    const json::object& residual = as_object(required_member(object, at, "residual"), residual_at);
    run.residual_cpu_ns = as_ns(required_member(residual, residual_at, "cpu_time_us"), residual_at.member("cpu_time_us"));
    run.residual_device_ns = optional_ns(residual, residual_at, "device_time_us");
    const run_memory_indices figures{.run = memory(object, at, result),
                                     .residual = memory(residual, residual_at, result)};
    if (figures.run != no_memory || figures.residual != no_memory) {
      result.run_memory.resize(result.runs.size() + 1);  // this run is pushed next (rule 21)
      result.run_memory.back() = figures;
    }
    return run;
  }

  /// `runs[i].tree`, after every run's regions are known (tree_regions starts with `regions`).
  void run_tree(const json::value& value, const json_location& at, run_result& run, analysis_result& result) {
    const json::array* tree = optional_array(value.get_object(), at, "tree");
    if (tree == nullptr) return;
    result.has_region_tree = true;
    const json_location tree_at = at.member("tree");
    std::map<std::vector<std::uint32_t>, std::uint32_t> node_of;
    run.tree.reserve(tree->size());
    for (std::size_t i = 0; i < tree->size(); ++i) {
      run.tree.push_back(tree_entry((*tree)[i], tree_at.element(i), run, node_of, result.tree_regions));
    }
  }

  key_average_view view(const json::object* key_averages, const json_location& at, std::string_view sort_by) const {
    key_average_view view;
    view.sort_by = std::string(sort_by);
    const json::object* object = key_averages != nullptr ? optional_object(*key_averages, at, sort_by) : nullptr;
    if (object == nullptr) return view;
    const json_location view_at = at.member(sort_by);
    if (const json::value* text = optional_member(*object, "sort_by")) view.sort_by = as_string(*text, view_at.member("sort_by"));
    if (const json::value* limit = optional_member(*object, "row_limit")) {
      view.row_limit = static_cast<std::size_t>(as_unsigned(*limit, view_at.member("row_limit")));
    }
    const json::array* events = optional_array(*object, view_at, "events");
    if (events == nullptr) return view;
    const json_location events_at = view_at.member("events");
    for (std::size_t i = 0; i < events->size(); ++i) view.rows.push_back(key_average((*events)[i], events_at.element(i)));
    return view;
  }

  /// A key-average row: a view's `events[i]`, or a region's `region_ops[k].rows[i]` (rule 20).
  key_average_row key_average(const json::value& value, const json_location& at) const {
    const json::object& event = as_object(value, at);
    key_average_row row;
    row.key = optional_string(event, at, "key");
    row.type = optional_string(event, at, "device_type") == "CUDA" ? device_type::cuda : device_type::cpu;
    if (const json::value* count = optional_member(event, "count")) row.count = as_unsigned(*count, at.member("count"));
    row.self_cpu_time_ns = optional_ns(event, at, "self_cpu_time_total_us").value_or(0);
    row.cpu_time_total_ns = optional_ns(event, at, "cpu_time_total_us").value_or(0);
    row.self_device_time_ns = optional_ns(event, at, "self_device_time_total_us");
    row.device_time_total_ns = optional_ns(event, at, "device_time_total_us");
    if (const json::value* bytes = optional_member(event, "self_allocated_bytes")) {
      row.self_allocated_bytes = as_unsigned(*bytes, at.member("self_allocated_bytes"));
    }
    if (const json::value* bytes = optional_member(event, "allocated_bytes")) {
      row.allocated_bytes = as_unsigned(*bytes, at.member("allocated_bytes"));
    }
    return row;
  }

  /// `region_ops` (rule 20): each entry names a region of `regions`, or the residual; one naming neither
  /// (a profile edited by hand, a region renamed in `regions` and `runs` only) is left out.
  void region_ops(const json::array& entries, const json_location& at, analysis_result& result) const {
    result.has_region_ops = true;
    result.region_ops.reserve(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const json_location entry_at = at.element(i);
      const json::object& object = as_object(entries[i], entry_at);
      const std::string id = as_string(required_member(object, entry_at, "region_id"), entry_at.member("region_id"));
      region_op_rows entry;
      if (id != region_op_rows::residual_id) {
        const auto found = index_.find(id);
        if (found == index_.end() || found->second >= result.regions.size()) continue;
        entry.region = found->second;
      }
      const json_location rows_at = entry_at.member("rows");
      const json::array& rows = as_array(required_member(object, entry_at, "rows"), rows_at);
      entry.rows.reserve(rows.size());
      for (std::size_t r = 0; r < rows.size(); ++r) entry.rows.push_back(key_average(rows[r], rows_at.element(r)));
      result.region_ops.push_back(std::move(entry));
    }
  }

  /// `memory_timelines` (rule 21): each entry's run is one of `runs`, each span's region one of `regions`.
  void memory_timelines(const json::array& entries, const json_location& at, analysis_result& result) const {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const json_location entry_at = at.element(i);
      const json::object& object = as_object(entries[i], entry_at);
      memory_timeline& timeline = result.memory_timelines.emplace_back();
      const json_location run_at = entry_at.member("run_index");
      const std::uint64_t run = as_unsigned(required_member(object, entry_at, "run_index"), run_at);
      if (run >= result.runs.size()) fail(run_at, "no such run (" + std::to_string(result.runs.size()) + " runs)");
      timeline.run = static_cast<std::uint32_t>(run);
      const json_location devices_at = entry_at.member("devices");
      for (const auto& [key, value] : as_object(required_member(object, entry_at, "devices"), devices_at)) {
        const json_location device_at = devices_at.member(key);
        const std::optional<memory_device> device = parse_memory_device_key(key);
        if (!device) fail(device_at, "unknown memory device (expected cpu or cuda:N, N in 0..32767)");
        memory_series& series = timeline.series.emplace_back();
        series.device = *device;
        const json::array& samples = as_array(value, device_at);
        series.samples.reserve(samples.size());
        for (std::size_t k = 0; k < samples.size(); ++k) {
          const json_location sample_at = device_at.element(k);
          const json::array& pair = as_array(samples[k], sample_at);
          if (pair.size() != 2) fail(sample_at, "expected [offset_us, total_bytes]");
          series.samples.push_back(
              {as_ns(pair[0], sample_at.element(0)), as_total_bytes(pair[1], sample_at.element(1))});
        }
      }
      std::sort(timeline.series.begin(), timeline.series.end(),
                [](const memory_series& a, const memory_series& b) { return a.device < b.device; });
      const json_location spans_at = entry_at.member("spans");
      const json::array& spans = as_array(required_member(object, entry_at, "spans"), spans_at);
      timeline.spans.reserve(spans.size());
      for (std::size_t k = 0; k < spans.size(); ++k) {
        const json_location span_at = spans_at.element(k);
        const json::object& span = as_object(spans[k], span_at);
        const std::string id = as_string(required_member(span, span_at, "region_id"), span_at.member("region_id"));
        const auto found = index_.find(id);
        if (found == index_.end() || found->second >= result.regions.size()) {
          fail(span_at.member("region_id"), "'" + id + "' is not one of `regions`");
        }
        timeline.spans.push_back({found->second,
                                  as_ns(required_member(span, span_at, "start_us"), span_at.member("start_us")),
                                  as_ns(required_member(span, span_at, "end_us"), span_at.member("end_us"))});
      }
      if (const json::value* left_out = optional_member(object, "spans_left_out")) {
        timeline.spans_left_out = as_unsigned(*left_out, entry_at.member("spans_left_out"));
      }
    }
  }

  static match_kind match_of(std::string_view name) {
    if (name == "exact") return match_kind::exact;
    if (name == "prefix") return match_kind::prefix;
    return match_kind::regex;
  }

  void config(const json::object& config, const json_location& at, analysis_options& options,
              report_context& context) const {
    if (const json::value* marker = optional_member(config, "run_marker")) {
      options.run_marker = {match_kind::regex, as_string(*marker, at.member("run_marker")), "region", ""};
      if (options.run_marker.pattern == default_run_marker().pattern) options.run_marker = default_run_marker();
    }
    if (const json::array* rules = optional_array(config, at, "region_rules")) {
      const json_location rules_at = at.member("region_rules");
      options.region_rules.clear();
      for (std::size_t i = 0; i < rules->size(); ++i) {
        const json_location rule_at = rules_at.element(i);
        const json::object& rule = as_object((*rules)[i], rule_at);
        std::string kind = optional_string(rule, rule_at, "kind");
        options.region_rules.push_back({match_of(optional_string(rule, rule_at, "match")),
                                        optional_string(rule, rule_at, "pattern"),
                                        kind.empty() ? std::string("region") : std::move(kind),
                                        optional_string(rule, rule_at, "domain")});
      }
    }
    if (const json::value* cross = optional_member(config, "cross_thread")) options.cross_thread = as_bool(*cross, at.member("cross_thread"));
    if (const json::value* warmup = optional_member(config, "warmup_runs")) {
      context.warmup_runs = static_cast<std::size_t>(as_unsigned(*warmup, at.member("warmup_runs")));
    }
    if (const json::value* measured = optional_member(config, "measured_runs")) {
      context.measured_runs = static_cast<std::size_t>(as_unsigned(*measured, at.member("measured_runs")));
    }
    if (const json::value* uses = optional_member(config, "uses_inference_function")) {
      context.uses_inference_function = as_bool(*uses, at.member("uses_inference_function"));
    }
  }

  bool as_bool(const json::value& value, const json_location& at) const {
    if (!value.is_bool()) expected(at, "a boolean", value);
    return value.get_bool();
  }

  /// `root`: where the profile sits in its document (the root, or `ranks[i].profile` in a job report).
  Profile read(const json::value& document, const json_location& root) {
    if (!document.is_object()) {
      fail(root, std::string("not a regionprof profile (the document is ") + kind_name(document) + ", not an object)");
    }
    const json::object& top = document.get_object();
    if (const json::value* kind = optional_member(top, "kind"); kind != nullptr && kind->is_string() &&
                                                                kind->get_string() == "regionprof_job") {
      fail(root, "a job report (kind regionprof_job), not a profile: read it with read_job or read_saved_report");
    }
    const json::value* version = optional_member(top, "schema_version");
    if (version == nullptr) fail(root, "not a regionprof profile (no schema_version)");
    const std::uint64_t schema_version = as_unsigned(*version, root.member("schema_version"));
    if (schema_version != supported_schema_version) {
      fail(root, "schema_version " + std::to_string(schema_version) + " is not supported (this reader reads " +
                     std::to_string(supported_schema_version) + ")");
    }

    trace source;
    analysis_options options;
    report_context context;
    analysis_result result;
    context.created_at = optional_string(top, root, "created_at");
    if (const json::object* tool = optional_object(top, root, "tool")) {
      const json_location at = root.member("tool");
      context.tool_name = optional_string(*tool, at, "name");
      context.tool_version = optional_string(*tool, at, "version");
    }
    if (const json::object* config_object = optional_object(top, root, "config")) {
      config(*config_object, root.member("config"), options, context);
    }
    if (const json::object* target = optional_object(top, root, "target")) {
      source.target.type = optional_string(*target, root.member("target"), "type");
      for (const auto& member : *target) {
        if (member.key() != "type") trace_detail::add_target_member(source.target, member.key(), member.value());
      }
    }
    if (const json::object* input = optional_object(top, root, "input")) {
      const json_location at = root.member("input");
      if (const json::value* count = optional_member(*input, "args_count")) {
        context.input.args_count = static_cast<std::size_t>(as_unsigned(*count, at.member("args_count")));
      }
      if (const json::array* kwargs = optional_array(*input, at, "kwargs")) {
        for (std::size_t i = 0; i < kwargs->size(); ++i) {
          context.input.kwargs.push_back(as_string((*kwargs)[i], at.member("kwargs").element(i)));
        }
      }
    }

    if (const json::object* stopping_object = optional_object(top, root, "stopping")) {
      context.stopping = stopping(*stopping_object, root.member("stopping"));
    }
    if (const json::object* environment_object = optional_object(top, root, "environment")) {
      context.environment = environment(*environment_object, root.member("environment"));
    }

    // `regions` first, so that the runs' region indices follow the file's region order.
    if (const json::array* regions = optional_array(top, root, "regions")) {
      const json_location at = root.member("regions");
      for (std::size_t i = 0; i < regions->size(); ++i) {
        const json_location entry_at = at.element(i);
        const json::object& object = as_object((*regions)[i], entry_at);
        region_info& region = result.regions[region_index(optional_string(object, entry_at, "id"), result.regions)];
        if (std::string name = optional_string(object, entry_at, "name"); !name.empty()) region.name = std::move(name);
        if (std::string kind = optional_string(object, entry_at, "kind"); !kind.empty()) region.kind = std::move(kind);
        if (std::string type = optional_string(object, entry_at, "module_type"); !type.empty()) {
          region.module_type = std::move(type);
        }
      }
    }
    const json_location runs_at = root.member("runs");
    const json::array& runs = as_array(required_member(top, root, "runs"), runs_at);
    result.runs.reserve(runs.size());
    for (std::size_t i = 0; i < runs.size(); ++i) result.runs.push_back(run(runs[i], runs_at.element(i), result));
    result.tree_regions = result.regions;
    for (std::size_t i = 0; i < runs.size(); ++i) run_tree(runs[i], runs_at.element(i), result.runs[i], result);
    if (optional_member(top, "tree_summary") != nullptr) result.has_region_tree = true;
    if (const json::array* ops = optional_array(top, root, "region_ops")) region_ops(*ops, root.member("region_ops"), result);
    if (const json::array* timelines = optional_array(top, root, "memory_timelines")) {
      memory_timelines(*timelines, root.member("memory_timelines"), result);
    }

    const json::object* profiler = optional_object(top, root, "profiler");
    const json_location profiler_at = root.member("profiler");
    const json::object* key_averages =
        profiler != nullptr ? optional_object(*profiler, profiler_at, "key_averages") : nullptr;
    const json_location key_averages_at = profiler_at.member("key_averages");
    result.has_device_data = std::any_of(result.runs.begin(), result.runs.end(),
                                         [](const run_result& r) { return r.device_time_ns.has_value(); });
    if (profiler != nullptr) {
      if (const json::array* activities = optional_array(*profiler, profiler_at, "activities")) {
        for (const json::value& activity : *activities) {
          if (activity.is_string() && activity.get_string() == "CUDA") result.has_device_data = true;
        }
      }
    }
    if (key_averages != nullptr && optional_member(*key_averages, "device_time_total") != nullptr) {
      result.has_device_data = true;
    }
    result.cpu_time_total = view(key_averages, key_averages_at, "cpu_time_total");
    if (result.has_device_data) result.device_time_total = view(key_averages, key_averages_at, "device_time_total");
    if (result.has_device_data) fill_device_fields(result);
    options.row_limit = result.cpu_time_total.row_limit;
    source.device_tracing = result.has_device_data;

    if (const json::array* warnings = optional_array(top, root, "warnings")) {
      const json_location at = root.member("warnings");
      for (std::size_t i = 0; i < warnings->size(); ++i) {
        const json_location entry_at = at.element(i);
        const json::object& object = as_object((*warnings)[i], entry_at);
        const std::optional<warning_code> code = warning_code_from_string(optional_string(object, entry_at, "code"));
        const std::optional<warning_source> from = warning_source_from_string(optional_string(object, entry_at, "source"));
        if (code) result.warnings.push_back({*code, from.value_or(warning_source::core), optional_string(object, entry_at, "message")});
      }
    }
    return Profile(std::move(source), std::move(options), std::move(context), std::move(result));
  }

  /// With device data every run, region and residual has a device time (the analysis writes one for
  /// each); a profile that leaves one out (another tool's) reads it as 0.
  static void fill_device_fields(analysis_result& result) {
    for (run_result& run : result.runs) {
      if (!run.device_time_ns) run.device_time_ns = 0;
      if (!run.residual_device_ns) run.residual_device_ns = 0;
      for (region_aggregate& region : run.regions) {
        if (!region.device_time_ns) region.device_time_ns = 0;
      }
    }
  }

 private:
  const std::string& file_;
  const std::unordered_map<std::string, std::string>& double_texts_;
  std::unordered_map<std::string, std::uint32_t> index_;  ///< region id -> index in regions / tree_regions
};

}  // namespace

profile_read_error::profile_read_error(std::string file, std::string path, std::string problem, std::uint64_t line,
                                       std::uint64_t column)
    : std::runtime_error(full_message(file, path, problem)),
      file_(std::move(file)),
      path_(std::move(path)),
      problem_(std::move(problem)),
      line_(line),
      column_(column) {}

Profile read_profile_text(std::string_view text, const std::string& name) {
  const report_detail::json_with_number_text parsed = saved_detail::parse_document(text, name);
  return reader(name, parsed.double_texts).read(parsed.document, report_detail::json_location());
}

namespace saved_detail {

const boost::json::value* present_member(const boost::json::object& object, std::string_view name) {
  const json::value* value = object.if_contains(json::string_view(name.data(), name.size()));
  return value != nullptr && !value->is_null() ? value : nullptr;
}

report_detail::json_with_number_text parse_document(std::string_view text, const std::string& name) {
  report_detail::json_with_number_text parsed;
  report_detail::json_syntax_error syntax;
  if (!report_detail::parse_json_with_number_text(text, parsed, syntax)) {
    throw profile_read_error(name, "",
                             "invalid JSON at line " + std::to_string(syntax.line) + ", column " +
                                 std::to_string(syntax.column) + " (byte offset " + std::to_string(syntax.offset) +
                                 "): " + syntax.message,
                             syntax.line, syntax.column);
  }
  return parsed;
}

Profile read_profile_value(const boost::json::value& value, const report_detail::json_location& at,
                           const std::string& name, const std::unordered_map<std::string, std::string>& double_texts) {
  return reader(name, double_texts).read(value, at);
}

std::string read_text_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw profile_read_error(path, "", "is a directory, not a profile (a JSON report file)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw profile_read_error(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure&) {
    // libstdc++'s filebuf throws from underflow when read() fails (EISDIR, EIO).
    throw profile_read_error(path, "", std::string("cannot read: ") + std::strerror(errno));
  }
  if (in.bad()) throw profile_read_error(path, "", std::string("cannot read: ") + std::strerror(errno));
  return text;
}

}  // namespace saved_detail

Profile read_profile(const std::string& path) {
  return read_profile_text(saved_detail::read_text_file(path), path);
}

}  // namespace regionprof
