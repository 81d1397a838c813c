// libregionprof_inject.so: what `regionprof run` loads into the program it profiles.
//
// NVTX loads it through NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2 (the NVTX capture tool
// of nvtx_regions, compiled in); the CUDA driver loads it through CUDA_INJECTION64_PATH and calls
// InitializeInjection from cuInit, where CUPTI collection starts. Both load the same file, so there is
// one state. Recording starts when the library is loaded (the program's first NVTX call or cuInit); the
// profile is written when the program exits normally (atexit), configured by inject_env.hpp's variables.
//
// What a crash leaves: on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT, and on SIGINT, SIGTERM or SIGHUP
// when the program left them at their default action, the library writes what was recorded so far (the
// runs completed before the signal; device activity only for SIGINT/SIGTERM/SIGHUP, as a fault handler
// never calls into CUPTI), then re-raises the signal, so the program ends as it would have. A watchdog
// (10 s) bounds the attempt. _exit() and SIGKILL leave nothing.
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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "capture/end_with_signal.hpp"
#include "collect/collector.hpp"
#include "inject_env.hpp"
#include "regionprof/capture.hpp"
#include "regionprof/device_session.hpp"
#include "regionprof/process_identity.hpp"
#include "regionprof/profile.hpp"
#include "report_settings.hpp"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void);

