// Runs the built `regionprof` executable like run_cli, and also measures it: its own peak RSS
// (wait4's rusage of that one child) and whether it had to be killed for running too long.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cli_test {

struct measured_result {
  int exit_code = -1;  ///< 128 + N when killed by signal N
  std::string out;
  std::string err;
  std::uint64_t peak_rss_bytes = 0;
  bool timed_out = false;  ///< killed (SIGKILL) after the time limit: a hang
  double seconds = 0;
};

/// `regionprof args...`, killed after `limit_seconds`.
measured_result run_cli_measured(const std::vector<std::string>& args, double limit_seconds = 120);

}  // namespace cli_test
