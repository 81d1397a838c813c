// libregionprof_nvtx_inject.so on its own: when REGIONPROF_NVTX_TRACE names a file, record from the
// moment NVTX loads the library until the program exits, then write the captured ranges there as a
// Chrome trace. Never changes the program's exit status or output; problems go to stderr.
//
// The trace is written to FILE.regionprof-PID.partial and renamed onto FILE, so FILE is never left half
// written (an earlier FILE stays as it was when the process dies first). Only the process that loaded
// the library writes: a forked child that exits does not. On SIGINT, SIGTERM or SIGHUP left at their
// default action the trace of what was recorded is written (by a thread of the library, not in the
// signal handler), then the signal is raised again with its default action (a 10 s watchdog bounds the
// attempt). SIGKILL and _exit() leave nothing.
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "capture/end_with_signal.hpp"
#include "regionprof/capture.hpp"
#include "regionprof/report.hpp"

namespace {

/// The library's state, never destroyed: the exit handler may run after static destructors began.
struct autostart {
  std::unique_ptr<regionprof::capture_session> session;
  std::string path;
  pid_t pid = 0;                        ///< the process that started the session; the only one that writes
  std::atomic<bool> written{false};     ///< the trace was written (or is being written)
  std::atomic<int> fatal_signal{0};
};

autostart& state() {
  static autostart* const instance = new autostart;
  return *instance;
}

/// Writes the trace once, in the process that started the session. Never throws.
void write_trace() noexcept {
  autostart& s = state();
  if (!s.session || ::getpid() != s.pid || s.written.exchange(true)) return;
  try {
    regionprof::capture_result result = s.session->stop();
    const std::string partial = s.path + ".regionprof-" + std::to_string(s.pid) + ".partial";
    {
      std::ofstream out(partial, std::ios::binary | std::ios::trunc);
      if (!out) {
        std::fprintf(stderr, "regionprof: cannot open '%s' (REGIONPROF_NVTX_TRACE) for writing\n", partial.c_str());
        return;
      }
      result.data.target_type = "process";
      regionprof::write_chrome_trace(result.data, out);
      if (!out.flush()) {
        out.close();
        std::remove(partial.c_str());
        std::fprintf(stderr, "regionprof: writing '%s' failed\n", partial.c_str());
        return;
      }
    }
    if (std::rename(partial.c_str(), s.path.c_str()) != 0) {
      std::remove(partial.c_str());
      std::fprintf(stderr, "regionprof: cannot rename the NVTX trace onto '%s'\n", s.path.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "regionprof: could not write the NVTX trace: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "regionprof: could not write the NVTX trace\n");
  }
}

void write_at_exit() { write_trace(); }

/// Ends the process with the signal it got when writing takes too long (a lock held by the interrupted code).
void on_watchdog(int) { regionprof::capture_detail::end_with_signal(state().fatal_signal.load()); }

/// Posted by the signal handler (sem_post is async-signal-safe); the writer thread waits on it.
sem_t signal_posted;

/// The signal handler does nothing that could block on a lock the interrupted code holds (malloc, the
/// capture's mutexes): it records the signal and wakes the writer thread, which writes the trace and then
/// ends the process with the signal's default action. In a forked child (no writer thread) the default
/// action is taken at once.
void on_signal(int signal_number) {
  if (::getpid() != state().pid) {
    ::signal(signal_number, SIG_DFL);
    raise(signal_number);
    return;
  }
  int expected = 0;
  if (state().fatal_signal.compare_exchange_strong(expected, signal_number)) sem_post(&signal_posted);
}

void writer_thread() noexcept {
  while (sem_wait(&signal_posted) != 0) {
  }
  const int signal_number = state().fatal_signal.load();
  struct sigaction watchdog {};
  watchdog.sa_handler = on_watchdog;
  sigaction(SIGALRM, &watchdog, nullptr);
  alarm(10);
  write_trace();
  alarm(0);
  regionprof::capture_detail::end_with_signal(signal_number);
}

void install_signal_handlers() {
  bool any = false;
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (sigaction(signal_number, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;  // the program's own
    if (!any) {
      // The writer thread blocks every signal, so the program's signals still reach its own threads.
      sigset_t all;
      sigset_t previous;
      sigfillset(&all);
      if (sem_init(&signal_posted, 0, 0) != 0 || pthread_sigmask(SIG_SETMASK, &all, &previous) != 0) return;
      try {
        std::thread(writer_thread).detach();
      } catch (...) {
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        return;  // no thread: the signals keep their default action
      }
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      any = true;
    }
    struct sigaction handler {};
    handler.sa_handler = on_signal;
    handler.sa_flags = SA_RESTART;
    sigemptyset(&handler.sa_mask);
    sigaction(signal_number, &handler, nullptr);
  }
}

const bool started = [] {
  const char* path = std::getenv("REGIONPROF_NVTX_TRACE");
  if (path == nullptr || *path == '\0') return false;
  autostart& s = state();
  try {
    s.path = path;
    s.pid = ::getpid();
    s.session = std::make_unique<regionprof::capture_session>();
    std::atexit(write_at_exit);
    install_signal_handlers();
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "regionprof: NVTX capture not started: %s\n", e.what());
    return false;
  }
}();

}  // namespace
