// libregionprof_inject.so: what `regionprof run` loads into the program it profiles.
//
// NVTX loads it through NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2 (the NVTX capture tool
// of nvtx_regions, compiled in); the CUDA driver loads it through CUDA_INJECTION64_PATH and calls
// InitializeInjection from cuInit, where CUPTI collection starts. Both load the same file, so there is
// one state. Recording starts when the library is loaded (the program's first NVTX call or cuInit); the
// profile is written when the program exits normally (atexit), configured by inject_env.hpp's variables.
//
// What a crash leaves: on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT, and on SIGINT, SIGTERM or SIGHUP,
// when the program left them at their default action, the library writes what was recorded so far (the
// runs completed before the signal; device activity only for SIGINT/SIGTERM/SIGHUP, as a fault's path
// never calls into CUPTI), then ends the process with the signal, as it would have ended. The writing is
// done by a thread of the library, never in the signal handler (signal/signal_writer.hpp, as in
// libregionprof_nvtx_inject.so); a watchdog (10 s) bounds the attempt. _exit() and SIGKILL leave nothing.
// Every output is written through regionprof::write_outputs: replaced atomically, never torn.
//
// Windows (REGIONPROF_WINDOW_RUNS=N, `regionprof run --window-runs N`; docs/capture.md, "Windows"): a
// thread of the library (every signal blocked) cuts the capture every 10 ms (capture_session::cut_window)
// and, each time N more runs have closed, analyses and writes them as one profile (`%w` in the paths is
// the window's index) and drops them, with the device activity CUPTI has handed back of the launches
// made before the cut (device_session::cut_window); the exit's write is the last, partial window. The
// program's threads take no lock for this. A mutex serialises the windows with the exit's (or a
// signal's) write.
//
// It never writes to stdout; its own problems go to stderr, prefixed `regionprof:`, and only while fd 2 is
// still the file it was when the library loaded (a program that closed stderr and reused fd 2 for a file
// of its own never finds our lines in it). One process is profiled: the first that loads the library
// creates the REGIONPROF_CLAIM file (so a wrapper script that starts the real program works); other
// processes that inherit the environment, and forked children, do not write. Under `regionprof run` an
// output that cannot be written is recorded in the claim file, one `KIND<TAB>REASON` line (KIND `json`,
// `markdown` or `trace`), and `run` reports it naming the user's path; without a claim file it goes to
// stderr.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "regionprof/analysis/releasing.hpp"
#include "regionprof/analysis/window.hpp"
#include "regionprof/capture/capture.hpp"
#include "regionprof/collect/collector.hpp"
#include "regionprof/collect/device_session.hpp"
#include "regionprof/inject/inject_env.hpp"
#include "regionprof/inject/inject_settings.hpp"
#include "regionprof/inject/signal_writer.hpp"
#include "regionprof/machine/machine.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/output/output.hpp"
#include "regionprof/trace/process_identity.hpp"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void);

