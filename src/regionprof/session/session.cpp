#include "regionprof/session/session.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include <nvtx3/nvToolsExt.h>

#include "regionprof/analysis/releasing.hpp"
#include "regionprof/regions/regions.hpp"
#include "regionprof/trace/clock.hpp"
#include "regionprof/trace/torch_op_names.hpp"

namespace regionprof {
namespace {

/// A report `target.kind`: lower-case letters and `_` (written into the target's JSON as it is).
bool is_identifier(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

void check_rule(const name_rule& rule, std::string_view role, std::string_view who) {
  try {
    validate_name_rule(rule, role);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(who) + ": " + e.what());
  }
}

/// `pattern` made absolute against the current directory, whose own `%`s are escaped, so that expanding
/// it gives the absolute expanded path.
std::string absolute_pattern(const std::string& pattern) {
  if (!pattern.empty() && pattern.front() == '/') return pattern;
  char buffer[4096];
  if (getcwd(buffer, sizeof buffer) == nullptr) return pattern;
  return escape_output_path(buffer) + "/" + pattern;
}

/// The options' outputs: (format, the option naming it, its path pattern).
struct output_option {
  output_format format;
  const char* option;
  std::string pattern;
};

std::vector<output_option> output_options(const profile_options& options) {
  std::vector<output_option> out;
  // With windows, window_output (the harness's) or json_output (the injection library's) is each
  // window's JSON profile; without, json_output alone.
  if (options.window_runs && options.window_output) {
    out.push_back({output_format::json, "window_output", *options.window_output});
  } else if (options.json_output) {
    out.push_back({output_format::json, "json_output", *options.json_output});
  }
  if (options.markdown_output) out.push_back({output_format::markdown, "markdown_output", *options.markdown_output});
  if (options.trace_file) out.push_back({output_format::chrome_trace, "trace_file", *options.trace_file});
  return out;
}

bool has_run_marker(const trace& t, const run_marker_predicate& is_marker) {
  return std::any_of(t.intervals.begin(), t.intervals.end(), [&](const cpu_interval& i) {
    return is_marker(t.strings.view(i.name), t.strings.view(t.domains.at(i.domain)));
  });
}

/// The end of the last run marker of `t` (a window's cut), ns; nullopt without one.
std::optional<std::int64_t> last_run_end_ns(const trace& t, const run_marker_predicate& is_marker) {
  std::optional<std::int64_t> end;
  for (const cpu_interval& i : t.intervals) {
    if (is_marker(t.strings.view(i.name), t.strings.view(t.domains.at(i.domain)))) {
      end = std::max(end.value_or(i.end_ns), i.end_ns);
    }
  }
  return end;
}

/// Removes the run marker that starts last (an abandoned timed run's): what it held belongs to no run.
void drop_last_run_marker(trace& t, const run_marker_predicate& is_marker) {
  auto last = t.intervals.end();
  for (auto i = t.intervals.begin(); i != t.intervals.end(); ++i) {
    if (is_marker(t.strings.view(i->name), t.strings.view(t.domains.at(i->domain))) &&
        (last == t.intervals.end() || i->start_ns >= last->start_ns)) {
      last = i;
    }
  }
  if (last != t.intervals.end()) t.intervals.erase(last);
}

warning unavailable(std::string why) {
  return {warning_code::device_tracing_unavailable, warning_source::cupti, "device tracing unavailable: " + std::move(why)};
}

}  // namespace

void validate_profile_options(const profile_options& options, std::string_view who) {
  const std::string prefix = std::string(who) + ": ";
  if (options.measured_runs == 0) throw std::invalid_argument(prefix + "measured_runs must be at least 1");
  validate_stopping_options(options.stopping, who);
  if (options.window_runs) {
    if (*options.window_runs == 0) {
      throw std::invalid_argument(prefix + "window_runs must be at least 1 (the runs of each window); leave it unset "
                                  "for one profile of every run");
    }
    if (options.stopping.max_noise) {
      throw std::invalid_argument(prefix +
                                  "window_runs cannot be combined with stopping on noise (max_noise): a window is a "
                                  "fixed count of runs; unset one of them (measured_runs sets the total with windows)");
    }
    if (!options.window_output && !options.json_output) {
      throw std::invalid_argument(prefix + "window_runs needs window_output, the path each window's profile is written "
                                  "to, with %w (the window index), e.g. 'w/prof-%w.json'");
    }
  } else if (options.window_output) {
    throw std::invalid_argument(prefix + "window_output is only used with window_runs; set window_runs (the runs of "
                                "each window) or leave window_output unset");
  }
  if (!options.target_kind.empty() && !is_identifier(options.target_kind)) {
    throw std::invalid_argument(prefix + "target_kind '" + options.target_kind +
                                "' is not a lower-case identifier (such as torch_module)");
  }
  check_rule(options.analysis.run_marker, "run marker", who);
  for (const name_rule& rule : options.analysis.region_rules) check_rule(rule, "region rule", who);
}

session::session(profile_options options, run_target target, session_setup setup)
    : options_(std::move(options)), target_(std::move(target)), setup_(std::move(setup)),
      machine_(options_.system_root) {
  validate_profile_options(options_, setup_.who);
  try {
    claim_.emplace();
  } catch (const std::logic_error&) {
    throw std::logic_error(setup_.who + ": a capture session is already active in this process (profiles do not "
                           "nest and two cannot run at once); finish the other one first");
  }
  const std::vector<output_option> outputs = output_options(options_);
  try {
    identity_ = this_process_identity();
  } catch (const process_identity_error& e) {
    // A launcher variable that is not a number matters only to paths with placeholders.
    for (const output_option& out : outputs) {
      if (out.pattern.find('%') != std::string::npos) {
        throw std::invalid_argument(setup_.who + ": " + out.option + ": " + e.what());
      }
    }
    identity_ = this_process_host_and_pid();
  }
  if (options_.window_runs) identity_.window_index = 0;  // a path that names no window is refused
  if (setup_.window) identity_.window_index = setup_.window->index;
  for (const output_option& out : outputs) {
    const std::string pattern = absolute_pattern(out.pattern);
    try {
      (void)expand_output_path(out.pattern, identity_);  // a path that cannot be used fails before any run
    } catch (const process_identity_error& e) {
      throw std::invalid_argument(setup_.who + ": " + out.option + ": " + e.what());
    }
    output_patterns_.emplace_back(out.format, pattern);
  }
  if (options_.window_runs) is_marker_ = run_marker_predicate_of(options_.analysis.run_marker);
  machine_.begin();  // the load average at start, before the warm-up runs add to it
  if (options_.flush_cache) flusher_.emplace(options_.system_root);
  if (options_.stopping.max_noise) stopper_.emplace(options_.stopping);
  clock_ = [] { return monotonic_now_ns(); };
}

session::~session() {
  if (device_started_) {
    try {
      trace discarded;
      device_->stop(discarded);
    } catch (...) {
      // the caller's exception, if any, is the one to report
    }
  }
  // ~capture_session stops recording and discards it; ~capture_claim gives an unused claim back.
}

void session::start(device_start device) {
  // NVTX attaches its tool at its first call; make that happen now, so a conflict is known. Not in the
  // injection library: NVTX is attaching it (or the driver loaded it), and this copy of NVTX would load
  // NVTX_INJECTION64_PATH, the library itself.
  if (device == device_start::at_start) nvtxInitialize(nullptr);
  if (device == device_start::at_start && options_.device_tracing) device_ = make_device_session(device_options_of(options_));
  capture_ = std::make_unique<capture_session>(std::move(*claim_), options_.capture);
  claim_.reset();
  if (device_) {
    device_->start();
    device_started_ = true;
    device_phase_.store(device_phase::ready, std::memory_order_release);
  } else if (device == device_start::attached) {
    device_phase_.store(device_phase::waiting, std::memory_order_release);
  }
}

void session::attach_device(std::unique_ptr<device_session> device) noexcept {
  device_ = std::move(device);
  device_phase_.store(device_phase::ready, std::memory_order_release);
}

void session::device_failed() noexcept { device_phase_.store(device_phase::failed, std::memory_order_release); }

device_session* session::device() noexcept {
  return device_phase_.load(std::memory_order_acquire) == device_phase::ready ? device_.get() : nullptr;
}

void session::flush_caches() noexcept {
  if (!flusher_) return;
  static const nvtxStringHandle_t name = nvtxDomainRegisterStringA(detail::domain(), cache_flush_range_name);
  const nvtxEventAttributes_t attributes = detail::registered_attributes(name);
  nvtxDomainRangePushEx(detail::domain(), &attributes);
  flusher_->flush();
  if (device_session* d = device()) d->flush_device_cache();
  nvtxDomainRangePop(detail::domain());
}

std::uint64_t session::flushes() const noexcept { return flusher_ ? flusher_->flushes() : 0; }

std::int64_t session::timed_run(const std::function<void()>& body) {
  begin_timed_run();
  try {
    body();
  } catch (...) {
    abandon_timed_run();
    throw;
  }
  return end_timed_run();
}

bool session::next_run_is_warmup() const noexcept {
  return setup_.warmup_run && spans_.empty() && next_window_ == 0;  // run 0: the internal warm-up
}

void session::begin_timed_run() {
  timed_ = true;
  if (!next_run_is_warmup() && measured_wall_ns_.empty()) measuring_since_ = clock_();  // max_time_s counts from here
  flush_caches();
  if (device_session* d = device()) d->synchronize();
  run_start_ = clock_();
  push_run();
}

void session::abandon_timed_run() noexcept {
  pop_region();
  abandoned_run_ = true;
}

std::int64_t session::end_timed_run() {
  pop_region();
  abandoned_run_ = false;
  if (device_session* d = device()) d->synchronize();
  const std::int64_t start = run_start_;
  const std::int64_t end = clock_();
  const bool warmup = next_run_is_warmup();
  spans_.push_back({start, end});
  // The machine's load through the runs: at a run's end, outside its time, at most every 100 ms.
  if (!last_load_sample_ns_) last_load_sample_ns_ = start;
  if (end - *last_load_sample_ns_ >= load_sample_interval_ns) {
    machine_.sample();
    last_load_sample_ns_ = end;
  }
  if (warmup) {
    warmup_in_spans_ = true;
    return end - start;
  }
  measured_wall_ns_.push_back(end - start);
  if (stopper_) stopped_ = stopper_->add_run(end - start, end - measuring_since_);
  if (options_.window_runs && !timed_runs_done() && measured_wall_ns_.size() % *options_.window_runs == 0) {
    cut_timed_window();
  }
  return end - start;
}

bool session::timed_runs_done() const {
  if (measured_wall_ns_.empty()) return false;
  return stopper_ ? stopped_ : measured_wall_ns_.size() >= options_.measured_runs;
}

output_set session::outputs_of(std::optional<std::uint64_t> window) const {
  process_identity identity = identity_;
  if (window) identity.window_index = *window;
  output_set outputs;
  for (const auto& [format, pattern] : output_patterns_) outputs.add(format, expand_output_path(pattern, identity));
  outputs.placeholders_expanded = true;
  return outputs;
}

void session::write(const Profile& profile, std::optional<std::uint64_t> window) const {
  std::ostringstream no_stdout;  // a session never writes to standard output
  write_outputs(outputs_of(window), profile_writers(profile, markdown_options{}), no_stdout, setup_.on_failure);
  if (on_written) on_written(profile, window);
}

void session::add_device(trace& t, bool at_end, std::optional<std::int64_t> cut_ns, bool force_flush, bool collect) {
  const char* what = at_end ? "the profile" : "the window";
  switch (device_phase_.load(std::memory_order_acquire)) {
    case device_phase::off: return;
    case device_phase::waiting:
      t.warnings.push_back(unavailable(std::string("the program ") + (at_end ? "never initialised" : "had not initialised") +
                                       " CUDA (no cuInit), so there was no device activity to record; " + what +
                                       " is CPU-only"));
      return;
    case device_phase::failed:
      t.warnings.push_back(unavailable(std::string("it could not be started (the reason was printed to stderr); ") +
                                       what + " is CPU-only"));
      return;
    case device_phase::ready: break;
  }
  if (!collect) {
    t.warnings.push_back({warning_code::dropped_device_records, warning_source::cupti,
                          std::string("the program died of a fault signal: ") + (at_end ? "its" : "this window's") +
                              " device activity was not collected (a fault handler never calls into CUPTI)"});
    return;
  }
  if (!at_end) {
    if (cut_ns) device_->cut_window(t, *cut_ns, force_flush);
    return;
  }
  device_started_ = false;
  device_->stop(t);
}

Profile session::make_profile(capture_result captured, std::optional<window_position> window, const finish_options& how,
                              bool at_end) {
  // Found runs: window 0 holds the skipped runs; timed runs: spans_ says whether it holds the warm-up run.
  const bool holds_warmup = timed_ ? warmup_in_spans_ : (!window || window->index == 0);
  trace t = std::move(captured.data);
  strip_torch_op_suffixes(t);  // torch's op ranges (emit_nvtx, Python's ops=True) keyed by op
  if (abandoned_run_ && at_end) drop_last_run_marker(t, run_marker_predicate_of(options_.analysis.run_marker));
  for (warning& w : machine_.warnings()) t.warnings.push_back(std::move(w));
  std::optional<stopping_summary> stopping;
  if (timed_ && at_end && stopper_) stopping = profile_stopping(*stopper_, t.warnings);
  t.target = target_;
  if (!options_.target_kind.empty()) t.target.kind = options_.target_kind;
  t.target.set_process(identity_);
  if (window) {
    t.target.window = window->index;
    t.target.window_runs = window->runs;
  }
  if (!how.ended_by_signal.empty()) t.target.ended_by_signal = how.ended_by_signal;
  t.module_types = options_.module_types;

  analysis_options analysis = options_.analysis;
  std::size_t measured_runs = 0;
  if (timed_) {
    const std::size_t first_measured = holds_warmup ? 1 : 0;
    measured_runs = spans_.size() - first_measured;
    for (std::size_t run = first_measured; run < spans_.size(); ++run) {
      t.run_wall_times_ns.push_back(spans_[run].end_ns - spans_[run].start_ns);
    }
    analysis.skip_runs = first_measured;  // the internal warm-up run
  } else if (window) {
    analysis = window_analysis(analysis, *window);
  }
  if (!captured.stats.tool_attached) {
    if (timed_) {
      // Without the capture the timed runs still exist: each becomes a run-marker interval spanning its
      // wall time on the calling thread, so the report has runs (and a residual of 100 %).
      if (nvtx_tool_conflict().empty()) {
        t.warnings.push_back({warning_code::nvtx_tool_conflict, warning_source::nvtx,
                              "NVTX did not attach regionprof's capture tool (no NVTX_INJECTION64_PATH, and the "
                              "program's NVTX does not support static tools): no NVTX range was recorded, so runs are "
                              "timed by the wall clock only and no region owns time"});
      }
      const thread_index thread =
          t.add_thread(static_cast<std::int64_t>(::getpid()), static_cast<std::int64_t>(::syscall(SYS_gettid)));
      const name_id name = t.strings.intern(run_marker_name);
      const domain_index domain = t.domain(nvtx_domain_name);
      for (const run_span& span : spans_) {
        t.intervals.push_back({span.start_ns, span.end_ns, name, thread, 0, domain, interval_kind::range, 0});
      }
      analysis.run_marker = default_run_marker();
    } else if (how.tool_was_injected) {
      // Not a conflict: the program simply made no NVTX call (so there are no runs; the analysis says so).
      std::erase_if(t.warnings, [](const warning& w) { return w.code == warning_code::nvtx_tool_conflict; });
    }
  }
  for (const warning& w : options_.warnings) t.warnings.push_back(w);
  if (options_.warnings_at_finish) {
    for (warning& w : options_.warnings_at_finish()) t.warnings.push_back(std::move(w));
  }

  report_context context;
  context.warmup_runs = timed_ ? (holds_warmup ? options_.warmup_runs : 0) : analysis.skip_runs;
  context.measured_runs = measured_runs;
  context.uses_inference_function = options_.uses_inference_function;
  context.input = options_.input;
  context.stopping = stopping;
  context.environment = machine_.environment();
  context.created_at = utc_timestamp_now();  // one time for every output of this profile
  // Without a Chrome trace to write or a caller to hand the events to, the trace's CPU intervals are
  // freed before the result is assembled (docs/design.md, rule 13). Timed runs keep them: a run count
  // that does not match is analysed again with a warning.
  const bool events_needed =
      setup_.keep_events || timed_ || std::any_of(output_patterns_.begin(), output_patterns_.end(), [](const auto& out) {
        return out.first == output_format::chrome_trace;
      });
  const auto analysed = [&](trace source) {
    analysis_result result =
        events_needed ? analyze(source, analysis) : detail::analyze_releasing_intervals(source, analysis);
    if (window) number_runs_of_window(result, *window);
    Profile profile(std::move(source), analysis, context, std::move(result));
    return events_needed ? std::move(profile) : std::move(profile).without_events();
  };
  Profile profile = analysed(std::move(t));
  if (timed_ && profile.result().runs.size() != measured_runs) {
    std::string message = "RUN_COUNT_MISMATCH: the run-marker rule '" + analysis.run_marker.pattern + "' found " +
                          std::to_string(profile.result().runs.size()) + " measured run(s)" +
                          (holds_warmup ? " (after the internal warm-up run)" : "") + ", but " +
                          (window ? "window " + std::to_string(window->index) + " ran " : "measured_runs is ") +
                          std::to_string(measured_runs);
    if (captured.stats.dropped_records == 0) {
      throw std::runtime_error(setup_.who + ": " + message +
                               ". The harness marks each call with 'regionprof.profiled_run' in domain "
                               "'regionprof'; a custom run_marker must match exactly one range per call");
    }
    // The analysis already reports a run count that differs from the wall times; add the cause.
    const auto& warnings = profile.result().warnings;
    const bool reported = std::any_of(warnings.begin(), warnings.end(), [](const warning& w) {
      return w.code == warning_code::run_count_mismatch;
    });
    if (!reported) {
      trace kept = profile.source();
      kept.warnings.push_back({warning_code::run_count_mismatch, warning_source::nvtx,
                               message + ": run markers were lost to the capture's memory cap "
                                         "(DROPPED_HOST_RECORDS); raise capture.memory_cap_bytes"});
      profile = analysed(std::move(kept));
    }
  }
  write(profile, window ? std::optional<std::uint64_t>(window->index) : std::nullopt);
  return profile;
}

void session::cut_timed_window() {
  const std::lock_guard lock(windows_mutex_);
  const window_position position{next_window_, *options_.window_runs};
  // Window 0 also holds the internal warm-up run.
  std::optional<capture_result> cut = capture_->cut_window(spans_.size(), *is_marker_);
  if (!cut && nvtx_capture_attached()) {
    throw std::runtime_error(setup_.who + ": RUN_COUNT_MISMATCH: the run-marker rule '" +
                             options_.analysis.run_marker.pattern + "' found fewer than " +
                             std::to_string(spans_.size()) + " runs for window " + std::to_string(next_window_) +
                             " (window_runs " + std::to_string(*options_.window_runs) +
                             "); a custom run_marker must match exactly one range per call");
  }
  capture_result captured;
  if (cut) {
    captured = std::move(*cut);
  } else if (std::string conflict = nvtx_tool_conflict(); !conflict.empty()) {
    captured.data.warnings.push_back({warning_code::nvtx_tool_conflict, warning_source::nvtx, std::move(conflict)});
  }
  // The timed runs waited for the device: the forced flush hands back everything of this window.
  add_device(captured.data, false, spans_.back().end_ns, true, true);
  machine_.end();
  (void)make_profile(std::move(captured), position, {}, false);  // written, then dropped
  spans_.clear();
  warmup_in_spans_ = false;
  ++next_window_;
  machine_.begin();
}

void session::cut_found_windows(bool at_exit, bool collect) {
  const std::size_t skipped = options_.analysis.skip_runs;
  for (;;) {
    // Window 0 holds the warm-up runs too; they are discarded from it.
    const std::size_t runs = *options_.window_runs + (next_window_ == 0 ? skipped : 0);
    std::optional<capture_result> cut = capture_->cut_window(runs, *is_marker_);
    if (!cut) return;
    add_device(cut->data, false, last_run_end_ns(cut->data, *is_marker_), at_exit, collect);
    if (collect) machine_.end();  // NVML is not called after a fault
    (void)make_profile(std::move(*cut), window_position{next_window_, *options_.window_runs}, {}, false);
    ++next_window_;
    if (collect) machine_.begin();
  }
}

void session::write_complete_windows() noexcept {
  const std::lock_guard lock(windows_mutex_);
  if (finished_ || !options_.window_runs || !capture_) return;
  try {
    cut_found_windows(false, true);
  } catch (const std::exception& e) {
    report_failure(std::string("could not make a window's profile: ") + e.what());
  }
}

void session::report_failure(const std::string& reason) const noexcept {
  try {
    const output_error error("", "JSON profile", reason);
    if (setup_.on_failure) setup_.on_failure(output_file{output_format::json, ""}, error);
  } catch (...) {
  }
}

std::optional<Profile> session::finish(const finish_options& how) {
  const std::lock_guard lock(windows_mutex_);  // waits for a window being written
  if (finished_) throw std::logic_error(setup_.who + ": the session is finished already");
  finished_ = true;
  std::optional<window_position> window;
  if (options_.window_runs) {
    // The windows whose runs have all closed; the rest is the last window.
    if (!timed_) cut_found_windows(true, how.collect_device);
    window = window_position{next_window_, *options_.window_runs};
  } else if (setup_.window) {
    window = setup_.window;
  }
  capture_result captured = capture_->stop();
  add_device(captured.data, true, std::nullopt, true, how.collect_device);
  if (how.collect_device) machine_.end();  // the GPUs' clocks after the last run; NVML is not called after a fault
  if (!timed_ && window && window->index > 0 && captured.data.device_ops.empty() &&
      !has_run_marker(captured.data, *is_marker_)) {
    return std::nullopt;  // the runs ended with the last full window: no empty window (one run, NO_RUN_MARKERS)
  }
  return make_profile(std::move(captured), window, how, true);
}

}  // namespace regionprof
