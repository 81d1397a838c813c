// Every output of `regionprof analyze` is replaced atomically, with real processes: SIGKILL at seeded
// random moments finds each output either the old file or the complete new one; a full filesystem (a
// 1 MiB tmpfs) and a read-only one give one clear line naming the path, exit 1, and the old file intact.
// Mounting needs root (CAP_SYS_ADMIN); without it those cases exit 77 (skipped) and say why.
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cli_runner.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace {

/// A Kineto trace big enough that writing the outputs takes a while: `steps` ProfilerStep markers, each
/// with `ops` cpu_op children of distinct names (~130 bytes an event).
void write_big_trace(const fs::path& path, int steps, int ops) {
  std::ofstream out(path, std::ios::binary);
  out << "{\"traceEvents\": [\n";
  long ts = 0;
  bool first = true;
  for (int s = 0; s < steps; ++s) {
    const long step_start = ts;
    const long step_dur = static_cast<long>(ops) * 10 + 5;
    out << (first ? "" : ",\n") << R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)" << s
        << R"(", "pid": 1, "tid": 1, "ts": )" << step_start << R"(, "dur": )" << step_dur << "}";
    first = false;
    for (int o = 0; o < ops; ++o) {
      out << ",\n"
          << R"({"ph": "X", "cat": "cpu_op", "name": "aten::op_)" << o % 500 << R"(", "pid": 1, "tid": 1, "ts": )"
          << step_start + 1 + o * 10 << R"(, "dur": 8})";
    }
    ts += step_dur + 20;
  }
  out << "\n]}\n";
}

// Under the sanitizers (a Debug build, ASan+UBSan: scripts/test --sanitize) one analysis of the 30 MB
// trace takes seconds, and 40 of them would outlast ctest's timeout: a tenth of the trace there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int trace_steps = 40;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr int trace_steps = 40;
#else
constexpr int trace_steps = 400;
#endif
#else
constexpr int trace_steps = 400;
#endif
/// The Chrome trace written from `trace_steps` steps of 600 ops is over this size.
constexpr std::size_t chrome_trace_bytes_at_least = static_cast<std::size_t>(trace_steps) * 25'000;

struct child {
  pid_t pid = -1;
};

