// Ending a process the way a signal would have, for the injected libraries' signal paths
// (libregionprof_nvtx_inject.so, libregionprof_inject.so). Async-signal-safe calls only.
// Target regionprof::signal_internals (nvtx_regions/CMakeLists.txt): shared by the capture's injected
// library and inject/, neither one's private header.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

namespace regionprof::signal_detail {

/// Restores `signal_number`'s default action, unblocks it, raises it; `_exit(128 + N)` should the
/// default action not end the process (as for a signal whose default is to ignore).
[[noreturn]] inline void end_with_signal(int signal_number) noexcept {
  ::signal(signal_number, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal_number);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(signal_number);
  _exit(128 + signal_number);
}

}  // namespace regionprof::signal_detail