namespace regionprof::inject {
namespace {

/// What the profile is written with: the settings from the environment (read when the library loads),
/// and what they resolve to in this process.
struct settings {
  inject_settings given;
  output_set outputs;  ///< absolute paths, placeholders expanded (the program may change its directory)
  /// With windows: each output's absolute path pattern, expanded again per window (`%w`).
  std::vector<std::pair<output_format, std::string>> window_patterns;
  device_options device;
  process_identity identity;  ///< the report's target; the paths' placeholders (%r, %l, %h, %p, %w)
};

/// The window thread's state: `mutex` is held while a window is cut and written, and by the final write.
struct window_writer {
  run_marker_predicate is_marker;  ///< the analysis's run marker, by name and domain
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;           ///< the final write has begun: no more windows
  std::uint64_t next_window = 0;   ///< the index of the next window written (the final one included)
};

/// The library's one state. Leaked on purpose: the exit handler may run after static destructors.
struct injected {
  pid_t pid = 0;
  bool active = false;
  settings config;
  std::unique_ptr<capture_session> capture;
  std::unique_ptr<device_session> device;
  std::unique_ptr<machine_probe> machine;  // report `environment`: read at load, GPU clocks again at exit
  std::atomic<bool> device_started{false};  // InitializeInjection ran
  std::atomic<bool> device_ready{false};    // `device` is set (published after it)
  std::atomic<bool> written{false};         // the profile was written (or is being written)
  std::unique_ptr<window_writer> windows;   // set when REGIONPROF_WINDOW_RUNS is
  std::optional<std::string> claim_path;  // set when this process created the claim file
  bool stderr_known = false;              // fd 2 was open when the library loaded: its identity follows
  dev_t stderr_device = 0;
  ino_t stderr_inode = 0;
};

injected& state() {
  static injected* const instance = new injected;
  return *instance;
}

/// True while fd 2 is the file it was when the library loaded.
bool stderr_is_the_original() {
  const injected& s = state();
  struct stat now {};
  return s.stderr_known && fstat(STDERR_FILENO, &now) == 0 && now.st_dev == s.stderr_device &&
         now.st_ino == s.stderr_inode;
}

/// One line to stderr, unbuffered, unless the program has put something else at fd 2.
void complain(const std::string& message) {
  if (!stderr_is_the_original()) return;
  const std::string line = "regionprof: " + message + "\n";
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t written = write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    done += static_cast<std::size_t>(written);
  }
}

void remember_stderr() {
  injected& s = state();
  struct stat now {};
  s.stderr_known = fstat(STDERR_FILENO, &now) == 0;
  s.stderr_device = now.st_dev;
  s.stderr_inode = now.st_ino;
}

/// An output that could not be written: a line in the claim file for `regionprof run` to report, or
/// (no claim file, or it cannot be appended to) a line on stderr, `message` when given (it names the path).
void report_unwritten(const char* kind, std::string reason, const std::string& message = "") {
  if (reason.starts_with("regionprof: ")) reason.erase(0, std::string_view("regionprof: ").size());
  std::replace(reason.begin(), reason.end(), '\n', ' ');
  const injected& s = state();
  if (s.claim_path) {
    const int fd = open(s.claim_path->c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0) {
      const std::string line = std::string(kind) + "\t" + reason + "\n";
      const ssize_t written = write(fd, line.data(), line.size());
      close(fd);
      if (written == static_cast<ssize_t>(line.size())) return;
    }
  }
  if (!message.empty()) return complain(message);
  const std::string_view key = kind;
  const char* what = key == "json" ? "JSON profile" : key == "markdown" ? "Markdown report" : "Chrome trace";
  complain("could not write the " + std::string(what) + ": " + reason);
}

/// An absolute path: the program may change its directory before it exits.
std::string absolute(const std::string& path) {
  if (!path.empty() && path.front() == '/') return path;
  char buffer[4096];
  if (getcwd(buffer, sizeof buffer) == nullptr) return path;
  return std::string(buffer) + "/" + path;
}

/// An absolute path pattern: the directory's own `%` escaped, so that expanding it gives that directory.
std::string absolute_pattern(const std::string& pattern) {
  if (!pattern.empty() && pattern.front() == '/') return pattern;
  char buffer[4096];
  if (getcwd(buffer, sizeof buffer) == nullptr) return pattern;
  return escape_output_path(buffer) + "/" + pattern;
}

/// The library's name for an output in the claim file (`regionprof run` reads it): json, markdown, trace.
const char* kind_of(output_format format) {
  switch (format) {
    case output_format::markdown: return "markdown";
    case output_format::chrome_trace: return "trace";
    default: return "json";
  }
}

/// The settings through the codec `regionprof run` encodes them with (rules validated as the CLI's flags),
/// resolved: this process's identity, and the output paths expanded and made absolute.
settings read_settings() {
  settings config;
  config.given = from_environment(process_environment);
  const cli::report_settings& report = config.given.report;
  const std::string json_pattern = report.json_path.value_or("profile.json");
  try {
    config.identity = this_process_identity();
  } catch (const process_identity_error&) {
    // A launcher variable that is not a number matters only to paths with placeholders.
    const auto placeholder = [](const std::optional<std::string>& path) {
      return path && path->find('%') != std::string::npos;
    };
    if (placeholder(json_pattern) || placeholder(report.markdown_path) || placeholder(report.trace_path)) throw;
    config.identity = this_process_host_and_pid();
  }
  if (config.given.window_runs) config.identity.window_index = 0;  // a path without %w is refused
  const auto add = [&config](output_format format, const char* variable, const std::string& pattern) {
    try {
      config.outputs.add(format, absolute(expand_output_path(pattern, config.identity)));
      if (config.given.window_runs) config.window_patterns.emplace_back(format, absolute_pattern(pattern));
    } catch (const process_identity_error& e) {
      throw process_identity_error(std::string(variable) + ": " + e.what());
    }
  };
  add(output_format::json, inject_env::output, json_pattern);
  if (report.markdown_path) add(output_format::markdown, inject_env::markdown, *report.markdown_path);
  if (report.trace_path) add(output_format::chrome_trace, inject_env::trace, *report.trace_path);
  config.outputs.placeholders_expanded = true;
  if (config.given.device_buffer_mb) config.device.max_buffer_bytes = *config.given.device_buffer_mb << 20;
  config.device.synchronization_records = config.given.sync_records;
  return config;
}

/// The program's command line, for the report's `target`.
std::vector<std::string> command_line() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\0', start);
    words.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return words;
}