namespace regionprof::cli {
namespace {

/// What the profile is written with (from the environment, read when the library loads).
struct settings {
  analysis_options analysis;
  std::size_t warmup_runs = 0;
  std::string json_path;
  std::optional<std::string> markdown_path;
  std::optional<std::string> trace_path;
  device_options device;
  process_identity identity;  ///< the report's target; the paths' placeholders (%r, %l, %h, %p)
};

/// The library's one state. Leaked on purpose: the exit handler may run after static destructors.
struct injected {
  pid_t pid = 0;
  bool active = false;
  settings config;
  std::unique_ptr<capture_session> capture;
  std::unique_ptr<device_session> device;
  std::atomic<bool> device_started{false};  // InitializeInjection ran
  std::atomic<bool> device_ready{false};    // `device` is set (published after it)
  std::atomic<bool> written{false};         // the profile was written (or is being written)
  std::atomic<int> fatal_signal{0};
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
/// (no claim file, or it cannot be appended to) a line on stderr.
void report_unwritten(const char* kind, std::string reason) {
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
  const std::string_view key = kind;
  const char* what = key == "json" ? "JSON profile" : key == "markdown" ? "Markdown report" : "Chrome trace";
  complain("could not write the " + std::string(what) + ": " + reason);
}

/// Writes one output; a failure is reported and does not stop the others.
template <typename write_function>
void write_output(const char* kind, write_function&& write_it) noexcept {
  try {
    write_it();
  } catch (const std::exception& e) {
    report_unwritten(kind, e.what());
  } catch (...) {
    report_unwritten(kind, "unknown error");
  }
}

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') return std::nullopt;
  return std::string(value);
}

/// An absolute path: the program may change its directory before it exits.
std::string absolute(const std::string& path) {
  if (!path.empty() && path.front() == '/') return path;
  char buffer[4096];
  if (getcwd(buffer, sizeof buffer) == nullptr) return path;
  return std::string(buffer) + "/" + path;
}

/// The rules through the same validation as the CLI's flags, so `run` and `analyze` read them alike.
settings read_settings() {
  report_settings rules;
  if (auto marker = environment(inject_env::run_marker)) rules.set_run_marker(inject_env::run_marker, *marker);
  if (auto regions = environment(inject_env::regions)) {
    std::istringstream lines(*regions);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) rules.add_region(inject_env::regions, line);
    }
  }
  rules.analysis.cross_thread = environment(inject_env::cross_thread).value_or("0") == "1";
  if (auto limit = environment(inject_env::row_limit)) rules.set_row_limit(inject_env::row_limit, *limit);
  if (auto warmup = environment(inject_env::warmup_runs)) rules.set_warmup_runs(inject_env::warmup_runs, *warmup);
  settings config;
  config.analysis = rules.analysis;
  config.warmup_runs = rules.analysis.skip_runs;
  const auto output = environment(inject_env::output);
  const auto markdown = environment(inject_env::markdown);
  const auto trace = environment(inject_env::trace);
  try {
    config.identity = this_process_identity();
  } catch (const process_identity_error&) {
    // A launcher variable that is not a number matters only to paths with placeholders.
    const auto placeholder = [](const std::optional<std::string>& path) {
      return path && path->find('%') != std::string::npos;
    };
    if (placeholder(output) || placeholder(markdown) || placeholder(trace)) throw;
    config.identity = this_process_host_and_pid();
  }
  const auto expanded = [&config](const char* variable, const std::string& pattern) {
    try {
      return absolute(expand_output_path(pattern, config.identity));
    } catch (const process_identity_error& e) {
      throw process_identity_error(std::string(variable) + ": " + e.what());
    }
  };
  config.json_path = expanded(inject_env::output, output.value_or("profile.json"));
  if (markdown) config.markdown_path = expanded(inject_env::markdown, *markdown);
  if (trace) config.trace_path = expanded(inject_env::trace, *trace);
  if (auto megabytes = environment(inject_env::device_buffer_mb)) {
    config.device.max_buffer_bytes = parse_count(inject_env::device_buffer_mb, *megabytes, 4, 1 << 20) << 20;
  }
  config.device.synchronization_records = environment(inject_env::sync_records).value_or("0") == "1";
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
  const auto path = environment("NVTX_INJECTION64_PATH");
  Dl_info self{};
  if (!path || dladdr(reinterpret_cast<void*>(&InitializeInjection), &self) == 0 || self.dli_fname == nullptr) {
    return false;
  }
  struct stat a {};
  struct stat b {};
  return stat(path->c_str(), &a) == 0 && stat(self.dli_fname, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/// Writes the profile of what was recorded. `signal_number` 0: a normal exit. Never throws.
void write_profile(int signal_number) noexcept {
  injected& s = state();
  if (!s.active || getpid() != s.pid || s.written.exchange(true)) return;
  try {
    capture_result captured = s.capture->stop();
    trace t = std::move(captured.data);
    if (!captured.stats.tool_attached && nvtx_path_is_this_library()) {
      // Not a conflict: the program simply made no NVTX call (so there are no runs; the analysis says so).
      std::erase_if(t.warnings, [](const warning& w) { return w.code == warning_code::nvtx_tool_conflict; });
    }
    const bool faulted = signal_number != 0 && signal_number != SIGINT && signal_number != SIGTERM &&
                         signal_number != SIGHUP;
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
    boost::json::object target{{"command", boost::json::value_from(command_line())}};
    const boost::json::value identity = boost::json::parse("{" + identity_json_members(s.config.identity) + "}");
    for (const auto& member : identity.as_object()) target[member.key()] = member.value();
    if (signal_number != 0) {
      const char* name = sigabbrev_np(signal_number);
      target["ended_by_signal"] = name != nullptr ? std::string("SIG") + name : std::to_string(signal_number);
    }
    t.target_type = "process";
    t.target_extra_json = boost::json::serialize(target);
    const report_context context{s.config.warmup_runs, 0, false, {}, {}, {}, {}};
    const Profile profile(std::move(t), s.config.analysis, context);
    write_output("json", [&] { profile.write_json(s.config.json_path); });
    if (s.config.markdown_path) write_output("markdown", [&] { profile.write_markdown(*s.config.markdown_path); });
    if (s.config.trace_path) write_output("trace", [&] { profile.write_trace(*s.config.trace_path); });
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

void write_at_exit() { write_profile(0); }

/// Ends the process with the signal it got when writing takes too long (a lock held by the faulting code).
void on_watchdog(int) { capture_detail::end_with_signal(state().fatal_signal.load()); }

/// Installed with SA_RESETHAND | SA_NODEFER: the disposition is the default again inside, so the raise at
/// the end (or a second fault) ends the process as the signal would have.
void on_fatal_signal(int signal_number) {
  state().fatal_signal.store(signal_number);
  struct sigaction watchdog {};
  watchdog.sa_handler = on_watchdog;
  sigaction(SIGALRM, &watchdog, nullptr);
  alarm(10);
  write_profile(signal_number);
  alarm(0);
  raise(signal_number);
}

void install_signal_handlers() {
  for (const int signal_number : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (sigaction(signal_number, nullptr, &current) != 0) continue;
    const bool default_action = (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL;
    if (!default_action) continue;  // the program handles it: leave it alone
    struct sigaction handler {};
    handler.sa_handler = on_fatal_signal;
    handler.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&handler.sa_mask);
    sigaction(signal_number, &handler, nullptr);
  }
}

/// True when this process is the one to profile: it created the claim file (or none is asked for).
bool claim_this_process(pid_t pid) {
  const auto claim = environment(inject_env::claim);
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
    s.capture = std::make_unique<capture_session>();
  } catch (const std::exception& e) {
    complain(std::string("profiling is off in this process: ") + e.what());
    return false;
  }
  s.active = true;
  std::atexit(write_at_exit);
  install_signal_handlers();
  return true;
}

[[maybe_unused]] const bool started = start();

}  // namespace
}  // namespace regionprof::cli

/// CUDA_INJECTION64_PATH: the driver calls this from cuInit. Device collection starts here, before any
/// kernel, with its buffers allocated. Returns 1 (success) whatever happens: the program must run on.
extern "C" int InitializeInjection(void) {
  using namespace regionprof;
  cli::injected& s = cli::state();
  if (!s.active || s.device_started.exchange(true)) return 1;
  try {
    // Inside cuInit: the session checks that libcuda is loaded but calls no driver function to probe.
    std::unique_ptr<device_session> device = collect::make_injected_device_session(s.config.device);
    device->start();
    s.device = std::move(device);
    s.device_ready.store(true, std::memory_order_release);
  } catch (const std::exception& e) {
    cli::complain(std::string("device tracing not started: ") + e.what());
  }
  return 1;
}
