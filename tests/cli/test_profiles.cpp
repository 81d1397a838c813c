#include "test_profiles.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <array>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cli_runner.hpp"

extern char** environ;

namespace cli_test {
namespace {

pid_t start_pipeline(const std::string& path) {
  std::vector<std::string> args{CPU_PIPELINE, "--runs", "20", "-o", path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error("cannot start " CPU_PIPELINE);
  return pid;
}

/// Both profiles from two processes started together, so both see the same machine load (the shared
/// development machine's load changes by minutes; a 20-run profile takes a fraction of a second).
const std::array<std::string, 2>& profiles() {
  static const std::array<std::string, 2> paths = [] {
    std::array<std::string, 2> out{temp_path("pipeline_a.json"), temp_path("pipeline_b.json")};
    const pid_t a = start_pipeline(out[0]);
    const pid_t b = start_pipeline(out[1]);
    for (const pid_t pid : {a, b}) {
      int status = 0;
      if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        throw std::runtime_error(CPU_PIPELINE " --runs 20 failed");
      }
    }
    return out;
  }();
  return paths;
}

}  // namespace

const std::string& pipeline_profile_a() { return profiles()[0]; }
const std::string& pipeline_profile_b() { return profiles()[1]; }

}  // namespace cli_test
