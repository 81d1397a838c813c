// Attribution of a trace's CPU and device time to runs and regions (docs/design.md, rules 1-15, 18 and 20).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/trace/optional_ns.hpp"
#include "regionprof/trace/trace.hpp"
#include "regionprof/trace/warnings.hpp"

namespace regionprof {

/// How a name_rule's pattern is compared with a range's name.
enum class match_kind : std::uint8_t {
  exact = 0,   ///< the whole name equals `pattern`
  prefix = 1,  ///< the name starts with `pattern`
  regex = 2,   ///< RE2 regex that must match the whole name (linear time; no backreferences or lookaround)
};

/// Maps a range name to a run marker or a region.
///
/// Region ids are `kind + ":" + part`, where part is: for `exact`, the whole name; for `prefix`, the
/// name without the prefix; for `regex`, the first capture group, or the whole name without one.
/// Rules are evaluated once per distinct (name, domain), never per event. API calls never match.
///
/// ```
/// regionprof::name_rule layers{regionprof::match_kind::regex, "layer_(.*)", "layer"};
/// // "layer_3" -> region id "layer:3"
/// ```
struct name_rule {
  match_kind match = match_kind::exact;
  std::string pattern;
  std::string kind = "region";  ///< region kind (ignored for run markers)
  std::string domain;           ///< NVTX domain the range must be in; empty matches every domain

