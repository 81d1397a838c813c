// The in-process profiling harness: warm-up and measured runs of a workload, each measured run marked,
// CPU time from the NVTX capture, device time from CUPTI where a device is present, and the report.
// It does natively what the reference module's `capture` does through torch.profiler; it is a session
// of timed runs (session/session.hpp), like every way of profiling.
#pragma once

#include <functional>

#include "regionprof/model/profile.hpp"
#include "regionprof/options/profile_options.hpp"
#include "regionprof/output/output.hpp"  // to_markdown, write_json, ...: the profile's writers and files

namespace regionprof {

/// Profiles `workload` as `options` say (options/profile_options.hpp; every option in docs/python.md,
/// "Options"): reads the machine's state (report `environment`, regionprof::machine_probe); `warmup_runs`
/// unrecorded calls; then, recording, one internal warm-up call (it absorbs the capture's and CUPTI's
/// buffer allocation; its run is discarded) and `measured_runs` calls (or as many as `stopping` decides),
/// each as: cache flush (with `flush_cache`), device synchronize, wall clock, run marker
/// (`regionprof.profiled_run`) around the call, device synchronize, wall clock. MACHINE_LOADED,
/// CPU_SCALING_ENABLED and GPU_THROTTLED come from the environment.
///
/// Returns the Profile with the trace's run_wall_times_ns and the report context (warmup_runs,
/// measured_runs, uses_inference_function, input); `json_output`, `markdown_output` and `trace_file` are
/// written too. Without a GPU the profile is CPU-only and says why (DEVICE_TRACING_UNAVAILABLE). When
/// another NVTX tool owns NVTX (NVTX_TOOL_CONFLICT) the runs are timed by the wall clock alone.
///
/// Windows (docs/design.md, "Long runs: windows"): every N measured runs are analysed, written to
/// `window_output` (a path naming the window: `%w`, or `%n`) and dropped as soon as they have run, so
/// memory stays bounded; the call returns the last window's profile (written too).
///
/// Throws:
/// - std::invalid_argument, before the workload runs, for an empty workload, analysis.skip_runs != 0 (the
///   internal warm-up run is the harness's own: use warmup_runs), and what validate_profile_options
///   refuses (measured_runs 0, an invalid rule or stopping option, windows without a path that names the
///   window or with max_noise, ...);
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
/// std::cout << regionprof::to_markdown(result);
/// regionprof::write_json(result, "profile.json");
/// ```
Profile profile(const std::function<void()>& workload, const profile_options& options = {});

}  // namespace regionprof