/// `regionprof args...` started with stdout and stderr to /dev/null.
child start_cli(const std::vector<std::string>& args) {
  cli_test::cli_argv argv(args);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  child c;
  const int spawned = posix_spawn(&c.pid, argv.pointers()[0], &actions, nullptr, argv.pointers(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error("cannot start regionprof");
  return c;
}

int wait_for(const child& c) {
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

/// A tmpfs mounted on a fresh directory (unmounted at the end), or a skip (exit 77) saying why not.
struct small_tmpfs {
  fs::path path;
  explicit small_tmpfs(const fs::path& where, const char* options) : path(where) {
    fs::create_directory(path);
    if (::mount("tmpfs", path.c_str(), "tmpfs", 0, options) != 0) {
      std::cout << "skipped: cannot mount a tmpfs on " << path << ": " << std::strerror(errno)
                << " (needs root with CAP_SYS_ADMIN)\n";
      std::exit(77);
    }
  }
  void make_read_only() {
    if (::mount("tmpfs", path.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
      std::cout << "skipped: cannot remount " << path << " read-only: " << std::strerror(errno) << "\n";
      ::umount2(path.c_str(), MNT_DETACH);
      std::exit(77);
    }
  }
  ~small_tmpfs() { ::umount2(path.c_str(), MNT_DETACH); }
  small_tmpfs(const small_tmpfs&) = delete;
  small_tmpfs& operator=(const small_tmpfs&) = delete;
};

/// The report with its creation time (`created_at`, "report created ...") blanked: two complete reports
/// of one trace differ only there. The Chrome trace has none.
/// (A scan, not std::regex: the reports are hundreds of kB, read 80 times, and the sanitizer build is -O0.)
std::string without_creation_time(const std::string& text) {
  static constexpr std::string_view stamp = "dddd-dd-ddTdd:dd:ddZ";  // d: a digit
  const auto stamp_at = [&](std::size_t at) {
    for (std::size_t i = 0; i < stamp.size(); ++i) {
      const char c = text[at + i];
      if (stamp[i] == 'd' ? (c < '0' || c > '9') : c != stamp[i]) return false;
    }
    return true;
  };
  std::string blanked;
  blanked.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    if (at + stamp.size() <= text.size() && stamp_at(at)) {
      blanked += "<time>";
      at += stamp.size();
    } else {
      blanked += text[at++];
    }
  }
  return blanked;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(atomic_outputs)

// 40 tries, seed 18: SIGKILL after a delay drawn uniformly from [0, 1.3 x the time of a whole run].
// Each of the three outputs must then be byte for byte the old file or the complete new one (the
// reports' creation time aside).
BOOST_AUTO_TEST_CASE(sigkill_at_random_moments_leaves_old_or_complete_new_outputs) {
  cli_test::scratch_dir dir{"regionprof-atomic"};
  const fs::path trace = dir.path / "big.json";
  write_big_trace(trace, trace_steps, 600);  // 240k events, ~30 MB (a tenth under the sanitizers)
  const fs::path out = dir.path / "out";
  fs::create_directory(out);
  const std::vector<std::string> args = {"analyze", "--run-marker", R"(ProfilerStep#\d+)", trace.string(),
                                         "-o", (out / "r.json").string(), "--markdown", (out / "r.md").string(),
                                         "--trace", (out / "t.json").string()};
  const std::vector<std::string> names = {"r.json", "r.md", "t.json"};

  // The complete new outputs, and how long a whole run takes.
  const auto start = std::chrono::steady_clock::now();
  const int status = wait_for(start_cli(args));
  const auto whole = std::chrono::steady_clock::now() - start;
  BOOST_REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::vector<std::string> complete;
  for (const std::string& name : names) {
    const std::string text = cli_test::read_file((out / name).string());
    complete.push_back(name == "t.json" ? text : without_creation_time(text));
  }
  BOOST_REQUIRE(complete[2].size() > chrome_trace_bytes_at_least);

  std::mt19937 random(18);
  const long whole_us = std::chrono::duration_cast<std::chrono::microseconds>(whole).count();
  std::uniform_int_distribution<long> delay_us(0, whole_us * 13 / 10);
  constexpr int tries = 40;
  int killed = 0;
  int old_found = 0;
  int new_found = 0;
  int temporaries_left = 0;
  for (int t = 0; t < tries; ++t) {
    for (const std::string& name : names) write_text(out / name, "old " + name + "\n");
    const child c = start_cli(args);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(random)));
    ::kill(c.pid, SIGKILL);
    const int ended = wait_for(c);
    killed += WIFSIGNALED(ended) ? 1 : 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string text = cli_test::read_file((out / names[i]).string());
      const bool is_old = text == "old " + names[i] + "\n";
      const bool is_new = (names[i] == "t.json" ? text : without_creation_time(text)) == complete[i];
      BOOST_TEST((is_old || is_new), "try " << t << ": " << names[i] << " is torn (" << text.size() << " bytes)");
      old_found += is_old;
      new_found += is_new;
    }
    // SIGKILL gives no chance to remove a temporary: it may stay beside the target (hidden), never in its place.
    for (const std::string& name : names_in(out)) {
      if (name.starts_with(".")) {
        ++temporaries_left;
        fs::remove(out / name);
      }
    }
  }
  std::cout << "sigkill: " << tries << " tries (seed 18, delays up to " << whole_us * 13 / 10 << " us), " << killed
            << " killed before the end; outputs found old " << old_found << ", complete new " << new_found
            << ", torn 0 expected; temporaries left by the kill " << temporaries_left << "\n";
  BOOST_TEST(old_found + new_found == tries * 3);
}

// The Chrome trace does not fit in a 1 MiB filesystem: one line names it, exit 1, the old one stays,
// and nothing else is left there.
BOOST_AUTO_TEST_CASE(a_full_filesystem_keeps_the_old_file_and_says_so_in_one_line) {
  cli_test::scratch_dir dir{"regionprof-atomic"};
  const fs::path trace = dir.path / "big.json";
  write_big_trace(trace, 40, 600);
  small_tmpfs full(dir.path / "full", "size=1m");
  const fs::path target = full.path / "t.json";
  write_text(target, "old trace\n");
  const cli_test::cli_result r = cli_test::run_cli({"analyze", "--run-marker", R"(ProfilerStep#\d+)", trace.string(),
                                                    "-o", (dir.path / "r.json").string(), "--trace", target.string()});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.err == "regionprof analyze: cannot write the Chrome trace to '" + target.string() +
                          "': No space left on device\n");
  BOOST_TEST(cli_test::read_file(target.string()) == "old trace\n");
  BOOST_TEST((names_in(full.path) == std::vector<std::string>{"t.json"}));
}

// A directory where no file can be created (a read-only filesystem: root ignores permission bits).
BOOST_AUTO_TEST_CASE(an_unwritable_directory_keeps_the_old_file_and_says_so_in_one_line) {
  cli_test::scratch_dir dir{"regionprof-atomic"};
  small_tmpfs read_only(dir.path / "ro", "size=1m");
  const fs::path target = read_only.path / "r.json";
  write_text(target, "old report\n");
  read_only.make_read_only();
  const cli_test::cli_result r =
      cli_test::run_cli({"analyze", cli_test::data_file("basic.json"), "-o", target.string()});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.err == "regionprof analyze: cannot write the JSON report to '" + target.string() +
                          "': cannot create a file in directory '" + read_only.path.string() +
                          "': Read-only file system\n");
  BOOST_TEST(cli_test::read_file(target.string()) == "old report\n");
}

BOOST_AUTO_TEST_SUITE_END()
