// regionprof::profile: the in-process harness (warm-up, marked measured runs, capture, device, report).
#include "regionprof/harness.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/clock.hpp"
#include "regionprof/machine.hpp"
#include "regionprof/process_identity.hpp"
#include "regionprof/regions.hpp"

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

/// The trace file with its placeholders expanded; std::invalid_argument naming the option otherwise.
std::optional<std::string> expanded_trace_file(const profile_options& options, const process_identity& identity) {
  if (!options.trace_file) return std::nullopt;
  try {
    return expand_output_path(*options.trace_file, identity);
  } catch (const process_identity_error& e) {
    throw std::invalid_argument(std::string("regionprof::profile: trace_file: ") + e.what());
  }
}

/// The launcher's identity; a launcher variable that is not a number is an error only for a trace_file
/// with placeholders (else the target just names no rank).
process_identity identity_for(const profile_options& options) {
  try {
    return this_process_identity();
  } catch (const process_identity_error& e) {
    if (options.trace_file && options.trace_file->find('%') != std::string::npos) {
      throw std::invalid_argument(std::string("regionprof::profile: trace_file: ") + e.what());
    }
    return this_process_host_and_pid();
  }
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
  check_rule(options.analysis.run_marker, "run marker");
  for (const name_rule& rule : options.analysis.region_rules) check_rule(rule, "region rule");
  if (capture_session_active()) throw std::logic_error(overlapping_sessions);
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
  const process_identity identity = identity_for(options);
  const std::optional<std::string> trace_file = expanded_trace_file(options, identity);

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
  capture_session capture(options.capture);  // throws if another session started meanwhile

  std::vector<run_span> spans;
  spans.reserve((stopper ? options.stopping.min_runs.value_or(default_min_runs) : options.measured_runs) + 1);
  bool device_started = false;
  try {
    if (device) {
      device->start();
      device_started = true;
    }
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
  trace t = std::move(captured.data);
  if (device) device->stop(t);
  machine.end();  // the GPUs' clocks after the last run
  for (warning& w : machine.warnings()) t.warnings.push_back(std::move(w));
  const std::size_t measured_runs = spans.size() - 1;
  std::optional<stopping_summary> stopping;
  if (stopper) stopping = profile_stopping(*stopper, t.warnings);
  t.target_type = options.target_type;
  t.target_extra_json = "{" + identity_json_members(identity) + "}";
  t.module_types = options.module_types;
  for (std::size_t run = 1; run < spans.size(); ++run) {
    t.run_wall_times_ns.push_back(spans[run].end_ns - spans[run].start_ns);
  }

  analysis_options analysis = options.analysis;
  analysis.skip_runs = 1;  // the internal warm-up run
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

  const report_context context{options.warmup_runs, measured_runs, options.uses_inference_function, {},
                               options.input, {}, {}, stopping, machine.environment()};
  Profile result(std::move(t), analysis, context);
  const std::size_t runs = result.result().runs.size();
  if (runs != measured_runs) {
    std::string message = "RUN_COUNT_MISMATCH: the run-marker rule '" + analysis.run_marker.pattern + "' found " +
                          std::to_string(runs) + " measured run(s) (after the internal warm-up run), but " +
                          "measured_runs is " + std::to_string(measured_runs);
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
      result = Profile(std::move(kept), analysis, context);
    }
  }
  if (trace_file) result.write_trace(escape_output_path(*trace_file));  // expanded already: its % are literal
  return result;
}

}  // namespace regionprof
