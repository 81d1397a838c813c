// The in-process profiling harness: warm-up and measured runs of a workload, each measured run marked,
// CPU time from the NVTX capture, device time from CUPTI where a device is present, and the report.
// It does natively what the reference module's `capture` does through torch.profiler.
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
#include "regionprof/machine/machine.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/output/output.hpp"  // to_markdown, write_json, ...: the profile's writers and files
#include "regionprof/statistics/stopping.hpp"
#include "regionprof/trace/warnings.hpp"

namespace regionprof {

/// Settings of regionprof::profile.
struct profile_options {
  std::size_t warmup_runs = 3;     ///< calls before recording starts (not recorded, not reported)
  std::size_t measured_runs = 10;  ///< recorded, reported runs (at least 1); ignored with stopping.max_noise
  /// Stop on noise (docs/design.md, rule 16): with `stopping.max_noise` set, measured runs go on until the
  /// noise of the run's wall time is at most max_noise with min_runs and min_time_s met, or max_runs or
  /// max_time_s is reached; the report gains `stopping` (and NOISE_TARGET_NOT_MET at a maximum).
  stopping_options stopping;
  /// Cold runs: before every measured run (and the internal warm-up), outside its timing, write a buffer
  /// of the CPU's last-level cache size (regionprof::cpu_cache_flusher) and, on a CUDA context, memset an
  /// L2-sized device buffer; each flush is an NVTX range `regionprof.cache_flush` (domain `regionprof`)
  /// between the runs.
  bool flush_cache = false;
  /// Where /proc and /sys are read for report `environment` and the flush size: "/" (a test's fake tree).
  std::string system_root = "/";
  /// Also write the Chrome trace here (Perfetto, chrome://tracing). Placeholders expand as in
  /// regionprof::expand_output_path (`%r` rank, `%l` local rank, `%h` host, `%p` pid, `%%`); with a
  /// world size above 1 the path must hold `%r` or `%p` (else std::invalid_argument, before any run).
  /// With windows, every window writes its own: the path must hold `%w` (the window's index).
  std::optional<std::string> trace_file;
  /// Windows (docs/design.md, "Long runs: windows"; `regionprof run --window-runs N` for a program): every
  /// `window_runs` measured runs, the harness analyses them, writes their profile to `window_output` (`%w`
  /// the window's index, 0, 1, ...) and drops it, so memory stays bounded however many runs are measured.
  /// The last, partial window is written at the end and returned. Run indices continue across windows
  /// (window k's first run is k x window_runs; the warm-up runs are in window 0 only); each window's
  /// report has `target.window` and `target.window_runs`, its own runs' device activity (a fresh device
  /// session starts at each cut, outside any run's timing) and environment. At least 1; not with
  /// `stopping.max_noise` (a window is a fixed count of runs).
  std::optional<std::size_t> window_runs;
  /// Where each window's JSON report goes (required with window_runs, refused without): a path pattern of
  /// regionprof::expand_output_path that names the window: `%w`, or `%n` (the harness has no process index,
  /// so `%n` is the window's index too), e.g. `w/prof-%w.json`.
  std::optional<std::string> window_output;
  /// Run marker, region rules, cross_thread, row_limit. The harness marks each call with the default
  /// marker; a custom `run_marker` must match exactly one range per call. `skip_runs` is the harness's
  /// own (its internal warm-up run) and must stay 0: use `warmup_runs`.
  analysis_options analysis;
  bool device_tracing = true;  ///< record device activity through CUPTI when a device is present
  device_options device;       ///< CUPTI buffer sizes and cap
  capture_options capture;     ///< NVTX capture memory cap
  std::string target_type = "callable";  ///< report `target.type`
  /// Report `target.kind` (a lower-case identifier such as `torch_module`), first among `target`'s members;
  /// empty: none.
  std::string target_kind;
  /// Warnings the caller adds to the report (every window's), e.g. the torch adapter's about what it could
  /// not mark.
  std::vector<warning> warnings;
  /// Region id -> module type name, reported as `regions[].module_type` (trace::module_types), e.g.
  /// regionprof::torch::instrumentation::module_types(). Regions not listed report "-".
  std::map<std::string, std::string> module_types;
  /// Report `config.uses_inference_function` and `input` (argument count and keyword names): what the
  /// workload stands for, e.g. a model called with 2 positional arguments and `mask=`.
  bool uses_inference_function = true;
  report_input input;
};

/// Profiles `workload`: reads the machine's state (report `environment`, regionprof::machine_probe);
/// `warmup_runs` unrecorded calls; then, recording, one internal warm-up call (it absorbs the capture's
/// and CUPTI's buffer allocation; its run is discarded through analysis_options::skip_runs) and
/// `measured_runs` calls (or as many as `stopping` decides), each as: cache flush (with `flush_cache`),
/// device synchronize, wall clock, run marker (`regionprof.profiled_run`) around the call, device
/// synchronize, wall clock. MACHINE_LOADED, CPU_SCALING_ENABLED and GPU_THROTTLED come from the
/// environment.
///
/// Returns the Profile (json(), markdown(), write_json(), write_trace()) with the trace's
/// run_wall_times_ns and the report context (warmup_runs, measured_runs, uses_inference_function, input).
/// Without a GPU the profile is CPU-only and says why (DEVICE_TRACING_UNAVAILABLE). When another NVTX
/// tool owns NVTX (NVTX_TOOL_CONFLICT) the runs are timed by the wall clock alone.
///
/// With `window_runs` N, the profile of every N measured runs is written to `window_output` and dropped
/// as soon as they have run; the call returns the last window's (written too).
///
/// Throws:
/// - std::invalid_argument for measured_runs == 0, an empty workload, analysis.skip_runs != 0, an
///   invalid rule (regionprof::validate_name_rule) or invalid stopping options
///   (regionprof::validate_stopping_options), window_runs 0, window_runs with stopping.max_noise or
///   without window_output, window_output without window_runs, a window_output or trace_file without
///   `%w` under windows, a target_kind that is not a lower-case identifier, before the workload runs;
/// - std::logic_error when another profile or capture session is active or claimed in the process,
///   before the workload runs: a profile claims the process's capture session (capture_claim) before its
///   first warm-up run, so a second one, on any thread, is refused before it runs or records anything;
/// - std::runtime_error starting with `RUN_COUNT_MISMATCH` when the run-marker rule finds a number of
///   measured runs other than measured_runs (a custom rule must match exactly one range per call). When
///   the capture dropped records at its memory cap, the mismatch is a counted loss instead: the profile
///   is returned with a RUN_COUNT_MISMATCH warning beside DROPPED_HOST_RECORDS;
/// - whatever the workload throws, after recording has been stopped cleanly.
///
/// ```
/// regionprof::profile_options options;
/// options.trace_file = "trace.json";
/// options.analysis.region_rules = {regionprof::parse_region_arg("layer_(.*)=layer")};
/// regionprof::Profile result = regionprof::profile([&] { model.forward(input); }, options);
/// std::cout << to_markdown(result);
/// write_json(result, "profile.json");
///
/// regionprof::profile_options windows;  // 25 runs in windows of 10: w/prof-0.json (runs 0-9),
/// windows.measured_runs = 25;           // w/prof-1.json (10-19), w/prof-2.json (20-24, returned)
/// windows.window_runs = 10;
/// windows.window_output = "w/prof-%w.json";
/// regionprof::Profile last = regionprof::profile([&] { model.forward(input); }, windows);
/// ```
Profile profile(const std::function<void()>& workload, const profile_options& options = {});

/// The NVTX range (domain `regionprof`) around each cold-run flush, between the runs.
inline constexpr const char* cache_flush_range_name = "regionprof.cache_flush";

/// The cold-run flush before a run (profile_options::flush_cache; regionprof::benchmark's too): `cpu`
/// writes the last-level cache over and `device` (may be null) the L2, inside a `regionprof.cache_flush`
/// range. Call it outside the run's timing.
///
/// ```
/// regionprof::cpu_cache_flusher cpu;
/// regionprof::flush_caches(cpu, nullptr);
/// ```
void flush_caches(cpu_cache_flusher& cpu, device_session* device) noexcept;

}  // namespace regionprof
