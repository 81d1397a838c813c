#include "cli_runner.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace cli_test {

std::string temp_path(const std::string& name) {
  static int counter = 0;
  return (std::filesystem::temp_directory_path() /
          ("regionprof_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + name))
      .string();
}

std::string data_file(const std::string& name) {
  const char* root = std::getenv("REGIONPROF_TEST_DATA");
  if (root == nullptr) throw std::runtime_error("REGIONPROF_TEST_DATA is not set (run the tests through ctest)");
  return std::string(root) + "/import/" + name;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

cli_argv::cli_argv(const std::vector<std::string>& args) : words_{REGIONPROF_CLI_PATH} {
  words_.insert(words_.end(), args.begin(), args.end());
  for (std::string& word : words_) pointers_.push_back(word.data());
  pointers_.push_back(nullptr);
}

cli_result run_cli(const std::vector<std::string>& args) {
  const std::string out_path = temp_path("stdout");
  const std::string err_path = temp_path("stderr");
  cli_argv argv(args);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv.pointers()[0], &actions, nullptr, argv.pointers(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error(std::string("cannot start ") + argv.pointers()[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  cli_result result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return result;
}

scratch_dir::scratch_dir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  const char* made = mkdtemp(pattern.data());
  if (made == nullptr) throw std::runtime_error("mkdtemp " + pattern + " failed");
  path = std::filesystem::canonical(made);
}

scratch_dir::~scratch_dir() {
  namespace fs = std::filesystem;
  std::error_code ignored;
  for (const auto& entry : fs::recursive_directory_iterator(path, ignored)) {
    if (entry.is_directory(ignored)) fs::permissions(entry.path(), fs::perms::owner_all, ignored);
  }
  fs::remove_all(path, ignored);
}

}  // namespace cli_test