/// True when NVTX_INJECTION64_PATH names this very library (then an unattached capture tool only means
/// that the program made no NVTX call, not that another tool took NVTX).
bool nvtx_path_is_this_library() {
  const auto path = process_environment("NVTX_INJECTION64_PATH");
  Dl_info self{};
  if (!path || dladdr(reinterpret_cast<void*>(&InitializeInjection), &self) == 0 || self.dli_fname == nullptr) {
    return false;
  }
  struct stat a {};
  struct stat b {};
  return stat(path->c_str(), &a) == 0 && stat(self.dli_fname, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/// The outputs of window `window` (`%w` expanded), or the whole profile's (no windows).
output_set outputs_of(std::optional<std::uint64_t> window) {
  const settings& config = state().config;
  if (!window) return config.outputs;
  output_set outputs;
  for (const auto& [format, pattern] : config.window_patterns) {
    outputs.add(format, window_output_path(pattern, config.identity, *window));
  }
  outputs.placeholders_expanded = true;
  return outputs;
}

/// For `regionprof run`'s line on stderr, a `summary<TAB>5 runs, 4 regions; warnings: CODE, ...` line in
/// the claim file (without one, `run` would read the whole profile back to count them).
void record_summary(const analysis_result& result) noexcept {
  const injected& s = state();
  if (!s.claim_path) return;
  try {
    std::string line = "summary\t" + std::to_string(result.runs.size()) + " runs, " +
                       std::to_string(result.regions.size()) + " regions";
    std::string codes;
    for (const warning& w : result.warnings) codes += (codes.empty() ? "" : ", ") + std::string(to_string(w.code));
    if (!codes.empty()) line += "; warnings: " + codes;
    line += "\n";
    const int fd = open(s.claim_path->c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return;
    [[maybe_unused]] const ssize_t written = write(fd, line.data(), line.size());
    close(fd);
  } catch (...) {
  }
}

/// Analyses `t` and writes its outputs: the whole profile, or window `window` of REGIONPROF_WINDOW_RUNS
/// (its runs numbered on from the windows before it; the warm-up runs only in window 0).
void write_trace(trace t, std::optional<std::uint64_t> window, int signal_number) {
  injected& s = state();
  t.target.type = "process";
  t.target.command = command_line();
  t.target.set_process(s.config.identity);
  std::optional<window_position> position;
  if (window) {
    position = window_position{*window, *s.config.given.window_runs};
    t.target.window = position->index;
    t.target.window_runs = position->runs;
  }
  if (signal_number != 0) {
    const char* name = sigabbrev_np(signal_number);
    t.target.ended_by_signal = name != nullptr ? std::string("SIG") + name : std::to_string(signal_number);
  }
  std::optional<machine_environment> environment;
  if (s.machine) {
    for (warning& w : s.machine->warnings()) t.warnings.push_back(std::move(w));
    environment = s.machine->environment();
  }
  const analysis_options analysis =
      position ? window_analysis(s.config.given.report.analysis, *position) : s.config.given.report.analysis;
  const report_context context{analysis.skip_runs, 0, false, {}, {}, {}, {}, std::nullopt, std::move(environment)};
  // Without a Chrome trace to write, the trace's CPU intervals are freed before the result is assembled
  // (as `regionprof analyze` without --trace does; docs/design.md, rule 13).
  const bool events_needed = s.config.given.report.trace_path.has_value();
  analysis_result result = events_needed ? analyze(t, analysis) : detail::analyze_releasing_intervals(t, analysis);
  if (position) number_window_runs(result, *position);
  Profile profile(std::move(t), analysis, context, std::move(result));
  if (!events_needed) profile = std::move(profile).without_events();
  std::ostringstream no_stdout;  // the library never writes to stdout
  write_outputs(outputs_of(window), profile_writers(profile, markdown_options{}), no_stdout,
                [](const output_file& file, const output_error& error) {
                  report_unwritten(kind_of(file.format), error.reason(), error.what());
                });
  if (!window || *window == 0) record_summary(profile.result());
}

/// True when a range of `t` is a run marker.
bool has_run_marker(const trace& t, const run_marker_predicate& is_marker) {
  return std::any_of(t.intervals.begin(), t.intervals.end(), [&](const cpu_interval& i) {
    return is_marker(t.strings.view(i.name), t.strings.view(t.domains.at(i.domain)));
  });
}

/// The end of the last run marker of `t` (a window: the cut), ns; nullopt without one.
std::optional<std::int64_t> last_run_end_ns(const trace& t, const run_marker_predicate& is_marker) {
  std::optional<std::int64_t> end;
  for (const cpu_interval& i : t.intervals) {
    if (is_marker(t.strings.view(i.name), t.strings.view(t.domains.at(i.domain)))) {
      end = std::max(end.value_or(i.end_ns), i.end_ns);
    }
  }
  return end;
}

/// A window's device activity (docs/design.md, "Long runs: windows"): what CUPTI has handed back of the
/// launches made before the window's cut (device_session::cut_window), or a warning saying why the
/// window has none. `collect` false: a fault signal's write, which never calls into CUPTI; `at_exit`: the
/// windows the exit's write cuts, just before the device session stops (a forced flush).
void device_of_window(trace& t, const run_marker_predicate& is_marker, bool collect, bool at_exit) {
  injected& s = state();
  if (!s.device_started.load()) {
    t.warnings.push_back({warning_code::device_tracing_unavailable, warning_source::cupti,
                          "device tracing unavailable: the program had not initialised CUDA (no cuInit) when this "
                          "window was cut; the window is CPU-only"});
  } else if (!s.device_ready.load(std::memory_order_acquire)) {
    t.warnings.push_back({warning_code::device_tracing_unavailable, warning_source::cupti,
                          "device tracing unavailable: it could not be started (the reason was printed to "
                          "stderr); the window is CPU-only"});
  } else if (!collect) {
    t.warnings.push_back({warning_code::dropped_device_records, warning_source::cupti,
                          "the program died of a fault signal: this window's device activity was not collected (a "
                          "fault handler never calls into CUPTI)"});
  } else if (const std::optional<std::int64_t> cut = last_run_end_ns(t, is_marker)) {
    s.device->cut_window(t, *cut, at_exit);
  }
}

/// Cuts and writes every window whose runs have all closed, each with its device activity unless
/// `faulted`; `at_exit`: from the exit's (or a signal's) write. `w.mutex` is held. Never throws.
void write_complete_windows(window_writer& w, bool at_exit, bool faulted) noexcept {
  injected& s = state();
  const inject_settings& given = s.config.given;
  try {
    for (;;) {
      // Window 0 holds the warm-up runs too; they are discarded from it.
      const std::size_t runs = *given.window_runs + (w.next_window == 0 ? given.report.analysis.skip_runs : 0);
      std::optional<capture_result> window = s.capture->cut_window(runs, w.is_marker);
      if (!window) return;
      device_of_window(window->data, w.is_marker, !faulted, at_exit);
      write_trace(std::move(window->data), w.next_window++, 0);
    }
  } catch (const std::exception& e) {
    report_unwritten("json", std::string("could not make a window's profile: ") + e.what());
  }
}

/// Writes the profile of what was recorded (with windows: the last window). `signal_number` 0: a normal
/// exit. Never throws.
void write_profile(int signal_number) noexcept {
  injected& s = state();
  if (!s.active || getpid() != s.pid || s.written.exchange(true)) return;
  try {
    const bool faulted = signal_number != 0 && signal_number != SIGINT && signal_number != SIGTERM &&
                         signal_number != SIGHUP;
    std::unique_lock<std::mutex> no_more_windows;
    std::optional<std::uint64_t> window;
    if (s.windows) {
      no_more_windows = std::unique_lock(s.windows->mutex);  // waits for a window being written
      s.windows->stopping = true;
      s.windows->wake.notify_all();
      write_complete_windows(*s.windows, true, faulted);  // those the thread has not cut: the rest is the last
      window = s.windows->next_window;
    }
    capture_result captured = s.capture->stop();
    trace t = std::move(captured.data);
    if (!captured.stats.tool_attached && nvtx_path_is_this_library()) {
      // Not a conflict: the program simply made no NVTX call (so there are no runs; the analysis says so).
      std::erase_if(t.warnings, [](const warning& w) { return w.code == warning_code::nvtx_tool_conflict; });
    }
    const bool device_ready = s.device_ready.load(std::memory_order_acquire);
    if (!s.device_started.load()) {
      t.warnings.push_back({warning_code::device_tracing_unavailable, warning_source::cupti,
                            "device tracing unavailable: the program never initialised CUDA (no cuInit), so "
                            "there was no device activity to record; the profile is CPU-only"});
    } else if (!device_ready) {
      t.warnings.push_back({warning_code::device_tracing_unavailable, warning_source::cupti,
                            "device tracing unavailable: it could not be started (the reason was printed to "
                            "stderr); the profile is CPU-only"});
    } else if (!faulted) {
      s.device->stop(t);
    } else {
      t.warnings.push_back({warning_code::dropped_device_records, warning_source::cupti,
                            "the program died of signal " + std::to_string(signal_number) +
                                ": device activity was not collected (a fault handler never calls into CUPTI)"});
    }
    if (s.machine && !faulted) s.machine->end();  // NVML is not called after a fault
    if (window && *window > 0 && t.device_ops.empty() && !has_run_marker(t, s.windows->is_marker)) {
      return;  // the runs ended with the last full window: no empty window (it would be one run, NO_RUN_MARKERS)
    }
    write_trace(std::move(t), window, signal_number);
    if (signal_number != 0) {
      complain("the program got signal " + std::to_string(signal_number) +
               "; the profile holds what was recorded until then");
    }
  } catch (const std::exception& e) {
    report_unwritten("json", std::string("could not make the profile: ") + e.what());
  } catch (...) {
    report_unwritten("json", "could not make the profile");
  }
}

/// The window thread: every 10 ms, writes the windows whose runs have all closed.
void cut_windows() noexcept {
  window_writer& w = *state().windows;
  std::unique_lock lock(w.mutex);
  while (!w.stopping) {
    w.wake.wait_for(lock, std::chrono::milliseconds(10));
    if (!w.stopping) write_complete_windows(w, false, false);
  }
}

void write_at_exit() {
  signal_detail::wait_for_signal_writer();
  write_profile(0);
}

void write_at_signal(int signal_number) noexcept { write_profile(signal_number); }

/// True when this process is the one to profile: it created the claim file (or none is asked for).
bool claim_this_process(pid_t pid) {
  const auto claim = process_environment(inject_env::claim);
  if (!claim) return true;
  const int fd = open(claim->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno != EEXIST) complain("cannot create " + *claim + " (REGIONPROF_CLAIM): " + std::strerror(errno));
    return false;  // another process of the program is the profiled one
  }
  const std::string text = std::to_string(pid) + "\n";
  [[maybe_unused]] const ssize_t written = write(fd, text.data(), text.size());
  close(fd);
  state().claim_path = *claim;
  return true;
}

/// Runs when the library is loaded (by NVTX or by the CUDA driver, whichever comes first).
bool start() noexcept {
  injected& s = state();
  s.pid = getpid();
  remember_stderr();
  if (!claim_this_process(s.pid)) return false;
  try {
    s.config = read_settings();
    s.machine = std::make_unique<machine_probe>();
    s.machine->begin();  // the load average at the program's start, before it adds to it
    s.capture = std::make_unique<capture_session>();
  } catch (const std::exception& e) {
    complain(std::string("profiling is off in this process: ") + e.what());
    return false;
  }
  s.active = true;
  if (s.config.given.window_runs) {
    try {
      s.windows = std::make_unique<window_writer>();
      s.windows->is_marker = run_marker_predicate_of(s.config.given.report.analysis.run_marker);
      sigset_t all;
      sigset_t old;
      sigfillset(&all);
      pthread_sigmask(SIG_SETMASK, &all, &old);  // signals go to the program's threads, never to this one
      struct restore {
        const sigset_t& mask;
        ~restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
      } restore_mask{old};
      std::thread(cut_windows).detach();
    } catch (const std::exception& e) {
      complain(std::string("profiling is off in this process: cannot start the window thread: ") + e.what());
      s.capture.reset();  // records nothing from now on
      s.active = false;
      return false;
    }
  }
  std::atexit(write_at_exit);
  signal_detail::install_signal_writer({SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM, SIGHUP},
                                      write_at_signal);
  return true;
}

[[maybe_unused]] const bool started = start();

}  // namespace
}  // namespace regionprof::inject

/// CUDA_INJECTION64_PATH: the driver calls this from cuInit. Device collection starts here, before any
/// kernel, with its buffers allocated. Returns 1 (success) whatever happens: the program must run on.
extern "C" int InitializeInjection(void) {
  using namespace regionprof;
  inject::injected& s = inject::state();
  if (!s.active || s.device_started.exchange(true)) return 1;
  try {
    // Inside cuInit: the session checks that libcuda is loaded but calls no driver function to probe.
    std::unique_ptr<device_session> device = collect::make_injected_device_session(s.config.device);
    device->start();
    s.device = std::move(device);
    s.device_ready.store(true, std::memory_order_release);
  } catch (const std::exception& e) {
    inject::complain(std::string("device tracing not started: ") + e.what());
  }
  return 1;
}
