// The options of a profiling session: one struct for every way of profiling (the harness,
// `regionprof run` and its injection library, regionprof::benchmark, Python). Each user option is
// declared once, in a .def file beside the code that implements it (profile_options.def here;
// analysis/analysis_options.def; statistics/stopping_options.def); the members below and the option
// table every front-end reads (options/option_table.hpp) come from those declarations.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/capture/capture.hpp"
#include "regionprof/collect/device_session.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/statistics/stopping.hpp"
#include "regionprof/trace/warnings.hpp"

namespace regionprof {

/// The default region rules of an in-process profile (the harness, Python): default_region_rules(),
/// and `region:` in the domain `regionprof` (what
/// REGIONPROF_REGION, scoped_region and Python's regionprof.region emit by default).
std::vector<name_rule> in_process_region_rules();

/// Settings of a profiling session. The user options (profile_options.def; the `analysis` and `stopping`
/// members hold theirs) are listed, with their meaning, defaults and bounds, in docs/python.md and
/// docs/cli.md, generated from their declarations:
///
/// - warmup_runs (3), measured_runs (10): calls before recording, and recorded runs (at least 1);
/// - flush_cache: cold runs; device_tracing (on): CUPTI when a device is present;
/// - windows: a profile written every N runs (docs/design.md, "Long runs: windows"; writes_windows());
/// - json_output, markdown_output, trace_file: the files written (placeholders as in
///   regionprof::expand_output_path: `%r` rank, `%l` local rank, `%h` host, `%p` pid, `%n`, `%w`, `%%`);
/// - processes: `regionprof run --processes N`; device_buffer_mb, sync_records: the injection library's.
///
/// ```
/// regionprof::profile_options options;
/// options.measured_runs = 25;
/// options.trace_file = "trace.json";
/// options.analysis.region_rules.push_back(regionprof::parse_region_arg("layer_(.*)=layer"));
/// ```
struct profile_options {
#define REGIONPROF_OPTION(member, type, initializer, ...) type member = initializer;
#include "regionprof/options/profile_options.def"
#undef REGIONPROF_OPTION
  /// Run marker, region rules (default: in_process_region_rules()), cross_thread, row_limit,
  /// graph_attribution, skip_runs (analysis/analysis_options.def). The in-process profiler marks each
  /// call with the default marker; a custom `run_marker` must match exactly one range per call, and
  /// `skip_runs` is its own (its internal warm-up run): leave it 0 and use warmup_runs.
  analysis_options analysis{.region_rules = in_process_region_rules()};
  /// Stop on noise (docs/design.md, rule 16; statistics/stopping_options.def).
  stopping_options stopping;
  device_options device;    ///< CUPTI buffer sizes and cap (device_buffer_mb and sync_records set theirs)
  capture_options capture;  ///< NVTX capture memory cap
  /// Where /proc and /sys are read for report `environment` and the flush size: "/" (a test's fake tree).
  std::string system_root = "/";

  // What the workload stands for, in the report (set by the front-end, not by its user).
  std::string target_type = "callable";  ///< report `target.type`
  /// Report `target.kind` (a lower-case identifier such as `torch_module`), first among `target`'s members;
  /// empty: none.
  std::string target_kind;
  /// Warnings the caller adds to the report (every window's), e.g. the torch adapter's about what it could
  /// not mark.
  std::vector<warning> warnings;
  /// Warnings the caller knows only once the workload has run (regionprof.torch's about compiled kernels it
  /// could not map to modules), asked for as each profile (each window) is finished and added after
  /// `warnings`. Called on the thread that finishes the profile; must not throw.
  std::function<std::vector<warning>()> warnings_at_finish;
  /// Region id -> module type name, reported as `regions[].module_type` (trace::module_types), e.g.
  /// regionprof::torch::instrumentation::module_types(). Regions not listed report "-".
  std::map<std::string, std::string> module_types;
  /// Report `config.uses_inference_function` and `input` (argument count and keyword names): what the
  /// workload stands for, e.g. a model called with 2 positional arguments and `mask=`.
  bool uses_inference_function = true;
  report_input input;
};

/// profile_options' device options with device_buffer_mb and sync_records applied.
device_options device_options_of(const profile_options& options);

/// True when the options cut the profile into windows (a profile every N runs).
inline bool writes_windows(const profile_options& options) noexcept { return options.window_runs.has_value(); }

}  // namespace regionprof