  friend bool operator==(const name_rule&, const name_rule&) = default;
};

/// The one default run marker: `regionprof.profiled_run` exactly, in any domain (run_marker.hpp).
name_rule default_run_marker();
/// The reference module's two region kinds, prefixes `aot_module:` and `untuned_module:`, and their
/// backward regions' (rule 19), prefixes `aot_module_backward:` and `untuned_module_backward:`.
std::vector<name_rule> default_region_rules();

/// The one validation of a name rule, used by the analysis, the harness and the CLI: a non-empty
/// pattern, a known match kind, and for `regex` a pattern that compiles. Throws std::invalid_argument
/// `<role> '<pattern>': <reason>` otherwise; `role` names the rule (`run marker`, `region rule`).
///
/// ```
/// regionprof::validate_name_rule({regionprof::match_kind::regex, "layer_("}, "region rule");
/// // throws: region rule 'layer_(': invalid regex (RE2 syntax; no backreferences or lookaround): ...
/// ```
void validate_name_rule(const name_rule& rule, std::string_view role);

/// Parses the CLI form `REGEX[=KIND]` (KIND defaults to `region`; KIND is the text after the last
/// `=` when it is an identifier, so a regex may itself contain `=`). Throws std::invalid_argument
/// (validate_name_rule's message, role `region rule`) when REGEX is empty or invalid.
name_rule parse_region_arg(std::string_view arg);

/// Every knob of the analysis in one place.
///
/// ```
/// regionprof::analysis_options options;
/// options.run_marker = {regionprof::match_kind::regex, "ProfilerStep#\\d+"};
/// options.region_rules = {regionprof::parse_region_arg("## (.*) ##=phase")};
/// auto result = regionprof::analyze(trace, options);
/// ```
/// Who owns the device ops of a CUDA graph replay (docs/design.md, rule 15).
enum class graph_attribution : std::uint8_t {
  capture = 0,  ///< the region open where each op's graph node was captured or built, in the replay's run
  launch = 1,   ///< the region around the graph launch (rule 6), as for any other launch
};

/// "capture" or "launch".
std::string_view to_string(graph_attribution mode) noexcept;
/// The mode named `text` ("capture", "launch"); nullopt for anything else.
///
/// ```
/// options.graph_attribution = *regionprof::parse_graph_attribution("launch");
/// ```
std::optional<graph_attribution> parse_graph_attribution(std::string_view text) noexcept;

struct analysis_options {
  // run_marker, region_rules (the first matching rule wins), cross_thread (rule 9), graph_attribution
  // (rule 15), row_limit (key-average rows per view), skip_runs (the first N markers in time are warm-up
  // runs): the user options, declared in analysis_options.def.
#define REGIONPROF_OPTION(member, type, initializer, ...) type member = initializer;
#include "regionprof/analysis/analysis_options.def"
#undef REGIONPROF_OPTION
  bool region_tree = true;     ///< build each run's region tree (rule 14); off changes no other figure
  /// Most (run, path) nodes of all runs' trees together (rule 14); a nested instance that would open a
  /// node past the cap is folded into its parent node (REGION_TREE_TRUNCATED). About 100 bytes per node.
  std::size_t region_tree_max_nodes = std::size_t{1} << 20;
  /// Most regions on a path (rule 14): an instance nested deeper is folded into the node above it
  /// (REGION_TREE_TRUNCATED). Each node's JSON `path` lists its regions, so the report grows with
  /// nodes x depth; 100,000 nested regions would otherwise write 5 x 10^9 ids.
  std::uint32_t region_tree_max_depth = 64;
};

/// One observed region (report `regions`).
struct region_info {
  std::string id;           ///< `kind:name`
  std::string name;         ///< the part after `kind:`
  std::string kind;
  std::string module_type;  ///< the module's type name for adapter regions, "-" otherwise
};

/// One device's memory over a span (docs/design.md, rule 21): bytes and counts of the allocations and
/// frees owned, and the largest total allocated that the device reported during the span.
struct device_memory {
  memory_device device = cpu_memory;  ///< report key: memory_device_key(device)
  std::uint64_t allocated_bytes = 0;  ///< sum of the allocations' bytes
  std::uint64_t freed_bytes = 0;      ///< sum of the frees' |bytes|
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;
  /// Largest total allocated of an event of this device within the span (any thread); absent when the
  /// source gives no totals or no such event falls in it. Never set for the residual.
  std::optional<std::int64_t> peak_allocated_bytes{};  // `{}`: designated initialisers may leave it out
  friend bool operator==(const device_memory&, const device_memory&) = default;
};

/// Memory figures of one span (a run, its residual, or a region in one run), by device ascending (`cpu`
/// first, then `cuda:0`, ...); a device is listed when it has an event owned or a peak.
using memory_figures = std::vector<device_memory>;

/// analysis_result::memory index of no figures (memory_of() gives nullptr).
inline constexpr std::uint32_t no_memory = static_cast<std::uint32_t>(-1);

/// A region's totals within one run. Index `region` points into analysis_result::regions.
struct region_aggregate {
  /// analysis_result::work index of no work (work_of() gives nullptr).
  static constexpr std::uint32_t no_work = static_cast<std::uint32_t>(-1);
  std::uint32_t region = 0;
  std::uint64_t calls = 0;          ///< topmost instances on the marker's thread
  std::int64_t cpu_time_ns = 0;     ///< sum of those instances' durations
  optional_ns device_time_ns;       ///< present iff the trace has device data
  optional_ns off_thread_cpu_time_ns;  ///< present iff seen off-thread (cross_thread)
  /// Rule 18: index into analysis_result::work of what its topmost instances on the marker's thread
  /// declared, summed; no_work when none did. Out of line (8 bytes here, not 56); last, so positional
  /// initialisers of the other members keep their meaning.
  std::uint32_t work = no_work;
  /// Rule 21: index into analysis_result::memory of its memory figures, or no_memory.
  std::uint32_t memory = no_memory;
};

/// One node of a run's region tree (docs/design.md, rule 14): the region instances of one path of
/// region ids, from a topmost region down, as they nest on the marker's thread. Times are ns;
/// self = inclusive - the sum of the child nodes' inclusive times, and is never negative.
struct tree_node {
  static constexpr std::uint32_t no_parent = static_cast<std::uint32_t>(-1);
  std::uint32_t region = 0;          ///< the path's last region: index into analysis_result::tree_regions
  std::uint32_t parent = no_parent;  ///< index of the parent node in run_result::tree; no_parent: topmost
  std::uint32_t depth = 0;           ///< 0 for a topmost node (path length - 1)
  std::uint64_t calls = 0;           ///< instances on the marker's thread
  std::int64_t cpu_time_ns = 0;      ///< inclusive: sum of those instances' (clipped) durations
  std::int64_t self_cpu_time_ns = 0;
  optional_ns device_time_ns;       ///< launched in the subtree; present iff device data
  optional_ns self_device_time_ns;  ///< launched in the node but in no child node
};

/// The path of `tree[node]`: tree_regions indices from the topmost region down to the node's own.
std::vector<std::uint32_t> tree_path(const std::vector<tree_node>& tree, std::size_t node);

/// One device's part of a run's device figures (report `runs[i].timing.devices[k]`), over the ops the
/// run launched that ran on that device (rule 6, per device). Times in ns.
struct device_timing {
  std::uint16_t device = 0;        ///< device_op::device (the CUDA device ordinal)
  std::int64_t device_time_ns = 0;  ///< busy-sum of the ops' durations
  std::int64_t device_busy_ns = 0;  ///< length of the union of their intervals
  std::int64_t device_span_ns = 0;  ///< first start to last end
};

/// One measured run (report `runs[i]`). Device fields are present iff the trace has device data.
/// 136 bytes, the most a profile holds per run (docs/design.md, rule 13): optional_ns, not
/// std::optional, for the device figures.
struct run_result {
  std::size_t run_index = 0;
  std::int64_t wall_time_ns = 0;  ///< harness wall time, else the marker's duration
  std::int64_t cpu_time_ns = 0;   ///< the marker's duration
  optional_ns device_time_ns;     ///< busy-sum of the run's device ops
  optional_ns device_busy_ns;     ///< union of their intervals
  optional_ns device_span_ns;     ///< first start to last end
  std::vector<region_aggregate> regions;  ///< in order of first appearance in the run
  std::int64_t residual_cpu_ns = 0;       ///< max(0, cpu_time_ns - sum of regions)
  optional_ns residual_device_ns;
  /// The run's region tree in depth-first order (a parent before its children; topmost nodes in the
  /// order of `regions`, children by first appearance). Empty when analysis_options::region_tree is off.
  std::vector<tree_node> tree;
  std::vector<device_timing> devices;  ///< by device number, devices the run launched on (device data only)
};

/// Rule 21: where a run's and its residual's memory figures are (indices into analysis_result::memory,
/// or no_memory). Beside run_result, not in it: a profile without memory events keeps 136 bytes a run.
struct run_memory_indices {
  std::uint32_t run = no_memory;
  std::uint32_t residual = no_memory;
};

/// One sample of a device's total allocated in a charted run (rule 21): the total an event reported, at
/// the event's time, ns since the run's start.
struct memory_sample {
  std::int64_t offset_ns = 0;
  std::int64_t total_bytes = 0;
  friend bool operator==(const memory_sample&, const memory_sample&) = default;
};

/// One device's samples in a charted run, in time order.
struct memory_series {
  memory_device device = cpu_memory;
  std::vector<memory_sample> samples;
  friend bool operator==(const memory_series&, const memory_series&) = default;
};

/// A topmost instance of a region in a charted run (rule 21), ns since the run's start.
struct region_span {
  std::uint32_t region = 0;  ///< index into analysis_result::regions
  std::int64_t start_offset_ns = 0;
  std::int64_t end_offset_ns = 0;
  friend bool operator==(const region_span&, const region_span&) = default;
};

/// Rule 21: one run's memory over time, for the HTML report's chart. Every event with a device total in
/// the run's span (closed, any thread) is a sample; a series of more than max_memory_samples keeps, in each
/// of max_memory_samples / 4 equal time buckets of the run, its first, smallest, largest and last sample
/// (M4 downsampling: every peak and every step's level survive). The spans are the topmost instances the
/// peaks are taken over, in start order, at most max_memory_spans (the rest counted).
struct memory_timeline {
  static constexpr std::size_t max_memory_samples = 512;
  static constexpr std::size_t max_memory_spans = 1000;
  std::uint32_t run = 0;               ///< index into analysis_result::runs
  std::vector<memory_series> series;   ///< by device ascending
  std::vector<region_span> spans;
  std::uint64_t spans_left_out = 0;
  friend bool operator==(const memory_timeline&, const memory_timeline&) = default;
};

/// `CPU` rows are CPU intervals, `CUDA` rows device ops.
enum class device_type : std::uint8_t { cpu = 0, cuda = 1 };
/// "CPU" or "CUDA".
std::string_view to_string(device_type type) noexcept;

/// One key-average row: all events of all measured runs with this (name, device type).
struct key_average_row {
  std::string key;
  device_type type = device_type::cpu;
  std::uint64_t count = 0;
  std::int64_t self_cpu_time_ns = 0;
  std::int64_t cpu_time_total_ns = 0;
  std::optional<std::int64_t> self_device_time_ns;   ///< present iff device data
  std::optional<std::int64_t> device_time_total_ns;  ///< present iff device data
  /// Rule 21, `CPU` rows of a trace with memory events: bytes allocated (any device) while the event was
  /// the innermost open interval on its thread (self), or while it was open at all (total).
  std::optional<std::uint64_t> self_allocated_bytes{};
  std::optional<std::uint64_t> allocated_bytes{};
};

/// A row's total time in its own domain, ns: total CPU time of a `CPU` row, total device time of a
/// `CUDA` row (the order of region_op_rows::rows, docs/design.md, rule 20).
inline std::int64_t own_domain_total_ns(const key_average_row& row) noexcept {
  return row.type == device_type::cpu ? row.cpu_time_total_ns : row.device_time_total_ns.value_or(0);
}

/// One sorted, row-limited view of the key averages.
struct key_average_view {
  std::string sort_by;  ///< "cpu_time_total" or "device_time_total"
  std::size_t row_limit = 20;
  std::vector<key_average_row> rows;
};

/// The ops one region owned over all measured runs (report `region_ops[k]`, docs/design.md, rule 20):
/// the key averages (rule 10) of the CPU intervals and device ops it owns, or of those the runs'
/// residual owns.
struct region_op_rows {
  /// `region` of the residual's entry: what no region owned.
  static constexpr std::uint32_t residual = static_cast<std::uint32_t>(-1);
  /// The residual's entry's `region_id` in the report (a region id always holds a ':', rule 11).
  static constexpr std::string_view residual_id = "(residual)";
  std::uint32_t region = residual;  ///< index into analysis_result::regions, or residual
  /// Rows as rule 10 makes them, the region's own instances and nested regions left out; by total time
  /// in the row's own domain (CPU rows: CPU total, CUDA rows: device total) descending, then key, then
  /// CPU before CUDA; at most analysis_options::row_limit.
  std::vector<key_average_row> rows;
};

/// Everything the reports show.
struct analysis_result {
  bool has_device_data = false;
  std::vector<run_result> runs;
  std::vector<region_info> regions;  ///< regions that owned time in some run, first-seen order
  bool has_region_tree = false;      ///< analysis_options::region_tree was on
  /// Every region of some tree node: `regions` first (same indices), then the regions seen only nested
  /// below another region, by first appearance (rule 14).
  std::vector<region_info> tree_regions;
  key_average_view cpu_time_total;
  std::optional<key_average_view> device_time_total;  ///< present iff device data
  std::vector<warning> warnings;  ///< the trace's warnings, then the analysis's own
  /// Rule 18: the declared work of the region aggregates that have some (region_aggregate::work).
  std::vector<declared_work> work;
  /// Rule 21: the memory figures of runs, residuals and region aggregates that have some (run_memory and
  /// region_aggregate::memory index it).
  std::vector<memory_figures> memory;
  /// Rule 21: per run, in `runs` order; empty when no run or residual has figures (run_memory_of()).
  std::vector<run_memory_indices> run_memory;
  /// Rule 21: the charted runs' timelines, by run: the first run with a sample and the run holding the
  /// highest peak of any device (one entry when they are the same run); empty without device totals.
  std::vector<memory_timeline> memory_timelines;
  /// Rule 20: region_ops holds what the analysis found (a saved profile without `region_ops` has not).
  bool has_region_ops = false;
  /// Rule 20: one entry per `regions` entry, in its order, then the residual's when there are runs.
  std::vector<region_op_rows> region_ops;
};

/// The work `aggregate` (a region of one of `result`'s runs) declared (rule 18), or nullptr.
///
/// ```
/// if (const regionprof::declared_work* w = regionprof::work_of(result, run.regions[0])) use(w->bytes);
/// ```
inline const declared_work* work_of(const analysis_result& result, const region_aggregate& aggregate) noexcept {
  return aggregate.work < result.work.size() ? &result.work[aggregate.work] : nullptr;
}

/// The memory figures at `index` (a run's, residual's or region aggregate's `memory`), or nullptr.
///
/// ```
/// if (const regionprof::memory_figures* m = regionprof::memory_of(result, aggregate.memory)) show(*m);
/// ```
inline const memory_figures* memory_of(const analysis_result& result, std::uint32_t index) noexcept {
  return index < result.memory.size() ? &result.memory[index] : nullptr;
}

/// The memory figures of `runs[run]` (a position in analysis_result::runs), or nullptr.
inline const memory_figures* run_memory_of(const analysis_result& result, std::size_t run) noexcept {
  return run < result.run_memory.size() ? memory_of(result, result.run_memory[run].run) : nullptr;
}

/// The memory figures of the residual of `runs[run]`, or nullptr.
inline const memory_figures* residual_memory_of(const analysis_result& result, std::size_t run) noexcept {
  return run < result.run_memory.size() ? memory_of(result, result.run_memory[run].residual) : nullptr;
}

/// Applies the attribution rules of docs/design.md. Never throws on odd data: anomalies become warnings.
/// Throws std::invalid_argument only for an invalid rule (naming the rule and the reason).
/// (std::length_error for a trace of 2^32 or more CPU intervals or device ops, which one analysis
/// cannot index.) Every decision is a numbered rule of docs/design.md.
///
/// ```
/// auto result = regionprof::analyze(trace, regionprof::analysis_options{});
/// for (auto& run : result.runs) std::printf("%zu: %lld ns\n", run.run_index, run.cpu_time_ns);
/// ```
analysis_result analyze(const trace& input, const analysis_options& options);

}  // namespace regionprof
