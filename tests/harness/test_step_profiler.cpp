// regionprof::step_profiler: the caller's loop, each recorded step a run, each cycle of the schedule one
// profile; torch.profiler.schedule's steps; and what is refused.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "harness_support.hpp"
#include "regionprof/harness/step_profiler.hpp"
#include "regionprof/regions/regions.h"
#include "regionprof/trace/clock.hpp"

using namespace regionprof;

namespace {

namespace fs = std::filesystem;

struct scratch {
  fs::path dir = fs::temp_directory_path() / ("regionprof-steps-" + std::to_string(::getpid()));
  scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~scratch() { fs::remove_all(dir); }
};

std::string text_of(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// Step `step`'s work: the region aot_module:step_<step>.
void work(int step) {
  regionprof_region_push_name("aot_module", ("step_" + std::to_string(step)).c_str());
  regionprof_region_pop();
}

std::vector<std::string> first_regions(const Profile& p) {
  std::vector<std::string> names;
  for (const run_result& run : p.result().runs) {
    names.push_back(run.regions.empty() ? "" : p.result().regions.at(run.regions.front().region).id);
  }
  return names;
}

std::string invalid_argument_of(const profile_options& options, std::optional<step_schedule> schedule) {
  try {
    step_profiler steps(options, schedule);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(step_profiler_steps)

// torch.profiler.schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2), step by step.
BOOST_AUTO_TEST_CASE(the_schedule_means_what_torch_profilers_means) {
  const step_schedule schedule{.wait = 1, .warmup = 1, .active = 2, .repeat = 2, .skip_first = 1};
  using enum step_action;
  const step_action expected[] = {none, none, warmup, record, record_and_save,  // skip, cycle 0
                                  none, warmup, record, record_and_save,        // cycle 1
                                  none, none, none};                            // repeat reached
  for (std::uint64_t step = 0; step < std::size(expected); ++step) {
    BOOST_TEST_CONTEXT("step " << step) { BOOST_TEST((action_of(schedule, step) == expected[step])); }
  }
  // repeat 0: cycles forever; no wait, no warm-up: every step records, every active-th saves.
  const step_schedule forever{.active = 3, .repeat = 0};
  BOOST_TEST((action_of(forever, 0) == record));
  BOOST_TEST((action_of(forever, 2) == record_and_save));
  BOOST_TEST((action_of(forever, 3000002) == record_and_save));
  BOOST_TEST((action_of(forever, 3000003) == record));
}

// wait 1, warmup 2, active 3, repeat 2, over 14 steps: cycle 0 records steps 3-5 (step 2, the last
// warm-up, is the session's warm-up run; step 1 runs unrecorded), cycle 1 steps 9-11; each cycle is a
// window written to its %w path and handed back by the step that completes it.
BOOST_AUTO_TEST_CASE(each_cycle_is_a_profile_of_its_active_steps) {
  const scratch tmp;
  profile_options options;
  options.json_output = (tmp.dir / "cycle-%w.json").string();
  step_profiler steps(options, step_schedule{.wait = 1, .warmup = 2, .active = 3, .repeat = 2});
  std::vector<Profile> cycles;
  std::vector<int> completed_at;
  for (int step = 0; step < 14; ++step) {
    work(step);
    if (std::optional<Profile> cycle = steps.step()) {
      cycles.push_back(std::move(*cycle));
      completed_at.push_back(step);
    }
  }
  BOOST_TEST(!steps.finish());  // repeat reached: nothing in progress
  BOOST_TEST(completed_at == (std::vector<int>{5, 11}), boost::test_tools::per_element());
  BOOST_REQUIRE_EQUAL(cycles.size(), 2u);
  BOOST_TEST(first_regions(cycles[0]) == (std::vector<std::string>{"aot_module:step_3", "aot_module:step_4",
                                                                    "aot_module:step_5"}),
             boost::test_tools::per_element());
  BOOST_TEST(first_regions(cycles[1]) == (std::vector<std::string>{"aot_module:step_9", "aot_module:step_10",
                                                                    "aot_module:step_11"}),
             boost::test_tools::per_element());
  for (std::size_t c = 0; c < 2; ++c) {
    const fs::path path = tmp.dir / ("cycle-" + std::to_string(c) + ".json");
    BOOST_REQUIRE_MESSAGE(fs::exists(path), path);
    BOOST_TEST(text_of(path) == to_json(cycles[c]));
    const boost::json::object report = boost::json::parse(text_of(path)).as_object();
    BOOST_TEST(report.at("target").at("window").to_number<std::size_t>() == c);
    BOOST_TEST(report.at("target").at("window_runs").to_number<std::size_t>() == 3u);
    BOOST_TEST(report.at("config").at("measured_runs").to_number<std::size_t>() == 3u);
    BOOST_TEST(report.at("config").at("warmup_runs").to_number<std::size_t>() == 1u);  // unrecorded: step 1, 7
    BOOST_TEST(report.at("runs").at(0).at("run_index").to_number<std::size_t>() == 3 * c);
  }
  BOOST_TEST(!fs::exists(tmp.dir / "cycle-2.json"));
  BOOST_TEST(steps.cycles() == 2u);
}

// No schedule: every step is a run, the first included (no warm-up run); the work after the last step()
// is not a run. Each run's wall time covers the step's work.
BOOST_AUTO_TEST_CASE(without_a_schedule_every_step_is_a_run) {
  step_profiler steps(profile_options{}, std::nullopt);
  for (int step = 0; step < 4; ++step) {
    const std::int64_t until = monotonic_now_ns() + 2'000'000;
    work(step);
    while (monotonic_now_ns() < until) {
    }
    BOOST_TEST(!steps.step());
  }
  work(99);  // after the last step(): not a run
  const std::optional<Profile> p = steps.finish();
  BOOST_REQUIRE(p);
  BOOST_TEST(first_regions(*p) == (std::vector<std::string>{"aot_module:step_0", "aot_module:step_1",
                                                            "aot_module:step_2", "aot_module:step_3"}),
             boost::test_tools::per_element());
  for (const run_result& run : p->result().runs) BOOST_TEST(run.wall_time_ns >= 2'000'000);
  BOOST_TEST(!p->source().target.window.has_value());
}

// A loop that ends inside a cycle: the cycle's runs so far are its profile; one that ends before any
// recorded step: no profile. A second session cannot start while the loop is profiled.
BOOST_AUTO_TEST_CASE(a_cycle_cut_short_is_a_profile_of_its_runs) {
  {
    step_profiler steps(profile_options{}, step_schedule{.wait = 1, .active = 5});
    for (int step = 0; step < 3; ++step) {
      work(step);
      BOOST_TEST(!steps.step());
    }
    BOOST_CHECK_THROW(regionprof::profile([] {}, profile_options{}), std::logic_error);
    const std::optional<Profile> p = steps.finish();
    BOOST_REQUIRE(p);
    BOOST_TEST(first_regions(*p) == (std::vector<std::string>{"aot_module:step_1", "aot_module:step_2"}),
               boost::test_tools::per_element());
    BOOST_CHECK_THROW(steps.finish(), std::logic_error);
    BOOST_CHECK_THROW(steps.step(), std::logic_error);
  }
  {
    step_profiler steps(profile_options{}, step_schedule{.wait = 3, .active = 1});
    work(0);
    BOOST_TEST(!steps.step());
    BOOST_TEST(!steps.finish());
  }
  // Discarded by the destructor, mid-cycle: the capture is free again.
  { step_profiler steps(profile_options{}, step_schedule{.active = 2, .repeat = 0}); }
  BOOST_CHECK_NO_THROW(regionprof::profile([] {}, testing::quick(0, 1)));
}

BOOST_AUTO_TEST_CASE(what_does_not_apply_to_steps_is_refused) {
  profile_options windows;
  windows.window_runs = 2;
  windows.json_output = "w-%w.json";
  BOOST_TEST(invalid_argument_of(windows, std::nullopt).find("window_runs does not apply to steps") != std::string::npos);
  profile_options noise;
  noise.stopping.max_noise = 0.05;
  BOOST_TEST(invalid_argument_of(noise, std::nullopt).find("max_noise") != std::string::npos);
  BOOST_TEST(invalid_argument_of({}, step_schedule{.active = 0}).find("active must be at least 1") != std::string::npos);
  // Several cycles, one path: every cycle would overwrite it.
  profile_options one_path;
  one_path.json_output = "p.json";
  BOOST_TEST(invalid_argument_of(one_path, step_schedule{.active = 2, .repeat = 3}).find("%w") != std::string::npos);
  one_path.json_output = (fs::temp_directory_path() / "regionprof-steps-one.json").string();
  BOOST_TEST(invalid_argument_of(one_path, step_schedule{.active = 2, .repeat = 1}).empty());
}

BOOST_AUTO_TEST_SUITE_END()
