// The one profiling session every way of profiling goes through: the in-process harness
// (regionprof::profile, and so Python), `regionprof run`'s injection library and regionprof::benchmark.
// It owns the capture and the device session from start to stop, the machine probe, the cache flushes
// and timed runs, stopping on noise, windows, and finishing what was recorded into a Profile, which it
// writes through the one output seam.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "regionprof/analysis/window.hpp"
#include "regionprof/capture/capture.hpp"
#include "regionprof/collect/device_session.hpp"
#include "regionprof/machine/machine.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/options/profile_options.hpp"
#include "regionprof/output/output.hpp"
#include "regionprof/statistics/stopping.hpp"
#include "regionprof/trace/process_identity.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof {

/// When a session's device session starts.
enum class device_start : std::uint8_t {
  at_start = 0,  ///< with the capture, when options.device_tracing (the harness, regionprof::benchmark)
  attached = 1,  ///< attached later by attach_device (the injection library: CUPTI starts inside cuInit)
};

/// Who runs a session, and how its outputs are written.
struct session_setup {
  /// Names the front-end in messages: `regionprof::profile: measured_runs must be at least 1`.
  std::string who = "regionprof";
  /// Called for each output that cannot be written (empty: the first failure throws output_error).
  output_failure_handler on_failure;
  /// The returned profile keeps its trace's events (for a Chrome trace written later); else they are freed
  /// before its result is assembled, unless a Chrome trace is among the outputs.
  bool keep_events = true;
  /// The first timed run is the internal warm-up run (recorded, discarded). False: every timed run is
  /// measured (a step profiler's cycle without warm-up steps).
  bool warmup_run = true;
  /// This session is one window of a longer series (a step profiler's cycle, harness/step_profiler.hpp):
  /// its outputs expand `%w` to the index (a path without it is refused), the report's `target.window`
  /// and `target.window_runs` are set and its runs are numbered on from the windows before it.
  std::optional<window_position> window;
};

/// How a session finishes.
struct finish_options {
  /// Report `target.ended_by_signal` (`SIGSEGV`): the program was ended by a signal; empty: it was not.
  std::string ended_by_signal;
  /// False after a fault signal: neither CUPTI nor NVML is called, the device activity is not collected
  /// (DROPPED_DEVICE_RECORDS says so).
  bool collect_device = true;
  /// True when the capture tool was NVTX's only choice (NVTX_INJECTION64_PATH names it): then a tool that
  /// never attached means the program made no NVTX call, not NVTX_TOOL_CONFLICT.
  bool tool_was_injected = false;
};

/// One profiling session. Constructing it claims the process's one capture session (before any code of
/// the caller's runs: a second session is refused with nothing recorded); start() records; timed_run()
/// runs the workload once, timed and marked; finish() makes the profile, writes its outputs and returns
/// it. With windows (writes_windows), every window is written and dropped as it completes.
///
/// Two kinds of runs:
/// - timed: the session times each run and marks it (timed_run; the harness, register_until_steady). The
///   first is the internal warm-up run, recorded and discarded; then options.measured_runs runs, or as
///   many as options.stopping decides. The report has each run's wall time.
/// - found: the program marks its runs (the injection library, a plain regionprof::benchmark recorder);
///   the analysis finds them by the run-marker rule, the first options.analysis.skip_runs discarded.
///
/// ```
/// regionprof::session s(options, regionprof::run_target{.type = "callable"});
/// for (std::size_t i = 0; i < options.warmup_runs; ++i) workload();
/// s.start();
/// do s.timed_run(workload); while (!s.timed_runs_done());
/// regionprof::Profile profile = *s.finish();
/// ```
class session {
 public:
  using clock_function = std::function<std::int64_t()>;

