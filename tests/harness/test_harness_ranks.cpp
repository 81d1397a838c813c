// The harness under a launcher: trace_file's placeholders, the one-file-per-job error, and the process
// identity in the report's target.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "harness_support.hpp"
#include "regionprof/harness/harness.hpp"

using namespace regionprof;
using regionprof::testing::quick;

namespace {

namespace fs = std::filesystem;

/// Sets launcher variables for one test case and removes them after it.
struct launcher_env {
  launcher_env(const char* rank, const char* world) {
    setenv("RANK", rank, 1);
    setenv("WORLD_SIZE", world, 1);
  }
  ~launcher_env() {
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(harness_ranks)

BOOST_AUTO_TEST_CASE(trace_file_expands_and_the_target_names_the_rank) {
  const launcher_env env("3", "4");
  const fs::path dir = fs::temp_directory_path() / ("regionprof-harness-ranks-" + std::to_string(getpid()));
  fs::create_directories(dir);
  profile_options options = quick(0, 2);
  options.trace_file = (dir / "trace-%r-%p.json").string();
  const Profile profile = regionprof::profile([] {}, options);
  const fs::path expected = dir / ("trace-3-" + std::to_string(getpid()) + ".json");
  BOOST_TEST(fs::exists(expected), expected);
  const boost::json::object target = boost::json::parse(to_json(profile)).at("target").as_object();
  BOOST_TEST(target.at("rank").to_number<int>() == 3);
  BOOST_TEST(target.at("world_size").to_number<int>() == 4);
  BOOST_TEST(!target.contains("local_rank"));
  BOOST_TEST(target.at("pid").to_number<pid_t>() == getpid());
  BOOST_TEST(!target.at("host").as_string().empty());
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(one_trace_file_for_every_rank_throws_before_any_run) {
  const launcher_env env("0", "2");
  profile_options options = quick(0, 1);
  options.trace_file = "trace.json";
  int calls = 0;
  try {
    regionprof::profile([&] { ++calls; }, options);
    BOOST_FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()) ==
               "regionprof::profile: trace_file: output path 'trace.json': the job has 2 processes and all of them "
               "would write this one file; add %r (the rank) or %p (the pid) to the path, e.g. 'profile-%r.json'");
  }
  BOOST_TEST(calls == 0);
  options.trace_file = "trace-%q.json";
  BOOST_CHECK_THROW(regionprof::profile([] {}, options), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
