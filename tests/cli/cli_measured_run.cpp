#include "cli_measured_run.hpp"

#include "cli_runner.hpp"
#include "support/child_process.hpp"

namespace cli_test {

measured_result run_cli_measured(const std::vector<std::string>& args, double limit_seconds) {
  cli_argv argv(args);
  std::vector<std::string> command;
  for (char* const* word = argv.pointers(); *word != nullptr; ++word) command.emplace_back(*word);
  // child_process forks (a spawn would fold this test's high-water mark into the child's peak RSS).
  regionprof::test::child_result r = regionprof::test::run_child(command, {.timeout_seconds = limit_seconds});
  measured_result result;
  result.exit_code = r.status;
  result.out = std::move(r.out);
  result.err = std::move(r.err);
  result.peak_rss_bytes = r.peak_rss_bytes;
  result.timed_out = r.timed_out;
  result.seconds = r.seconds;
  return result;
}

}  // namespace cli_test
