#include "cli_measured_run.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "cli_runner.hpp"

extern char** environ;

namespace cli_test {

measured_result run_cli_measured(const std::vector<std::string>& args, double limit_seconds) {
  const std::string out_path = temp_path("stdout");
  const std::string err_path = temp_path("stderr");
  cli_argv argv(args);

  // fork, not posix_spawn: a vfork-like spawn runs on the parent's memory until exec, and exec folds
  // that memory's high-water mark into the child's ru_maxrss. A forked child starts from the parent's
  // current RSS instead: this test process, a few MiB once malloc_trim gave back what its last
  // report left in the heap.
  ::malloc_trim(0);
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out_fd < 0 || err_fd < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) ::_exit(127);
    ::execve(argv.pointers()[0], argv.pointers(), environ);
    ::_exit(127);
  }

  measured_result result;
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error("wait4 failed");
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
    if (!result.timed_out && elapsed.count() > limit_seconds) {
      ::kill(pid, SIGKILL);
      result.timed_out = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.peak_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return result;
}

}  // namespace cli_test
