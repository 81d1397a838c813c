// Runs the built `regionprof` executable and captures its exit code, stdout and stderr.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cli_test {

struct cli_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// The built `regionprof` and `args` as an exec argv (`pointers()` is null-terminated; it points into
/// `words`, so keep the object alive until the exec).
struct cli_argv {
  explicit cli_argv(const std::vector<std::string>& args);
  cli_argv(const cli_argv&) = delete;
  cli_argv& operator=(const cli_argv&) = delete;
  char* const* pointers() noexcept { return pointers_.data(); }

 private:
  std::vector<std::string> words_;
  std::vector<char*> pointers_;
};

/// `regionprof args...` (no shell: arguments are passed as they are).
cli_result run_cli(const std::vector<std::string>& args);

/// A fresh path under the temporary directory (the file is not created).
std::string temp_path(const std::string& name);

/// tests/data/import/<name>.
std::string data_file(const std::string& name);

std::string read_file(const std::string& path);

/// A fresh directory under the temporary directory for one test case (`<prefix>-XXXXXX`, canonical),
/// removed with everything in it at the end (its subdirectories made writable first).
struct scratch_dir {
  explicit scratch_dir(const std::string& prefix = "regionprof-test");
  ~scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  std::filesystem::path path;
};

}  // namespace cli_test
