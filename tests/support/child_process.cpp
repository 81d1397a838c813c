#include "support/child_process.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

extern char** environ;

namespace regionprof::test {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The test's environment with `extra` (NAME=value) replacing or adding its names; `extra` alone when `clear`.
std::vector<std::string> environment_of(const std::vector<std::string>& extra, bool clear) {
  std::vector<std::string> env;
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  if (!clear) {
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry = *e;
      bool replaced = false;
      for (const std::string& x : extra) replaced = replaced || name_of(x) == name_of(entry);
      if (!replaced) env.push_back(entry);
    }
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

child_process::child_process(const std::vector<std::string>& argv, child_options options)
    : options_(std::move(options)) {
  if (argv.empty()) throw std::invalid_argument("child_process: empty argv");
  // Everything the child touches between fork and exec is made here: it only calls async-signal-safe
  // functions.
  std::vector<std::string> words = argv;
  std::vector<char*> args;
  for (std::string& w : words) args.push_back(w.data());
  args.push_back(nullptr);
  std::vector<std::string> env = environment_of(options_.env, options_.clear_environment);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string dir = options_.dir.string();

  int in[2];
  int out[2];
  int err[2];
  int exec_error[2];  // the child's errno when exec fails; closed by a successful exec
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
      ::pipe2(exec_error, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("child_process: pipe2: ") + std::strerror(errno));
  }
  ::signal(SIGPIPE, SIG_IGN);  // a child that stops reading its stdin must not end the test
  ::malloc_trim(0);
  started_ = now_seconds();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("child_process: fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    int failure = 0;
    if (!dir.empty() && ::chdir(dir.c_str()) != 0) failure = errno;
    if (failure == 0 && (::dup2(in[0], 0) < 0 || ::dup2(out[1], 1) < 0 ||
                         ::dup2(options_.stderr_to_stdout ? out[1] : err[1], 2) < 0)) {
      failure = errno;
    }
    if (failure == 0) {
      struct sigaction default_action {};
      default_action.sa_handler = SIG_DFL;
      for (int s = 1; s < NSIG; ++s) {
        if (s != SIGKILL && s != SIGSTOP) ::sigaction(s, &default_action, nullptr);
      }
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::execvpe(args[0], args.data(), envp.data());
      failure = errno;
    }
    [[maybe_unused]] const ssize_t written = ::write(exec_error[1], &failure, sizeof failure);
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  ::close(exec_error[1]);
  to_child_ = in[1];
  from_stdout_ = out[0];
  from_stderr_ = err[0];
  int failure = 0;
  ssize_t got = 0;
  while ((got = ::read(exec_error[0], &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  ::close(exec_error[0]);
  if (got > 0) {
    wait();
    throw std::runtime_error("child_process: cannot start " + argv[0] + ": " + std::strerror(failure));
  }
  ::fcntl(to_child_, F_SETFL, O_NONBLOCK);  // a blocking write would wait for a reader we starve
  if (options_.input.empty()) close_fd(to_child_);
  if (options_.close_stdout) close_fd(from_stdout_);
}

child_process::~child_process() {
  if (!waited_) {
    ::kill(pid_, SIGKILL);
    try {
      wait();
    } catch (...) {  // never throw from a destructor
    }
  }
  close_fd(to_child_);
  close_fd(from_stdout_);
  close_fd(from_stderr_);
}

void child_process::signal(int number) const { ::kill(pid_, number); }

void child_process::check_time_limit() {
  if (options_.timeout_seconds > 0 && !result_.timed_out && now_seconds() - started_ > options_.timeout_seconds) {
    ::kill(pid_, SIGKILL);
    result_.timed_out = true;
  }
}

bool child_process::pump(int timeout_ms) {
  if (to_child_ < 0 && from_stdout_ < 0 && from_stderr_ < 0) return false;
  pollfd fds[3] = {{from_stdout_, POLLIN, 0}, {from_stderr_, POLLIN, 0}, {to_child_, POLLOUT, 0}};
  const int ready = ::poll(fds, 3, timeout_ms);
  if (ready < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("child_process: poll: ") + std::strerror(errno));
    return true;
  }
  for (int i = 0; i < 2; ++i) {
    int& fd = i == 0 ? from_stdout_ : from_stderr_;
    if (fd < 0 || fds[i].revents == 0) continue;
    char buffer[65536];
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got > 0) {
      (i == 0 ? result_.out : result_.err).append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      close_fd(fd);
    }
  }
  if (to_child_ >= 0 && fds[2].revents != 0) {
    const ssize_t put = ::write(to_child_, options_.input.data() + fed_, options_.input.size() - fed_);
    if (put > 0) fed_ += static_cast<std::size_t>(put);
    if ((put < 0 && errno != EINTR && errno != EAGAIN) || fed_ == options_.input.size()) close_fd(to_child_);
  }
  return ready > 0;
}

std::string child_process::read_line() {
  std::size_t newline = std::string::npos;
  while ((newline = result_.out.find('\n')) == std::string::npos && from_stdout_ >= 0) {
    pump(20);
    check_time_limit();
  }
  std::string line = result_.out.substr(0, newline);
  result_.out.erase(0, newline == std::string::npos ? std::string::npos : newline + 1);
  return line;
}

child_result child_process::wait() {
  if (waited_) throw std::logic_error("child_process::wait() called twice");
  waited_ = true;
  int status = 0;
  rusage usage{};
  bool ended = false;
  // Read while it runs; once it has ended, only what its pipes already hold (a process it started may
  // still hold them open).
  for (;;) {
    const pid_t done = ::wait4(pid_, &status, WNOHANG, &usage);
    if (done < 0 && errno != EINTR) throw std::runtime_error(std::string("child_process: wait4: ") + std::strerror(errno));
    ended = done == pid_;
    if (ended) {
      while (pump(0)) {
      }
      break;
    }
    pump(20);
    check_time_limit();
    if (to_child_ < 0 && from_stdout_ < 0 && from_stderr_ < 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  close_fd(to_child_);
  close_fd(from_stdout_);
  close_fd(from_stderr_);
  result_.seconds = now_seconds() - started_;
  result_.wait_status = status;
  if (WIFEXITED(status)) {
    result_.exit_code = WEXITSTATUS(status);
    result_.status = result_.exit_code;
  } else if (WIFSIGNALED(status)) {
    result_.signal = WTERMSIG(status);
    result_.status = 128 + result_.signal;
  }
  result_.peak_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB
  return result_;
}

child_result run_child(const std::vector<std::string>& argv, const child_options& options) {
  child_process child(argv, options);
  return child.wait();
}

}  // namespace regionprof::test
