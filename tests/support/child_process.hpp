// The one way tests start another program: argv (no shell), an environment, a directory and stdin bytes;
// stdout and stderr captured (drained together, so neither pipe fills while the other is read); the exit
// code or signal, a time limit, and the child's own peak RSS.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace regionprof::test {

/// How a child starts: as from a shell, every signal at its default action, none blocked. Every member
/// has an initializer, so designated initializers may name any of them.
struct child_options {
  std::filesystem::path dir{};     ///< its working directory; empty: the test's
  std::vector<std::string> env{};  ///< NAME=value: added to the test's environment, replacing the same names
  bool clear_environment = false;  ///< start from `env` alone, not the test's environment
  std::string input{};             ///< its stdin's bytes, then end of file
  double timeout_seconds = 0;      ///< killed with SIGKILL after this long (child_result::timed_out); 0: never
  bool stderr_to_stdout = false;   ///< stderr goes where stdout goes (a shell's 2>&1): `out` holds both
  bool close_stdout = false;       ///< the reading end of its stdout is closed before it runs (a reader gone)
};

/// How a child ended.
struct child_result {
  int wait_status = 0;  ///< as waitpid() gave it
  int exit_code = -1;   ///< its exit code; -1 when a signal ended it
  int signal = 0;       ///< the signal that ended it; 0 when it exited
  int status = -1;      ///< as a shell reports it: the exit code, or 128 + the signal
  std::string out;      ///< its stdout (less what child_process::read_line() returned)
  std::string err;      ///< its stderr
  bool timed_out = false;            ///< killed after child_options::timeout_seconds: a hang
  double seconds = 0;                ///< from its start to its end
  std::uint64_t peak_rss_bytes = 0;  ///< its own peak RSS (wait4's ru_maxrss)
};

/// A running child. Started with fork() and exec: a spawn that borrows the test's memory until exec
/// would fold the test's high-water mark into the child's peak RSS; the fork starts from the test's
/// current RSS, which malloc_trim() makes small first.
///
/// Example:
///   child_process app({STRESS_APP, "signal", "100"}, {.env = {"REGIONPROF_NVTX_TRACE=/tmp/t.json"}});
///   BOOST_REQUIRE(app.read_line() == "ready");
///   app.signal(SIGTERM);
///   const child_result r = app.wait();  // r.signal == SIGTERM
class child_process {
 public:
  /// Starts `argv[0]` (searched in PATH when it has no '/'); throws std::runtime_error when it cannot
  /// start (an exec that fails exits 127 in the child).
  explicit child_process(const std::vector<std::string>& argv, child_options options = {});
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  /// Kills (SIGKILL) and reaps a child not yet waited for.
  ~child_process();

  pid_t pid() const noexcept { return pid_; }
  void signal(int number) const;
  /// The next line of its stdout, without the newline; empty at end of file.
  std::string read_line();
  /// Feeds the rest of its stdin, reads its stdout and stderr to their end and reaps it. Once only.
  child_result wait();

 private:
  /// One round of poll() over stdin, stdout and stderr, `timeout_ms` at most; false when all are closed.
  bool pump(int timeout_ms);
  void check_time_limit();

  child_options options_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_stdout_ = -1;
  int from_stderr_ = -1;
  std::size_t fed_ = 0;
  bool waited_ = false;
  double started_ = 0;
  child_result result_;
};

/// Runs `argv` to its end. Example: `run_child({"/bin/echo", "hi"}).out == "hi\n"`.
child_result run_child(const std::vector<std::string>& argv, const child_options& options = {});

}  // namespace regionprof::test
