// regionprof::profile: the in-process harness (warm-up, marked measured runs, capture, device, report).
#include "regionprof/harness/harness.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/analysis/window.hpp"
#include "regionprof/machine/machine.hpp"
#include "regionprof/output/output.hpp"
#include "regionprof/regions/regions.hpp"
#include "regionprof/trace/clock.hpp"
#include "regionprof/trace/process_identity.hpp"

namespace regionprof {
namespace {

const char* const overlapping_sessions =
    "regionprof::profile: a capture session is already active in this process (profile() does not nest "
    "and two profiles cannot run at once); finish the other one first";

void check_rule(const name_rule& rule, std::string_view role) {
  try {
    validate_name_rule(rule, role);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("regionprof::profile: ") + e.what());
  }
}

/// The launcher's identity; a launcher variable that is not a number is an error only for an output path
/// with placeholders (else the target just names no rank).
process_identity identity_for(const profile_options& options) {
  try {
    return this_process_identity();
  } catch (const process_identity_error& e) {
    for (const auto* path : {&options.trace_file, &options.window_output}) {
      if (*path && (*path)->find('%') != std::string::npos) {
        throw std::invalid_argument(std::string("regionprof::profile: ") +
                                    (path == &options.trace_file ? "trace_file: " : "window_output: ") + e.what());
      }
    }
    return this_process_host_and_pid();
  }
}

/// The paths a profile (without windows) or window `window` writes: the trace file and the window's
/// JSON report, placeholders expanded; std::invalid_argument naming the option otherwise.
struct output_paths {
  std::optional<std::string> trace_file;
  std::optional<std::string> window_output;
};

output_paths paths_of(const profile_options& options, const process_identity& identity,
                      std::optional<std::uint64_t> window) {
  const auto expand = [&](const std::string& pattern, const char* option) {
    try {
      return window ? window_output_path(pattern, identity, *window) : expand_output_path(pattern, identity);
    } catch (const process_identity_error& e) {
      throw std::invalid_argument(std::string("regionprof::profile: ") + option + ": " + e.what());
    }
  };
  output_paths paths;
  if (options.trace_file) paths.trace_file = expand(*options.trace_file, "trace_file");
  if (options.window_output) paths.window_output = expand(*options.window_output, "window_output");
  return paths;
}

/// A report `target.kind`: lower-case letters and `_` (written into the target's JSON as it is).
bool is_identifier(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

void check_options(const std::function<void()>& workload, const profile_options& options) {
  if (!workload) throw std::invalid_argument("regionprof::profile: the workload is empty");
  if (options.measured_runs == 0) {
    throw std::invalid_argument("regionprof::profile: measured_runs must be at least 1");
  }
  if (options.analysis.skip_runs != 0) {
    throw std::invalid_argument(
        "regionprof::profile: analysis.skip_runs is the harness's own (its internal warm-up run); "
        "leave it 0 and set warmup_runs instead");
  }
  validate_stopping_options(options.stopping, "regionprof::profile");
  if (options.window_runs) {
    if (*options.window_runs == 0) {
      throw std::invalid_argument("regionprof::profile: window_runs must be at least 1 (the runs of each window); "
                                  "leave it unset for one profile of every run");
    }
    if (options.stopping.max_noise) {
      throw std::invalid_argument(
          "regionprof::profile: window_runs cannot be combined with stopping on noise (max_noise): a "
          "window is a fixed count of runs; unset one of them (measured_runs sets the total with windows)");
    }
    if (!options.window_output) {
      throw std::invalid_argument("regionprof::profile: window_runs needs window_output, the path each window's "
                                  "profile is written to, with %w (the window index), e.g. 'w/prof-%w.json'");
    }
  } else if (options.window_output) {
    throw std::invalid_argument("regionprof::profile: window_output is only used with window_runs; set "
                                "window_runs (the runs of each window) or leave window_output unset");
  }
  if (!options.target_kind.empty() && !is_identifier(options.target_kind)) {
    throw std::invalid_argument("regionprof::profile: target_kind '" + options.target_kind +
                                "' is not a lower-case identifier (such as torch_module)");
  }
  check_rule(options.analysis.run_marker, "run marker");
  for (const name_rule& rule : options.analysis.region_rules) check_rule(rule, "region rule");
}

/// The process's one capture session, held from before the workload first runs to the profile's end: a
/// profile refused here has run nothing and recorded nothing into the session of the profile that holds it.
capture_claim claim_session() {
  try {
    return capture_claim{};
  } catch (const std::logic_error&) {
    throw std::logic_error(overlapping_sessions);
  }
}

/// One recorded run's bounds on the wall clock (ns), device synchronisation included.
struct run_span {
  std::int64_t start_ns;
  std::int64_t end_ns;
};

/// Without the capture (NVTX_TOOL_CONFLICT) the runs still exist: each becomes a run-marker interval
/// spanning its wall time on the calling thread, so the report has runs (and a residual of 100 %).
void add_wall_clock_markers(trace& t, const std::vector<run_span>& spans) {
  const thread_index thread =
      t.add_thread(static_cast<std::int64_t>(::getpid()), static_cast<std::int64_t>(::syscall(SYS_gettid)));
  const name_id name = t.strings.intern(run_marker_name);
  const domain_index domain = t.domain(nvtx_domain_name);
  for (const run_span& span : spans) {
    t.intervals.push_back({span.start_ns, span.end_ns, name, thread, 0, domain, interval_kind::range, 0});
  }
}

/// The profile of what was captured: every run (no windows) or window `window`'s runs. `spans` are its
/// runs' wall times, window 0's (or the whole profile's) first being the internal warm-up. Checks the run
/// count (RUN_COUNT_MISMATCH) and writes the outputs: with windows the window's JSON report, and the
/// trace file when one is asked for. `stopper`: the noise stopper (null for a window: windows do not
/// stop on noise).
Profile finish(capture_result captured, const std::vector<run_span>& spans, const machine_probe& machine,
               const noise_stopper* stopper, const process_identity& identity, const profile_options& options,
               const std::optional<window_position>& window) {
  const bool holds_warmup = !window || window->index == 0;
  const std::size_t first_measured = holds_warmup ? 1 : 0;
  const std::size_t measured_runs = spans.size() - first_measured;
  trace t = std::move(captured.data);
  for (warning& w : machine.warnings()) t.warnings.push_back(std::move(w));
  std::optional<stopping_summary> stopping;
  if (stopper) stopping = profile_stopping(*stopper, t.warnings);
  t.target.type = options.target_type;
  if (!options.target_kind.empty()) t.target.kind = options.target_kind;
  t.target.set_process(identity);
  if (window) {
    t.target.window = window->index;
    t.target.window_runs = window->runs;
  }
  t.module_types = options.module_types;
  for (std::size_t run = first_measured; run < spans.size(); ++run) {
    t.run_wall_times_ns.push_back(spans[run].end_ns - spans[run].start_ns);
  }

  analysis_options analysis = options.analysis;
  analysis.skip_runs = 1;  // the internal warm-up run
  if (window) analysis = window_analysis(analysis, *window);
  if (!captured.stats.tool_attached) {
    if (nvtx_tool_conflict().empty()) {
      t.warnings.push_back({warning_code::nvtx_tool_conflict, warning_source::nvtx,
                            "NVTX did not attach regionprof's capture tool (no NVTX_INJECTION64_PATH, and the "
                            "program's NVTX does not support static tools): no NVTX range was recorded, so "
                            "runs are timed by the harness's wall clock only and no region owns time"});
    }
    add_wall_clock_markers(t, spans);
    analysis.run_marker = default_run_marker();
  }
  for (const warning& w : options.warnings) t.warnings.push_back(w);

  const report_context context{holds_warmup ? options.warmup_runs : 0, measured_runs,
                               options.uses_inference_function, {}, options.input, {}, {}, stopping,
                               machine.environment()};
  const auto analysed = [&](trace source) {
    analysis_result result = analyze(source, analysis);
    if (window) number_window_runs(result, *window);
    return Profile(std::move(source), analysis, context, std::move(result));
  };
  Profile result = analysed(std::move(t));
  const std::size_t runs = result.result().runs.size();
  if (runs != measured_runs) {
    std::string message = "RUN_COUNT_MISMATCH: the run-marker rule '" + analysis.run_marker.pattern + "' found " +
                          std::to_string(runs) + " measured run(s)" +
                          (holds_warmup ? " (after the internal warm-up run)" : "") + ", but " +
                          (window ? "window " + std::to_string(window->index) + " ran " : "measured_runs is ") +
                          std::to_string(measured_runs);
    if (captured.stats.dropped_records == 0) {
      throw std::runtime_error("regionprof::profile: " + message +
                               ". The harness marks each call with 'regionprof.profiled_run' in domain "
                               "'regionprof'; a custom run_marker must match exactly one range per call");
    }
    // The analysis already reports a run count that differs from the harness's wall times; add the cause.
    const auto& warnings = result.result().warnings;
    const bool reported = std::any_of(warnings.begin(), warnings.end(), [](const warning& w) {
      return w.code == warning_code::run_count_mismatch;
    });
    if (!reported) {
      trace kept = result.source();
      kept.warnings.push_back({warning_code::run_count_mismatch, warning_source::nvtx,
                               message + ": run markers were lost to the capture's memory cap "
                                         "(DROPPED_HOST_RECORDS); raise capture.memory_cap_bytes"});
      result = analysed(std::move(kept));
    }
  }
  // Expanded already: their % are literal.
  const output_paths paths = paths_of(options, identity, window ? std::optional(window->index) : std::nullopt);
  if (paths.window_output) write_json(result, escape_output_path(*paths.window_output));
  if (paths.trace_file) write_trace(result, escape_output_path(*paths.trace_file));
  return result;
}

}  // namespace

void flush_caches(cpu_cache_flusher& cpu, device_session* device) noexcept {
  static const nvtxStringHandle_t name = nvtxDomainRegisterStringA(detail::domain(), cache_flush_range_name);
  const nvtxEventAttributes_t attributes = detail::registered_attributes(name);
  nvtxDomainRangePushEx(detail::domain(), &attributes);
  cpu.flush();
  if (device != nullptr) device->flush_device_cache();
  nvtxDomainRangePop(detail::domain());
}

Profile profile(const std::function<void()>& workload, const profile_options& options) {
  check_options(workload, options);
  capture_claim claim = claim_session();
  const process_identity identity = identity_for(options);
  const std::optional<std::uint64_t> first_window =
      options.window_runs ? std::optional<std::uint64_t>(0) : std::nullopt;
  (void)paths_of(options, identity, first_window);  // a path that cannot be used fails before any run
  std::optional<run_marker_predicate> is_marker;
  if (options.window_runs) is_marker = run_marker_predicate_of(options.analysis.run_marker);

  machine_probe machine(options.system_root);
  machine.begin();  // the load average at start, before the warm-up runs add to it
  std::optional<cpu_cache_flusher> cpu_flusher;
  if (options.flush_cache) cpu_flusher.emplace(options.system_root);
  std::optional<noise_stopper> stopper;
  if (options.stopping.max_noise) stopper.emplace(options.stopping);

  for (std::size_t i = 0; i < options.warmup_runs; ++i) workload();

  // NVTX attaches its tool at its first call; make that happen now, so a conflict is known.
  nvtxInitialize(nullptr);

  std::unique_ptr<device_session> device;
  if (options.device_tracing) device = make_device_session(options.device);
  capture_session capture(std::move(claim), options.capture);

  // The current window's runs (all of them without windows); window 0's first is the internal warm-up.
  std::vector<run_span> spans;
  spans.reserve(
      std::min((stopper ? options.stopping.min_runs.value_or(default_min_runs) : options.measured_runs),
               options.window_runs.value_or(options.measured_runs)) + 1);
  std::uint64_t window = 0;  // the index of the window being measured
  bool device_started = false;
  const auto start_device = [&] {
    if (!device) return;
    device->start();
    device_started = true;
  };
  const auto stop_device = [&](trace& into) {
    if (!device_started) return;
    device_started = false;
    device->stop(into);
  };
  try {
    start_device();
    // Run 0 is the internal warm-up: recorded like the others, discarded by skip_runs.
    std::int64_t measuring_since = 0;  // the first measured run's flush (or start): max_time_s counts from it
    for (std::size_t run = 0;; ++run) {
      if (run == 1) measuring_since = monotonic_now_ns();
      if (cpu_flusher) flush_caches(*cpu_flusher, device.get());
      if (device) device->synchronize();
      const std::int64_t start = monotonic_now_ns();
      {
        const scoped_run marker;
        workload();
      }
      if (device) device->synchronize();
      const std::int64_t end = monotonic_now_ns();
      spans.push_back({start, end});
      if (run == 0) continue;
      if (stopper ? stopper->add_run(end - start, end - measuring_since) : run == options.measured_runs) break;
      if (options.window_runs && run % *options.window_runs == 0) {
        // A full window, not the last: cut it out of the capture, write it, drop it.
        const window_position position{window, *options.window_runs};
        std::optional<capture_result> cut =
            capture.cut_window(spans.size(), *is_marker);  // window 0 also holds the internal warm-up
        if (!cut && nvtx_capture_attached()) {
          throw std::runtime_error("regionprof::profile: RUN_COUNT_MISMATCH: the run-marker rule '" +
                                   options.analysis.run_marker.pattern + "' found fewer than " +
                                   std::to_string(spans.size()) + " runs for window " +
                                   std::to_string(window) + " (window_runs " + std::to_string(*options.window_runs) +
                                   "); a custom run_marker must match exactly one range per call");
        }
        capture_result captured;
        if (cut) {
          captured = std::move(*cut);
        } else if (std::string conflict = nvtx_tool_conflict(); !conflict.empty()) {
          captured.data.warnings.push_back(
              {warning_code::nvtx_tool_conflict, warning_source::nvtx, std::move(conflict)});
        }
        stop_device(captured.data);
        machine.end();
        (void)finish(std::move(captured), spans, machine, nullptr, identity, options, position);  // dropped
        spans.clear();
        ++window;
        machine.begin();
        // A fresh device session for the next window (each says for itself when there is no device).
        if (device) device = make_device_session(options.device);
        start_device();
      }
    }
  } catch (...) {
    if (device_started) {
      try {
        trace discarded;
        device->stop(discarded);
      } catch (...) {
        // the workload's exception is the one to report
      }
    }
    throw;  // ~capture_session stops recording and discards it
  }

  capture_result captured = capture.stop();
  stop_device(captured.data);
  machine.end();  // the GPUs' clocks after the last run
  std::optional<window_position> position;
  if (options.window_runs) position = window_position{window, *options.window_runs};
  return finish(std::move(captured), spans, machine, stopper ? &*stopper : nullptr, identity, options, position);
}

}  // namespace regionprof
