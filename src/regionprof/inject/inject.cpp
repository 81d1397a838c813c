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
// The profiling is a session (session/session.hpp) of found runs, configured from the environment
// (options/environment.hpp, as `regionprof run` encoded its flags). With windows (docs/capture.md,
// "Windows") a thread of the library (every signal blocked) asks the session every 10 ms to cut, write
// and drop each window whose runs have all closed; the exit's write is the last, partial window. The
// program's threads take no lock for this; the session serialises the windows with the exit's (or a
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
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "regionprof/collect/collector.hpp"
#include "regionprof/inject/signal_writer.hpp"
#include "regionprof/options/environment.hpp"
#include "regionprof/session/session.hpp"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void);

namespace regionprof::inject {
namespace {

/// The window thread's wake-up: `stopping` once the final write has begun.
struct window_thread {
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
};

/// The library's one state. Leaked on purpose: the exit handler may run after static destructors.
struct injected {
  pid_t pid = 0;
  bool active = false;
  std::unique_ptr<session> profiling;
  device_options device;                     // CUPTI's settings (REGIONPROF_DEVICE_BUFFER_MB, ...)
  std::atomic<bool> device_started{false};   // InitializeInjection ran
  std::atomic<bool> written{false};          // the profile was written (or is being written)
  std::unique_ptr<window_thread> windows;    // set with windows
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

/// The library's name for an output in the claim file (`regionprof run` reads it): json, markdown, trace.
const char* kind_of(output_format format) {
  switch (format) {
    case output_format::markdown: return "markdown";
    case output_format::chrome_trace: return "trace";
    default: return "json";
  }
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
  const auto path = options::process_environment("NVTX_INJECTION64_PATH");
  Dl_info self{};
  if (!path || dladdr(reinterpret_cast<void*>(&InitializeInjection), &self) == 0 || self.dli_fname == nullptr) {
    return false;
  }
  struct stat a {};
  struct stat b {};
  return stat(path->c_str(), &a) == 0 && stat(self.dli_fname, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
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

/// The name of signal `signal_number` (`SIGSEGV`), for the report's target.ended_by_signal.
std::string signal_name(int signal_number) {
  const char* name = sigabbrev_np(signal_number);
  return name != nullptr ? std::string("SIG") + name : std::to_string(signal_number);
}

/// Writes the profile of what was recorded (with windows: the last window). `signal_number` 0: a normal
/// exit. Never throws.
void write_profile(int signal_number) noexcept {
  injected& s = state();
  if (!s.active || getpid() != s.pid || s.written.exchange(true)) return;
  try {
    if (s.windows) {
      const std::lock_guard lock(s.windows->mutex);
      s.windows->stopping = true;
      s.windows->wake.notify_all();
    }
    finish_options how;
    if (signal_number != 0) how.ended_by_signal = signal_name(signal_number);
    // A fault's path never calls into CUPTI or NVML; SIGINT, SIGTERM and SIGHUP end a healthy process.
    how.collect_device = signal_number == 0 || signal_number == SIGINT || signal_number == SIGTERM ||
                         signal_number == SIGHUP;
    how.tool_was_injected = nvtx_path_is_this_library();
    (void)s.profiling->finish(how);
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

/// The window thread: every 10 ms, the windows whose runs have all closed are written.
void cut_windows() noexcept {
  injected& s = state();
  window_thread& w = *s.windows;
  std::unique_lock lock(w.mutex);
  while (!w.stopping) {
    w.wake.wait_for(lock, std::chrono::milliseconds(10));
    if (w.stopping) break;
    lock.unlock();
    s.profiling->write_complete_windows();
    lock.lock();
  }
}

void write_at_exit() {
  signal_detail::wait_for_signal_writer();
  write_profile(0);
}

void write_at_signal(int signal_number) noexcept { write_profile(signal_number); }

/// True when this process is the one to profile: it created the claim file (or none is asked for).
bool claim_this_process(pid_t pid) {
  const auto claim = options::process_environment(options::claim_variable);
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
  bool windows = false;
  try {
    profile_options options = options::from_environment(options::process_environment);
    if (!options.json_output) options.json_output = "profile.json";
    windows = writes_windows(options);
    s.device = device_options_of(options);
    session_setup setup{.who = "regionprof",
                        .on_failure = [](const output_file& file, const output_error& error) {
                          report_unwritten(kind_of(file.format), error.reason(), file.path.empty() ? "" : error.what());
                        },
                        .keep_events = false,
                        .warmup_run = false,  // found runs: no timed run
                        .window = std::nullopt};
    run_target target;
    target.type = "process";
    target.command = command_line();
    s.profiling = std::make_unique<session>(std::move(options), std::move(target), std::move(setup));
    s.profiling->on_written = [](const Profile& profile, std::optional<std::uint64_t> window) {
      if (!window || *window == 0) record_summary(profile.result());
    };
    s.profiling->start(device_start::attached);
  } catch (const std::exception& e) {
    complain(std::string("profiling is off in this process: ") + e.what());
    s.profiling.reset();
    return false;
  }
  s.active = true;
  if (windows) {
    try {
      s.windows = std::make_unique<window_thread>();
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
      s.profiling.reset();  // records nothing from now on
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
    std::unique_ptr<device_session> device = collect::make_injected_device_session(s.device);
    device->start();
    s.profiling->attach_device(std::move(device));
  } catch (const std::exception& e) {
    s.profiling->device_failed();
    inject::complain(std::string("device tracing not started: ") + e.what());
  }
  return 1;
}
