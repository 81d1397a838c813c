#include "test_profiles.hpp"

#include <array>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cli_runner.hpp"
#include "support/child_process.hpp"

namespace cli_test {
namespace {

std::vector<std::string> pipeline_command(const std::string& path) {
  return {CPU_PIPELINE, "--runs", "20", "-o", path};
}

/// Both profiles from two processes started together, so both see the same machine load (the shared
/// development machine's load changes by minutes; a 20-run profile takes a fraction of a second).
const std::array<std::string, 2>& profiles() {
  static const std::array<std::string, 2> paths = [] {
    std::array<std::string, 2> out{temp_path("pipeline_a.json"), temp_path("pipeline_b.json")};
    regionprof::test::child_process a(pipeline_command(out[0]));
    regionprof::test::child_process b(pipeline_command(out[1]));
    for (regionprof::test::child_process* child : {&a, &b}) {
      if (child->wait().status != 0) throw std::runtime_error(CPU_PIPELINE " --runs 20 failed");
    }
    return out;
  }();
  return paths;
}

}  // namespace

const std::string& pipeline_profile_a() { return profiles()[0]; }
const std::string& pipeline_profile_b() { return profiles()[1]; }

}  // namespace cli_test