  /// Checks the options (validate_profile_options), claims the session (std::logic_error when another
  /// session or capture session is active in the process), resolves the output paths (json_output, or
  /// window_output with windows; markdown_output; trace_file: placeholders checked now, made absolute:
  /// the program may change its directory; an unusable one is std::invalid_argument naming its option)
  /// and reads the machine's state. `target`: report `target` as the front-end knows it (`type`,
  /// `command`, `benchmark`, ...); the session adds `kind`, the process identity and the window.
  session(profile_options options, run_target target, session_setup setup = {});
  /// Stops and discards whatever is recording. Never throws.
  ~session();

  session(const session&) = delete;
  session& operator=(const session&) = delete;
  session(session&&) = delete;
  session& operator=(session&&) = delete;

  /// Starts recording: the capture, and with `device_start::at_start` and options.device_tracing the
  /// device session, after forcing NVTX's tool attachment (so that a conflict is known).
  void start(device_start device = device_start::at_start);
  /// The injection library's device session, started inside cuInit (any thread, once). Safe against
  /// windows being cut and the session finishing.
  void attach_device(std::unique_ptr<device_session> device) noexcept;
  /// The injection library could not start its device session (the reason went to stderr).
  void device_failed() noexcept;

  /// One timed run of `body`: the cold-run flush (options.flush_cache), device synchronize, wall clock,
  /// the run marker around `body`, device synchronize, wall clock. The first timed run is the internal
  /// warm-up run. With windows, a window that this run completes is cut, written and dropped. Returns the
  /// run's wall time (ns). Exceptions of `body` propagate (the run marker is closed).
  std::int64_t timed_run(const std::function<void()>& body);
  /// timed_run in two halves, for a front-end that does not hold the run's body (a step profiler: the
  /// run is the caller's loop body between two steps). begin_timed_run opens the run (flush, synchronize,
  /// clock, run marker) on this thread; end_timed_run closes it on the same thread and returns its wall
  /// time (ns); abandon_timed_run closes the marker and records nothing (the body raised, or a step
  /// profiler's loop ended mid-step): the last run marker is left out of the profile.
  void begin_timed_run();
  std::int64_t end_timed_run();
  void abandon_timed_run() noexcept;
  /// True once the timed runs are done: options.measured_runs measured runs, or, with
  /// options.stopping.max_noise, when the stopping rule says so. Never before the first measured run.
  bool timed_runs_done() const;
  /// The stopping rule of the timed runs (options.stopping.max_noise set), else null.
  const noise_stopper* stopper() const noexcept { return stopper_ ? &*stopper_ : nullptr; }
  /// The measured runs' wall times so far (ns), in order.
  const std::vector<std::int64_t>& measured_wall_times() const noexcept { return measured_wall_ns_; }

  /// The cold-run flush alone, inside a `regionprof.cache_flush` range (a front-end that times its runs
  /// itself, outside their time). Nothing without options.flush_cache.
  void flush_caches() noexcept;
  /// Cold-run flushes so far.
  std::uint64_t flushes() const noexcept;
  /// The device session, or null (no device, or not attached yet).
  device_session* device() noexcept;
  /// The clock of the timed runs (a test's scripted clock); default monotonic_now_ns.
  void set_clock(clock_function clock) { clock_ = std::move(clock); }
  /// Report `target` before it is finished (regionprof::benchmark sets its iteration counts).
  run_target& target() noexcept { return target_; }

  /// Windows of found runs (the injection library's window thread): cuts, writes and drops every window
  /// whose runs have all closed. Never throws: a failure goes to on_failure as the JSON output's.
  void write_complete_windows() noexcept;

  /// Stops recording and makes the profile of what was recorded (with windows, the last window's),
  /// writes its outputs and returns it; nullopt when, with windows, the runs ended with the last full
  /// window (no empty window is written). Throws std::runtime_error starting with RUN_COUNT_MISMATCH when
  /// the timed runs and the run markers found disagree (a custom run marker must match one range per
  /// run); when the capture dropped records at its memory cap the mismatch is a RUN_COUNT_MISMATCH
  /// warning instead. Called once.
  std::optional<Profile> finish(const finish_options& how = {});

