// Writing a report when a signal ends the process, from a thread rather than from the signal handler,
// for the injected libraries (libregionprof_nvtx_inject.so, libregionprof_inject.so; one copy of the
// state per library). The handler does nothing that could block on a lock the interrupted code holds
// (malloc, the capture's mutexes): it records the signal and posts a semaphore (async-signal-safe);
// a thread started beforehand, with every signal blocked, writes and then ends the process with the
// signal's default action (end_with_signal). A 10 s watchdog (SIGALRM) bounds the attempt.
// For SIGINT, SIGTERM and SIGHUP the handler returns (the program runs on while the thread writes);
// for a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) it waits in pause() until the thread ends
// the process, as returning would fault again (or, for abort(), end the process before the report).
// In a forked child (which has no writer thread) a signal takes its default action at once. A program
// that goes on to exit() after the handler returned (raise(SIGTERM); return 0;) waits in its exit
// handler for the writer thread (wait_for_signal_writer), so the process still ends by the signal.
#pragma once

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <initializer_list>
#include <thread>

#include "regionprof/inject/end_with_signal.hpp"

namespace regionprof::signal_detail {

/// Writes what was recorded; `signal_number` is the signal that ends the process. Never throws.
using signal_write_function = void (*)(int signal_number) noexcept;

struct signal_writer_state {
  sem_t posted;
  std::atomic<int> signal_number{0};
  signal_write_function write = nullptr;
  pid_t owner = 0;  ///< the process that started the thread
};

inline signal_writer_state& writer_state() {
  static signal_writer_state* const state = new signal_writer_state;  // never destroyed
  return *state;
}

inline bool ends_by_returning(int signal_number) noexcept {
  return signal_number == SIGINT || signal_number == SIGTERM || signal_number == SIGHUP;
}

inline void on_watchdog(int) { end_with_signal(writer_state().signal_number.load()); }

inline void on_signal(int signal_number) {
  signal_writer_state& s = writer_state();
  if (::getpid() != s.owner) end_with_signal(signal_number);
  int expected = 0;
  if (s.signal_number.compare_exchange_strong(expected, signal_number)) sem_post(&s.posted);
  if (ends_by_returning(signal_number)) return;
  for (;;) pause();  // the writer thread ends the process
}

inline void writer_thread() noexcept {
  signal_writer_state& s = writer_state();
  while (sem_wait(&s.posted) != 0) {
  }
  const int signal_number = s.signal_number.load();
  struct sigaction watchdog {};
  watchdog.sa_handler = on_watchdog;
  sigaction(SIGALRM, &watchdog, nullptr);
  alarm(10);
  s.write(signal_number);
  alarm(0);
  end_with_signal(signal_number);
}

/// For the libraries' exit handlers: when a signal's report is being written, waits (in pause()) for the
/// writer thread to end the process with the signal; else returns at once.
inline void wait_for_signal_writer() noexcept {
  const signal_writer_state& s = writer_state();
  if (s.signal_number.load() == 0 || ::getpid() != s.owner) return;
  for (;;) pause();
}

/// Starts the writer thread and installs the handler for each of `signals` the program left at its
/// default action (a program's own handler is left alone). Returns the number of handlers installed;
/// 0 when the thread cannot be started (the signals keep their default action). Call once.
///
/// ```
/// void write_report(int signal_number) noexcept;
/// regionprof::signal_detail::install_signal_writer({SIGINT, SIGTERM, SIGHUP}, write_report);
/// ```
inline int install_signal_writer(std::initializer_list<int> signals, signal_write_function write) noexcept {
  signal_writer_state& s = writer_state();
  int installed = 0;
  for (const int signal_number : signals) {
    struct sigaction current {};
    if (sigaction(signal_number, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;  // the program's own
    if (installed == 0) {
      // The writer thread blocks every signal, so the program's signals still reach its own threads.
      sigset_t all;
      sigset_t previous;
      sigfillset(&all);
      if (sem_init(&s.posted, 0, 0) != 0 || pthread_sigmask(SIG_SETMASK, &all, &previous) != 0) return 0;
      s.write = write;
      s.owner = ::getpid();
      try {
        std::thread(writer_thread).detach();
      } catch (...) {
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        return 0;
      }
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    }
    struct sigaction handler {};
    handler.sa_handler = on_signal;
    handler.sa_flags = SA_RESTART;
    sigemptyset(&handler.sa_mask);
    sigaction(signal_number, &handler, nullptr);
    ++installed;
  }
  return installed;
}

}  // namespace regionprof::signal_detail
