#include "cli_runner.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "support/child_process.hpp"

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
  std::vector<std::string> command{REGIONPROF_CLI_PATH};
  command.insert(command.end(), args.begin(), args.end());
  regionprof::test::child_result r = regionprof::test::run_child(command);
  return {r.status, std::move(r.out), std::move(r.err)};
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
