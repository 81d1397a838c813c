// Runs the built `regionprof` executable and captures its exit code, stdout and stderr.
#pragma once

#include <string>
#include <vector>

namespace cli_test {

struct cli_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// `regionprof args...` (no shell: arguments are passed as they are).
cli_result run_cli(const std::vector<std::string>& args);

/// A fresh path under the temporary directory (the file is not created).
std::string temp_path(const std::string& name);

/// tests/data/import/<name>.
std::string data_file(const std::string& name);

std::string read_file(const std::string& path);

}  // namespace cli_test