  /// Called after each profile (each window's, and the last) is written, with its window index (nullopt
  /// without windows): the injection library's summary line.
  std::function<void(const Profile&, std::optional<std::uint64_t> window)> on_written;

 private:
  enum class device_phase : std::uint8_t { off = 0, waiting = 1, failed = 2, ready = 3 };
  struct window_cut;

  /// The next timed run is the internal warm-up run (the first of window 0, with setup.warmup_run).
  bool next_run_is_warmup() const noexcept;
  output_set outputs_of(std::optional<std::uint64_t> window) const;
  /// The device's part of a window (`at_end` false: its activity up to `cut_ns`, with a forced flush when
  /// `force_flush`) or of the end (the device session stops), or a warning saying why there is none.
  void add_device(trace& t, bool at_end, std::optional<std::int64_t> cut_ns, bool force_flush, bool collect);
  /// Analyses `captured` into the profile of the end or of `window`, and writes it.
  Profile make_profile(capture_result captured, std::optional<window_position> window, const finish_options& how,
                       bool at_end);
  void cut_timed_window();
  /// Cuts, writes and drops every window of found runs that is complete; windows_mutex_ is held.
  void cut_found_windows(bool at_exit, bool collect);
  void write(const Profile& profile, std::optional<std::uint64_t> window) const;
  /// A failure of the windows' thread, to on_failure as the JSON output's.
  void report_failure(const std::string& reason) const noexcept;

  profile_options options_;
  run_target target_;
  session_setup setup_;
  process_identity identity_;
  std::vector<std::pair<output_format, std::string>> output_patterns_;  ///< absolute, %w unexpanded
  std::optional<run_marker_predicate> is_marker_;  ///< with windows: the cut's run-marker predicate
  std::optional<capture_claim> claim_;             ///< until start()
  std::unique_ptr<capture_session> capture_;
  std::unique_ptr<device_session> device_;
  std::atomic<device_phase> device_phase_{device_phase::off};
  bool device_started_ = false;  ///< device_ started by start() (stopped by finish or the destructor)
  machine_probe machine_;
  std::optional<cpu_cache_flusher> flusher_;
  std::optional<noise_stopper> stopper_;
  clock_function clock_;

  // Timed runs: the current window's spans (the internal warm-up first in window 0), all measured runs'
  // wall times, and when measuring began (max_time_s counts from it).
  struct run_span {
    std::int64_t start_ns;
    std::int64_t end_ns;
  };
  std::vector<run_span> spans_;
  std::vector<std::int64_t> measured_wall_ns_;
  std::int64_t measuring_since_ = 0;
  std::optional<std::int64_t> last_load_sample_ns_;  ///< when the load was last sampled (machine_probe::sample)
  bool timed_ = false;    ///< timed_run was called: the runs are timed
  bool warmup_in_spans_ = false;  ///< spans_ begins with the internal warm-up run
  std::int64_t run_start_ = 0;    ///< the open timed run's start (begin_timed_run)
  bool abandoned_run_ = false;    ///< the last run marker is an abandoned run's (abandon_timed_run)
  bool stopped_ = false;  ///< the stopping rule said stop

  std::mutex windows_mutex_;       ///< held while a window is cut and written, and by finish
  std::uint64_t next_window_ = 0;  ///< the index of the window being recorded
  bool finished_ = false;
};

/// Checks `options` as every session does, before anything runs: measured_runs at least 1, the rules
/// (validate_name_rule), the stopping options (validate_stopping_options), windows (at least 1 run each,
/// not with max_noise, a JSON output to write each window to: window_output or json_output;
/// window_output only with windows), target_kind a lower-case identifier. Throws std::invalid_argument
/// `<who>: <what is wrong and how to fix it>`.
void validate_profile_options(const profile_options& options, std::string_view who);

/// The NVTX range (domain `regionprof`) around each cold-run flush, between the runs.
inline constexpr const char* cache_flush_range_name = "regionprof.cache_flush";

}  // namespace regionprof
