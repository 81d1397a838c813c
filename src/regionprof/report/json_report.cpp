// The JSON report (docs/report-schema.md), in the schema's key order, numbers as decimals
// (json/json_text.hpp): member by member, each built as a small boost::json DOM (a run, a region)
// and serialized at once, into a string (to_json) or streamed to a file (Profile::write_json).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "regionprof/json/json_text.hpp"
#include "regionprof/json/microseconds.hpp"
#include "regionprof/report/json_report.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/report/report_common.hpp"
#include "regionprof/report/tree_report.hpp"
#include "regionprof/trace/run_target_json.hpp"

namespace regionprof {
namespace {

using report_detail::sv;

namespace json = boost::json;
using report_detail::region_summary;
using report_detail::run_stats;

double fraction(std::int64_t part_ns, std::int64_t total_ns) {
  return static_cast<double>(part_ns) / static_cast<double>(total_ns);
}

json::object config_object(const analysis_result& result, const analysis_options& options,
                           const report_context& context) {
  json::object config;
  config["warmup_runs"] = context.warmup_runs;
  config["measured_runs"] = report_detail::measured_runs(result, context);
  config["uses_inference_function"] = context.uses_inference_function;
  config["run_marker"] = sv(options.run_marker.pattern);
  json::array rules;
  for (const name_rule& rule : options.region_rules) {
    json::object entry;
    entry["match"] = sv(report_detail::to_string(rule.match));
    entry["pattern"] = sv(rule.pattern);
    entry["kind"] = sv(rule.kind);
    entry["domain"] = sv(rule.domain);
    rules.push_back(std::move(entry));
  }
  config["region_rules"] = std::move(rules);
  config["cross_thread"] = options.cross_thread;
  return config;
}

json::object target_object(const trace& source) {
  json::object target;
  target["type"] = sv(source.target.type);
  for (auto& member : trace_detail::target_members(source.target)) target[member.key()] = member.value();
  return target;
}

/// `timing.devices`: [{"device", "device_time_us", "device_busy_us", "device_span_us"}], by device.
json::array devices_array(const std::vector<device_timing>& devices) {
  json::array out;
  for (const device_timing& d : devices) {
    json::object entry;
    entry["device"] = d.device;
    entry["device_time_us"] = ns_to_us(d.device_time_ns);
    entry["device_busy_us"] = ns_to_us(d.device_busy_ns);
    entry["device_span_us"] = ns_to_us(d.device_span_ns);
    out.push_back(std::move(entry));
  }
  return out;
}

/// `work`: {"bytes", "flops", "items"}, the quantities declared (rule 18).
json::object work_object(const declared_work& work) {
  json::object object;
  if (work.bytes) object["bytes"] = *work.bytes;
  if (work.flops) object["flops"] = *work.flops;
  if (work.items) object["items"] = *work.items;
  return object;
}

/// `throughput`: the figures present, in key order (rule 18).
json::object throughput_object(const report_detail::throughput& figures) {
  json::object object;
  for (std::size_t f = 0; f < report_detail::throughput::size; ++f) {
    if (figures.figures[f]) object[sv(report_detail::throughput::names[f])] = *figures.figures[f];
  }
  return object;
}

/// `memory` (rule 21): `{"cpu": {...}, "cuda:0": {...}}` by device ascending, each `{"allocated_bytes",
/// "freed_bytes", "allocations", "frees"[, "peak_allocated_bytes"]}`: a run's figures (device_memory:
/// integers) or their medians over the runs (device_memory_median: doubles). The one memory writer of
/// runs, residuals, regions and summaries.
template <typename DeviceFigures>
json::object memory_object(const std::vector<DeviceFigures>& devices) {
  json::object object;
  for (const DeviceFigures& figures : devices) {
    json::object entry;
    entry["allocated_bytes"] = figures.allocated_bytes;
    entry["freed_bytes"] = figures.freed_bytes;
    entry["allocations"] = figures.allocations;
    entry["frees"] = figures.frees;
    if (figures.peak_allocated_bytes) entry["peak_allocated_bytes"] = *figures.peak_allocated_bytes;
    object[sv(memory_device_key(figures.device))] = std::move(entry);
  }
  return object;
}

/// Adds `memory` to `entry` when the figures at `index` list some device.
void add_memory(json::object& entry, const analysis_result& result, std::uint32_t index) {
  if (const memory_figures* figures = report_detail::shown_memory(result, index)) {
    entry["memory"] = memory_object(*figures);
  }
}

json::object run_object(const run_result& run, const analysis_result& result,
                        std::optional<double> peak_bytes_per_second) {
  json::object timing;
  timing["wall_time_us"] = ns_to_us(run.wall_time_ns);
  timing["cpu_time_us"] = ns_to_us(run.cpu_time_ns);
  if (run.device_time_ns) timing["device_time_us"] = ns_to_us(*run.device_time_ns);
  if (run.device_busy_ns) timing["device_busy_us"] = ns_to_us(*run.device_busy_ns);
  if (run.device_span_ns) timing["device_span_us"] = ns_to_us(*run.device_span_ns);
  if (run.device_time_ns) timing["devices"] = devices_array(run.devices);

  const bool cpu_total = run.cpu_time_ns != 0;
  const bool device_total = run.device_time_ns.has_value() && *run.device_time_ns != 0;
  json::array regions;
  for (const region_aggregate& aggregate : run.regions) {
    json::object entry;
    entry["region_id"] = sv(result.regions[aggregate.region].id);
    entry["calls"] = aggregate.calls;
    entry["cpu_time_us"] = ns_to_us(aggregate.cpu_time_ns);
    if (cpu_total) entry["cpu_time_fraction"] = fraction(aggregate.cpu_time_ns, run.cpu_time_ns);
    if (aggregate.device_time_ns) {
      entry["device_time_us"] = ns_to_us(*aggregate.device_time_ns);
      if (device_total) entry["device_time_fraction"] = fraction(*aggregate.device_time_ns, *run.device_time_ns);
    }
    if (aggregate.off_thread_cpu_time_ns) entry["off_thread_cpu_time_us"] = ns_to_us(*aggregate.off_thread_cpu_time_ns);
    if (const declared_work* work = work_of(result, aggregate)) {
      entry["work"] = work_object(*work);
      entry["throughput"] = throughput_object(report_detail::throughput_of(result, aggregate, peak_bytes_per_second));
    }
    add_memory(entry, result, aggregate.memory);
    regions.push_back(std::move(entry));
  }

  json::object residual;
  residual["cpu_time_us"] = ns_to_us(run.residual_cpu_ns);
  if (cpu_total) residual["cpu_time_fraction"] = fraction(run.residual_cpu_ns, run.cpu_time_ns);
  if (run.residual_device_ns) {
    residual["device_time_us"] = ns_to_us(*run.residual_device_ns);
    if (device_total) residual["device_time_fraction"] = fraction(*run.residual_device_ns, *run.device_time_ns);
  }
  const auto position = static_cast<std::size_t>(&run - result.runs.data());  // run is one of result.runs
  if (position < result.run_memory.size()) add_memory(residual, result, result.run_memory[position].residual);

  json::object entry;
  entry["run_index"] = run.run_index;
  entry["timing"] = std::move(timing);
  entry["regions"] = std::move(regions);
  entry["residual"] = std::move(residual);
  if (position < result.run_memory.size()) add_memory(entry, result, result.run_memory[position].run);
  if (result.has_region_tree) entry["tree"] = report_detail::tree_json(run, result);  // rule 14
  return entry;
}

/// `key` (`events`, `rows`): key-average rows (rule 10: a view's, or a region's ops, rule 20), each
/// written member by member, so that a long name goes through without a copy.
void write_key_average_rows(report_detail::json_object_writer& parent, std::string_view key,
                            const std::vector<key_average_row>& rows) {
  parent.begin_array(key);
  for (const key_average_row& row : rows) {
    report_detail::json_object_writer entry = parent.object_element();
    entry.string_member("key", row.key);
    entry.member("device_type", sv(to_string(row.type)));
    entry.member("count", row.count);
    entry.member("self_cpu_time_total_us", ns_to_us(row.self_cpu_time_ns));
    entry.member("cpu_time_total_us", ns_to_us(row.cpu_time_total_ns));
    if (row.self_device_time_ns) entry.member("self_device_time_total_us", ns_to_us(*row.self_device_time_ns));
    if (row.device_time_total_ns) entry.member("device_time_total_us", ns_to_us(*row.device_time_total_ns));
    if (row.self_allocated_bytes) entry.member("self_allocated_bytes", *row.self_allocated_bytes);  // rule 21
    if (row.allocated_bytes) entry.member("allocated_bytes", *row.allocated_bytes);
    entry.finish();
  }
  parent.end_array();
}

/// `profiler`: the activities and the key-average views.
void write_profiler(report_detail::json_object_writer& report, const analysis_result& result) {
  report_detail::json_object_writer profiler = report.object_member("profiler");
  json::array activities{"CPU"};
  if (result.has_device_data) activities.push_back("CUDA");
  profiler.member("activities", activities);
  report_detail::json_object_writer views = profiler.object_member("key_averages");
  const auto view = [&views](std::string_view name, const key_average_view& v) {
    report_detail::json_object_writer object = views.object_member(name);
    object.member("sort_by", sv(v.sort_by));
    object.member("row_limit", v.row_limit);
    write_key_average_rows(object, "events", v.rows);
    object.finish();
  };
  view("cpu_time_total", result.cpu_time_total);
  if (result.device_time_total) view("device_time_total", *result.device_time_total);
  views.finish();
  profiler.finish();
}

/// `region_ops` (rule 20): `[{"region_id", "rows"}]`, one entry at a time, as the runs.
void write_region_ops(report_detail::json_object_writer& report, const analysis_result& result) {
  report.begin_array("region_ops");
  for (const region_op_rows& ops : result.region_ops) {
    report_detail::json_object_writer entry = report.object_element();
    entry.string_member("region_id", report_detail::region_ops_owner(result, ops));
    write_key_average_rows(entry, "rows", ops.rows);
    entry.finish();
  }
  report.end_array();
}

/// `memory_timelines` (rule 21): per charted run `{"run_index", "devices", "spans", "spans_left_out"}`,
/// `devices` keyed as memory objects, each `[[offset_us, total_bytes], ...]`, `spans` each `{"region_id",
/// "start_us", "end_us"}` since the run's start.
json::array memory_timelines_array(const analysis_result& result) {
  json::array timelines;
  for (const memory_timeline& timeline : result.memory_timelines) {
    json::object entry;
    entry["run_index"] = timeline.run;
    json::object devices;
    for (const memory_series& series : timeline.series) {
      json::array samples;
      samples.reserve(series.samples.size());
      for (const memory_sample& sample : series.samples) {
        samples.push_back(json::array{ns_to_us(sample.offset_ns), sample.total_bytes});
      }
      devices[sv(memory_device_key(series.device))] = std::move(samples);
    }
    entry["devices"] = std::move(devices);
    json::array spans;
    spans.reserve(timeline.spans.size());
    for (const region_span& span : timeline.spans) {
      json::object object;
      object["region_id"] = sv(result.regions.at(span.region).id);
      object["start_us"] = ns_to_us(span.start_offset_ns);
      object["end_us"] = ns_to_us(span.end_offset_ns);
      spans.push_back(std::move(object));
    }
    entry["spans"] = std::move(spans);
    entry["spans_left_out"] = timeline.spans_left_out;
    timelines.push_back(std::move(entry));
  }
  return timelines;
}

/// `{mean, min, max, median, stddev, mad[, cv]}` in us from statistics in ns (cv is unitless, absent
/// when the mean is 0).
json::object stats_object(const run_stats& stats) {
  json::object object;
  object["mean"] = stats.mean / 1000.0;
  object["min"] = stats.min / 1000.0;
  object["max"] = stats.max / 1000.0;
  object["median"] = stats.median / 1000.0;
  object["stddev"] = stats.stddev / 1000.0;
  object["mad"] = stats.mad / 1000.0;
  if (stats.cv) object["cv"] = *stats.cv;
  return object;
}

/// `run_summary`: the run totals across runs; an empty object when there are no runs.
json::object run_summary_object(const analysis_result& result) {
  json::object object;
  const std::optional<report_detail::run_summary> summary = report_detail::summarize_runs(result);
  if (!summary) return object;
  object["runs"] = result.runs.size();
  object["wall_time_us"] = stats_object(summary->wall);
  object["cpu_time_us"] = stats_object(summary->cpu);
  if (summary->device) object["device_time_us"] = stats_object(*summary->device);
  if (summary->device_busy) object["device_busy_us"] = stats_object(*summary->device_busy);
  if (summary->device_span) object["device_span_us"] = stats_object(*summary->device_span);
  object["residual_cpu_time_us"] = stats_object(summary->residual_cpu);
  if (summary->residual_device) object["residual_device_time_us"] = stats_object(*summary->residual_device);
  if (!summary->memory.empty()) object["memory"] = memory_object(summary->memory);  // rule 21
  if (!summary->residual_memory.empty()) object["residual_memory"] = memory_object(summary->residual_memory);
  return object;
}

json::object region_summary_object(const analysis_result& result, const report_detail::region_summary& summary) {
  json::object entry;
  entry["region_id"] = sv(result.regions[summary.region].id);
  entry["runs_present"] = summary.runs_present;
  entry["calls_total"] = summary.calls_total;
  entry["cpu_time_us"] = stats_object(summary.cpu);
  if (summary.device) entry["device_time_us"] = stats_object(*summary.device);
  if (summary.off_thread) entry["off_thread_cpu_time_us"] = stats_object(*summary.off_thread);
  if (!summary.median_throughput.empty()) entry["throughput"] = throughput_object(summary.median_throughput);
  if (!summary.memory.empty()) entry["memory"] = memory_object(summary.memory);  // rule 21
  return entry;
}

/// `stopping` (docs/design.md, rule 16): `noise` absent when undefined.
json::object stopping_object(const stopping_summary& stopping) {
  json::object object;
  object["criterion"] = sv(stopping.criterion);
  object["runs"] = stopping.runs;
  if (stopping.noise) object["noise"] = *stopping.noise;
  object["target"] = stopping.target;
  object["reason"] = sv(to_string(stopping.reason));
  return object;
}

json::object gpu_clocks_object(const gpu_clock_state& state) {
  json::object object;
  object["sm_clock_mhz"] = state.sm_clock_mhz;
  object["memory_clock_mhz"] = state.memory_clock_mhz;
  json::array reasons;
  for (const std::string& reason : state.throttle_reasons) reasons.emplace_back(sv(reason));
  object["throttle_reasons"] = std::move(reasons);
  return object;
}

/// `environment`: the members that were read, in the schema's order.
json::object environment_object(const machine_environment& env) {
  json::object object;
  if (!env.cpu_model.empty()) object["cpu_model"] = sv(env.cpu_model);
  if (env.cpu_count != 0) object["cpu_count"] = env.cpu_count;
  if (env.load_average) {
    object["load_average"] = json::array{(*env.load_average)[0], (*env.load_average)[1], (*env.load_average)[2]};
  }
  if (env.runs_load) {
    object["runs_load"] = json::object{{"samples", env.runs_load->samples},
                                       {"above_cpu_count", env.runs_load->above_cpu_count},
                                       {"max_runnable", env.runs_load->max_runnable}};
  }
  if (env.memory_total_bytes) object["memory_total_bytes"] = *env.memory_total_bytes;
  if (env.memory_available_bytes) object["memory_available_bytes"] = *env.memory_available_bytes;
  if (!env.cpu_governor.empty()) object["cpu_governor"] = sv(env.cpu_governor);
  if (env.cpu_last_level_cache_bytes) object["cpu_last_level_cache_bytes"] = *env.cpu_last_level_cache_bytes;
  if (!env.gpus.empty()) {
    json::array gpus;
    for (const gpu_environment& gpu : env.gpus) {
      json::object entry;
      entry["index"] = gpu.index;
      entry["name"] = sv(gpu.name);
      if (gpu.peak_memory_bandwidth_bytes_per_second) {
        entry["peak_memory_bandwidth_bytes_per_second"] = *gpu.peak_memory_bandwidth_bytes_per_second;
      }
      if (gpu.before) entry["before"] = gpu_clocks_object(*gpu.before);
      if (gpu.after) entry["after"] = gpu_clocks_object(*gpu.after);
      gpus.push_back(std::move(entry));
    }
    object["gpus"] = std::move(gpus);
  }
  return object;
}

}  // namespace

namespace report_detail {

json::object warning_object(const warning& item) {
  json::object entry;
  entry["code"] = sv(to_string(item.code));
  entry["message"] = sv(item.message);
  entry["source"] = sv(to_string(item.source));
  return entry;
}

void write_json_report(std::string& text, std::ostream* stream, const analysis_result& result, const trace& source,
                       const analysis_options& options, const report_context& context, int depth) {
  check_region_indices(result);

  json_object_writer report(text, stream, 2, depth);
  report.member("schema_version", 1);
  report.member("created_at", json::string(created_at(context)));
  json::object tool;
  tool["name"] = context.tool_name.empty() ? json::string("regionprof") : json::string(sv(context.tool_name));
  tool["version"] = sv(context.tool_version.empty() ? tool_version() : std::string_view(context.tool_version));
  report.member("tool", tool);
  report.member("config", config_object(result, options, context));
  report.member("target", target_object(source));
  json::object input;
  input["args_count"] = context.input.args_count;
  json::array kwargs;
  for (const std::string& name : context.input.kwargs) kwargs.emplace_back(sv(name));
  input["kwargs"] = std::move(kwargs);
  report.member("input", input);

  // One element at a time: a trace with a million runs never has a million run objects at once.
  const std::optional<double> peak = peak_memory_bandwidth(context);  // rule 18's peak fraction
  report.begin_array("runs");
  for (const run_result& run : result.runs) report.element(run_object(run, result, peak));
  report.end_array();
  write_profiler(report, result);  // row_limit rows per view

  report.begin_array("regions");
  for (const region_info& region : result.regions) {
    json::object entry;
    entry["id"] = sv(region.id);
    entry["name"] = sv(region.name);
    entry["kind"] = sv(region.kind);
    entry["module_type"] = sv(region.module_type);
    report.element(entry);
  }
  report.end_array();

  report.begin_array("warnings");
  for (const warning& item : result.warnings) report.element(report_detail::warning_object(item));
  report.end_array();

  // Additions beyond the reference module's report: new keys only.
  report.begin_array("region_summary");
  for (const region_summary& summary : summarize_regions(result, peak)) report.element(region_summary_object(result, summary));
  report.end_array();
  report.member("run_summary", run_summary_object(result));
  if (result.has_region_tree) report.member("tree_summary", report_detail::tree_summary_json(result));  // rule 14
  if (result.has_region_ops) write_region_ops(report, result);  // rule 20
  if (!result.memory_timelines.empty()) report.member("memory_timelines", memory_timelines_array(result));
  if (context.stopping) report.member("stopping", stopping_object(*context.stopping));  // rule 16
  if (context.environment) report.member("environment", environment_object(*context.environment));
  report.finish();
}

}  // namespace report_detail

std::string to_json(const Profile& profile) {
  std::string text;
  report_detail::write_json_report(text, nullptr, profile.result(), profile.source(), profile.options(),
                                   profile.context());
  text += '\n';
  return text;
}

}  // namespace regionprof
