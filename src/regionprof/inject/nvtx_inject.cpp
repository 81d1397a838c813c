// libregionprof_nvtx_inject.so on its own: when REGIONPROF_NVTX_TRACE names a file, record from the
// moment NVTX loads the library until the program exits, then write the captured ranges there as a
// Chrome trace. Never changes the program's exit status or output; problems go to stderr.
//
// The trace is written through regionprof::write_file_atomically (a temporary beside FILE, fsync'd,
// renamed onto FILE), so FILE is never left half written (an earlier FILE stays as it was when the
// process dies first, or the write fails; the failure is one stderr line naming FILE). Only the process that loaded
// the library writes: a forked child that exits does not. On SIGINT, SIGTERM or SIGHUP left at their
// default action the trace of what was recorded is written (by a thread of the library, not in the
// signal handler), then the signal is raised again with its default action (a 10 s watchdog bounds the
// attempt; signal/signal_writer.hpp, shared with libregionprof_inject.so). SIGKILL and _exit() leave nothing.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "regionprof/capture/capture.hpp"
#include "regionprof/inject/signal_writer.hpp"
#include "regionprof/output/output.hpp"
#include "regionprof/report/report.hpp"

namespace {

/// The library's state, never destroyed: the exit handler may run after static destructors began.
struct autostart {
  std::unique_ptr<regionprof::capture_session> session;
  std::string path;
  pid_t pid = 0;                        ///< the process that started the session; the only one that writes
  std::atomic<bool> written{false};     ///< the trace was written (or is being written)
};

autostart& state() {
  static autostart* const instance = new autostart;
  return *instance;
}

/// Writes the trace once, in the process that started the session, atomically (regionprof's one file
/// writer). Never throws.
void write_trace() noexcept {
  autostart& s = state();
  if (!s.session || ::getpid() != s.pid || s.written.exchange(true)) return;
  try {
    regionprof::capture_result result = s.session->stop();
    result.data.target.type = "process";
    regionprof::write_file_atomically(s.path, "NVTX trace (REGIONPROF_NVTX_TRACE)", [&result](std::ostream& out) {
      regionprof::write_chrome_trace(result.data, out);
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "regionprof: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "regionprof: could not write the NVTX trace to '%s'\n", s.path.c_str());
  }
}

void write_at_exit() {
  regionprof::signal_detail::wait_for_signal_writer();
  write_trace();
}

void write_at_signal(int) noexcept { write_trace(); }

const bool started = [] {
  const char* path = std::getenv("REGIONPROF_NVTX_TRACE");
  if (path == nullptr || *path == '\0') return false;
  autostart& s = state();
  try {
    s.path = path;
    s.pid = ::getpid();
    s.session = std::make_unique<regionprof::capture_session>();
    std::atexit(write_at_exit);
    regionprof::signal_detail::install_signal_writer({SIGINT, SIGTERM, SIGHUP}, write_at_signal);
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "regionprof: NVTX capture not started: %s\n", e.what());
    return false;
  }
}();

}  // namespace
